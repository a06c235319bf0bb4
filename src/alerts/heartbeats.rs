//! Heartbeats as alerts: a monitor whose ping is missing past its interval and grace fires an
//! alert from the "Quell heartbeats" integration (dedup and group key: the monitor), judged as
//! a sender's would be — routed, silenced, opening or joining an incident, paging — and its
//! next ping resolves it. Every replica runs the engine; each missed monitor is claimed `SKIP
//! LOCKED` and marked down in the same transaction, so it fires once. Woken by
//! `quell_heartbeats` when monitors change, and by the next due time.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::{PgConnection, PgPool};

use super::domain::{Action, AlertEvent};
use super::effects::judge;
use crate::error::AppResult;
use crate::heartbeats::db::{self, Missed, Pinged};
use crate::heartbeats::domain::dedup_key;

pub const CHANNEL: &str = "quell_heartbeats";

const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let what = "could not check heartbeat monitors";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        missed_due(&pool).await
    })
    .await
}

fn event(action: Action, m_id: uuid::Uuid, summary: String) -> AlertEvent {
    let key = dedup_key(m_id);
    AlertEvent {
        action,
        dedup_key: key.clone(),
        group_key: key,
        summary,
        source: "quell heartbeat".into(),
        severity: String::new(),
        labels: json!({}),
        details: json!({}),
        source_url: None,
        starts_at: None,
        raw: json!({}),
        service_hint: None,
    }
}

fn missed_event(m: &Missed) -> AlertEvent {
    let last = m.last_ping_at.map_or_else(
        || "never pinged".to_owned(),
        |t| format!("last ping {}", t.format("%Y-%m-%d %H:%M:%S UTC")),
    );
    let mut e = event(
        Action::Trigger,
        m.id,
        format!("Heartbeat \"{}\" missed ({last})", m.name),
    );
    e.severity.clone_from(&m.severity);
    e.labels = json!({ "alertname": "HeartbeatMissed", "heartbeat": m.name,
                       "service": m.service, "severity": m.severity });
    e.details = json!({ "description": m.description, "last_ping_at": m.last_ping_at,
                        "interval_minutes": m.interval_minutes,
                        "grace_minutes": m.grace_minutes });
    e.raw = json!({ "heartbeat": m.id, "name": m.name });
    // The impact began when the missing ping was due, not at the last one.
    e.starts_at = m
        .last_ping_at
        .map(|t| t + chrono::Duration::minutes(i64::from(m.interval_minutes)));
    e.service_hint = Some(m.service.clone());
    e
}

/// Fires the alerts of monitors whose ping is missing, in one transaction; returns the seconds
/// until the next is due.
pub async fn missed_due(pool: &PgPool) -> AppResult<Option<f64>> {
    let mut tx = crate::transaction::begin(pool).await?;
    let gone = resolve_orphans(&mut tx).await?;
    let missed = crate::heartbeats::actions::take_missed(&mut tx, 20).await?;
    if missed.is_empty() && !gone {
        let next = db::next_due(&mut *tx).await?;
        tx.commit().await?;
        // Overdue but not ours: another replica has it; look again in a while.
        return Ok(next.map(|secs| if secs <= 0.0 { 1.0 } else { secs }));
    }
    let source = crate::heartbeats::actions::source(&mut tx).await?;
    let now = crate::clock::now(&mut *tx).await?;
    let events = missed.iter().map(|m| (source, missed_event(m))).collect();
    judge(&mut tx, events, now).await?;
    tx.commit().await?;
    Ok(Some(0.0))
}

/// The open alerts of monitors removed or paused (or of a service removed with its monitors)
/// are resolved: no ping will come for them. Whether any were.
async fn resolve_orphans(conn: &mut PgConnection) -> AppResult<bool> {
    let Some(source) = db::source_id(&mut *conn).await? else {
        return Ok(false);
    };
    let keys = db::orphaned(&mut *conn, source).await?;
    if keys.is_empty() {
        return Ok(false);
    }
    let now = crate::clock::now(&mut *conn).await?;
    let events = keys
        .into_iter()
        .map(|k| {
            let mut e = event(Action::Resolve, uuid::Uuid::nil(), String::new());
            e.dedup_key.clone_from(&k);
            e.group_key = k;
            e.summary = "Heartbeat monitor removed or paused".into();
            (source, e)
        })
        .collect();
    judge(conn, events, now).await?;
    Ok(true)
}

/// After a ping was recorded: a monitor that was down has its alert resolved.
pub async fn pinged(conn: &mut PgConnection, p: &Pinged, now: DateTime<Utc>) -> AppResult<()> {
    if !p.was_down {
        return Ok(());
    }
    let source = crate::heartbeats::actions::source(&mut *conn).await?;
    let summary = format!("Heartbeat \"{}\" pinged again", p.name);
    judge(
        conn,
        vec![(source, event(Action::Resolve, p.id, summary))],
        now,
    )
    .await
}
