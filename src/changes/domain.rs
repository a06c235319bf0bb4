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
        })
    }
}

/// What a sender's change event (PagerDuty's) says of itself in its `custom_details`: the service
/// it names (`service`), its kind (`kind`, else a deploy) and environment (`environment`, else
/// production). Anything unreadable falls back rather than losing the event.
pub struct SenderDetails<'a> {
    pub service: Option<&'a str>,
    pub kind: ChangeKind,
    pub environment: String,
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
    }
}

/// Where a page of the change list ends: the last change's time and id (newest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeCursor {
    pub occurred_at: DateTime<Utc>,
    pub id: i64,
}

impl ChangeCursor {
    pub fn encode(&self) -> String {
        format!("{}.{}", self.occurred_at.timestamp_micros(), self.id)
    }

    pub fn decode(text: &str) -> Option<Self> {
        let (micros, id) = text.split_once('.')?;
        Some(Self {
            occurred_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            id: id.parse().ok()?,
        })
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        "2026-09-17T16:00:00Z".parse().unwrap()
    }

    #[test]
    fn kinds_parse_as_people_write_them() {
        assert_eq!(
            ChangeKind::parse("kind", "Feature flag").unwrap(),
            ChangeKind::FeatureFlag
        );
        assert_eq!(
            ChangeKind::parse("kind", "configuration").unwrap(),
            ChangeKind::Config
        );
        assert!(ChangeKind::parse("kind", "rollback").is_err());
    }

    #[test]
    fn a_change_needs_a_service_a_summary_and_a_past_time() {
        let draft = ChangeDraft {
            service: " payments-gateway ".into(),
            summary: "chore: consolidate HTTP client settings".into(),
            kind: Some("config".into()),
            occurred_at: Some("2026-09-17T14:05:00Z".parse().unwrap()),
            ..Default::default()
        };
        let c = draft.checked(now()).unwrap();
        assert_eq!(c.service, "payments-gateway");
        assert_eq!(c.environment, "production");
        assert_eq!(c.kind, ChangeKind::Config);
        let field = |d: ChangeDraft| match d.checked(now()) {
            Err(DomainError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(ChangeDraft {
                service: " ".into(),
                ..draft.clone()
            }),
            "service"
        );
        assert_eq!(
            field(ChangeDraft {
                summary: "".into(),
                ..draft.clone()
            }),
            "summary"
        );
        assert_eq!(
            field(ChangeDraft {
                occurred_at: Some("2026-09-17T16:00:01Z".parse().unwrap()),
                ..draft.clone()
            }),
            "occurred_at"
        );
        assert_eq!(
            field(ChangeDraft {
                link: Some("javascript:x".into()),
                ..draft.clone()
            }),
            "link"
        );
        assert_eq!(
            field(ChangeDraft {
                kind: Some("oops".into()),
                ..draft.clone()
            }),
            "kind"
        );
        assert_eq!(
            ChangeDraft {
                occurred_at: None,
                ..draft
            }
            .checked(now())
            .unwrap()
            .occurred_at,
            now(),
            "now when left out"
        );
    }

    #[test]
    fn sender_details_name_the_service_kind_and_environment_or_fall_back() {
        let d =
            json!({"service": "checkout-api", "kind": "feature flag", "environment": "Staging"});
        let s = sender_details(&d);
        assert_eq!(s.service, Some("checkout-api"));
        assert_eq!(s.kind, ChangeKind::FeatureFlag);
        assert_eq!(s.environment, "staging");
        let bad = json!({"kind": 3});
        let s = sender_details(&bad);
        assert_eq!(
            (s.service, s.kind, s.environment.as_str()),
            (None, ChangeKind::Deploy, "production")
        );
    }

    #[test]
    fn cursors_round_trip() {
        let c = ChangeCursor {
            occurred_at: "2026-09-17T14:05:00.123456Z".parse().unwrap(),
            id: 42,
        };
        assert_eq!(ChangeCursor::decode(&c.encode()), Some(c));
        assert_eq!(ChangeCursor::decode("x.1"), None);
    }

    #[test]
    fn suspects_rank_capacity_then_production_then_nearest() {
        let start: DateTime<Utc> = "2026-09-17T16:02:00Z".parse().unwrap();
        let at = |s: &str| -> DateTime<Utc> { s.parse().unwrap() };
        let mut ranks = [
            (
                "near staging",
                SuspectRank::of(false, "staging", at("2026-09-17T15:55:00Z"), start),
            ),
            (
                "far production",
                SuspectRank::of(false, "production", at("2026-09-17T09:00:00Z"), start),
            ),
            (
                "near production",
                SuspectRank::of(false, "production", at("2026-09-17T15:00:00Z"), start),
            ),
            (
                "capacity, oldest",
                SuspectRank::of(true, "staging", at("2026-09-16T17:00:00Z"), start),
            ),
        ];
        ranks.sort_by_key(|(_, r)| *r);
        let order: Vec<&str> = ranks.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            order,
            [
                "capacity, oldest",
                "near production",
                "far production",
                "near staging"
            ]
        );
    }

    #[test]
    fn verdicts_parse() {
        assert_eq!(
            Verdict::parse("verdict", "ruled out").unwrap(),
            Verdict::RuledOut
        );
        assert_eq!(
            Verdict::parse("verdict", "confirmed_trigger").unwrap(),
            Verdict::ConfirmedTrigger
        );
        assert!(Verdict::parse("verdict", "guilty").is_err());
    }
}
