//! Pure rules of changes: their kinds, what makes a valid one, how a sender's change event names
//! its service, and the list's cursor.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::DomainError;

/// What kind of change it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Deploy,
    Config,
    FeatureFlag,
    Infrastructure,
}

impl ChangeKind {
    pub const ALL: [ChangeKind; 4] = [
        Self::Deploy,
        Self::Config,
        Self::FeatureFlag,
        Self::Infrastructure,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deploy => "deploy",
            Self::Config => "config",
            Self::FeatureFlag => "feature_flag",
            Self::Infrastructure => "infrastructure",
        }
    }

    /// For people: `configuration change`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Deploy => "deploy",
            Self::Config => "configuration change",
            Self::FeatureFlag => "feature flag",
            Self::Infrastructure => "infrastructure change",
        }
    }

    /// `deploy`, `config`, `feature_flag` (or `feature flag`, `feature-flag`), `infrastructure`.
    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase().replace([' ', '-'], "_");
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == v || (v == "configuration" && *k == Self::Config))
            .ok_or_else(|| {
                DomainError::invalid(
                    field,
                    format!(
                        "{value:?} is not a kind of change; use deploy, config, feature_flag or infrastructure"
                    ),
                )
            })
    }
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A change as a person or a pipeline reports it, before checking.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeDraft {
    /// The service's name
    pub service: String,
    /// Where it was made; `production` when left out
    #[serde(default)]
    pub environment: Option<String>,
    /// deploy (the default), config, feature_flag or infrastructure
    #[serde(default)]
    pub kind: Option<String>,
    pub summary: String,
    /// Who made it
    #[serde(default)]
    pub author: Option<String>,
    /// Where to read more: the pull request, the pipeline run (http or https)
    #[serde(default)]
    pub link: Option<String>,
    /// When it took effect; now when left out, never in the future
    #[serde(default)]
    pub occurred_at: Option<DateTime<Utc>>,
    /// For a change to a limit (a pool size, a connection cap …): its figures, checked by
    /// Little's law against the peak
    #[serde(default)]
    pub capacity: Option<Capacity>,
}

/// A change that passed the checks.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedChange {
    pub service: String,
    pub environment: String,
    pub kind: ChangeKind,
    pub summary: String,
    pub author: String,
    pub link: String,
    pub occurred_at: DateTime<Utc>,
    pub capacity: Option<Capacity>,
}

pub const DEFAULT_ENVIRONMENT: &str = "production";
const MAX_SUMMARY_CHARS: usize = 1024;

/// An environment's name: 1–40 characters, lowercase; `production` when none is given.
pub fn check_environment(value: Option<&str>) -> Result<String, DomainError> {
    let v = value.map(str::trim).filter(|v| !v.is_empty());
    match v {
        None => Ok(DEFAULT_ENVIRONMENT.to_owned()),
        Some(v) if v.chars().count() <= 40 => Ok(v.to_lowercase()),
        Some(_) => Err(DomainError::invalid(
            "environment",
            "name the environment in at most 40 characters",
        )),
    }
}

impl ChangeDraft {
    /// Checks every field; `now` is the database's clock.
    pub fn checked(&self, now: DateTime<Utc>) -> Result<CheckedChange, DomainError> {
        let service = self.service.trim();
        if service.is_empty() {
            return Err(DomainError::invalid("service", "name the changed service"));
        }
        let summary = self.summary.trim();
        if summary.is_empty() || summary.chars().count() > MAX_SUMMARY_CHARS {
            return Err(DomainError::invalid(
                "summary",
                "say what changed in 1 to 1024 characters",
            ));
        }
        let author = self.author.as_deref().unwrap_or_default().trim();
        if author.chars().count() > 200 {
            return Err(DomainError::invalid("author", "at most 200 characters"));
        }
        let link = self.link.as_deref().unwrap_or_default().trim();
        if !link.is_empty()
            && (!(link.starts_with("https://") || link.starts_with("http://")) || link.len() > 2000)
        {
            return Err(DomainError::invalid(
                "link",
                "an http(s) address of at most 2000 characters",
            ));
        }
        let occurred_at = self.occurred_at.unwrap_or(now);
        if occurred_at > now {
            return Err(DomainError::invalid(
                "occurred_at",
                format!(
                    "{} is in the future (now is {} UTC); record changes once they are made",
                    occurred_at.format("%Y-%m-%d %H:%M:%S"),
                    now.format("%Y-%m-%d %H:%M:%S")
                ),
            ));
        }
        Ok(CheckedChange {
            service: service.to_owned(),
            environment: check_environment(self.environment.as_deref())?,
            kind: match self
                .kind
                .as_deref()
                .map(str::trim)
                .filter(|k| !k.is_empty())
            {
                Some(k) => ChangeKind::parse("kind", k)?,
                None => ChangeKind::Deploy,
            },
            summary: summary.to_owned(),
            author: author.to_owned(),
            link: link.to_owned(),
            occurred_at,
            capacity: self.capacity.clone().map(Capacity::checked).transpose()?,
        })
    }
}

