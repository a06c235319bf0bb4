//! Changes to the alert store that other capabilities make: an incident's alerts end with it.

use sqlx::PgConnection;

use super::db;
use crate::error::AppResult;

/// When an incident is resolved: its groups close (waiting for alerts joining them to commit),
/// then its open alerts resolve with it, so the next alert of the same group or key opens a new
/// incident instead of joining a finished one.
/// Its flapping alerts stop flapping with it: nothing of it settles later.
pub async fn end_with_incident(conn: &mut PgConnection, incident_id: i64) -> AppResult<()> {
    db::close_for_incident(conn, incident_id).await?;
    db::settle_with_incident(conn, incident_id).await
}
