//! Queries on people: the responders who hold roles and write the timeline.

use serde::Serialize;
use sqlx::PgExecutor;

use super::domain::PersonDraft;
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