/// What a sender's change event (PagerDuty's) says of itself in its `custom_details`: the service
/// it names (`service`), its kind (`kind`, else a deploy), environment (`environment`, else
/// production) and capacity figures (`capacity`). Anything unreadable falls back rather than
/// losing the event.
pub struct SenderDetails<'a> {
    pub service: Option<&'a str>,
    pub kind: ChangeKind,
    pub environment: String,
    /// `capacity`, when it holds valid figures (the API's shape)
    pub capacity: Option<Capacity>,
}

pub fn sender_details(details: &Value) -> SenderDetails<'_> {
    let text = |key: &str| {
        details
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    SenderDetails {
        service: text("service"),
        kind: text("kind")
            .and_then(|k| ChangeKind::parse("kind", k).ok())
            .unwrap_or(ChangeKind::Deploy),
        environment: check_environment(text("environment"))
            .unwrap_or_else(|_| DEFAULT_ENVIRONMENT.to_owned()),
        capacity: details
            .get("capacity")
            .and_then(|c| serde_json::from_value::<Capacity>(c.clone()).ok())
            .and_then(|c| c.checked().ok()),
    }
}

/// Where a page of the change list ends: the last change's time and id (newest first).
pub type ChangeCursor = crate::domain::TimeCursor;

/// How far before an incident's start a change is a suspect.
pub const SUSPECT_WINDOW_HOURS: i64 = 24;

/// What responders decided about a suspect change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Suspected,
    RuledOut,
    ConfirmedTrigger,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Self::Suspected, Self::RuledOut, Self::ConfirmedTrigger];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Suspected => "suspected",
            Self::RuledOut => "ruled_out",
            Self::ConfirmedTrigger => "confirmed_trigger",
        }
    }

    /// For the page's buttons and badges.
    pub fn label(self) -> &'static str {
        match self {
            Self::Suspected => "Suspected",
            Self::RuledOut => "Ruled out",
            Self::ConfirmedTrigger => "Confirmed trigger",
        }
    }

    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase().replace([' ', '-'], "_");
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == v)
            .ok_or_else(|| {
                DomainError::invalid(
                    field,
                    format!(
                        "{value:?} is not a verdict; use suspected, ruled_out or confirmed_trigger"
                    ),
                )
            })
    }
}

/// What ranks a suspect: whether the change touches capacity, whether it was made in production,
/// and how long before the incident's start it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SuspectRank {
    capacity_first: std::cmp::Reverse<bool>,
    production_first: std::cmp::Reverse<bool>,
    before_start: chrono::Duration,
}

impl SuspectRank {
    /// Lower ranks first: capacity changes, then production before other environments, then
    /// the nearest in time.
    pub fn of(
        capacity: bool,
        environment: &str,
        occurred_at: DateTime<Utc>,
        started_at: DateTime<Utc>,
    ) -> Self {
        Self {
            capacity_first: std::cmp::Reverse(capacity),
            production_first: std::cmp::Reverse(environment == DEFAULT_ENVIRONMENT),
            before_start: started_at - occurred_at,
        }
    }
}

/// The figures a capacity change carries: the limit it sets on each replica and how many
/// replicas share the load, and the service's peak arrival rate and latency when the change
/// brings its own (else the service record's are used).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Capacity {
    /// The limit's name, e.g. `MaxConnectionsPerServer`
    pub limit: String,
    /// Its new value on each replica, e.g. 10
    pub per_replica: i64,
    /// How many replicas serve the load, e.g. 6
    pub replicas: i64,
    /// Peak arrival rate in requests per second; the service record's when left out
    #[serde(default)]
    pub peak_requests_per_second: Option<f64>,
    /// Latency at peak in seconds; the service record's when left out
    #[serde(default)]
    pub peak_latency_seconds: Option<f64>,
}

/// Most requests per second and seconds of latency a figure may claim; beyond them the product
/// stops being a count a person could check.
const MAX_RATE: f64 = 10_000_000.0;
const MAX_LATENCY: f64 = 3_600.0;

