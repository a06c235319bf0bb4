//! Demo data: the payments-gateway and OrbitPay services, the people of the reference
//! postmortem, INC-1187 entered event by event at its real times on 2026-09-17 through the
//! same actions a responder uses (with the day's changes and its capacity-flagged trigger), the
//! OrbitPay incidents (`orbitpay.rs`) and the runbooks. Loading twice changes nothing.

pub mod challenges;
mod orbitpay;
mod paging;
mod postmortem;
mod quiet;
mod status;
mod teams;
pub mod world;

use chrono::{DateTime, TimeZone, Utc};
use sqlx::{PgConnection, PgPool};

use crate::audit::Actor;
use crate::changes::domain::Verdict;
use crate::error::AppResult;
use crate::incidents::actions::{self, Opening, ServiceChoice};
use crate::incidents::db as incidents_db;
use crate::incidents::domain::{IncidentKey, Severity, Transition};
use crate::people::{self, domain::PersonDraft};
use crate::roles::domain::Role;
use crate::services::{self, domain::ServiceDraft};

const SERVICES: &[(&str, i64, &str, f64, f64, &str)] = &[
    (
        "payments-gateway",
        1,
        "Payments",
        99.9,
        60.0,
        "Authorizes card payments with the external card processor for checkout.",
    ),
    (
        "checkout-api",
        1,
        "Checkout",
        99.95,
        120.0,
        "Accepts OrbitPay's checkout requests and hands authorization to payments-worker over a queue.",
    ),
    (
        "payments-worker",
        2,
        "Payments",
        99.9,
        80.0,
        "Calls the external card processor for OrbitPay's authorizations; failed ones are scheduled for retry in a Redis sorted set.",
    ),
];

const PEOPLE: &[(&str, &str, &str)] = &[
    ("Ana Ribeiro", "ana.ribeiro@example.com", "ana"),
    ("Daniel Okafor", "daniel.okafor@example.com", "daniel"),
    ("Priya Nair", "priya.nair@example.com", "priya"),
    ("Marcelo Roman", "marcelo.roman@example.com", "marcelo"),
    ("Priya Raman", "priya.raman@example.com", "priya.raman"),
    ("Dev Shah", "dev.shah@example.com", "dev"),
];

/// Adds each (name, email, handle) not there yet.
async fn ensure_people(tx: &mut PgConnection, people: &[(&str, &str, &str)]) -> AppResult<()> {
    for (name, email, handle) in people {
        if people::db::find(&mut *tx, handle).await?.is_none() {
            let draft = PersonDraft {
                name: (*name).into(),
                email: (*email).into(),
                handle: (*handle).into(),
            }
            .validated()?;
            people::db::insert(&mut *tx, &draft).await?;
        }
    }
    Ok(())
}

fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 9, 17, h, m, 0)
        .single()
        .expect("a valid demo time")
}

pub const INC_1187: IncidentKey = IncidentKey(1187);

struct DemoRule {
    name: &'static str,
    conditions: &'static [&'static str],
    service: &'static str,
    severity: &'static str,
    title_template: &'static str,
}

impl DemoRule {
    fn draft(&self) -> crate::routing::actions::RuleDraft {
        crate::routing::actions::RuleDraft {
            name: self.name.into(),
            conditions: self.conditions.iter().map(|c| (*c).to_owned()).collect(),
            service: self.service.into(),
            severity: Some(self.severity.into()),
            title_template: self.title_template.into(),
            team: "Payments".into(),
            ..Default::default()
        }
    }
}

const DEMO_RULE: DemoRule = DemoRule {
    name: "Payments gateway errors",
    conditions: &[
        "labels.service = payments-gateway",
        "labels.alertname =~ .*5xx.*",
    ],
    service: "payments-gateway",
    severity: "Sev2",
    title_template: "{summary}",
};

