//! Opsgenie's Alert API beyond the lanes: a note or a snooze on an alert (which act on its
//! incident), an outcome recorded for a call that named no alert it could act on, and an alert
//! or a request as Opsgenie's clients read them back.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use sqlx::PgPool;
use uuid::Uuid;

use super::domain::{OpsgenieCall, opsgenie_id};
use crate::alert_store::db::{self, NamedAlert, NewRequest, OpsgenieAlert, OpsgenieRequest};
use crate::error::AppResult;
use crate::incidents::actions::{self, Change};
use crate::incidents::domain::{Status, Transition};
use crate::integrations::db::Credentials;

/// Records the outcome of a call that did not go through the lanes, from its alert as it
/// stands (`None`: no such alert).
pub async fn record(
    pool: &PgPool,
    request: NewRequest<'_>,
    call: OpsgenieCall,
    alert: Option<(i64, &str)>,
) -> AppResult<()> {
    let (success, status) = call.outcome(alert.map(|(_, s)| s));
    let mut conn = pool.acquire().await?;
    db::record_requests(
        &mut conn,
        &[(request, alert.map(|(id, _)| id), success, status)],
    )
    .await
}

/// What a note or a snooze acts on.
pub struct OnAlert<'a> {
    pub sender: &'a Credentials,
    pub request_id: Uuid,
    pub named: NamedAlert<'a>,
}

/// Adds `note` to the timeline of the alert's incident, and records the request, in one
/// transaction.
pub async fn add_note(pool: &PgPool, on: OnAlert<'_>, note: &str) -> AppResult<()> {
    let mut tx = crate::transaction::begin(pool).await?;
    let alert = db::opsgenie_alert(&mut tx, on.sender.id, on.named).await?;
    if let Some(a) = &alert {
        let state = incident_of(&mut tx, a.incident_id).await?;
        let actor = super::effects::actor_of(on.sender);
        actions::add_note(&mut tx, &Change::now(state.key, &actor), None, note).await?;
    }
    let found = alert.as_ref().map(|a| (a.id, a.status.as_str()));
    let (success, status) = OpsgenieCall::AddNote.outcome(found.map(|(_, s)| s));
    finish(
        tx,
        &on,
        alert.as_ref(),
        (OpsgenieCall::AddNote, success, status),
    )
    .await
}

/// Snoozes the alert's incident for `minutes`: paging stops until then, and it pages again
/// unless mitigated or resolved by then. A triggered incident is acknowledged first (an
/// Opsgenie snooze silences an alert nobody has acknowledged yet); a mitigated or resolved
/// one has nothing to snooze.
pub async fn snooze(pool: &PgPool, on: OnAlert<'_>, minutes: i64, note: &str) -> AppResult<()> {
    let mut tx = crate::transaction::begin(pool).await?;
    let alert = db::opsgenie_alert(&mut tx, on.sender.id, on.named).await?;
    let found = alert.as_ref().map(|a| a.status.as_str());
    let (mut success, mut status) = OpsgenieCall::Snooze.outcome(found);
    if let Some(a) = alert.as_ref().filter(|_| success) {
        let state = incident_of(&mut tx, a.incident_id).await?;
        // Locked before its status is read: a person or a lane acting on it meanwhile waits.
        let incident = crate::incidents::db::lock(&mut *tx, state.key).await?;
        let actor = super::effects::actor_of(on.sender);
        let change = Change::now(state.key, &actor);
        match incident.status {
            Status::Triggered | Status::Acknowledged => {
                if incident.status == Status::Triggered {
                    let why = "Acknowledged by the alert's sender, to snooze it";
                    actions::transition(&mut tx, &change, Transition::Acknowledge, why).await?;
                }
                actions::snooze(&mut tx, &change, minutes, note).await?;
            }
            Status::Mitigated | Status::Resolved => {
                (success, status) = (false, "The alert's incident is mitigated or resolved");
            }
        }
    }
    finish(
        tx,
        &on,
        alert.as_ref(),
        (OpsgenieCall::Snooze, success, status),
    )
    .await
}

