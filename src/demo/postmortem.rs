//! The demo's postmortems, every section and action item entered through the same actions a
//! responder uses: INC-1187's as the reference document writes it, and PAY-184's (in
//! `orbitpay.rs`), which the OrbitPay challenge is generated from. The figures (durations, SLA verdicts,
//! error budget, failure share) are not here: they are computed from the incident, and the
//! prose cites them by name (`{failed_share}`, `{impact_duration}`, `{mitigated_at}` …).

use sqlx::PgConnection;

use crate::audit::Actor;
use crate::error::AppResult;
use crate::incidents::db::Incident;
use crate::postmortems::actions::{self, ItemDraft};
use crate::postmortems::db::Facts;
use crate::timeline::domain::Kind;

/// A postmortem to write: who owns it, who publishes it, its sections, its impact figures, and
/// its action items.
pub struct Written {
    pub owner: &'static str,
    pub publisher: &'static str,
    /// (section, text)
    pub sections: &'static [(&'static str, &'static str)],
    pub facts: Facts<'static>,
    /// (action, type, owner handle, due, work item)
    pub items: &'static [(
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    )],
    /// The items were all done by the day the demo shows
    pub items_done: bool,
}

/// INC-1187's, as the reference writes it.
pub const INC_1187: Written = Written {
    owner: "Daniel Okafor",
    publisher: "Ana Ribeiro",
    sections: SECTIONS,
    facts: Facts {
        impacted: "checkout",
        requests_label: "Authorization requests",
        failed_requests: Some(109_400),
        total_requests: Some(352_800),
    },
    items: ITEMS,
    items_done: false,
};

const SECTIONS: &[(&str, &str)] = &[
    (
        "summary",
        "A configuration change deployed at {change_at} capped outbound HTTP connections from payments-gateway to the card processor at 10 per replica. Under the midday peak, processor latency rose from a p50 of 300 ms to 1.2 s and requests queued for a connection until they hit the 10 s client timeout. {failed_share} of authorization requests failed for {impact_duration}. Rolling back to the previous Container Apps revision restored service at {mitigated_at}. The root cause was a pool size chosen without a capacity calculation, in a change classified as low risk.",
    ),
    (
        "impact",
        "- Orders that failed checkout after client retries: 24 870.\n- Customers saw \"payment could not be processed\"; no duplicate charges (idempotency keys held).",
    ),
    (
        "root_cause",
        "Concurrent connections needed = arrival rate × latency (Little's law). At peak, 120 req/s × 1.2 s = 144 concurrent requests across 6 replicas, or 24 per replica. The cap of 10 per replica allowed 60 in total. The remaining requests waited in the handler's connection queue; queue wait counted against the 10 s timeout, so under load most queued requests timed out without ever reaching the processor.\n\nThe cap was introduced to protect the processor's documented limit of 200 concurrent connections per merchant. The value 10 was copied from another client's settings and not derived from traffic or latency.",
    ),
    (
        "contributing_factors",
        "- **Risk classification.** The change was labeled chore and reviewed as a refactor. A connection limit on a Tier1 dependency is a capacity change.\n- **Canary at low traffic.** The 15-minute canary ran at ~25 req/s, where 60 connections were sufficient. Canary analysis did not look at the latency trend at peak.\n- **No queueing telemetry.** There was no metric for time waiting for a connection; dependency duration hid it inside the total call time.\n- **Timeout budget inverted.** payments-gateway waits 10 s on the processor while checkout gives up on payments-gateway after 8 s and retries once. Retries added load to the queue during the incident.\n- **Latency alert too loose.** p95 at 3.5 s for 20 minutes did not alert (threshold 5 s); the first signal was errors.",
    ),
    (
        "detection",
        "The 5xx alert worked as designed and fired {time_to_detect} after the first error. A p95 latency alert at 2 s would have fired around 15:50, about 12 minutes before customer-facing errors. The incident was opened as Sev2 by the alert rule and raised manually; the rule's severity mapping did not account for checkout impact.",
    ),
    (
        "went_well",
        "- Acknowledged in {time_to_acknowledge}; roles assigned within 4 minutes of Sev1 declaration.\n- The deployment history on the production environment made the suspect change visible in one click.\n- Rollback to the previous revision took 10 minutes end to end and needed no schema change.\n- Stakeholder updates went out on the 30-minute cadence without being asked.",
    ),
    (
        "was_hard",
        "- Two people investigated the processor's status page for 10 minutes in parallel, unaware of each other; the scribe's timeline was ahead of the bridge.\n- The runbook for high error rate did not mention recent configuration changes, only code deploys.",
    ),
    (
        "got_lucky",
        "- Idempotency keys prevented duplicate charges when checkout retried.\n- The peak was the regular midday peak, not a promotion day at 3× traffic.",
    ),
    (
        "lessons",
        "Any setting that limits concurrency (pool sizes, semaphores, rate limits, timeouts) is a capacity decision and must be derived from arrival rate and latency at peak, not copied. Canary analysis at low traffic does not validate capacity changes.",
    ),
];

