//! PAY-184, the night OrbitPay's checkout hung (kept as INC-184), as the reference tells it: a
//! 90-second card-processor degradation at 22:10 UTC failed 12,400 authorizations, their
//! retries fired in lockstep, and /checkout p99 sat at 9 s for 34 minutes until full jitter went
//! out. The responders' notes before detection, the code, chat and metric they attached while it
//! lasted, and its published postmortem are what the OrbitPay challenge is generated from. No
//! deploy went out that day, so it has no suspect changes. Loading twice changes nothing.

use chrono::{DateTime, TimeZone, Utc};
use sqlx::PgConnection;

use super::postmortem::Written;
use crate::audit::Actor;
use crate::error::AppResult;
use crate::evidence::domain::{Evidence, EvidenceKind, Source};
use crate::incidents::actions::{self, Change, Opening, ServiceChoice};
use crate::incidents::db as incidents_db;
use crate::incidents::domain::{IncidentKey, Severity, Transition};
use crate::postmortems::db::Facts;

/// PAY-184 in OrbitPay's tracker.
pub const PAY_184: IncidentKey = IncidentKey(184);

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 12, h, m, s)
        .single()
        .expect("a valid demo time")
}

/// What responders noted before the incident was declared: (h, m, who, note).
const NOTES: &[(u32, u32, &str, &str)] = &[
    (
        22,
        12,
        "Priya Raman",
        "Card processor status page: a brief degradation starting at 22:10 UTC, recovered by 22:11:30",
    ),
    (
        22,
        13,
        "Priya Raman",
        "/checkout p99 climbing from 240 ms to 9 s over the last four minutes; the checkout-api error rate is flat",
    ),
];

/// (h, m, transition, who, note)
const STEPS: &[(u32, u32, Transition, &str, &str)] = &[
    (22, 16, Transition::Acknowledge, "Priya Raman", ""),
    (
        22,
        44,
        Transition::Mitigate,
        "Dev Shah",
        "Full jitter on the retry backoff is out; /checkout p99 back to 240 ms",
    ),
    (23, 30, Transition::Resolve, "Dev Shah", ""),
];

/// The code, the chat and the metric as responders attached them while it lasted: the backoff
/// before the fix, and the chat up to the moment before the cause was named.
pub fn evidence() -> Vec<Evidence> {
    let code = |path: &str, text: &str| Evidence {
        kind: EvidenceKind::Code,
        title: format!("payments-worker · {path}"),
        text: text.to_owned(),
        source: Source {
            repository: Some("payments-worker".into()),
            path: Some(path.into()),
            language: Some("typescript".into()),
            ..Default::default()
        },
    };
    vec![
        code(
            "src/retry/retryQueue.ts",
            "async function scheduleRetry(attempt: PaymentAttempt) {\n  const delay = backoffFor(attempt.attemptCount);\n  // NOTE: no dedupe on (intentId, attemptCount) yet — see PAY-247\n  await redis.zadd(RETRY_SET, Date.now() + delay, serialize(attempt));\n}",
        ),
        code(
            "src/retry/backoff.ts",
            "const BASE_MS = 250;\nconst MAX_MS = 30_000;\n\nexport function backoffFor(attemptCount: number) {\n  return Math.min(MAX_MS, BASE_MS * 2 ** attemptCount);\n}",
        ),
        Evidence {
            kind: EvidenceKind::Chat,
            title: "#incidents · checkout timeouts".into(),
            text: "Priya Raman: p99 on /checkout just went from 240ms to 9s.\nDev Shah: Retry set depth is 40k and climbing.".into(),
            source: Source {
                channel: Some("#incidents".into()),
                author: Some("Priya Raman, Dev Shah".into()),
                at: Some(at(22, 14, 0)),
                ..Default::default()
            },
        },
        Evidence {
            kind: EvidenceKind::Metric,
            title: "/checkout latency and API errors".into(),
            text: "/checkout p99: 240 ms at 22:10, 9 s at 22:14. checkout-api 5xx rate: flat at 0.1%.".into(),
            source: Source {
                at: Some(at(22, 14, 0)),
                ..Default::default()
            },
        },
    ]
}

