//! The audit log: who changed what, when, from where, with the before and after, written in the
//! same transaction as the change; and refused attempts, tallied per minute so a flood adds one
//! row, not thousands. The table is append-only (a trigger refuses updates and deletes).

pub mod db;
pub mod handlers;
pub mod pages;

use serde_json::Value;
use sqlx::PgConnection;

use crate::error::AppResult;

/// Who is acting, and from where: every change is attributed to one.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub person_id: Option<i64>,
    /// The name shown on timelines and in the audit log.
    pub name: String,
    pub request_id: Option<String>,
    pub client_addr: Option<String>,
}

impl Actor {
    /// Work Quell does by itself (demo loading, bootstrap).
    pub fn system(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Default::default()
        }
    }
}

/// Appends a successful change to the audit log.
pub async fn record(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    target: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> AppResult<()> {
    db::append(conn, actor, action, target, "ok", before, after).await?;
    Ok(())
}
