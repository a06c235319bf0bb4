//! Changes to claims that other capabilities make: an incident's claims end with it.

use sqlx::PgConnection;

use super::db;
use crate::error::AppResult;

/// Ends the incident's held claims, released by `by` (who resolved it), in the caller's
/// transaction: a resolved incident has nobody still looking into anything. Returns the ids of
/// the claims ended.
pub async fn end_with_incident(
    conn: &mut PgConnection,
    incident_id: i64,
    by: &str,
) -> AppResult<Vec<i64>> {
    db::release_held(conn, incident_id, by).await
}
