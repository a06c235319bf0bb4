//! Adding to the timeline: the one way another capability writes an entry, in the transaction
//! of the change it records.

use sqlx::PgConnection;

use super::db::{self, Event, NewEvent};
use crate::error::AppResult;

/// Appends one entry and returns it as stored.
pub async fn record(conn: &mut PgConnection, entry: NewEvent<'_>) -> AppResult<Event> {
    db::append(conn, entry).await
}

/// Appends several entries in one statement, in their order (a batch of incidents opened, the
/// SLA breaches of one round).
pub async fn record_many(conn: &mut PgConnection, entries: &[NewEvent<'_>]) -> AppResult<()> {
    db::append_many(conn, entries).await
}

/// Keeps a newly restricted incident's key and title out of other incidents' timelines: the
/// link entries written while it was open to everyone stop naming it.
pub async fn unname_links_to(
    conn: &mut PgConnection,
    key: &str,
    incident_id: i64,
) -> AppResult<u64> {
    super::db::unname_links_to(conn, key, incident_id).await
}
