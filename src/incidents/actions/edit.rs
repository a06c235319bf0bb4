//! The incident's own fields.

use super::shared::*;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sqlx::PgConnection;

use crate::error::AppResult;
use crate::incidents::db::{self, Edit, Incident};
use crate::incidents::domain::{self};
use crate::timeline::domain::Kind;

/// Fields of an edit; `None` leaves a field as it is. `service: Some(None)` clears it.
#[derive(Debug, Default)]
pub struct Patch {
    pub title: Option<String>,
    pub summary: Option<String>,
    pub impact: Option<String>,
    pub service: Option<Option<String>>,
    pub started_at: Option<DateTime<Utc>>,
}

/// Changes the incident's own fields; the timeline says what changed (and when: now).
pub async fn edit(conn: &mut PgConnection, c: &Change<'_>, patch: Patch) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let title = match &patch.title {
        Some(t) => domain::check_title(t)?,
        None => incident.title.clone(),
    };
    let summary = match &patch.summary {
        Some(s) => domain::check_text("summary", s, 20_000)?,
        None => incident.summary.clone(),
    };
    let impact = match &patch.impact {
        Some(s) => domain::check_text("impact", s, 20_000)?,
        None => incident.impact.clone(),
    };
    let service = match &patch.service {
        Some(name) => service_id(conn, name.as_deref()).await?,
        None => incident.service_id.zip(incident.service.clone()),
    };
    let started_at = patch.started_at.unwrap_or(incident.started_at);
    let now = c.clock(conn).await?;
    domain::check_opening_times(started_at, incident.detected_at, now)?;

    let mut changes = Map::new();
    let mut note = |field: &str, from: Value, to: Value| {
        if from != to {
            changes.insert(field.into(), json!({ "from": from, "to": to }));
        }
    };
    note("title", json!(incident.title), json!(title));
    note("summary", json!(incident.summary), json!(summary));
    note("impact", json!(incident.impact), json!(impact));
    note(
        "service",
        json!(incident.service),
        json!(service.as_ref().map(|s| &s.1)),
    );
    note("started_at", json!(incident.started_at), json!(started_at));
    if changes.is_empty() {
        return Ok(incident);
    }
    let version = db::update_fields(
        &mut *conn,
        incident.id,
        &Edit {
            title: &title,
            summary: &summary,
            impact: &impact,
            service_id: service.map(|s| s.0),
            started_at,
        },
    )
    .await?;
    let edited = Entry {
        kind: Kind::Edited,
        at: now,
        body: "",
        details: json!({ "changes": changes }),
        version: Some(version),
    };
    append(conn, incident.id, actor, edited).await?;
    audited(conn, actor, "incident.edit", &incident, key).await
}
