//! Maintenance windows' starts and ends, on time in every replica: a window's next start or
//! end is a row (`maintenance_windows.next_edge_at`), claimed `SKIP LOCKED` by one replica,
//! acted on and moved to the next in one transaction. A start is written on the timeline of
//! every open incident of its services; an end too, and then the alerts it held that still
//! fire are judged again at once, and the incidents it opened quietly that nobody has
//! acknowledged start their escalation. Woken by `quell_maintenance` and by the next due edge.

use std::time::Duration;

use serde_json::json;
use sqlx::{PgConnection, PgPool};

use super::domain::{Action, AlertEvent};
use super::effects::judge;
use crate::error::AppResult;
use crate::maintenance::actions::{self as windows, DueEdge};
use crate::maintenance::domain::EdgeKind;
use crate::timeline::{self, db::NewEvent, domain::Kind};

pub const CHANNEL: &str = "quell_maintenance";

const POLL: Duration = Duration::from_secs(5);

pub async fn run(pool: PgPool) {
    let what = "could not start or end maintenance windows";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        fire_due(&pool).await
    })
    .await
}

/// Acts on the starts and ends due now, in one transaction; returns the seconds until the next.
pub async fn fire_due(pool: &PgPool) -> AppResult<Option<f64>> {
    let mut tx = crate::transaction::begin(pool).await?;
    let due = windows::take_due(&mut tx, 20).await?;
    for d in &due {
        edge(&mut tx, d).await?;
    }
    // Quiet incidents a lane opened just as their window ended, after its end paged the others.
    let late = windows::quiet_stranded(&mut *tx).await?;
    if !late.is_empty() {
        let now = crate::clock::now(&mut *tx).await?;
        for (incident_id, _) in &late {
            let note = "Opened as its maintenance window ended, still unacknowledged: paging now";
            let details = json!({ "maintenance_window_ended": true });
            timeline::actions::record(
                &mut tx,
                NewEvent::by("maintenance window", *incident_id, now, Kind::Note, details)
                    .saying(note),
            )
            .await?;
        }
        crate::paging::actions::start_many(&mut tx, &late).await?;
    }
    let next = windows::next_due(&mut *tx).await?;
    tx.commit().await?;
    Ok(match (due.is_empty(), next) {
        (false, _) => Some(0.0),
        // Overdue but not ours: another replica has it; look again in a while.
        (true, Some(secs)) if secs <= 0.0 => Some(1.0),
        (true, next) => next,
    })
}

async fn edge(conn: &mut PgConnection, d: &DueEdge) -> AppResult<()> {
    let w = &d.window;
    let now = crate::clock::now(&mut *conn).await?;
    let actor = format!(
        "maintenance window \"{}\"",
        crate::domain::shorten(&w.name, 100)
    );
    let services = w.services.join(", ");
    let (body, edge) = match d.edge.kind {
        EdgeKind::Start => {
            let rules = windows::rules_of(w);
            let until = rules
                .active_at(now)
                .map(|(_, e)| e)
                .unwrap_or(d.edge.at + rules.duration);
            let what = if w.mode == "silence" {
                "their alerts are held (no incident, nobody paged)"
            } else {
                "new incidents page nobody"
            };
            (
                format!(
                    "Maintenance window \"{}\" started on {services} until {} UTC: {what}",
                    w.name,
                    until.format("%Y-%m-%d %H:%M")
                ),
                "start",
            )
        }
        EdgeKind::End => (
            format!(
                "Maintenance window \"{}\" ended on {services}: alerts page as usual again",
                w.name
            ),
            "end",
        ),
    };
    let details =
        json!({ "maintenance_window": w.id, "edge": edge, "occurrence": d.edge.occurrence });
    for incident_id in windows::touched(&mut *conn, w.id).await? {
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(&actor, incident_id, now, Kind::Note, details.clone()).saying(&body),
        )
        .await?;
    }
    if d.edge.kind == EdgeKind::End {
        let quiet = windows::quiet_to_page(&mut *conn, w.id).await?;
        for (incident_id, _) in &quiet {
            let note = "Still unacknowledged when the maintenance window ended: paging now";
            timeline::actions::record(
                &mut *conn,
                NewEvent::by(&actor, *incident_id, now, Kind::Note, details.clone()).saying(note),
            )
            .await?;
        }
        crate::paging::actions::start_many(&mut *conn, &quiet).await?;
        let held = crate::silences::actions::hand_back_window(&mut *conn, w.id).await?;
        judge_again(conn, held, now).await?;
    }
    Ok(())
}

/// Routes held alerts again, as a lane would have had no silence or window held them.
pub async fn judge_again(
    conn: &mut PgConnection,
    released: Vec<crate::silences::db::Released>,
    now: chrono::DateTime<chrono::Utc>,
) -> AppResult<()> {
    let events: Vec<(uuid::Uuid, AlertEvent)> = released
        .into_iter()
        .map(|r| {
            let e = AlertEvent {
                action: Action::Trigger,
                dedup_key: r.dedup_key,
                group_key: r.group_key,
                summary: r.summary,
                source: r.source,
                severity: r.severity,
                labels: r.labels,
                details: r.details,
                source_url: r.source_url,
                starts_at: r.starts_at,
                raw: r.raw,
                service_hint: None,
            };
            (r.integration_id, e)
        })
        .collect();
    judge(conn, events, now).await
}