async fn incident_of(
    conn: &mut sqlx::PgConnection,
    incident_id: i64,
) -> AppResult<crate::incidents::db::IncidentState> {
    crate::incidents::db::incident_states(conn, &[incident_id])
        .await?
        .pop()
        .ok_or_else(|| crate::error::AppError::NotFound("the alert's incident is gone".into()))
}

/// Records the request in the transaction that acted on its alert, and commits.
async fn finish(
    mut tx: crate::transaction::Tx,
    on: &OnAlert<'_>,
    alert: Option<&OpsgenieAlert>,
    (call, success, status): (OpsgenieCall, bool, &str),
) -> AppResult<()> {
    let alias = alert.map_or("", |a| a.dedup_key.as_str());
    let request = NewRequest {
        request_id: on.request_id,
        integration_id: on.sender.id,
        action: call.as_str(),
        alias,
    };
    let done = [(request, alert.map(|a| a.id), success, status)];
    db::record_requests(&mut tx, &done).await?;
    tx.commit().await?;
    Ok(())
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An alert as Opsgenie's `GET /v2/alerts/{identifier}` shows one: its number is both `id` and
/// `tinyId`; what the sender said (tags, actions, entity, description, details, responders) as
/// it first sent it.
pub fn alert_json(a: &OpsgenieAlert) -> Value {
    let raw = |k: &str| a.raw.get(k).cloned();
    let text = |k: &str| raw(k).and_then(|v| v.as_str().map(str::to_owned));
    let list = |k: &str| raw(k).filter(Value::is_array).unwrap_or_else(|| json!([]));
    // Opsgenie's details are strings.
    let details: Map<String, Value> = raw("details")
        .and_then(|d| d.as_object().cloned())
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (k, Value::String(v))
        })
        .collect();
    let closed = a.status == "resolved";
    let updated = a
        .resolved_at
        .map_or(a.last_received_at, |r| r.max(a.last_received_at));
    let mut report = Map::new();
    if let Some(at) = a.resolved_at {
        let ms = (at - a.received_at).num_milliseconds().max(0);
        report.insert("closeTime".into(), json!(ms));
    }
    let mut data = json!({
        "id": opsgenie_id(a.id),
        "tinyId": opsgenie_id(a.id),
        "alias": a.dedup_key,
        "message": a.summary,
        "status": if closed { "closed" } else { "open" },
        "acknowledged": a.status == "acknowledged",
        "isSeen": a.status != "firing",
        "tags": list("tags"),
        "snoozed": a.snoozed_until.is_some(),
        "count": a.deliveries,
        "lastOccurredAt": stamp(a.last_received_at),
        "createdAt": stamp(a.received_at),
        "updatedAt": stamp(updated),
        "source": a.source,
        "owner": "",
        "priority": a.labels.get("priority").and_then(Value::as_str).unwrap_or("P3"),
        "responders": list("responders"),
        "integration": { "id": a.integration_id, "name": a.integration_name, "type": "API" },
        "report": report,
        "actions": list("actions"),
        "entity": text("entity").unwrap_or_default(),
        "description": text("description").unwrap_or_default(),
        "details": details,
    });
    if let Some(until) = a.snoozed_until {
        data["snoozedUntil"] = json!(stamp(until));
    }
    data
}

/// A request as Opsgenie's `GET /v2/alerts/requests/{requestId}` shows one.
pub fn request_json(r: &OpsgenieRequest) -> Value {
    json!({
        "success": r.success,
        "action": r.action,
        "processedAt": stamp(r.processed_at),
        "integrationId": r.integration_id,
        "isSuccess": r.success,
        "status": r.status,
        "alertId": r.alert_id.map(opsgenie_id).unwrap_or_default(),
        "alias": r.alias,
    })
}
