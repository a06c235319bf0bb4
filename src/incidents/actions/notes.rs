//! Notes, background context and stakeholder updates.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self};
use crate::error::AppResult;
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self};
use crate::notify::domain::Event;
use crate::timeline::{self, domain::Kind};

/// Adds a note (or background context) to the timeline. Notes never conflict, so they carry no
/// version check.
pub async fn add_note(
    conn: &mut PgConnection,
    c: &Change<'_>,
    kind: Option<&str>,
    body: &str,
) -> AppResult<(Incident, timeline::db::Event)> {
    let (key, actor, at) = (c.key, c.actor, c.at);
    let incident = db::get(&mut *conn, key).await?;
    let kind = timeline::domain::Kind::parse_writable(kind)?;
    let body = timeline::domain::check_note_body(body)?;
    let now = c.clock(conn).await?;
    let at = match kind {
        Kind::Context => domain::check_context_at(at, now)?,
        _ => domain::check_note_at(at, incident.started_at, now)?,
    };
    let noted = Entry {
        kind,
        at,
        body: &body,
        details: json!({}),
        version: None,
    };
    let event = append(conn, incident.id, actor, noted).await?;
    audit::created(
        conn,
        actor,
        &format!("incident.{}", kind.as_str()),
        &key.to_string(),
        json!({ "body": event.body, "occurred_at": event.occurred_at }),
    )
    .await?;
    Ok((incident, event))
}

/// Records a stakeholder update (sent now, or at `at`), on the timeline too. Updates never
/// conflict, so they carry no version check.
pub async fn add_stakeholder_update(
    conn: &mut PgConnection,
    c: &Change<'_>,
    audience: &str,
    body: &str,
) -> AppResult<crate::updates::db::Update> {
    let (key, actor, at) = (c.key, c.actor, c.at);
    use crate::updates::actions as updates;
    let incident = db::get(&mut *conn, key).await?;
    let checked = updates::check(audience, body)?;
    let now = c.clock(conn).await?;
    let at = domain::check_at(at, incident.started_at, now)?;
    let (name, person) = (&actor.name, actor.person_id);
    let update = updates::post(conn, incident.id, &checked, at, name, person).await?;
    let (audience, body) = (checked.audience, checked.body);
    let sent = Entry {
        kind: Kind::StakeholderUpdate,
        at,
        body: &body,
        details: json!({ "audience": audience.as_str(), "update_id": update.id }),
        version: None,
    };
    append(conn, incident.id, actor, sent).await?;
    rearm(conn, &incident).await?;
    let what = format!(
        "update to {} from {}: {body}",
        audience.as_str(),
        actor.name
    );
    let bridge = crate::bridge::db::of_incident(&mut *conn, incident.id).await?;
    announce(
        conn,
        &incident,
        &bridge,
        Event::UpdatePosted,
        &what,
        Some(audience.as_str()),
    )
    .await?;
    audit::created(
        conn,
        actor,
        "incident.stakeholder_update",
        &key.to_string(),
        json!({ "audience": audience.as_str(), "body": body, "sent_at": at }),
    )
    .await?;
    Ok(update)
}
