//! What a replica counts for Prometheus, in one registry per process (`prometheus-client`):
//! requests by route template, webhooks and alerts taken or refused by format, the alert
//! lanes' batches, incidents opened, how late the engines fire, the outbox's attempts and how
//! long a message took to go, live streams open, and how long a transaction waited to begin
//! (a connection from the pool, then `BEGIN`). What is read at each scrape instead (the
//! outbox's pending messages, the pool's connections) is set by the `/metrics` handler just
//! before it encodes. Every replica exposes its own; Prometheus adds them up.

use std::sync::OnceLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    /// The route's template (`/api/v1/incidents/{key}`), never the path asked for
    pub route: String,
    /// 2xx, 3xx, 4xx or 5xx
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct IntakeLabels {
    /// alertmanager, grafana, pagerduty-events-v2, generic or opsgenie
    pub format: String,
    /// accepted, unauthorized, unstorable or unavailable
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EngineLabels {
    pub engine: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// webhook, slack, email, sms … (a subscriber's mail is email)
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptLabels {
    pub kind: String,
    /// delivered, retried or failed (given up)
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PoolLabels {
    /// serving (the pool requests and engines use; the alert lanes' own is not counted)
    pub pool: String,
    /// idle or busy
    pub state: String,
}

fn seconds() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn lateness() -> Histogram {
    // 10 ms to about 10 min.
    Histogram::new(exponential_buckets(0.01, 2.0, 17))
}

/// Every instrument, registered once.
pub struct Metrics {
    registry: Registry,
    /// Every family's name, `quell_` included (a counter's without `_total`)
    names: Vec<String>,
    pub requests: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pub webhooks: Family<IntakeLabels, Counter>,
    pub alerts: Family<IntakeLabels, Counter>,
    pub webhook_answer: Family<IntakeLabels, Histogram, fn() -> Histogram>,
    pub lane_batch_alerts: Histogram,
    pub lane_write: Histogram,
    pub incidents_opened: Counter,
    pub lateness: Family<EngineLabels, Histogram, fn() -> Histogram>,
    pub attempts: Family<AttemptLabels, Counter>,
    pub delivery: Family<KindLabels, Histogram, fn() -> Histogram>,
    pub outbox_pending: Family<KindLabels, Gauge>,
    pub live_streams: Gauge,
    pub pool: Family<PoolLabels, Gauge>,
    pub begin_wait: Histogram,
}

/// A registry being filled, with the names registered so far.
struct Filling {
    registry: Registry,
    names: Vec<String>,
}

/// Registers `metric` and gives it back.
fn kept<M: prometheus_client::registry::Metric + Clone>(
    r: &mut Filling,
    (name, help): (&str, &str),
    metric: M,
) -> M {
    r.registry.register(name, help, metric.clone());
    r.names.push(format!("quell_{name}"));
    metric
}

impl Metrics {
    fn new() -> Self {
        let mut r = Filling {
            registry: Registry::with_prefix("quell"),
            names: Vec::new(),
        };
        let r = &mut r;
        let m = Self {
            requests: kept(
                r,
                (
                    "http_request_duration_seconds",
                    "Requests answered, by method, route template and status class, and how long each took",
                ),
                Family::new_with_constructor(seconds as fn() -> Histogram),
            ),
            webhooks: kept(
                r,
                (
                    "webhook_requests",
                    "Webhook requests answered, by format and outcome",
                ),
                Family::default(),
            ),
            alerts: kept(
                r,
                (
                    "alerts",
                    "Alerts in webhook requests, by format and outcome (accepted: stored)",
                ),
                Family::default(),
            ),
            webhook_answer: kept(
                r,
                (
                    "webhook_answer_seconds",
                    "From a webhook's arrival at its lane to its answer (waiting and writing), by format and outcome",
                ),
                Family::new_with_constructor(seconds as fn() -> Histogram),
            ),
            lane_batch_alerts: kept(
                r,
                (
                    "lane_batch_alerts",
                    "Alerts written in one transaction by an alert lane",
                ),
                Histogram::new(exponential_buckets(1.0, 2.0, 12)),
            ),
            lane_write: kept(
                r,
                (
                    "lane_write_seconds",
                    "How long an alert lane's batch took to write",
                ),
                seconds(),
            ),
            incidents_opened: kept(
                r,
                (
                    "incidents_opened",
                    "Incidents opened, by people and by alerts",
                ),
                Counter::default(),
            ),
            lateness: kept(
                r,
                (
                    "engine_lateness_seconds",
                    "How late a background engine acted on what was due (its due time to its firing), by engine",
                ),
                Family::new_with_constructor(lateness as fn() -> Histogram),
            ),
            attempts: kept(
                r,
                (
                    "outbox_attempts",
                    "Outbox send attempts, by kind and outcome (delivered, retried, failed: given up)",
                ),
                Family::default(),
            ),
            delivery: kept(
                r,
                (
                    "outbox_delivery_seconds",
                    "From a message's queueing to its delivery, by kind",
                ),
                Family::new_with_constructor(lateness as fn() -> Histogram),
            ),
            outbox_pending: kept(
                r,
                (
                    "outbox_pending",
                    "Outbox messages due and waiting to be sent, by kind: the whole database's, the same from every replica (read at each scrape)",
                ),
                Family::default(),
            ),
            live_streams: kept(
                r,
                (
                    "live_streams",
                    "Live incident-room streams open in this replica",
                ),
                Gauge::default(),
            ),
            pool: kept(
                r,
                (
                    "db_pool_connections",
                    "Database connections of this replica's pools, idle or busy (read at each scrape)",
                ),
                Family::default(),
            ),
            begin_wait: kept(
                r,
                (
                    "db_begin_seconds",
                    "How long a transaction waited to begin: a connection from the pool, then BEGIN",
                ),
                seconds(),
            ),
            registry: Registry::default(),
            names: Vec::new(),
        };
        Self {
            registry: std::mem::take(&mut r.registry),
            names: std::mem::take(&mut r.names),
            ..m
        }
    }

    /// Every family registered, by name (`quell_…`; a counter's without `_total`), whether or
    /// not it has a series yet (one with none is not in the exposition).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The exposition, in Prometheus' text format (OpenMetrics 1.0, which Prometheus reads).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// This process's instruments.
pub fn get() -> &'static Metrics {
    METRICS.get_or_init(Metrics::new)
}

/// Records how late `engine` acted on each thing due (seconds; early counts as on time).
pub fn late(engine: &str, seconds: impl Iterator<Item = f64>) {
    let labels = EngineLabels {
        engine: engine.to_owned(),
    };
    let h = get().lateness.get_or_create(&labels);
    for s in seconds {
        h.observe(s.max(0.0));
    }
}

/// Seconds since `since`, for a histogram.
pub fn since(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_each_instrument_with_quells_prefix() {
        let m = get();
        m.incidents_opened.inc();
        m.webhooks
            .get_or_create(&IntakeLabels {
                format: "alertmanager".into(),
                outcome: "accepted".into(),
            })
            .inc();
        let text = m.encode();
        assert!(
            text.contains("# TYPE quell_incidents_opened counter"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"quell_webhook_requests_total{format="alertmanager",outcome="accepted"}"#
            ),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
        for name in [
            "quell_http_request_duration_seconds",
            "quell_outbox_attempts",
            "quell_db_begin_seconds",
        ] {
            assert!(m.names().iter().any(|n| n == name), "{name}");
        }
    }
}
