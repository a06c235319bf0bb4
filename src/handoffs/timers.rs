//! The engine that sends hand-off notices. Every replica runs it: each round works out every
//! schedule's hand-offs around now from its spans, and for each notice due claims its row
//! (`handoff_notices`, one per schedule, instant, person and kind) before queueing the
//! messages in the same transaction — a replica racing it waits on the row and then finds it
//! taken, so each notice is sent once. Each schedule is its own transaction: one that fails is
//! logged and tried again next round (within the grace) without holding the others back.

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

/// Who can be told, by handle: people who may act on call (enabled, more than viewers) —
/// the escalation pages nobody else, so nobody else is on call as far as notices go.
struct Someone {
    id: i64,
    name: String,
    prefs: Preferences,
}

type People = HashMap<String, Someone>;

async fn people(pool: &PgPool) -> AppResult<People> {
    let mut conn = pool.acquire().await?;
    let people = crate::people::db::list(&mut *conn).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let able = crate::people::db::can_acknowledge(&mut *conn, &ids).await?;
    let mut prefs = crate::people::db::preferences_of(&mut *conn, &ids).await?;
    Ok(people
        .into_iter()
        .filter(|p| able.contains(&p.id))
        .map(|p| {
            let prefs = prefs.remove(&p.id).unwrap_or_default();
            let s = Someone {
                id: p.id,
                name: p.name,
                prefs,
            };
            (p.handle, s)
        })
        .collect())
}

fn wants(people: &People) -> impl Fn(&str) -> Wants + '_ {
    |handle| match people.get(handle) {
        Some(s) => Wants {
            notices: s.prefs.handoff_notices,
            remind_hours: s.prefs.handoff_reminder_hours,
        },
        None => Wants {
            notices: false,
            remind_hours: None,
        },
    }
}

/// Sends the notices due now; returns how many were sent and the seconds until the next may
/// fall due.
pub async fn send_due(pool: &PgPool) -> AppResult<(usize, Option<f64>)> {
    let schedules = crate::oncall::db::list(pool, None).await?;
    if schedules.is_empty() {
        return Ok((0, None));
    }
    let people = people(pool).await?;
    let (mut sent, mut next_in) = (0, None::<f64>);
    for s in &schedules {
        match schedule_round(pool, s, &people).await {
            Ok((n, next)) => {
                sent += n;
                next_in = next_in.into_iter().chain(next).reduce(f64::min);
            }
            Err(e) => {
                tracing::warn!(schedule = s.id, error = %e, "hand-off notices of a schedule failed; tried again next round")
            }
        }
    }
    Ok((sent, next_in))
}

/// One schedule's notices due now, in a transaction of its own (now is its clock).
async fn schedule_round(
    pool: &PgPool,
    s: &StoredSchedule,
    people: &People,
) -> AppResult<(usize, Option<f64>)> {
    let rules = crate::oncall::actions::rules(s)?;
    let mut tx = crate::transaction::begin(pool).await?;
    let now = crate::clock::now(&mut *tx).await?;
    let (from, to) = (now - GRACE - Duration::minutes(1), now + AHEAD);
    // Someone who cannot be paged is nobody on call: the person before them hands to nobody.
    let spans: Vec<_> = rules
        .spans(from, to)
        .into_iter()
        .filter(|span| people.contains_key(&span.person))
        .collect();
    let handoffs = domain::handoffs(&spans, from, to);
    let mut sent = 0;
    for d in domain::due(&handoffs, wants(people), now) {
        if let Some(who) = people.get(d.person)
            && tell(&mut tx, s, &d, who, people).await?
        {
            sent += 1;
        }
    }
    tx.commit().await?;
    let next = domain::next_due(&handoffs, wants(people), now)
        .map(|t: DateTime<Utc>| (t - now).num_milliseconds() as f64 / 1000.0);
    Ok((sent, next))
}

/// Claims and sends one notice; false when another replica already had it.
async fn tell(
    conn: &mut PgConnection,
    s: &StoredSchedule,
    d: &Due<'_>,
    who: &Someone,
    people: &People,
) -> AppResult<bool> {
    let at = d.handoff.at;
    if !db::claim(&mut *conn, s.id, at, who.id, d.kind).await? {
        return Ok(false);
    }
    let open = db::open_incidents(&mut *conn, &s.name, who.id, LISTED).await?;
    let name_of = |handle: &str| {
        people
            .get(handle)
            .map_or_else(|| handle.to_owned(), |p| p.name.clone())
    };
    let (subject, lines) = domain::words(d, &s.name, name_of, &open, who.prefs.zone());
    let payload = json!({
        "type": crate::notify::actions::HANDOFF,
        "kind": d.kind,
        "schedule": { "id": s.id, "name": s.name },
        "at": at,
        "until": d.handoff.until,
        "going_off": d.handoff.off,
        "coming_on": d.handoff.on,
        "open_incidents": open.total,
        "incidents": open.listed,
        "message": subject,
        "lines": lines,
        "path": format!("/schedules/{}", s.id),
    });
    let queued = crate::notify::actions::tell_person(conn, who.id, s.id, &payload).await?;
    db::sent(&mut *conn, (s.id, at, who.id), d.kind, queued as i64).await?;
    Ok(true)
}

pub const CHANNEL: &str = "quell_handoffs";
/// A schedule changed meanwhile is read again within this, well inside the grace.
const POLL: std::time::Duration = std::time::Duration::from_secs(60);

/// The loop of one replica: send what is due, then sleep until the next hand-off or reminder,
/// or the poll interval.
pub async fn run(pool: PgPool) {
    let what = "could not send hand-off notices";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        send_due(&pool).await.map(|(_, next)| next)
    })
    .await
}
