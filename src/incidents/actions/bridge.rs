//! The call and chat links.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self, Actor};
use crate::clock;
use crate::error::AppResult;
use crate::incidents::db::{self, Incident};
use crate::timeline::domain::Kind;

/// Sets the incident's call and chat links (an empty bridge removes them).
pub async fn set_bridge(
    conn: &mut PgConnection,
    c: &Change<'_>,
    bridge: &crate::bridge::domain::Bridge,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    let set = crate::bridge::actions::set_for_incident(conn, incident.id, bridge, &actor.name);
    let Some(before) = set.await? else {
        return Ok(incident);
    };
    write_bridge_entry(conn, &incident, actor, bridge).await?;
    audit::changed(
        conn,
        actor,
        "incident.bridge",
        &key.to_string(),
        &before,
        &bridge,
    )
    .await?;
    Ok(incident)
}

async fn write_bridge_entry(
    conn: &mut PgConnection,
    incident: &Incident,
    actor: &Actor,
    bridge: &crate::bridge::domain::Bridge,
) -> AppResult<()> {
    let now = clock::now(&mut *conn).await?;
    let entry = Entry {
        kind: Kind::Bridge,
        at: now,
        body: "",
        details: json!({ "line": bridge.line(), "call_url": bridge.call_url, "chat_url": bridge.chat_url }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    Ok(())
}

/// A Sev1 or Sev2 without a bridge (`current`) starts with its service's default one, if it
/// has one. Returns the bridge in effect after.
pub(super) async fn bridge_from_service(
    conn: &mut PgConnection,
    incident: &Incident,
    actor: &Actor,
    current: crate::bridge::domain::Bridge,
) -> AppResult<crate::bridge::domain::Bridge> {
    let (id, severity, service) = (incident.id, incident.severity, incident.service_id);
    let set =
        crate::bridge::actions::from_service(conn, id, severity, service, &current, &actor.name);
    let Some(defaults) = set.await? else {
        return Ok(current);
    };
    write_bridge_entry(conn, incident, actor, &defaults).await?;
    Ok(defaults)
}