/// (action, type, owner handle, due, work item)
const ITEMS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "Size the processor connection limit from Little's law at 2× peak (≥ 50 per replica, ≤ 200 total) and make it configuration per environment",
        "prevent",
        "daniel",
        "2026-09-24",
        "AB#2311",
    ),
    (
        "Invert timeout budget: processor client 5 s, checkout → payments-gateway 8 s, retries only on idempotent calls with jitter",
        "prevent",
        "priya",
        "2026-10-01",
        "AB#2312",
    ),
    (
        "Add connection-queue wait metric and a dashboard tile for the processor client",
        "detect",
        "daniel",
        "2026-10-01",
        "AB#2313",
    ),
    (
        "Alert on payments-gateway p95 > 2 s for 5 min (Sev2)",
        "detect",
        "ana",
        "2026-09-24",
        "AB#2314",
    ),
    (
        "Map \"checkout success rate < 90%\" alert directly to Sev1",
        "detect",
        "ana",
        "2026-09-24",
        "AB#2315",
    ),
    (
        "Release checklist: changes to timeouts, pool sizes, retry or rate limits are capacity changes and need a load test result in the PR",
        "process",
        "marcelo",
        "2026-09-24",
        "AB#2316",
    ),
    (
        "Add \"recent configuration changes\" step to the high error rate runbook",
        "process",
        "ana",
        "2026-09-22",
        "AB#2317",
    ),
    (
        "Canary analysis compares p95 latency at matching traffic level, not only error rate",
        "mitigate",
        "priya",
        "2026-10-15",
        "AB#2318",
    ),
];

/// Writes and publishes the postmortem unless it has been written already.
pub async fn write(conn: &mut PgConnection, i: &Incident, w: &Written) -> AppResult<()> {
    let pm = actions::current(conn, i).await?;
    if !pm.summary.is_empty() {
        return Ok(());
    }
    let owner = Actor::system(w.owner);
    let mut version = pm.version;
    for (section, text) in w.sections {
        version = actions::edit_section(conn, &owner, i, version, section, text).await?;
    }
    let events = crate::timeline::db::for_incident(&mut *conn, i.id).await?;
    let version = actions::edit_facts(conn, &owner, i, version, &w.facts).await?;
    // The document's Timeline: every event but the postmortem owner's assignment, as the
    // reference lists them (the roles of 16:20 are part of its 16:20 line).
    // (The verdicts on suspect changes are in the Response line's time from the change.)
    let chosen: Vec<i64> = events
        .iter()
        .filter(|e| e.details.get("role").and_then(|r| r.as_str()) != Some("postmortem_owner"))
        .filter(|e| e.kind != crate::timeline::domain::Kind::SuspectVerdict)
        // Who was paged and when is on the incident's page; the reference leaves it out.
        .filter(|e| !matches!(e.kind, Kind::Paged | Kind::Escalation))
        .map(|e| e.id)
        .collect();
    actions::choose_timeline(conn, &owner, i, version, &chosen).await?;
    for (action, kind, who, due, work_item) in w.items {
        actions::add_action_item(
            conn,
            &owner,
            i,
            &ItemDraft {
                action,
                kind,
                owner: Some(who),
                due_on: Some(due),
                work_item,
            },
        )
        .await?;
    }
    let now = crate::clock::now(&mut *conn).await?;
    actions::publish(conn, &Actor::system(w.publisher), i, now).await?;
    if w.items_done {
        let pm = actions::current(conn, i).await?;
        for listed in crate::action_items::db::action_items(&mut *conn, pm.id).await? {
            let was =
                actions::item(conn, listed.id, crate::incident_ref::domain::SeenBy::ALL).await?;
            let done = actions::ItemEdit {
                action: None,
                kind: None,
                owner: None,
                due_on: None,
                work_item: None,
                status: Some("done"),
            };
            actions::edit_action_item(conn, &owner, &was, None, &done).await?;
        }
    }
    Ok(())
}
