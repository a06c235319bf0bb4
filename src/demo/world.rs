//! The demo world: besides INC-1187 and OrbitPay, 200 incidents over the last six months across
//! a dozen services — with alerts, timelines, roles, stakeholder updates, the changes that
//! caused some of them, postmortems and action items — so every page and chart has something
//! true to show. Generated from a fixed seed (each incident from its own number, so a run
//! stopped half-way completes the same world), entered through the same actions a responder
//! uses, at times relative to the first load. Loading twice changes nothing.
//!
//! The shape is a small company's: most incidents Sev3 or Sev4, a few Sev1; most acknowledged
//! within minutes, some late enough to breach their target; the latest few still open.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sqlx::{PgConnection, PgPool};

use crate::audit::Actor;
use crate::error::AppResult;
use crate::incidents::actions::{self, Change, Opening, ServiceChoice};
use crate::incidents::db::{self as incidents_db, Incident};
use crate::incidents::domain::{IncidentKey, Severity, Transition};
use crate::people;
use crate::roles::domain::Role;
use crate::services::{self, domain::ServiceDraft};

/// The seed of the whole world.
const SEED: u64 = 0x1187_2026;
/// How many incidents, numbered from [`FIRST`] in the order they happened (INC-1187 skipped).
pub const COUNT: usize = 200;
const FIRST: i64 = 1000;
/// The period they span, ending at the first load.
const DAYS: i64 = 182;

/// splitmix64: small, fast and the same on every platform and version, so the world is too.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Exponentially distributed with this mean: many short waits, a few long ones.
    fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    fn minutes(&mut self, mean: f64, at_least: f64) -> Duration {
        Duration::seconds(((self.exp(mean) + at_least) * 60.0).round() as i64)
    }
}

/// (name, tier, team, SLO %, req/s, description, depends on)
type ServiceRow = (
    &'static str,
    i64,
    &'static str,
    f64,
    f64,
    &'static str,
    &'static [&'static str],
);

const WORLD_SERVICES: &[ServiceRow] = &[
    (
        "identity",
        1,
        "Platform",
        99.95,
        300.0,
        "Sign-in, sessions and API tokens for merchants and their staff.",
        &[],
    ),
    (
        "ledger",
        1,
        "Payments",
        99.99,
        40.0,
        "Double-entry ledger of every authorization, capture and refund.",
        &[],
    ),
    (
        "web-frontend",
        1,
        "Checkout",
        99.9,
        450.0,
        "The merchant dashboard and the hosted checkout pages.",
        &["checkout-api", "identity"],
    ),
    (
        "search-api",
        2,
        "Data",
        99.5,
        220.0,
        "Product and order search for merchants.",
        &["identity"],
    ),
    (
        "notifications",
        2,
        "Platform",
        99.5,
        90.0,
        "Email, SMS and webhooks to merchants and their customers.",
        &[],
    ),
    (
        "inventory",
        2,
        "Fulfilment",
        99.5,
        70.0,
        "Stock levels and reservations across warehouses.",
        &["ledger"],
    ),
    (
        "shipping",
        3,
        "Fulfilment",
        99.0,
        25.0,
        "Carrier labels, rates and tracking.",
        &["inventory"],
    ),
    (
        "mobile-bff",
        2,
        "Checkout",
        99.5,
        160.0,
        "The backend the iOS and Android apps talk to.",
        &["identity", "checkout-api"],
    ),
    (
        "data-pipeline",
        3,
        "Data",
        98.0,
        15.0,
        "Nightly and streaming exports to the warehouse and to merchants.",
        &["ledger"],
    ),
];

/// Every service incidents land on, with how often (weights sum to 100).
const WHERE: &[(&str, u32)] = &[
    ("payments-gateway", 13),
    ("checkout-api", 12),
    ("payments-worker", 9),
    ("identity", 10),
    ("ledger", 5),
    ("web-frontend", 11),
    ("search-api", 9),
    ("notifications", 9),
    ("inventory", 7),
    ("shipping", 5),
    ("mobile-bff", 6),
    ("data-pipeline", 4),
];

const ENGINEERS: &[(&str, &str, &str)] = &[
    ("Lena Fischer", "lena.fischer@example.com", "lena"),
    ("Tomás Silva", "tomas.silva@example.com", "tomas"),
    ("Mei Chen", "mei.chen@example.com", "mei"),
    ("Kwame Mensah", "kwame.mensah@example.com", "kwame"),
    ("Sofia Rossi", "sofia.rossi@example.com", "sofia"),
    ("Omar Haddad", "omar.haddad@example.com", "omar"),
];

/// Who does what: (name, handle) of everyone on call in the world.
const RESPONDERS: &[(&str, &str)] = &[
    ("Ana Ribeiro", "ana"),
    ("Daniel Okafor", "daniel"),
    ("Priya Nair", "priya"),
    ("Marcelo Roman", "marcelo"),
    ("Priya Raman", "priya.raman"),
    ("Dev Shah", "dev"),
    ("Lena Fischer", "lena"),
    ("Tomás Silva", "tomas"),
    ("Mei Chen", "mei"),
    ("Kwame Mensah", "kwame"),
    ("Sofia Rossi", "sofia"),
    ("Omar Haddad", "omar"),
];