/// PAY-184's postmortem, as Dev Shah wrote it and Priya Raman published it.
pub const POSTMORTEM: Written = Written {
    owner: "Dev Shah",
    publisher: "Priya Raman",
    sections: &[
        (
            "summary",
            "A 90-second processor degradation at 22:10 UTC produced 12,400 failed authorizations. All of them retried on an identical deterministic schedule, saturating the worker pool and pushing /checkout p99 to 9s for {impact_duration}. Resolved by adding full jitter to the backoff.",
        ),
        (
            "impact",
            "- Merchants' checkouts hung, then failed; three merchants reported it to support.\n- No duplicate charges: the processor rejected repeated attempts on the same payment intent.",
        ),
        (
            "root_cause",
            "The retry backoff was deterministic: backoffFor(n) returned BASE_MS × 2^n with no randomisation. Every authorization that failed during the degradation had the same attempt count, so each retry was scheduled for the same millisecond as thousands of others: the 12,400 retries fired together in waves at 250 ms, 500 ms, 1 s and on, and each wave failed again against a processor still catching up. The synchronised retries saturated the payments-worker pool; new checkouts queued behind them, and /checkout p99 stayed at 9 s long after the processor had recovered at 22:11:30. It was a thundering herd we built ourselves.",
        ),
        (
            "contributing_factors",
            "- **Checkout waits on the worker.** checkout-api holds the request open while payments-worker authorizes, so a backlog in the worker shows as checkout latency, not as errors.\n- **Retry depth not watched.** The retry set grew to 40k entries and nothing alerted; merchants noticed first.\n- **Retries not deduplicated.** scheduleRetry does not dedupe on (intentId, attemptCount) yet (PAY-247), so a retry can be scheduled twice.",
        ),
        (
            "detection",
            "Merchants found it before we did: support escalated {time_to_detect} after the first failures. The checkout-api 5xx alert stayed quiet because the API answered slowly rather than failing; an alert on /checkout p99 over 2 s would have fired at about 22:11.",
        ),
        (
            "went_well",
            "- The retry set depth named the backlog within minutes of the page.\n- The jitter change was small, reviewed and out in 20 minutes.",
        ),
        (
            "was_hard",
            "- The processor had recovered, so its status page pointed away from us.",
        ),
        (
            "lessons",
            "Retries that share a deterministic schedule turn one short failure into synchronised waves. Every backoff needs jitter, and a retry queue's depth is a signal worth an alert.",
        ),
    ],
    facts: Facts {
        impacted: "checkout",
        requests_label: "Authorizations",
        failed_requests: Some(12_400),
        total_requests: None,
    },
    items: &[
        (
            "Add full jitter to the retry backoff: keep the exponential ceiling, make the delay uniform in [0, ceiling)",
            "prevent",
            "dev",
            "2026-08-13",
            "PAY-185",
        ),
        (
            "Dedupe scheduled retries on (intentId, attemptCount)",
            "prevent",
            "dev",
            "2026-08-28",
            "PAY-247",
        ),
        (
            "Alert on retry set depth above 5,000 for 2 minutes",
            "detect",
            "priya.raman",
            "2026-08-19",
            "PAY-186",
        ),
        (
            "Alert on /checkout p99 above 2 s for 2 minutes",
            "detect",
            "priya.raman",
            "2026-08-19",
            "PAY-187",
        ),
    ],
    items_done: true,
};

async fn tell(tx: &mut PgConnection) -> AppResult<()> {
    let now = crate::clock::now(&mut *tx).await?;
    actions::open(
        tx,
        &Opening {
            number: Some(PAY_184.0),
            title: "Retry queue overload during processor degradation",
            severity: Severity::Sev1,
            service: ServiceChoice::Named("payments-worker"),
            summary: "Support has three merchants reporting that checkout hangs and then fails; /checkout p99 is at 9 s while the checkout-api error rate is flat.",
            impact: "Checkout hangs, then fails, for merchants; /checkout p99 at 9 s.",
            started_at: Some(at(22, 10, 0)),
            detected_at: Some(at(22, 14, 0)),
            note: "Support escalates: three merchants report that checkout hangs and then fails",
            now,
            restricted_to: None,
            quiet: false,
        },
        &Actor::system("Priya Raman"),
    )
    .await?;
    for (h, m, who, note) in NOTES {
        let actor = Actor::system(who);
        let change = Change::now(PAY_184, &actor).dated(Some(at(*h, *m, 0)));
        actions::add_note(tx, &change, None, note).await?;
    }
    let responder = Actor::system("Dev Shah");
    for e in evidence() {
        crate::evidence::actions::attach(tx, &responder, &PAY_184.to_string(), &e).await?;
    }
    for (h, m, t, who, note) in STEPS {
        let actor = Actor::system(who);
        let change = Change::now(PAY_184, &actor).dated(Some(at(*h, *m, 0)));
        actions::transition(tx, &change, *t, note).await?;
    }
    Ok(())
}

pub async fn load(tx: &mut PgConnection) -> AppResult<()> {
    if incidents_db::find(&mut *tx, PAY_184).await?.is_none() {
        tell(tx).await?;
    }
    let incident = incidents_db::get(&mut *tx, PAY_184).await?;
    super::postmortem::write(tx, &incident, &POSTMORTEM).await
}
