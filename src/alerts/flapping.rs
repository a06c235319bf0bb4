//! Finding flapping alerts as they fire, inside the ingest transaction. A key that fires more
//! times within its integration's window than its threshold is flapping: its incident keeps it
//! (no new incident, nobody paged again), says so once on the timeline, shows the count, and
//! — when its own alerts had mitigated it — takes that mitigation back, so the incident stays
//! open while the alert flaps. It mitigates again only once the alert has stayed resolved for
//! the settle time (`settle.rs`).

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;

use crate::alert_store::db::{self, Flaps, Stored};
use crate::audit::Actor;
use crate::error::AppResult;
use crate::incidents::{self, actions, domain::Status};
use crate::integrations::db::Credentials;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// After a batch's alerts are stored: the keys that fired anew (not repeats of an open alert)
/// are counted, and those flapping are marked. `sender` finds the integration of a stored row.
pub async fn fired<'a>(
    conn: &mut PgConnection,
    stored: &[Stored],
    sender: impl Fn(uuid::Uuid) -> Option<&'a Credentials>,
    now: DateTime<Utc>,
) -> AppResult<()> {
    let fresh: Vec<&Stored> = stored.iter().filter(|s| s.inserted).collect();
    if fresh.is_empty() {
        return Ok(());
    }
    let ids: Vec<uuid::Uuid> = fresh.iter().map(|s| s.integration_id).collect();
    let keys: Vec<String> = fresh.iter().map(|s| s.dedup_key.clone()).collect();
    let counts = db::fire_counts(conn, &ids, &keys).await?;
    let mut flaps = Flaps::default();
    for c in &counts {
        if !(c.flapping || c.fires > i64::from(c.threshold)) {
            continue;
        }
        let Some(s) = fresh
            .iter()
            .find(|s| s.integration_id == c.integration_id && s.dedup_key == c.dedup_key)
        else {
            continue;
        };
        flaps.integration_id.push(s.integration_id);
        flaps.dedup_key.push(&s.dedup_key);
        flaps.incident_id.push(s.incident_id);
        flaps.summary.push(&s.summary);
        flaps.fires.push(i32::try_from(c.fires).unwrap_or(i32::MAX));
    }
    if flaps.integration_id.is_empty() {
        return Ok(());
    }
    let mut found: Vec<db::Flapped> = db::mark_flapping(conn, &flaps)
        .await?
        .into_iter()
        .filter(|f| f.found)
        .collect();
    found.sort_by_key(|f| f.incident_id);
    for f in &found {
        let Some(c) = sender(f.integration_id) else {
            continue;
        };
        found_flapping(conn, f, c, now).await?;
    }
    Ok(())
}

/// A key just found flapping: a line on its incident's timeline, and a mitigation its alerts
/// made taken back.
async fn found_flapping(
    conn: &mut PgConnection,
    f: &db::Flapped,
    c: &Credentials,
    now: DateTime<Utc>,
) -> AppResult<()> {
    let rule = c.flapping;
    let actor = Actor::system(&format!("{} (alerts)", c.name));
    let body = format!(
        "Alert \"{}\" is flapping: it fired {} times within {} min. Its fires page nobody again; \
         the incident mitigates only once it has stayed resolved for {} min",
        crate::domain::shorten(&f.summary, 200),
        f.fires,
        rule.window_minutes,
        rule.settle_minutes
    );
    let details = json!({ "flapping": f.dedup_key, "fires": f.fires, "integration": c.name,
                          "window_minutes": rule.window_minutes,
                          "settle_minutes": rule.settle_minutes });
    timeline::actions::record(
        &mut *conn,
        NewEvent::by(&actor.name, f.incident_id, now, Kind::Note, details).saying(&body),
    )
    .await?;
    let Some(state) = incidents::db::incident_states(conn, &[f.incident_id])
        .await?
        .into_iter()
        .next()
    else {
        return Ok(());
    };
    if state.status != Status::Mitigated {
        return Ok(());
    }
    let incident = incidents::db::get(&mut *conn, state.key).await?;
    let Some(at) = incident.mitigated_at else {
        return Ok(());
    };
    if db::mitigated_by_alerts(conn, f.incident_id, at).await? {
        let change = actions::Change::now(state.key, &actor).on_clock(now);
        let why = "its alerts mitigated it, but one of them is flapping: it stays open until the \
                   alert has stayed resolved for the settle time";
        actions::step_back(conn, &change, Status::Acknowledged, why).await?;
    }
    Ok(())
}