/// A peak rate: above 0, at most 10 million requests per second.
pub fn check_rate(field: &str, v: Option<f64>) -> Result<Option<f64>, DomainError> {
    match v {
        Some(r) if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) => Err(DomainError::invalid(
            field,
            "a peak arrival rate is requests per second, above 0 and at most 10 000 000",
        )),
        _ => Ok(v),
    }
}

/// A latency at peak: above 0, at most an hour, in seconds.
pub fn check_latency(field: &str, v: Option<f64>) -> Result<Option<f64>, DomainError> {
    match v {
        Some(l) if !(l.is_finite() && l > 0.0 && l <= MAX_LATENCY) => Err(DomainError::invalid(
            field,
            "a latency at peak is in seconds, above 0 and at most 3600 (1.2 for 1.2 s)",
        )),
        _ => Ok(v),
    }
}

impl Capacity {
    /// Checks every figure, naming the field as `capacity.<name>`.
    pub fn checked(mut self) -> Result<Self, DomainError> {
        self.limit = self.limit.trim().to_owned();
        if self.limit.is_empty() || self.limit.chars().count() > 100 {
            return Err(DomainError::invalid(
                "capacity.limit",
                "name the limit in 1 to 100 characters, e.g. MaxConnectionsPerServer",
            ));
        }
        if !(1..=1_000_000).contains(&self.per_replica) {
            return Err(DomainError::invalid(
                "capacity.per_replica",
                "the limit on each replica is a whole number from 1 to 1 000 000",
            ));
        }
        if !(1..=100_000).contains(&self.replicas) {
            return Err(DomainError::invalid(
                "capacity.replicas",
                "the replica count is a whole number from 1 to 100 000",
            ));
        }
        check_rate(
            "capacity.peak_requests_per_second",
            self.peak_requests_per_second,
        )?;
        check_latency("capacity.peak_latency_seconds", self.peak_latency_seconds)?;
        Ok(self)
    }
}

/// A service record's peak figures, used when a capacity change brings none of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServicePeak {
    pub requests_per_second: Option<f64>,
    pub latency_seconds: Option<f64>,
}

/// What the capacity check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapacityStatus {
    /// The limit is below what the peak needs
    UnderProvisioned,
    /// The peak fits, twice the peak does not
    NoHeadroom,
    /// Twice the peak fits
    Sufficient,
    /// A capacity change without the figures to check it
    NotChecked,
}

impl CapacityStatus {
    pub fn label(self) -> &'static str {
        match self {
            Self::UnderProvisioned => "under-provisioned",
            Self::NoHeadroom => "no headroom at 2× peak",
            Self::Sufficient => "capacity checked",
            Self::NotChecked => "capacity change, not checked",
        }
    }

    /// A CSS class for the badge: `bad`, `warn`, `ok`, `unknown`.
    pub fn tone(self) -> &'static str {
        match self {
            Self::UnderProvisioned => "bad",
            Self::NoHeadroom => "warn",
            Self::Sufficient => "ok",
            Self::NotChecked => "unknown",
        }
    }
}

/// Little's law worked out for a change: concurrency needed = arrival rate × latency.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CapacityArithmetic {
    pub peak_requests_per_second: f64,
    pub peak_latency_seconds: f64,
    /// Where rate and latency came from: `change`, `service`, or `change and service`
    pub figures_from: String,
    /// ⌈rate × latency⌉ at peak
    pub needed_at_peak: i64,
    pub needed_per_replica_at_peak: i64,
    /// ⌈2 × rate × latency⌉
    pub needed_at_double_peak: i64,
    pub needed_per_replica_at_double_peak: i64,
    /// The limit × replicas
    pub allowed: i64,
    /// needed − allowed at peak; 0 when it fits
    pub short_at_peak: i64,
    /// needed − allowed at twice the peak; 0 when it fits
    pub short_at_double_peak: i64,
}

/// The capacity check of one change.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CapacityCheck {
    pub status: CapacityStatus,
    /// The finding with its arithmetic, for people
    pub explanation: String,
    /// The figures, when there were enough to check
    pub arithmetic: Option<CapacityArithmetic>,
}

impl CapacityCheck {
    /// Under-provisioned at peak or at twice the peak.
    pub fn flagged(&self) -> bool {
        matches!(
            self.status,
            CapacityStatus::UnderProvisioned | CapacityStatus::NoHeadroom
        )
    }

    pub fn label(&self) -> &'static str {
        self.status.label()
    }

    pub fn tone(&self) -> &'static str {
        self.status.tone()
    }
}

