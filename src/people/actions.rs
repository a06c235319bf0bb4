//! Adding a person for another capability: an account made from the command line or the
//! environment gets a person with a free handle made from its email.

use sqlx::PgConnection;

use super::db::{self, Person};
use super::domain::{PersonDraft, handle_from_email};
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