/// A way things break, written for any service (`{svc}`, `{dep}` filled in).
struct Failure {
    title: &'static str,
    alert: &'static str,
    summary: &'static str,
    impact: &'static str,
    notes: [&'static str; 3],
    mitigation: &'static str,
    /// The change that set it off, when one did: (kind, summary)
    change: Option<(&'static str, &'static str)>,
    root_cause: &'static str,
    /// (action, type)
    actions: [(&'static str, &'static str); 2],
}

const FAILURES: &[Failure] = &[
    Failure {
        title: "Elevated 5xx on {svc}",
        alert: "{svc} 5xx > 2% for 5 min",
        summary: "{svc} answered 5xx to a share of requests after a deploy; the errors came from one code path that read a field the new schema no longer filled.",
        impact: "Some requests to {svc} failed with 500 until the rollback.",
        notes: [
            "Errors concentrated on one endpoint; others are clean",
            "Deploy diff touches the serializer of that endpoint",
            "Rolling back {svc} to the previous release",
        ],
        mitigation: "Rollback complete; 5xx back under 0.1%",
        change: Some((
            "deploy",
            "refactor: move {svc} DTOs to the shared schema package",
        )),
        root_cause: "A schema refactor removed a field one endpoint of {svc} still read; the tests used fixtures that still had it.",
        actions: [
            (
                "Contract tests for {svc} against the shared schema",
                "prevent",
            ),
            (
                "Error-rate canary gate before 100% rollout of {svc}",
                "detect",
            ),
        ],
    },
    Failure {
        title: "{svc} p99 latency above 2 s",
        alert: "{svc} p99 > 2 s for 10 min",
        summary: "{svc} slowed down when a query lost its index after a migration; requests queued behind it.",
        impact: "Slow pages and API calls on {svc}; a few timeouts for callers.",
        notes: [
            "Database CPU at 95% on the {svc} primary",
            "pg_stat_statements: one query is 80% of the time, sequential scan",
            "Re-creating the dropped index concurrently",
        ],
        mitigation: "Index back; p99 at 180 ms",
        change: Some((
            "config",
            "migration: rebuild {svc} orders table without bloat",
        )),
        root_cause: "The table rebuild in a migration of {svc} did not recreate one partial index; the planner fell back to a sequential scan under load.",
        actions: [
            (
                "Check migrations of {svc} for dropped indexes in CI",
                "prevent",
            ),
            ("Alert on sequential scans of large tables", "detect"),
        ],
    },
    Failure {
        title: "{svc} database disk nearly full",
        alert: "{svc} db disk > 90%",
        summary: "The write-ahead log of {svc}'s database grew because a replication slot of a stopped consumer held it back.",
        impact: "No customer impact; writes to {svc} would have stopped at 100%.",
        notes: [
            "pg_wal is 80% of the disk",
            "An inactive replication slot from the old CDC consumer",
            "Dropped the slot after checking nobody uses it",
        ],
        mitigation: "WAL recycled; disk at 41%",
        change: None,
        root_cause: "A logical replication slot of a decommissioned consumer of {svc} was never dropped and retained WAL.",
        actions: [
            (
                "Alert on inactive replication slots retaining WAL",
                "detect",
            ),
            (
                "Decommissioning checklist drops replication slots",
                "process",
            ),
        ],
    },
    Failure {
        title: "TLS certificate for {svc} expiring",
        alert: "{svc} certificate expires in < 7 days",
        summary: "The certificate of {svc}'s public endpoint was about to expire because its renewal job had been failing silently.",
        impact: "None if renewed in time; callers of {svc} would have failed TLS handshakes.",
        notes: [
            "Renewal job logs show DNS-01 challenge failures for 3 weeks",
            "The DNS API token was rotated and the job kept the old one",
            "Renewed by hand with the new token",
        ],
        mitigation: "New certificate served; expires in 90 days",
        change: Some(("config", "rotate DNS provider API token")),
        root_cause: "The certificate renewal for {svc} used a DNS API token that had been rotated; its failures went to a log nobody watched.",
        actions: [
            ("Renewal job failures page the owning team", "detect"),
            ("Token rotation runbook lists every consumer", "process"),
        ],
    },
    Failure {
        title: "Queue backlog on {svc}",
        alert: "{svc} queue age > 15 min",
        summary: "Messages for {svc} piled up when its consumers crashed on one malformed message and retried it forever.",
        impact: "Delayed processing by {svc}; nothing lost.",
        notes: [
            "Consumers restart every 40 s with the same stack trace",
            "One message with a null customer id at the head of the queue",
            "Moved the poison message to the dead-letter queue",
        ],
        mitigation: "Backlog draining; age under 2 min",
        change: Some(("deploy", "feat: {svc} accepts guest customers")),
        root_cause: "{svc} consumers had no dead-letter handling, so one message they could not parse blocked the partition.",
        actions: [
            (
                "Dead-letter queue after 5 failed deliveries in {svc}",
                "mitigate",
            ),
            ("Alert on consumer crash loops", "detect"),
        ],
    },
    Failure {
        title: "{svc} pods restarting (out of memory)",
        alert: "{svc} restarts > 5 in 15 min",
        summary: "{svc} leaked memory through an unbounded cache and its pods were killed every few hours, dropping in-flight requests.",
        impact: "Errors for requests in flight on {svc} each time a pod was killed.",
        notes: [
            "Memory grows linearly until the 2 GiB limit",
            "Heap profile: a per-tenant cache with no eviction",
            "Raised the limit and scheduled rolling restarts as a stopgap",
        ],
        mitigation: "Restarts stopped after the cache got a size bound",
        change: Some(("deploy", "perf: cache tenant settings in {svc}")),
        root_cause: "A cache added to {svc} for performance had no size bound; with many tenants it grew until the pod's memory limit.",
        actions: [
            ("Bounded caches only (lint rule) in {svc}", "prevent"),
            ("Memory growth alert per pod", "detect"),
        ],
    },
    Failure {
        title: "Timeouts from {svc} to {dep}",
        alert: "{svc} dependency errors > 5%",
        summary: "{svc} timed out calling {dep} after {dep} halved its connection limit; retries made it worse.",
        impact: "Failures on {svc} paths that call {dep}.",
        notes: [
            "Client-side timeouts only; {dep} itself looks healthy",
            "Connection pool to {dep} saturated; requests wait for a connection",
            "Raised the pool and cut retries to one",
        ],
        mitigation: "Timeouts gone after the pool change",
        change: Some(("config", "lower {dep} max connections per client to 20")),
        root_cause: "The connection limit of {dep} was lowered without a capacity check of its callers; {svc} needed more concurrent connections at peak.",
        actions: [
            (
                "Capacity check (rate × latency) for connection limits of {dep}",
                "prevent",
            ),
            ("Retry budget in {svc} clients", "mitigate"),
        ],
    },
    Failure {
        title: "Bad feature flag on {svc}",
        alert: "{svc} error budget burn 10x",
        summary: "A feature flag turned on for all merchants at once sent {svc} down a code path that was only tested for a few.",
        impact: "Part of {svc}'s requests failed for the merchants in the new path.",
        notes: [
            "Errors started the minute the flag went to 100%",
            "Flag history shows a jump from 5% to 100%",
            "Flag back to 5%",
        ],
        mitigation: "Flag reverted; errors stopped",
        change: Some(("feature_flag", "{svc}-new-pricing on for 100% of merchants")),
        root_cause: "The flag of {svc} skipped its ramp; the new path had a bug with merchants in a currency the 5% cohort did not use.",
        actions: [
            ("Flag ramps in steps with an error gate", "prevent"),
            ("Flag changes announced in the incident channel", "process"),
        ],
    },
    Failure {
        title: "DNS resolution failures in {svc}",
        alert: "{svc} DNS errors > 1%",
        summary: "{svc} failed to resolve internal names when the cluster DNS was overwhelmed after an autoscaling event.",
        impact: "Intermittent failures of {svc} calls to other services.",
        notes: [
            "NXDOMAIN and timeouts from the cluster resolver",
            "CoreDNS pods at their CPU limit after the node pool doubled",
            "Scaled CoreDNS and enabled node-local caching",
        ],
        mitigation: "Resolution errors back to zero",
        change: Some((
            "infrastructure",
            "autoscaler: allow the general node pool to double",
        )),
        root_cause: "Cluster DNS did not scale with the node pool; {svc} resolves names per request without a local cache.",
        actions: [
            ("Node-local DNS cache on every node", "prevent"),
            ("CoreDNS saturation alert", "detect"),
        ],
    },
    Failure {
        title: "Scheduled job ran twice in {svc}",
        alert: "{svc} duplicate job runs",
        summary: "A nightly job of {svc} ran on two replicas after a leader-election change, doing its work twice.",
        impact: "Some merchants received their daily report twice from {svc}.",
        notes: [
            "Two job runs at 02:00 with the same id",
            "Both replicas believed they were leader after the lease change",
            "Disabled the job on one replica by hand",
        ],
        mitigation: "Duplicates stopped; one runner again",
        change: Some((
            "deploy",
            "chore: {svc} leader election via Kubernetes leases",
        )),
        root_cause: "The new leader election of {svc} had a lease shorter than a job run; a slow run let a second replica take over mid-job.",
        actions: [
            ("Jobs of {svc} take an idempotency key per run", "prevent"),
            ("Alert on overlapping job runs", "detect"),
        ],
    },
];

fn fill(text: &str, svc: &str, dep: &str) -> String {
    text.replace("{svc}", svc).replace("{dep}", dep)
}

/// What the world has decided about one incident before it is entered.
struct Plan {
    number: i64,
    service: &'static str,
    dep: &'static str,
    failure: &'static Failure,
    severity: Severity,
    started: DateTime<Utc>,
    detected: DateTime<Utc>,
    by_alert: bool,
    alerts: usize,
    /// (when, who, raised to)
    raise: Option<(DateTime<Utc>, Severity)>,
    ack: Option<(DateTime<Utc>, usize)>,
    mitigated: Option<DateTime<Utc>>,
    resolved: Option<DateTime<Utc>>,
    responders: [usize; 4],
    /// (minutes before detection) of the change that set it off
    change_before: Option<i64>,
    postmortem: bool,
}

/// The numbers the world's incidents take, oldest first.
fn numbers() -> impl Iterator<Item = i64> {
    (FIRST..).filter(|n| *n != super::INC_1187.0).take(COUNT)
}

fn severity(rng: &mut Rng) -> Severity {
    match rng.below(100) {
        0..=3 => Severity::Sev1,
        4..=17 => Severity::Sev2,
        18..=59 => Severity::Sev3,
        _ => Severity::Sev4,
    }
}

fn service(rng: &mut Rng) -> &'static str {
    let mut roll = rng.below(100) as u32;
    for (name, weight) in WHERE {
        if roll < *weight {
            return name;
        }
        roll -= weight;
    }
    WHERE[0].0
}