/// Words that make a change a capacity change when it carries no figures, written without
/// spaces or punctuation (so `MaxConnectionsPerServer`, `max_connections` and `max connections`
/// all match), with what to call them.
const CAPACITY_WORDS: [(&str, &str); 12] = [
    ("pool", "a pool size"),
    ("timeout", "a timeout"),
    ("retry", "retries"),
    ("retries", "retries"),
    ("ratelimit", "a rate limit"),
    ("throttl", "a rate limit"),
    ("maxconn", "a connection cap"),
    ("connectionlimit", "a connection cap"),
    ("connectioncap", "a connection cap"),
    ("connectionsper", "a connection cap"),
    ("concurren", "a concurrency limit"),
    ("semaphore", "a semaphore"),
];

/// Words that say a value was set or moved, so that "raise the pool size" is a capacity change
/// and "log the request id on timeouts" is not.
const SETTING_WORDS: [&str; 22] = [
    "set",
    "sets",
    "raise",
    "raises",
    "lower",
    "lowers",
    "bump",
    "bumps",
    "increase",
    "increases",
    "decrease",
    "decreases",
    "reduce",
    "reduces",
    "tune",
    "tunes",
    "adjust",
    "adjusts",
    "resize",
    "cap",
    "caps",
    "change",
];

/// What capacity setting a change's summary or details change, if any: `a pool size`. It must
/// name one (pool, timeout, retries, rate limit, connection cap, concurrency, semaphore) and
/// either give a number or say the value was set, raised, lowered, tuned …
pub fn capacity_word(summary: &str, details: &Value) -> Option<&'static str> {
    fn text_of(v: &Value, out: &mut String) {
        if out.len() > 20_000 {
            return;
        }
        match v {
            Value::String(s) => {
                out.push(' ');
                out.push_str(s);
            }
            Value::Number(n) => {
                out.push(' ');
                out.push_str(&n.to_string());
            }
            Value::Array(items) => items.iter().for_each(|i| text_of(i, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                out.push(' ');
                out.push_str(k);
                text_of(v, out);
            }),
            _ => {}
        }
    }
    let mut text = summary.to_owned();
    text_of(details, &mut text);
    let lower = text.to_lowercase();
    let compact: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    let word = CAPACITY_WORDS
        .iter()
        .find(|(w, _)| compact.contains(w))
        .map(|(_, name)| *name)?;
    let sets_a_value = lower.chars().any(|c| c.is_ascii_digit())
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| SETTING_WORDS.contains(&w));
    sets_a_value.then_some(word)
}

fn plural(n: i64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        crate::domain::grouped(n),
        if n == 1 { one } else { many }
    )
}

