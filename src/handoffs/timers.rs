//! The engine that sends hand-off notices. Every replica runs it: each round works out every
//! schedule's hand-offs around now from its spans, and for each notice due claims its row
//! (`handoff_notices`, one per schedule, instant, person and kind) before queueing the
//! messages in the same transaction — a replica racing it waits on the row and then finds it
//! taken, so each notice is sent once.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;

use super::db;
use super::domain::{self, Due, GRACE, Wants};
use crate::error::AppResult;
use crate::oncall::db::StoredSchedule;
use crate::people::domain::Preferences;

/// How far ahead hand-offs are worked out: past the longest reminder (48 hours), far enough to
/// say when a weekly shift ends.
const AHEAD: Duration = Duration::days(15);
/// At most this many open incidents are listed in a notice.
const LISTED: i64 = 20;

/// Who can be told, by handle.
struct Someone {
    id: i64,
    name: String,
    prefs: Preferences,
}

/// Sends the notices due now; returns how many were sent and the seconds until the next may
/// fall due.
pub async fn send_due(pool: &PgPool) -> AppResult<(usize, Option<f64>)> {
    let mut tx = crate::transaction::begin(pool).await?;
    let now = crate::clock::now(&mut *tx).await?;
    let schedules = crate::oncall::db::list(&mut *tx, None).await?;
    if schedules.is_empty() {
        return Ok((0, None));
    }
    let people = crate::people::db::list(&mut *tx).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let mut prefs = crate::people::db::preferences_of(&mut *tx, &ids).await?;
    let someone: HashMap<String, Someone> = people
        .into_iter()
        .map(|p| {
            let prefs = prefs.remove(&p.id).unwrap_or_default();
            let s = Someone {
                id: p.id,
                name: p.name,
                prefs,
            };
            (p.handle, s)
        })
        .collect();
    let wants = |handle: &str| match someone.get(handle) {
        Some(s) => Wants {
            notices: s.prefs.handoff_notices,
            remind_hours: s.prefs.handoff_reminder_hours,
        },
        None => Wants {
            notices: false,
            remind_hours: None,
        },
    };
    let (mut sent, mut next) = (0, None::<DateTime<Utc>>);
    for s in &schedules {
        let rules = match crate::oncall::actions::rules(s) {
            Ok(rules) => rules,
            Err(e) => {
                tracing::warn!(error = %e, "hand-off notices skip a schedule");
                continue;
            }
        };
        let (from, to) = (now - GRACE - Duration::minutes(1), now + AHEAD);
        let handoffs = domain::handoffs(&rules.spans(from, to), from, to);
        for d in domain::due(&handoffs, wants, now) {
            if let Some(who) = someone.get(d.person)
                && tell(&mut tx, s, &d, who, &someone).await?
            {
                sent += 1;
            }
        }
        next = next
            .into_iter()
            .chain(domain::next_due(&handoffs, wants, now))
            .min();
    }
    tx.commit().await?;
    let next_in = next.map(|t| (t - now).num_milliseconds() as f64 / 1000.0);
    Ok((sent, next_in))
}

/// Claims and sends one notice; false when another replica already had it.
async fn tell(
    conn: &mut PgConnection,
    s: &StoredSchedule,
    d: &Due<'_>,
    who: &Someone,
    someone: &HashMap<String, Someone>,
) -> AppResult<bool> {
    let at = d.handoff.at;
    if !db::claim(&mut *conn, s.id, at, who.id, d.kind).await? {
        return Ok(false);
    }
    let incidents = db::open_incidents(&mut *conn, &s.name, who.id, LISTED).await?;
    let name_of = |handle: &str| {
        someone
            .get(handle)
            .map_or_else(|| handle.to_owned(), |p| p.name.clone())
    };
    let (subject, lines) = domain::words(d, &s.name, name_of, &incidents, who.prefs.zone());
    let payload = json!({
        "type": crate::notify::actions::HANDOFF,
        "kind": d.kind,
        "schedule": { "id": s.id, "name": s.name },
        "at": at,
        "until": d.handoff.until,
        "going_off": d.handoff.off,
        "coming_on": d.handoff.on,
        "incidents": incidents,
        "message": subject,
        "lines": lines,
        "path": format!("/schedules/{}", s.id),
    });
    let queued = crate::notify::actions::tell_person(conn, who.id, s.id, &payload).await?;
    db::sent(&mut *conn, (s.id, at, who.id), d.kind, queued as i64).await?;
    Ok(true)
}

pub const CHANNEL: &str = "quell_handoffs";
const POLL: std::time::Duration = std::time::Duration::from_secs(60);

/// The loop of one replica: send what is due, then sleep until the next hand-off or reminder,
/// or the poll interval (a schedule changed meanwhile is read again by then).
pub async fn run(pool: PgPool) {
    let what = "could not send hand-off notices";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        send_due(&pool).await.map(|(_, next)| next)
    })
    .await
}