/// The services a service calls, or a shared one when it calls none.
fn dependency(svc: &str) -> &'static str {
    WORLD_SERVICES
        .iter()
        .find(|s| s.0 == svc)
        .and_then(|s| s.6.first().copied())
        .unwrap_or(match svc {
            "checkout-api" => "payments-worker",
            "payments-gateway" | "payments-worker" => "ledger",
            _ => "identity",
        })
}

fn plan(index: usize, number: i64, end: DateTime<Utc>) -> Plan {
    let mut rng = Rng::new(SEED ^ (number as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let start = end - Duration::days(DAYS);
    // Spread over the period in order, each within its own slot.
    let slot = Duration::days(DAYS).num_seconds() / COUNT as i64;
    let detected =
        start + Duration::seconds(slot * index as i64 + (rng.unit() * slot as f64) as i64);
    let severity = severity(&mut rng);
    let service = service(&mut rng);
    let failure = rng.pick(FAILURES);
    let started = detected - rng.minutes(4.0, 0.5);
    let by_alert = rng.chance(0.7);
    let alerts = if by_alert {
        if severity <= Severity::Sev2 && rng.chance(0.3) {
            20 + rng.below(180)
        } else {
            1 + rng.below(4)
        }
    } else {
        0
    };
    // Acknowledgement within minutes as a rule, now and then past the target.
    let ack_mean = match severity {
        Severity::Sev1 => 5.0,
        Severity::Sev2 => 9.0,
        Severity::Sev3 => 25.0,
        Severity::Sev4 => 90.0,
    };
    let ack_at = detected + rng.minutes(ack_mean, 0.5);
    let mitigate_mean = match severity {
        Severity::Sev1 => 45.0,
        Severity::Sev2 => 70.0,
        Severity::Sev3 => 150.0,
        Severity::Sev4 => 600.0,
    };
    let mitigated_at = ack_at + rng.minutes(mitigate_mean, 5.0);
    let resolved_at = mitigated_at + rng.minutes(mitigate_mean, 10.0);
    let raise = (severity >= Severity::Sev3 && rng.chance(0.1))
        .then(|| (ack_at + rng.minutes(10.0, 1.0), Severity::Sev2));
    let responders = [
        rng.below(RESPONDERS.len()),
        rng.below(RESPONDERS.len()),
        rng.below(RESPONDERS.len()),
        rng.below(RESPONDERS.len()),
    ];
    let change_before = (failure.change.is_some() && rng.chance(0.75))
        .then(|| 10 + (rng.exp(90.0) as i64).min(600));
    let peak = raise.map_or(severity, |(_, to)| to.min(severity));
    let postmortem = peak <= Severity::Sev2 || rng.chance(0.15);
    // The latest few are still open: the dashboard's now.
    let from_end = COUNT - 1 - index;
    let (ack, mitigated, resolved) = if from_end < 4 {
        (
            (from_end != 0).then_some((ack_at, responders[0])),
            (from_end == 2).then_some(mitigated_at),
            None,
        )
    } else {
        (
            Some((ack_at, responders[0])),
            Some(mitigated_at),
            Some(resolved_at),
        )
    };
    Plan {
        number,
        service,
        dep: dependency(service),
        failure,
        severity,
        started,
        detected,
        by_alert,
        alerts,
        raise: raise.filter(|(t, _)| resolved.is_some() || *t < end),
        ack,
        mitigated,
        resolved,
        responders,
        change_before,
        postmortem,
    }
}

/// Keeps the open incidents' times inside the last hours before `end`, the way they would be
/// if they were happening now.
fn recent(mut p: Plan, index: usize, end: DateTime<Utc>) -> Plan {
    let from_end = COUNT - 1 - index;
    if from_end >= 4 {
        return p;
    }
    let ago = [6, 38, 140, 300][from_end];
    // One waiting for acknowledgement, a Sev2 being worked (with its bridge and a claim), one
    // mitigated, one minor; none on payments-gateway, whose policy would page people for real.
    p.severity = [
        Severity::Sev3,
        Severity::Sev2,
        Severity::Sev3,
        Severity::Sev4,
    ][from_end];
    p.service = [
        "notifications",
        "checkout-api",
        "inventory",
        "data-pipeline",
    ][from_end];
    p.dep = dependency(p.service);
    p.change_before = None;
    let shift = (end - Duration::minutes(ago)) - p.detected;
    p.detected += shift;
    p.started += shift;
    p.ack = p
        .ack
        .map(|(t, who)| ((t + shift).min(end - Duration::minutes(1)), who));
    p.mitigated = p
        .mitigated
        .map(|t| (t + shift).min(end - Duration::seconds(30)));
    p.raise = None;
    if let (Some((ack, _)), Some(m)) = (p.ack, p.mitigated)
        && m <= ack
    {
        p.mitigated = Some(ack + Duration::seconds(20));
    }
    p
}

pub async fn load(pool: &PgPool) -> AppResult<()> {
    let mut tx = crate::transaction::begin(pool).await?;
    setting_up(&mut tx).await?;
    tx.commit().await?;
    let now = crate::clock::now(pool).await?;
    let end = anchored_end(pool, now).await?;
    // The months the world's alerts resolve in, made first, outside the incidents'
    // transactions: a month made inside one would hold its table lock until it commits, and a
    // running server's alerts would wait on it.
    crate::alert_store::db::cover_months(
        &mut *pool.acquire().await?,
        end - Duration::days(DAYS),
        end,
    )
    .await?;
    for (index, number) in numbers().enumerate() {
        if incidents_db::find(pool, IncidentKey(number))
            .await?
            .is_some()
        {
            continue;
        }
        let p = recent(plan(index, number, end), index, end);
        let mut tx = crate::transaction::begin(pool).await?;
        enter(&mut tx, &p).await?;
        tx.commit().await?;
    }
    let mut tx = crate::transaction::begin(pool).await?;
    super::teams::rotas(&mut tx).await?;
    super::teams::private_incident(&mut tx).await?;
    super::quiet::silences(&mut tx).await?;
    super::quiet::heartbeats(&mut tx).await?;
    super::paging::history(&mut tx).await?;
    incidents_db::bump_sequence(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// The end of the period: when the world was first loaded (its first incident's row was
/// written then), so a load that stopped half-way completes the same world; `now` on the
/// first load.
async fn anchored_end(pool: &PgPool, fallback: DateTime<Utc>) -> AppResult<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(
        r#"select max(created_at) as "at" from incidents where number = $1 -- every incident: the demo's"#,
        FIRST
    )
    .fetch_one(pool)
    .await?
    .unwrap_or(fallback))
}

/// The world's services (with their dependencies), people, alert source and bridges. Once.
async fn setting_up(tx: &mut PgConnection) -> AppResult<()> {
    let demo = Actor::system("demo");
    for (name, tier, team, slo, rate, description, _) in WORLD_SERVICES {
        if services::db::find_by_name(&mut *tx, name).await?.is_none() {
            let draft = ServiceDraft {
                name: (*name).into(),
                tier: *tier,
                team: (*team).into(),
                description: (*description).into(),
                slo_target_percent: Some(*slo),
                avg_requests_per_second: Some(*rate),
                runbook_url: Some(format!("https://runbooks.example.com/{name}")),
                ..Default::default()
            }
            .validated()?;
            let team = super::teams::team_id(tx, team).await?;
            services::db::insert(&mut *tx, &draft, team).await?;
        }
    }
    for (name, _, _, _, _, _, deps) in WORLD_SERVICES {
        let s = services::db::get_by_name(&mut *tx, name).await?;
        if s.depends_on.is_empty() && !deps.is_empty() {
            let draft = ServiceDraft {
                depends_on: Some(deps.iter().map(|d| (*d).to_owned()).collect()),
                ..s.draft()
            };
            services::actions::update(tx, &demo, &s, s.version, &draft).await?;
        }
    }
    super::ensure_people(tx, ENGINEERS).await?;
    super::teams::staff(tx).await?;
    if !crate::integrations::db::list(&mut *tx)
        .await?
        .iter()
        .any(|i| i.name == ALERT_SOURCE)
    {
        crate::integrations::actions::create(
            tx,
            &demo,
            ALERT_SOURCE,
            "alertmanager",
            None,
            None,
            None,
        )
        .await?;
    }
    for svc in ["payments-gateway", "checkout-api"] {
        let s = services::db::get_by_name(&mut *tx, svc).await?;
        if crate::bridge::db::of_service(&mut *tx, s.id)
            .await?
            .is_empty()
        {
            let bridge = crate::bridge::domain::Bridge {
                call_url: Some(format!("https://meet.example.com/{svc}-incident")),
                chat_url: Some(format!("https://chat.example.com/channels/inc-{svc}")),
            };
            services::actions::set_bridge(tx, &demo, &s, &bridge).await?;
        }
    }
    Ok(())
}

const ALERT_SOURCE: &str = "Demo Prometheus";

fn who(p: &Plan, n: usize) -> (&'static str, &'static str) {
    RESPONDERS[p.responders[n] % RESPONDERS.len()]
}

async fn person_actor(tx: &mut PgConnection, handle: &str, name: &str) -> AppResult<Actor> {
    let person = people::db::find(&mut *tx, handle).await?;
    Ok(Actor {
        person_id: person.map(|p| p.id),
        name: name.to_owned(),
        ..Default::default()
    })
}

/// A change made at `at` (in the past) by `actor`.
fn then(key: IncidentKey, actor: &Actor, at: DateTime<Utc>) -> Change<'_> {
    Change::now(key, actor).dated(Some(at))
}

/// Enters one incident as it happened.
async fn enter(tx: &mut PgConnection, p: &Plan) -> AppResult<()> {
    let f = p.failure;
    let (svc, dep) = (p.service, p.dep);
    let key = IncidentKey(p.number);
    let now = crate::clock::now(&mut *tx).await?;
    if let Some(minutes) = p.change_before {
        let (kind, summary) = f.change.unwrap_or(("deploy", "release"));
        crate::changes::actions::record(
            tx,
            &Actor::system("deploy pipeline"),
            &crate::changes::domain::ChangeDraft {
                service: svc.into(),
                kind: Some(kind.into()),
                summary: fill(summary, svc, dep),
                author: Some(who(p, 3).0.into()),
                link: Some(format!(
                    "https://git.example.com/orbitpay/{svc}/pull/{}",
                    2000 + p.number
                )),
                occurred_at: Some(p.started - Duration::minutes(minutes)),
                ..Default::default()
            },
        )
        .await?;
    }
    let (opener, alert_name) = (who(p, 0), fill(f.alert, svc, dep));
    let note = if p.by_alert {
        format!("Alert \"{alert_name}\" fires; {key} opened automatically")
    } else {
        format!("{} noticed it on the dashboards and opened {key}", opener.0)
    };
    let actor = if p.by_alert {
        Actor::system(ALERT_SOURCE)
    } else {
        person_actor(tx, opener.1, opener.0).await?
    };
    let incident = actions::open(
        tx,
        &Opening {
            number: Some(p.number),
            title: &fill(f.title, svc, dep),
            severity: p.severity,
            service: ServiceChoice::Named(svc),
            summary: &fill(f.summary, svc, dep),
            impact: &fill(f.impact, svc, dep),
            started_at: Some(p.started),
            detected_at: Some(p.detected),
            note: &note,
            now,
            restricted_to: None,
            quiet: false,
        },
        &actor,
    )
    .await?;
    if p.alerts > 0 {
        alerts_of(tx, p, &incident, &alert_name).await?;
    }
    let Some((ack_at, _)) = p.ack else {
        return Ok(());
    };
    let (acker, commander, scribe) = (who(p, 0), who(p, 1), who(p, 2));
    let a = person_actor(tx, acker.1, acker.0).await?;
    actions::transition(tx, &then(key, &a, ack_at), Transition::Acknowledge, "").await?;
    let mut t = ack_at;
    if let Some((raise_at, to)) = p.raise {
        let reason =
            format!("more merchants affected than first thought; {svc} is on their checkout path");
        actions::change_severity(tx, &then(key, &a, raise_at.max(t)), to, &reason).await?;
        t = raise_at.max(t);
    }
    let peak = p.raise.map_or(p.severity, |(_, to)| to.min(p.severity));
    if peak <= Severity::Sev2 {
        let at = t + Duration::minutes(2);
        if p.resolved.is_some() || at < now {
            let c = then(key, &a, at);
            actions::set_role(tx, &c, Role::IncidentCommander, Some(commander.1)).await?;
            actions::set_role(tx, &c, Role::Scribe, Some(scribe.1)).await?;
            t = at;
        }
    }
    // Notes between acknowledgement and mitigation, as the scribe wrote them.
    let until = p.mitigated.unwrap_or(now - Duration::seconds(10));
    let gap = (until - t).num_seconds().max(60) / 4;
    for (n, text) in f.notes.iter().enumerate() {
        let at = t + Duration::seconds(gap * (n as i64 + 1));
        if at >= until {
            break;
        }
        let by = if n == 0 { acker } else { scribe };
        let author = person_actor(tx, by.1, by.0).await?;
        actions::add_note(tx, &then(key, &author, at), None, &fill(text, svc, dep)).await?;
    }
    if peak <= Severity::Sev2 {
        let comms = person_actor(tx, commander.1, commander.0).await?;
        let at = t + Duration::seconds(gap);
        if at < until {
            let text = format!(
                "We are investigating {} affecting {svc}. Next update within the hour.",
                fill(f.title, svc, dep).to_lowercase()
            );
            actions::add_stakeholder_update(tx, &then(key, &comms, at), "internal", &text).await?;
        }
    }
    if p.resolved.is_none() && p.mitigated.is_none() && peak <= Severity::Sev2 {
        // Someone is on a lead right now.
        let on_it = person_actor(tx, scribe.1, scribe.0).await?;
        let lead = format!("{dep} dependency dashboards");
        actions::claim(tx, &Change::now(key, &on_it), &lead, true, 30).await?;
    }
    let Some(mitigated_at) = p.mitigated else {
        return Ok(());
    };
    let m = person_actor(tx, commander.1, commander.0).await?;
    actions::transition(
        tx,
        &then(key, &m, mitigated_at),
        Transition::Mitigate,
        &fill(f.mitigation, svc, dep),
    )
    .await?;
    let Some(resolved_at) = p.resolved else {
        return Ok(());
    };
    actions::transition(tx, &then(key, &m, resolved_at), Transition::Resolve, "").await?;
    if let Some(minutes) = p.change_before {
        confirm_trigger(tx, &incident, minutes, p, &m, mitigated_at).await?;
    }
    if p.postmortem {
        let owner = who(p, 3);
        actions::set_role(
            tx,
            &then(key, &m, resolved_at),
            Role::PostmortemOwner,
            Some(owner.1),
        )
        .await?;
        let incident = incidents_db::get(&mut *tx, key).await?;
        postmortem(tx, p, &incident, owner, now).await?;
    }
    Ok(())
}

/// The incident's alerts, received at the incident's times (history kept as it happened).
async fn alerts_of(
    tx: &mut PgConnection,
    p: &Plan,
    incident: &Incident,
    alert_name: &str,
) -> AppResult<()> {
    use crate::alert_store::db as store;
    let source = crate::integrations::db::list(&mut *tx)
        .await?
        .into_iter()
        .find(|i| i.name == ALERT_SOURCE)
        .ok_or_else(|| crate::error::AppError::Internal("the demo alert source vanished".into()))?;
    let group_key = format!(
        "{{}}:{{alertname=\"{alert_name}\", service=\"{}\"}}",
        p.service
    );
    let Some(group_id) = store::insert_group(tx, source.id, &group_key).await? else {
        return Ok(());
    };
    store::attach_group(tx, group_id, incident.id).await?;
    // Owned here, borrowed by the rows.
    struct Made {
        dedup_key: String,
        source: String,
        labels: Value,
        details: Value,
        raw: Value,
    }
    let made: Vec<Made> = (0..p.alerts)
        .map(|n| {
            let pod = format!(
                "{}-{:x}",
                p.service,
                (p.number as usize * 7919 + n * 104_729) % 0xfffff
            );
            let labels = json!({ "alertname": alert_name, "service": p.service, "pod": pod, "severity": "critical" });
            Made {
                dedup_key: format!("{}:{pod}", p.number),
                source: format!("prometheus/{}", p.service),
                raw: json!({ "labels": labels, "status": "firing" }),
                labels,
                details: json!({ "summary": alert_name }),
            }
        })
        .collect();
    let mut rows = store::NewAlerts::default();
    for (n, m) in made.iter().enumerate() {
        rows.integration_id.push(source.id);
        rows.group_id.push(group_id);
        rows.incident_id.push(incident.id);
        rows.dedup_key.push(&m.dedup_key);
        rows.summary.push(alert_name);
        rows.source.push(&m.source);
        rows.severity.push("critical");
        rows.labels.push(&m.labels);
        rows.details.push(&m.details);
        rows.source_url.push(None);
        rows.starts_at.push(Some(p.detected));
        rows.deliveries.push(1 + (n % 3) as i32);
        rows.rule_id.push(None);
        rows.routed
            .push(json!({ "service": p.service, "severity": p.severity.as_str() }));
        rows.raw.push(&m.raw);
        rows.silence_id.push(None);
        rows.window_id.push(None);
    }
    store::upsert(tx, &rows).await?;
    let last = p.detected + Duration::minutes(2 + p.alerts as i64 / 10);
    let resolved = p.mitigated;
    store::keep_history(tx, incident.id, p.detected, last, resolved).await
}

/// The change that set it off, found among the suspects and confirmed by the commander.
async fn confirm_trigger(
    tx: &mut PgConnection,
    incident: &Incident,
    minutes: i64,
    p: &Plan,
    judge: &Actor,
    at: DateTime<Utc>,
) -> AppResult<()> {
    let suspecting = crate::incidents::views::suspecting(incident);
    let suspects = crate::changes::actions::suspects(&mut *tx, &suspecting).await?;
    let changed_at = p.started - Duration::minutes(minutes);
    let Some(s) = suspects.iter().find(|s| s.change.occurred_at == changed_at) else {
        return Ok(());
    };
    crate::changes::actions::judge(
        tx,
        &suspecting,
        &crate::changes::actions::Judgement {
            change_id: s.change.id,
            verdict: crate::changes::domain::Verdict::ConfirmedTrigger,
            at: Some(at),
            actor: judge,
        },
    )
    .await?;
    Ok(())
}

/// The postmortem: sections from the failure, figures, action items (some done, some late),
/// published for most, still in review for a few.
async fn postmortem(
    tx: &mut PgConnection,
    p: &Plan,
    i: &Incident,
    owner: (&str, &str),
    now: DateTime<Utc>,
) -> AppResult<()> {
    use crate::postmortems::actions::{self as pm, ItemDraft, ItemEdit};
    let f = p.failure;
    let (svc, dep) = (p.service, p.dep);
    let writer = person_actor(tx, owner.1, owner.0).await?;
    let doc = pm::current(tx, i).await?;
    let mut version = doc.version;
    let sections = [
        ("summary", fill(f.summary, svc, dep)),
        ("impact", format!("- {}", fill(f.impact, svc, dep))),
        ("root_cause", fill(f.root_cause, svc, dep)),
        (
            "detection",
            if p.by_alert {
                format!(
                    "The alert \"{}\" fired {{time_to_detect}} after impact began.",
                    fill(f.alert, svc, dep)
                )
            } else {
                "A person noticed it before any alert fired ({time_to_detect} after impact began)."
                    .to_owned()
            },
        ),
        (
            "went_well",
            "- Acknowledged in {time_to_acknowledge}.\n- The timeline was kept as it happened."
                .to_owned(),
        ),
    ];
    for (section, text) in &sections {
        version = pm::edit_section(tx, &writer, i, version, section, text).await?;
    }
    let rate = WHERE.iter().position(|(s, _)| *s == svc).unwrap_or(0) as i64;
    let minutes = p
        .mitigated
        .map_or(30, |m| (m - p.started).num_minutes().max(1));
    let total = (60 + rate * 17) * 60 * minutes;
    let failed = total * (2 + (p.number % 23)) / 100;
    pm::edit_facts(
        tx,
        &writer,
        i,
        version,
        &crate::postmortems::db::Facts {
            impacted: svc,
            requests_label: "Requests",
            failed_requests: Some(failed),
            total_requests: Some(total),
        },
    )
    .await?;
    let resolved = p.resolved.unwrap_or(now);
    for (n, (action, kind)) in f.actions.iter().enumerate() {
        let assignee = who(p, n + 1);
        let due = (resolved + Duration::days(14 + 21 * n as i64))
            .date_naive()
            .to_string();
        pm::add_action_item(
            tx,
            &writer,
            i,
            &ItemDraft {
                action: &fill(action, svc, dep),
                kind,
                owner: Some(assignee.1),
                due_on: Some(&due),
                work_item: &format!("LIN-{}", 4000 + p.number * 2 + n as i64),
            },
        )
        .await?;
    }
    // Older items are mostly done; recent ones still open (some already late).
    let age = (now - resolved).num_days();
    let items = crate::action_items::db::action_items(&mut *tx, doc.id).await?;
    for (n, item) in items.iter().enumerate() {
        let done = age > 45 && (n == 0 || p.number % 3 != 0);
        let status = if done {
            "done"
        } else if age > 20 && n == 0 {
            "in_progress"
        } else {
            continue;
        };
        let was = pm::item(tx, item.id, crate::incident_ref::domain::SeenBy::ALL).await?;
        let edit = ItemEdit {
            action: None,
            kind: None,
            owner: None,
            due_on: None,
            work_item: None,
            status: Some(status),
        };
        pm::edit_action_item(tx, &writer, &was, None, &edit).await?;
    }
    if p.number % 7 == 3 {
        pm::set_review(tx, &writer, i, true).await?;
    } else {
        pm::publish(tx, &writer, i, now).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .to_utc()
    }

    fn world() -> Vec<Plan> {
        numbers()
            .enumerate()
            .map(|(i, n)| recent(plan(i, n, end()), i, end()))
            .collect()
    }

    #[test]
    fn the_same_seed_makes_the_same_world() {
        let (a, b) = (world(), world());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (x.number, x.service, x.severity, x.detected),
                (y.number, y.service, y.severity, y.detected)
            );
        }
        assert_eq!(a.len(), COUNT);
        assert!(!a.iter().any(|p| p.number == super::super::INC_1187.0));
    }

    #[test]
    fn mostly_minor_a_few_major_and_in_order_over_six_months() {
        let w = world();
        let count = |s: Severity| w.iter().filter(|p| p.severity == s).count();
        let (s1, s2, minor) = (
            count(Severity::Sev1),
            count(Severity::Sev2),
            count(Severity::Sev3) + count(Severity::Sev4),
        );
        assert!((2..=16).contains(&s1), "a few Sev1: {s1}");
        assert!(s2 > s1 && s2 < minor / 2, "Sev2 {s2}, minor {minor}");
        assert!(minor * 100 / COUNT >= 65, "most are Sev3 or Sev4: {minor}");
        assert!(
            w.windows(2).all(|p| p[0].detected < p[1].detected),
            "numbered in the order they happened"
        );
        assert!(w[0].detected >= end() - Duration::days(DAYS));
        assert!(
            w.iter()
                .all(|p| p.started < p.detected && p.detected < end())
        );
        let services: std::collections::BTreeSet<_> = w.iter().map(|p| p.service).collect();
        assert_eq!(services.len(), WHERE.len(), "every service had incidents");
    }

    #[test]
    fn times_follow_one_another_and_some_breach_their_targets() {
        let w = world();
        for p in &w {
            if let Some((ack, _)) = p.ack {
                assert!(ack > p.detected);
                if let Some(m) = p.mitigated {
                    assert!(m > ack, "{}", crate::domain::IncidentKey(p.number));
                    if let Some(r) = p.resolved {
                        assert!(r > m);
                    }
                }
            }
        }
        let open = w.iter().filter(|p| p.resolved.is_none()).count();
        assert_eq!(open, 4, "the latest four are open");
        assert!(
            w.iter().any(|p| p.ack.is_none()),
            "one waits for acknowledgement"
        );
        // Sev1 and Sev2 acknowledgement targets are 15 and 30 minutes.
        let late = w
            .iter()
            .filter(|p| p.severity <= Severity::Sev2)
            .filter(|p| {
                let target = if p.severity == Severity::Sev1 { 15 } else { 30 };
                p.ack
                    .is_some_and(|(a, _)| (a - p.detected).num_minutes() > target)
            })
            .count();
        assert!(late >= 1, "some acknowledgements breach their target");
        assert!(
            w.iter().filter(|p| p.alerts >= 20).count() >= 2,
            "a few alert storms"
        );
    }
}
