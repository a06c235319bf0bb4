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

/// Before two incidents merge or one splits: the alert groups of `incidents` are locked
/// first, as the alert lanes lock them, so alerts arriving meanwhile wait and then land
/// where the change leaves their groups.
pub async fn hold_groups_of(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<()> {
    db::lock_groups_of(conn, incidents).await
}

/// Merging: every alert of `from`, with its groups and flapping keys, becomes `into`'s;
/// returns how many alerts moved.
pub async fn merge_into(conn: &mut PgConnection, from: i64, into: i64) -> AppResult<i64> {
    db::move_incident(conn, from, into).await
}

/// Splitting: the alerts `ids` of `from` move to `into`; returns how many moved.
pub async fn split_off(
    conn: &mut PgConnection,
    from: i64,
    into: i64,
    ids: &[i64],
) -> AppResult<i64> {
    db::move_alerts(conn, from, into, ids).await
}
