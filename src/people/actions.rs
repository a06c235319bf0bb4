//! Adding a person for another capability: an account made from the command line or the
//! environment gets a person with a free handle made from its email.

use sqlx::{PgConnection, PgPool};

use super::db::{self, Person};
use super::domain::{PersonDraft, Preferences, handle_from_email};
use crate::audit::Actor;
use crate::error::{AppError, AppResult};

/// Adds the person with this email, named `name` (or their handle), with the first free handle
/// made from the email's local part (`ana.ribeiro`, then `ana.ribeiro1`, …).
pub async fn add_for_email(
    conn: &mut PgConnection,
    name: Option<&str>,
    email: &str,
) -> AppResult<Person> {
    let handle = free_handle(conn, &handle_from_email(email)).await?;
    let draft = PersonDraft {
        name: name.map(str::to_owned).unwrap_or_else(|| handle.clone()),
        email: email.to_owned(),
        handle,
    }
    .validated()?;
    db::insert(&mut *conn, &draft).await
}

async fn free_handle(conn: &mut PgConnection, base: &str) -> AppResult<String> {
    for n in 0..1000 {
        let candidate = if n == 0 {
            base.to_owned()
        } else {
            format!("{base}{n}")
        };
        if db::find(&mut *conn, &candidate).await?.is_none() {
            return Ok(candidate);
        }
    }
    Err(AppError::Conflict(format!("no free handle like {base:?}")))
}

/// Changes a person's own preferences: checked (the field and why, nothing written), then
/// written and audited with what they were before.
pub async fn set_preferences(
    conn: &mut PgConnection,
    actor: &Actor,
    person_id: i64,
    asked: Preferences,
) -> AppResult<Preferences> {
    let asked = asked.validated()?;
    let before = db::preferences(&mut *conn, person_id).await?;
    db::set_preferences(&mut *conn, person_id, &asked).await?;
    crate::audit::record(
        conn,
        actor,
        "person.preferences",
        &person_id.to_string(),
        serde_json::to_value(&before).ok(),
        serde_json::to_value(&asked).ok(),
    )
    .await?;
    Ok(asked)
}

/// `set_preferences` in a transaction of its own (run again if a deadlock broke it off).
pub async fn save_preferences(
    pool: &PgPool,
    actor: &Actor,
    person_id: i64,
    asked: &Preferences,
) -> AppResult<Preferences> {
    crate::transaction::write(pool, |tx, _| {
        Box::pin(set_preferences(tx, actor, person_id, asked.clone()))
    })
    .await
}