/// Checks a change's capacity: with figures, Little's law at peak and at twice the peak against
/// the limit × replicas (rate and latency from the change, else from the service record);
/// without figures, a change whose summary or details set a pool size, a timeout, retries, a
/// rate limit or a connection cap (see [`capacity_word`]) is a capacity change, not checked.
/// `None`: not a capacity change.
pub fn check_capacity(
    capacity: Option<&Capacity>,
    service: ServicePeak,
    summary: &str,
    details: &Value,
) -> Option<CapacityCheck> {
    use crate::domain::{decimal, grouped};
    let Some(c) = capacity else {
        return capacity_word(summary, details).map(|word| CapacityCheck {
            status: CapacityStatus::NotChecked,
            explanation: format!(
                "It changes {word} but carries no figures: give the limit per replica, the replica count and the peak rate and latency to check it."
            ),
            arithmetic: None,
        });
    };
    let rate = c
        .peak_requests_per_second
        .map(|r| (r, "change"))
        .or(service.requests_per_second.map(|r| (r, "service")));
    let latency = c
        .peak_latency_seconds
        .map(|l| (l, "change"))
        .or(service.latency_seconds.map(|l| (l, "service")));
    let (Some((rate, rate_from)), Some((latency, latency_from))) = (rate, latency) else {
        return Some(CapacityCheck {
            status: CapacityStatus::NotChecked,
            explanation: format!(
                "{} = {} per replica across {}, but neither the change nor the service record gives the peak {}.",
                c.limit,
                grouped(c.per_replica),
                plural(c.replicas, "replica", "replicas"),
                match (rate.is_some(), latency.is_some()) {
                    (false, false) => "arrival rate and latency",
                    (false, true) => "arrival rate",
                    _ => "latency",
                }
            ),
            arithmetic: None,
        });
    };
    // A hair below the next integer is floating-point noise (120 × 1.2), not a request.
    let need = |load: f64| (load - 1e-9).ceil().max(0.0) as i64;
    let per_replica = |n: i64| (n + c.replicas - 1) / c.replicas;
    let needed_at_peak = need(rate * latency);
    let needed_at_double_peak = need(2.0 * rate * latency);
    let allowed = c.per_replica * c.replicas;
    let a = CapacityArithmetic {
        peak_requests_per_second: rate,
        peak_latency_seconds: latency,
        figures_from: if rate_from == latency_from {
            rate_from.to_owned()
        } else {
            "change and service".to_owned()
        },
        needed_at_peak,
        needed_per_replica_at_peak: per_replica(needed_at_peak),
        needed_at_double_peak,
        needed_per_replica_at_double_peak: per_replica(needed_at_double_peak),
        allowed,
        short_at_peak: (needed_at_peak - allowed).max(0),
        short_at_double_peak: (needed_at_double_peak - allowed).max(0),
    };
    let outcome = |needed: i64| {
        if needed > allowed {
            format!("{} short", grouped(needed - allowed))
        } else {
            format!("{} to spare", grouped(allowed - needed))
        }
    };
    let from = match a.figures_from.as_str() {
        "change" => String::new(),
        "service" => " (rate and latency from the service record)".to_owned(),
        _ if rate_from == "service" => " (rate from the service record)".to_owned(),
        _ => " (latency from the service record)".to_owned(),
    };
    let explanation = format!(
        "{} req/s × {} s = {} concurrent requests needed at peak{from}, {} per replica across {}; {} = {} per replica allows {} in all → {}. At 2× peak {} are needed ({} per replica) → {}.",
        decimal(rate),
        decimal(latency),
        grouped(a.needed_at_peak),
        grouped(a.needed_per_replica_at_peak),
        plural(c.replicas, "replica", "replicas"),
        c.limit,
        grouped(c.per_replica),
        grouped(allowed),
        outcome(needed_at_peak),
        grouped(a.needed_at_double_peak),
        grouped(a.needed_per_replica_at_double_peak),
        outcome(needed_at_double_peak),
    );
    Some(CapacityCheck {
        status: if a.short_at_peak > 0 {
            CapacityStatus::UnderProvisioned
        } else if a.short_at_double_peak > 0 {
            CapacityStatus::NoHeadroom
        } else {
            CapacityStatus::Sufficient
        },
        explanation,
        arithmetic: Some(a),
    })
}

/// How the change-failure rate is grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailureGroup {
    /// The changed service
    Service,
    /// The month the change was made (UTC)
    Month,
}

impl FailureGroup {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::Month => "month",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "service" => Ok(Self::Service),
            "month" => Ok(Self::Month),
            _ => Err(DomainError::invalid(
                "group_by",
                format!("{value:?} is not a grouping of changes; use service or month"),
            )),
        }
    }
}

/// What the change-failure rate measures, written out beside it.
pub const FAILURE_RATE_DEFINITION: &str = "Changes confirmed as the trigger of an incident ÷ changes recorded, by when the change was made (UTC). A change counts once however many incidents it triggered.";

/// One group's change-failure rate.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct FailureRate {
    /// The service, the month (`2026-09`), or `all`
    pub group: String,
    /// Changes made in the period
    pub changes: i64,
    /// Of them, confirmed as an incident's trigger
    pub failed: i64,
    /// failed ÷ changes; null without changes
    pub rate: Option<f64>,
}

impl FailureRate {
    pub fn new(group: impl Into<String>, changes: i64, failed: i64) -> Self {
        Self {
            group: group.into(),
            changes,
            failed,
            rate: (changes > 0).then(|| failed as f64 / changes as f64),
        }
    }

    /// All the groups together.
    pub fn overall(rows: &[FailureRate]) -> Self {
        Self::new(
            "all",
            rows.iter().map(|r| r.changes).sum(),
            rows.iter().map(|r| r.failed).sum(),
        )
    }

    /// `33%`, or `—` without changes.
    pub fn percent_text(&self) -> String {
        self.rate
            .map_or_else(|| "—".to_owned(), |r| format!("{}%", (r * 100.0).round()))
    }

    /// `1 of 3 changes (33%)`.
    pub fn text(&self) -> String {
        format!(
            "{} of {} ({})",
            crate::domain::grouped(self.failed),
            plural(self.changes, "change", "changes"),
            self.percent_text()
        )
    }
}

#[cfg(test)]
mod tests;