pub async fn load(pool: &PgPool) -> AppResult<()> {
    let mut tx = crate::transaction::begin(pool).await?;
    for (name, tier, team, slo, rate, description) in SERVICES {
        if services::db::find_by_name(&mut *tx, name).await?.is_none() {
            let draft = ServiceDraft {
                name: (*name).into(),
                tier: *tier,
                team: (*team).into(),
                description: (*description).into(),
                slo_target_percent: Some(*slo),
                avg_requests_per_second: Some(*rate),
                // INC-1187's busiest hour: 120 req/s with the processor answering in 1.2 s.
                peak_requests_per_second: (*name == "payments-gateway").then_some(120.0),
                peak_latency_seconds: (*name == "payments-gateway").then_some(1.2),
                runbook_url: Some(format!("https://runbooks.example.com/{name}")),
                depends_on: None,
            }
            .validated()?;
            let team = teams::team_id(&mut tx, team).await?;
            services::db::insert(&mut *tx, &draft, team).await?;
        }
    }
    // OrbitPay: checkout-api hands authorization to payments-worker.
    let checkout = services::db::get_by_name(&mut *tx, "checkout-api").await?;
    if checkout.depends_on.is_empty() {
        let draft = ServiceDraft {
            depends_on: Some(vec!["payments-worker".into()]),
            ..checkout.draft()
        };
        services::actions::update(
            &mut tx,
            &Actor::system("demo"),
            &checkout,
            checkout.version,
            &draft,
        )
        .await?;
    }
    ensure_people(&mut tx, PEOPLE).await?;
    teams::staff(&mut tx).await?;
    if incidents_db::find(&mut *tx, INC_1187).await?.is_none() {
        inc_1187(&mut tx).await?;
    }
    let incident = incidents_db::get(&mut *tx, INC_1187).await?;
    changes_of_inc_1187(&mut tx, &incident).await?;
    if let Some(acknowledged_at) = incident.acknowledged_at {
        paging::load(&mut tx, incident.id, incident.detected_at, acknowledged_at).await?;
    }
    postmortem::write(&mut tx, &incident, &postmortem::INC_1187).await?;
    // The rule that would have routed INC-1187's alert: Sev2 on payments-gateway.
    let rules = crate::routing::db::list(&mut *tx).await?;
    if !rules.iter().any(|r| r.name == DEMO_RULE.name) {
        crate::routing::actions::create(&mut tx, &Actor::system("demo"), &DEMO_RULE.draft())
            .await?;
    }
    orbitpay::load(&mut tx).await?;
    runbooks(&mut tx).await?;
    challenges::load(&mut tx, INC_1187).await?;
    status::load(&mut tx, INC_1187).await?;
    // Work items link to their trackers: INC-1187's AB#2311 … AB#2318 to Azure Boards.
    let trackers = crate::trackers::db::all(&mut *tx).await?;
    for (prefix, name, template) in TRACKERS {
        if !trackers
            .iter()
            .any(|t| t.prefix.eq_ignore_ascii_case(prefix))
        {
            crate::trackers::db::insert(&mut *tx, prefix, name, template).await?;
        }
    }
    incidents_db::bump_sequence(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// (prefix, name, link template) of the demo's work-item trackers.
const TRACKERS: &[(&str, &str, &str)] = &[
    (
        "AB#",
        "Azure Boards",
        "https://dev.azure.com/orbitpay/payments/_workitems/edit/{n}",
    ),
    (
        "LIN-",
        "Linear",
        "https://linear.app/orbitpay/issue/LIN-{n}",
    ),
    (
        "JIRA-",
        "Jira",
        "https://orbitpay.atlassian.net/browse/JIRA-{n}",
    ),
];

/// A step of the INC-1187 story, in the order the scribe entered it.
enum Step {
    Context(u32, u32, &'static str),
    Note(u32, u32, &'static str, &'static str),
    Transition(u32, u32, Transition, &'static str, &'static str),
    Severity(u32, u32, Severity, &'static str),
    Role(u32, u32, Role, &'static str),
    /// A stakeholder update from the comms lead.
    Update(u32, u32, &'static str, &'static str),
}

const SCRIBE: &str = "Marcelo Roman";

const STORY: &[Step] = &[
    Step::Context(
        14,
        5,
        "PR \"chore: consolidate HTTP client settings\" deployed; sets MaxConnectionsPerServer = 10 on the processor client (previously unbounded). Canary at 10% for 15 min passes at ~25 req/s total",
    ),
    Step::Context(14, 20, "Revision promoted to 100%"),
    Step::Context(
        15,
        40,
        "Traffic ramps toward peak; p95 authorization latency climbs from 0.9 s to 3.5 s. No alert (threshold 5 s)",
    ),
    Step::Note(
        16,
        2,
        SCRIBE,
        "First timeouts (TaskCanceledException after 10 s)",
    ),
    Step::Transition(
        16,
        16,
        Transition::Acknowledge,
        "Daniel Okafor",
        "Primary on call acknowledges",
    ),
    Step::Severity(
        16,
        20,
        Severity::Sev1,
        "checkout failing for > 25% of requests",
    ),
    Step::Role(16, 20, Role::IncidentCommander, "ana"),
    Step::Role(16, 20, Role::CommsLead, "priya"),
    Step::Role(16, 20, Role::Scribe, "marcelo"),
    Step::Note(16, 20, "Ana Ribeiro", "Bridge opened"),
    Step::Update(
        16,
        24,
        "executives",
        "Card payments are failing for about a third of checkouts since 16:02; payments on-call is investigating. Next update by 16:54.",
    ),
    Step::Note(
        16,
        31,
        SCRIBE,
        "Dependency telemetry shows processor latency up but processor 5xx flat; requests spend most time before the first byte is sent",
    ),
    Step::Note(
        16,
        38,
        SCRIBE,
        "Scribe links the 14:05 deployment from the production environment history; IC decides to roll back",
    ),
    Step::Note(16, 48, SCRIBE, "Traffic shifted to previous revision"),
    Step::Transition(
        16,
        52,
        Transition::Mitigate,
        "Ana Ribeiro",
        "Error rate under 0.5%",
    ),
    Step::Note(
        17,
        22,
        "Priya Nair",
        "30 min stable; second stakeholder update with mitigation",
    ),
    Step::Note(
        18,
        30,
        SCRIBE,
        "Load test in staging reproduces queueing at 10 connections and 120 req/s with 1.2 s upstream latency",
    ),
    Step::Transition(
        19,
        40,
        Transition::Resolve,
        "Ana Ribeiro",
        "Root cause recorded",
    ),
    Step::Role(19, 40, Role::PostmortemOwner, "daniel"),
];

/// A change to payments-gateway on INC-1187's day, and the scribe's verdict on it.
struct DemoChange {
    at: (u32, u32),
    kind: &'static str,
    summary: &'static str,
    author: &'static str,
    link: &'static str,
    verdict: Verdict,
    decided: (u32, u32),
    /// The limit it set: (name, per replica, replicas, peak req/s, latency at peak in s).
    capacity: Option<(&'static str, i64, i64, f64, f64)>,
}

const DEMO_CHANGES: &[DemoChange] = &[
    DemoChange {
        at: (9, 12),
        kind: "deploy",
        summary: "fix: log the processor's request id on timeouts",
        author: "Priya Raman",
        link: "https://git.example.com/orbitpay/payments-gateway/pull/809",
        verdict: Verdict::RuledOut,
        decided: (16, 31),
        capacity: None,
    },
    DemoChange {
        at: (11, 40),
        kind: "feature_flag",
        summary: "receipt-emails-v2 on for 50% of merchants",
        author: "Dev Shah",
        link: "",
        verdict: Verdict::RuledOut,
        decided: (16, 31),
        capacity: None,
    },
    DemoChange {
        at: (14, 5),
        kind: "config",
        summary: "chore: consolidate HTTP client settings",
        author: "Dev Shah",
        link: "https://git.example.com/orbitpay/payments-gateway/pull/812",
        verdict: Verdict::ConfirmedTrigger,
        decided: (16, 38),
        capacity: Some(("MaxConnectionsPerServer", 10, 6, 120.0, 1.2)),
    },
];

/// INC-1187's suspects: the 14:05 configuration change found "in one click" and confirmed as
/// the trigger, and the day's two other changes ruled out. Once.
async fn changes_of_inc_1187(tx: &mut PgConnection, i: &incidents_db::Incident) -> AppResult<()> {
    if crate::changes::db::confirmed_trigger(&mut *tx, i.id)
        .await?
        .is_some()
    {
        return Ok(());
    }
    let scribe = Actor::system(SCRIBE);
    for c in DEMO_CHANGES {
        let change = crate::changes::actions::record(
            tx,
            &Actor::system("deploy pipeline"),
            &crate::changes::domain::ChangeDraft {
                service: "payments-gateway".into(),
                kind: Some(c.kind.into()),
                summary: c.summary.into(),
                author: Some(c.author.into()),
                link: Some(c.link.into()),
                occurred_at: Some(at(c.at.0, c.at.1)),
                capacity: c
                    .capacity
                    .map(|(limit, per_replica, replicas, rate, latency)| {
                        crate::changes::domain::Capacity {
                            limit: limit.into(),
                            per_replica,
                            replicas,
                            peak_requests_per_second: Some(rate),
                            peak_latency_seconds: Some(latency),
                        }
                    }),
                ..Default::default()
            },
        )
        .await?;
        crate::changes::actions::judge(
            tx,
            &crate::incidents::views::suspecting(i),
            &crate::changes::actions::Judgement {
                change_id: change.id,
                verdict: c.verdict,
                at: Some(at(c.decided.0, c.decided.1)),
                actor: &scribe,
            },
        )
        .await?;
    }
    Ok(())
}

async fn inc_1187(tx: &mut PgConnection) -> AppResult<()> {
    let key = INC_1187;
    let now = crate::clock::now(&mut *tx).await?;
    actions::open(
        tx,
        &Opening {
            number: Some(key.0),
            title: "payments-gateway authorization timeouts after connection pool change",
            severity: Severity::Sev2,
            service: ServiceChoice::Named("payments-gateway"),
            summary: "A configuration change deployed at 14:05 capped outbound HTTP connections from payments-gateway to the card processor at 10 per replica. Under the midday peak, processor latency rose from a p50 of 300 ms to 1.2 s and requests queued for a connection until they hit the 10 s client timeout. 31% of authorization requests failed for 50 minutes. Rolling back to the previous Container Apps revision restored service at 16:52. The root cause was a pool size chosen without a capacity calculation, in a change classified as low risk.",
            impact: "Authorization requests failed: 109 400 of 352 800 (31%) between 16:02 and 16:52. Orders that failed checkout after client retries: 24 870. Customers saw \"payment could not be processed\"; no duplicate charges (idempotency keys held).",
            started_at: Some(at(16, 2)),
            detected_at: Some(at(16, 7)),
            note: "Alert \"payments-gateway 5xx > 5% for 5 min\" fires; INC-1187 opened automatically",
            now,
            restricted_to: None,
            quiet: false,
        },
        &Actor::system("Alertmanager"),
    )
    .await?;
    for step in STORY {
        let (h, m, who) = match *step {
            Step::Context(h, m, _) => (h, m, SCRIBE),
            Step::Note(h, m, author, _) | Step::Transition(h, m, _, author, _) => (h, m, author),
            Step::Severity(h, m, ..) | Step::Role(h, m, ..) => (h, m, "Ana Ribeiro"),
            Step::Update(h, m, ..) => (h, m, "Priya Nair"),
        };
        let actor = Actor::system(who);
        let change = actions::Change::now(key, &actor).dated(Some(at(h, m)));
        match *step {
            Step::Context(_, _, text) => {
                actions::add_note(tx, &change, Some("context"), text).await?;
            }
            Step::Note(_, _, _, text) => {
                actions::add_note(tx, &change, None, text).await?;
            }
            Step::Transition(_, _, t, _, note) => {
                actions::transition(tx, &change, t, note).await?;
            }
            Step::Severity(_, _, to, reason) => {
                actions::change_severity(tx, &change, to, reason).await?;
            }
            Step::Update(_, _, audience, text) => {
                actions::add_stakeholder_update(tx, &change, audience, text).await?;
            }
            Step::Role(_, _, role, handle) => {
                actions::set_role(tx, &change, role, Some(handle)).await?;
            }
        }
    }
    Ok(())
}

/// payments-gateway's "High error rate" runbook (with the step INC-1187's lacked) and the demo
/// rule's alert triage. Once each.
async fn runbooks(tx: &mut PgConnection) -> AppResult<()> {
    use crate::runbooks::domain::RunbookDraft;
    let existing = crate::runbooks::db::list(&mut *tx, Default::default()).await?;
    let rule_id = crate::routing::db::list(&mut *tx)
        .await?
        .into_iter()
        .find(|r| r.name == DEMO_RULE.name)
        .map(|r| r.id);
    let books = [
        RunbookDraft {
            name: "High error rate".into(),
            link: Some("https://runbooks.example.com/payments-gateway/high-error-rate".into()),
            service: Some("payments-gateway".into()),
            rule_id: None,
            rule: None,
            steps: [
                "Check the card processor's status page and its latency (p50, p99)",
                "Check configuration changes of the last 24 h",
                "Compare timeouts and 5xx by replica: one replica or all of them?",
                "If a change lines up with the rise, roll back to the previous revision",
                "Post a stakeholder update within 30 minutes",
            ]
            .map(String::from)
            .to_vec(),
        },
        RunbookDraft {
            name: "5xx alert triage".into(),
            link: None,
            service: None,
            rule_id,
            rule: None,
            steps: [
                "Confirm the rise on the payments-gateway 5xx dashboard",
                "Name an incident commander and a scribe",
            ]
            .map(String::from)
            .to_vec(),
        },
    ];
    for book in books {
        if !existing.iter().any(|r| r.name == book.name) {
            crate::runbooks::actions::create(tx, &Actor::system("demo"), &book).await?;
        }
    }
    Ok(())
}
