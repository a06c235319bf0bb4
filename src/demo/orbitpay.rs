//! The OrbitPay incidents: the night checkout hung (2026-10-21, 22:10 UTC; no deploy that day, so
//! it has no suspect changes) and PAY-184, the earlier retry-queue overload on payments-worker
//! (kept as INC-184), linked as related. Loading twice changes nothing.

use chrono::{DateTime, TimeZone, Utc};
use sqlx::PgConnection;

use crate::audit::Actor;
use crate::error::AppResult;
use crate::incidents::actions::{self, Opening, ServiceChoice};
use crate::incidents::db as incidents_db;
use crate::incidents::domain::{IncidentKey, Severity, Transition};

/// PAY-184 in OrbitPay's tracker.
pub const PAY_184: IncidentKey = IncidentKey(184);
/// The night checkout hung.
pub const CHECKOUT_HANG: IncidentKey = IncidentKey(1203);

fn on(day: (u32, u32), h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, day.0, day.1, h, m, s)
        .single()
        .expect("a valid demo time")
}

struct Story {
    key: IncidentKey,
    title: &'static str,
    severity: Severity,
    service: &'static str,
    summary: &'static str,
    impact: &'static str,
    day: (u32, u32),
    started: (u32, u32),
    detected: (u32, u32),
    opened_by: &'static str,
    note: &'static str,
    /// (hour, minute, transition, who, note)
    steps: &'static [(u32, u32, Transition, &'static str, &'static str)],
}

const STORIES: [Story; 2] = [
    Story {
        key: PAY_184,
        title: "Retry queue overload during processor degradation",
        severity: Severity::Sev1,
        service: "payments-worker",
        summary: "A 90-second processor degradation at 22:10 UTC produced 12,400 failed authorizations. All of them retried on an identical deterministic schedule, saturating the worker pool and pushing /checkout p99 to 9s for 34 minutes. Resolved by adding full jitter to the backoff.",
        impact: "/checkout p99 at 9 s for 34 minutes; 12,400 authorizations failed and were retried.",
        day: (8, 12),
        started: (22, 10),
        detected: (22, 12),
        opened_by: "Priya Raman",
        note: "/checkout p99 alert fires (PAY-184 in OrbitPay's tracker)",
        steps: &[
            (22, 15, Transition::Acknowledge, "Priya Raman", ""),
            (
                22,
                44,
                Transition::Mitigate,
                "Dev Shah",
                "/checkout p99 back to 240 ms",
            ),
            (23, 30, Transition::Resolve, "Dev Shah", ""),
        ],
    },
    Story {
        key: CHECKOUT_HANG,
        title: "Checkout hangs then fails for merchants",
        severity: Severity::Sev2,
        service: "checkout-api",
        summary: "Support has three merchants reporting that checkout hangs and then fails. /checkout p99 climbed from 240 ms to 9 s over four minutes, but the error rate on the API itself is flat and no deploy went out today. The card processor reported a brief degradation starting at 22:10 UTC and recovering by 22:11:30.",
        impact: "Checkout hangs, then fails, for merchants; /checkout p99 9 s.",
        day: (10, 21),
        started: (22, 10),
        detected: (22, 14),
        opened_by: "Priya Raman",
        note: "Support escalates: three merchants report checkout hangs then fails",
        steps: &[
            (22, 16, Transition::Acknowledge, "Priya Raman", ""),
            (
                22,
                44,
                Transition::Mitigate,
                "Dev Shah",
                "/checkout p99 back to 240 ms",
            ),
            (23, 10, Transition::Resolve, "Dev Shah", ""),
        ],
    },
];

async fn tell(tx: &mut PgConnection, s: &Story) -> AppResult<()> {
    let now = crate::clock::now(&mut *tx).await?;
    actions::open(
        tx,
        &Opening {
            number: Some(s.key.0),
            title: s.title,
            severity: s.severity,
            service: ServiceChoice::Named(s.service),
            summary: s.summary,
            impact: s.impact,
            started_at: Some(on(s.day, s.started.0, s.started.1, 0)),
            detected_at: Some(on(s.day, s.detected.0, s.detected.1, 0)),
            note: s.note,
            now,
        },
        &Actor::system(s.opened_by),
    )
    .await?;
    for (h, m, t, who, note) in s.steps {
        let actor = Actor::system(who);
        let change = actions::Change {
            key: s.key,
            expected_version: None,
            at: Some(on(s.day, *h, *m, 0)),
            actor: &actor,
        };
        actions::transition(tx, &change, *t, note).await?;
    }
    Ok(())
}

pub async fn load(tx: &mut PgConnection) -> AppResult<()> {
    for s in &STORIES {
        if incidents_db::find(&mut *tx, s.key).await?.is_none() {
            tell(tx, s).await?;
        }
    }
    let hang = crate::related::actions::incident(&mut *tx, CHECKOUT_HANG).await?;
    if crate::related::db::list(&mut *tx, hang.id)
        .await?
        .is_empty()
    {
        crate::related::actions::link(
            tx,
            &hang,
            &PAY_184.to_string(),
            "PAY-184: the same checkout slowdown after an earlier processor degradation",
            &Actor::system("Dev Shah"),
        )
        .await?;
    }
    Ok(())
}
