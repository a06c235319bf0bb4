//! Changes to bridges that other capabilities make, with the rule of when an incident starts
//! with its service's: the incident's side (its lock, timeline entry and audit row) is
//! `incidents::actions::bridge`, the service's `services::actions`.

use sqlx::PgConnection;

use super::db;
use super::domain::{self, Bridge};
use crate::domain::Severity;
use crate::error::AppResult;

/// Sets the incident's call and chat links (an empty bridge removes them), set by `by`.
/// Returns the bridge before, or `None` when nothing changed.
pub async fn set_for_incident(
    conn: &mut PgConnection,
    incident_id: i64,
    bridge: &Bridge,
    by: &str,
) -> AppResult<Option<Bridge>> {
    let before = db::of_incident(&mut *conn, incident_id).await?;
    if &before == bridge {
        return Ok(None);
    }
    db::set_for_incident(&mut *conn, incident_id, bridge, by).await?;
    Ok(Some(before))
}

/// A Sev1 or Sev2 without a bridge (`current`) starts with its service's default one, if it
/// has one. Returns that bridge when it was set.
pub async fn from_service(
    conn: &mut PgConnection,
    incident_id: i64,
    severity: Severity,
    service_id: Option<i64>,
    current: &Bridge,
    by: &str,
) -> AppResult<Option<Bridge>> {
    let Some(service_id) = service_id else {
        return Ok(None);
    };
    if !current.is_empty() || !domain::wanted(severity) {
        return Ok(None);
    }
    let defaults = db::of_service(&mut *conn, service_id).await?;
    if defaults.is_empty() {
        return Ok(None);
    }
    db::set_for_incident(&mut *conn, incident_id, &defaults, by).await?;
    Ok(Some(defaults))
}

/// Sets the links a Sev1 or Sev2 of the service starts with (empty removes them). Returns the
/// ones before.
pub async fn set_for_service(
    conn: &mut PgConnection,
    service_id: i64,
    bridge: &Bridge,
) -> AppResult<Bridge> {
    let before = db::of_service(&mut *conn, service_id).await?;
    db::set_for_service(&mut *conn, service_id, bridge).await?;
    Ok(before)
}
