//! Posting a stakeholder update, with its rules (an audience Quell knows, a body within
//! bounds). The incident's side (when it may be dated, its timeline entry, the channels told,
//! the audit row) is `incidents::actions::add_stakeholder_update`.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::db::{self, NewUpdate, Update};
use super::domain::{Audience, check_body};
use crate::error::AppResult;

/// What an update says: to whom, and the checked text.
pub struct Checked {
    pub audience: Audience,
    pub body: String,
}

/// Checks an update before anything is written: 400 naming `audience` or `body`.
pub fn check(audience: &str, body: &str) -> AppResult<Checked> {
    Ok(Checked {
        audience: Audience::parse(audience)?,
        body: check_body(body)?,
    })
}

/// Records the checked update to the incident, sent at `sent_at` by `author`.
pub async fn post(
    conn: &mut PgConnection,
    incident_id: i64,
    u: &Checked,
    sent_at: DateTime<Utc>,
    author: &str,
    author_id: Option<i64>,
) -> AppResult<Update> {
    let new = NewUpdate {
        incident_id,
        audience: u.audience.as_str(),
        body: &u.body,
        sent_at,
        author,
        author_id,
    };
    db::insert(conn, &new).await
}
