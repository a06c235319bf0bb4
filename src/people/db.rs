//! Queries on people: the responders who hold roles and write the timeline.

use serde::Serialize;
use sqlx::PgExecutor;

use super::domain::{PersonDraft, Preferences};
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Person {
    #[serde(skip)]
    pub id: i64,
    pub name: String,
    pub email: String,
    pub handle: String,
}

pub async fn insert(e: impl PgExecutor<'_>, d: &PersonDraft) -> AppResult<Person> {
    sqlx::query_as!(
        Person,
        r#"insert into people (name, email, handle) values ($1, $2, $3)
           returning id, name, email, handle"#,
        d.name,
        d.email,
        d.handle
    )
    .fetch_one(e)
    .await
    .map_err(|err| match &err {
        sqlx::Error::Database(db) if db.constraint() == Some("people_email_key") => {
            AppError::Conflict(format!(
                "Someone with the email {:?} already exists.",
                d.email
            ))
        }
        sqlx::Error::Database(db) if db.constraint() == Some("people_handle_key") => {
            AppError::Conflict(format!("The handle {:?} is taken.", d.handle))
        }
        _ => AppError::Database(err),
    })
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<Person>> {
    Ok(sqlx::query_as!(
        Person,
        "select id, name, email, handle from people order by name"
    )
    .fetch_all(e)
    .await?)
}

/// Of `ids`, the people who may acknowledge an incident now: enabled, and more than viewers.
/// Who is paged and whose acknowledge link works follow it.
pub async fn can_acknowledge(
    e: impl PgExecutor<'_>,
    ids: &[i64],
) -> AppResult<std::collections::HashSet<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select id from people
           where id = any($1) and disabled_at is null and role <> 'viewer'"#,
        ids
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .collect())
}

/// Finds a person by handle or email (case-insensitive for email).
pub async fn find(e: impl PgExecutor<'_>, handle_or_email: &str) -> AppResult<Option<Person>> {
    Ok(sqlx::query_as!(
        Person,
        r#"select id, name, email, handle from people
           where handle = lower($1) or lower(email) = lower($1)"#,
        handle_or_email.trim()
    )
    .fetch_optional(e)
    .await?)
}

/// A person's preferences; the defaults when they have set none.
pub async fn preferences(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Preferences> {
    Ok(sqlx::query_as!(
        Preferences,
        r#"select time_zone, handoff_notices, handoff_remind_hours as handoff_reminder_hours
           from person_preferences where person_id = $1"#,
        person_id
    )
    .fetch_optional(e)
    .await?
    .unwrap_or_default())
}

/// The preferences of `ids` who have set any (the others have the defaults).
pub async fn preferences_of(
    e: impl PgExecutor<'_>,
    ids: &[i64],
) -> AppResult<std::collections::HashMap<i64, Preferences>> {
    Ok(sqlx::query!(
        r#"select person_id, time_zone, handoff_notices, handoff_remind_hours
           from person_preferences where person_id = any($1)"#,
        ids
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| {
        let p = Preferences {
            time_zone: r.time_zone,
            handoff_notices: r.handoff_notices,
            handoff_reminder_hours: r.handoff_remind_hours,
        };
        (r.person_id, p)
    })
    .collect())
}

/// Writes a person's preferences (already checked).
pub async fn set_preferences(
    e: impl PgExecutor<'_>,
    person_id: i64,
    p: &Preferences,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into person_preferences
               (person_id, time_zone, handoff_notices, handoff_remind_hours)
           values ($1, $2, $3, $4)
           on conflict (person_id) do update
           set time_zone = excluded.time_zone, handoff_notices = excluded.handoff_notices,
               handoff_remind_hours = excluded.handoff_remind_hours, updated_at = now()"#,
        person_id,
        p.time_zone,
        p.handoff_notices,
        p.handoff_reminder_hours
    )
    .execute(e)
    .await?;
    Ok(())
}
