//! Pure rules of delivery: Standard Webhooks signatures, the retry schedule, and the message text.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

use crate::domain::DomainError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// JSON, signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`,
    /// `webhook-signature`).
    Webhook,
    /// A Slack-compatible incoming webhook: `{"text": …}`.
    Slack,
    /// An email over SMTP (`QUELL_SMTP_URL`); a channel's URL is `mailto:<address>`.
    Email,
}

impl ChannelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Slack => "slack",
            Self::Email => "email",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "webhook" => Ok(Self::Webhook),
            "slack" => Ok(Self::Slack),
            "email" => Ok(Self::Email),
            other => Err(DomainError::invalid(
                "kind",
                format!("{other:?} is not a kind of channel; use webhook, slack or email"),
            )),
        }
    }
}

/// Where a message of `kind` goes: an email address for email (a channel stores it as
/// `mailto:<address>`), else a URL that is not inside the network unless `allow` lists it.
pub fn check_address(
    kind: ChannelKind,
    field: &str,
    value: &str,
    allow: &crate::egress::Allow,
) -> Result<String, DomainError> {
    match kind {
        ChannelKind::Email => {
            let address = value.trim();
            let address = address.strip_prefix("mailto:").unwrap_or(address);
            check_email(address).map_err(|_| {
                DomainError::invalid(field, "an email address such as oncall@example.com")
            })
        }
        _ => {
            let url = check_url(value).map_err(|e| match e {
                DomainError::Invalid { message, .. } => DomainError::invalid(field, message),
                other => other,
            })?;
            match crate::egress::refusal(&url, allow) {
                Some(why) => Err(DomainError::invalid(field, why)),
                None => Ok(url),
            }
        }
    }
}

/// A plain address: one `@`, a dotted domain, no spaces, brackets or quotes.
pub fn check_email(value: &str) -> Result<String, DomainError> {
    let v = value.trim();
    let ok = v.len() <= 254
        && v.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        })
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>()[]\\,;:\"".contains(c));
    if ok {
        Ok(v.to_owned())
    } else {
        Err(DomainError::invalid("address", "an email address"))
    }
}

/// What happens to an incident that channels can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Opened,
    Acknowledged,
    SeverityChanged,
    Mitigated,
    Resolved,
    UpdatePosted,
    UpdateDue,
    SlaBreached,
}

impl Event {
    pub const ALL: [Event; 8] = [
        Self::Opened,
        Self::Acknowledged,
        Self::SeverityChanged,
        Self::Mitigated,
        Self::Resolved,
        Self::UpdatePosted,
        Self::UpdateDue,
        Self::SlaBreached,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "incident.opened",
            Self::Acknowledged => "incident.acknowledged",
            Self::SeverityChanged => "incident.severity_changed",
            Self::Mitigated => "incident.mitigated",
            Self::Resolved => "incident.resolved",
            Self::UpdatePosted => "update.posted",
            Self::UpdateDue => "update.due",
            Self::SlaBreached => "sla.breached",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Acknowledged => "acknowledged",
            Self::SeverityChanged => "severity changed",
            Self::Mitigated => "mitigated",
            Self::Resolved => "resolved",
            Self::UpdatePosted => "stakeholder update posted",
            Self::UpdateDue => "stakeholder update due",
            Self::SlaBreached => "SLA breached",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == value.trim())
    }
}

/// What one event is about, for matching subscriptions.
#[derive(Debug, Clone, Copy)]
pub struct Happening<'a> {
    pub event: Event,
    pub service: Option<&'a str>,
    pub severity: &'a str,
    /// A stakeholder update's audience.
    pub audience: Option<&'a str>,
}

/// A channel's choice of events; an empty list of services, severities or audiences means all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionDraft {
    /// Event names: incident.opened, incident.acknowledged, incident.severity_changed,
    /// incident.mitigated, incident.resolved, update.posted, update.due, sla.breached
    pub events: Vec<String>,
    #[serde(default)]
    pub services: Vec<String>,
    /// Sev1 … Sev4
    #[serde(default)]
    pub severities: Vec<String>,
    /// Audiences of stakeholder updates: internal, executives, customers
    #[serde(default)]
    pub audiences: Vec<String>,
}

impl SubscriptionDraft {
    /// The draft with names trimmed, duplicates gone and each value known; else the field.
    pub fn checked(&self) -> Result<Self, DomainError> {
        fn clean(values: &[String]) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_owned());
                }
            }
            out
        }
        let events = clean(&self.events);
        if events.is_empty() {
            return Err(DomainError::invalid("events", "choose at least one event"));
        }
        for (i, e) in events.iter().enumerate() {
            if Event::parse(e).is_none() {
                return Err(DomainError::invalid(
                    &format!("events[{i}]"),
                    format!(
                        "{e:?} is not an event; use one of {}",
                        Event::ALL.map(Event::as_str).join(", ")
                    ),
                ));
            }
        }
        let severities = clean(&self.severities);
        for (i, s) in severities.iter().enumerate() {
            crate::domain::Severity::parse(&format!("severities[{i}]"), s)?;
        }
        let audiences = clean(&self.audiences);
        for (i, a) in audiences.iter().enumerate() {
            if !["internal", "executives", "customers"].contains(&a.as_str()) {
                return Err(DomainError::invalid(
                    &format!("audiences[{i}]"),
                    format!("{a:?} is not an audience; use internal, executives or customers"),
                ));
            }
        }
        let services = clean(&self.services);
        if services.len() > 100 {
            return Err(DomainError::invalid("services", "at most 100 services"));
        }
        Ok(Self {
            events,
            services,
            severities,
            audiences,
        })
    }

    /// Whether the channel hears of `h`.
    pub fn matches(&self, h: &Happening<'_>) -> bool {
        let any_or = |list: &[String], value: Option<&str>| {
            list.is_empty() || value.is_some_and(|v| list.iter().any(|l| l == v))
        };
        self.events.iter().any(|e| e == h.event.as_str())
            && any_or(&self.services, h.service)
            && any_or(&self.severities, Some(h.severity))
            && (h.audience.is_none() || any_or(&self.audiences, h.audience))
    }
}

pub fn check_url(url: &str) -> Result<String, DomainError> {
    let url = url.trim();
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && url.len() <= 2000
        && !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if !ok {
        return Err(DomainError::invalid(
            "url",
            "an http:// or https:// URL without spaces",
        ));
    }
    Ok(url.to_owned())
}

/// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` with the key inside `whsec_<base64>`.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix("whsec_")?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{msg_id}.{timestamp}.{body}").as_bytes());
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// A signing secret from 32 random bytes.
pub fn secret_from_bytes(bytes: &[u8; 32]) -> String {
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// Give up after this many attempts.
pub const MAX_ATTEMPTS: i32 = 8;

/// How long to wait after failed attempt `attempt` (1-based): exponential from `base_secs`,
/// capped at `cap_secs`, with full jitter (`jitter` in [0, 1) picks the point in the window),
/// so a recovering endpoint is not hit by every replica at once.
pub fn backoff_secs(attempt: i32, base_secs: f64, cap_secs: f64, jitter: f64) -> f64 {
    let ceiling = (base_secs * 2f64.powi(attempt.clamp(1, 30) - 1)).min(cap_secs);
    ceiling * jitter.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_standard_webhooks() {
        // The example of the Standard Webhooks specification.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert!(sign("not-a-secret", "m", 1, "b").is_none());
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        assert_eq!(backoff_secs(1, 2.0, 600.0, 0.999_999).round(), 2.0);
        assert_eq!(backoff_secs(4, 2.0, 600.0, 0.5), 8.0);
        assert_eq!(backoff_secs(20, 2.0, 600.0, 1.0), 600.0);
        assert_eq!(backoff_secs(3, 2.0, 600.0, 0.0), 0.0);
    }

    fn sub(
        events: &[&str],
        services: &[&str],
        severities: &[&str],
        audiences: &[&str],
    ) -> SubscriptionDraft {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        SubscriptionDraft {
            events: v(events),
            services: v(services),
            severities: v(severities),
            audiences: v(audiences),
        }
    }

    #[test]
    fn subscriptions_filter_by_event_service_severity_and_audience() {
        let h = |event, service, severity, audience| Happening {
            event,
            service,
            severity,
            audience,
        };
        let payments_sev1 = sub(
            &["incident.opened", "update.posted"],
            &["payments"],
            &["Sev1"],
            &[],
        );
        // (subscription, happening, heard?)
        let cases = [
            (
                &payments_sev1,
                h(Event::Opened, Some("payments"), "Sev1", None),
                true,
            ),
            (
                &payments_sev1,
                h(Event::Opened, Some("payments"), "Sev2", None),
                false,
            ),
            (
                &payments_sev1,
                h(Event::Opened, Some("search"), "Sev1", None),
                false,
            ),
            (&payments_sev1, h(Event::Opened, None, "Sev1", None), false),
            (
                &payments_sev1,
                h(Event::Resolved, Some("payments"), "Sev1", None),
                false,
            ),
            (
                &payments_sev1,
                h(
                    Event::UpdatePosted,
                    Some("payments"),
                    "Sev1",
                    Some("customers"),
                ),
                true,
            ),
        ];
        for (i, (s, happening, heard)) in cases.iter().enumerate() {
            assert_eq!(s.matches(happening), *heard, "case {i}");
        }
        let execs = sub(&["update.posted"], &[], &[], &["executives"]);
        assert!(execs.matches(&h(Event::UpdatePosted, None, "Sev3", Some("executives"))));
        assert!(!execs.matches(&h(Event::UpdatePosted, None, "Sev3", Some("customers"))));
    }

    #[test]
    fn subscriptions_name_the_wrong_field() {
        let field = |d: SubscriptionDraft| match d.checked().unwrap_err() {
            DomainError::Invalid { field, .. } => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(sub(&[], &[], &[], &[])), "events");
        assert_eq!(
            field(sub(&["incident.opened", "x"], &[], &[], &[])),
            "events[1]"
        );
        assert_eq!(
            field(sub(&["sla.breached"], &[], &["Sev9"], &[])),
            "severities[0]"
        );
        assert_eq!(
            field(sub(&["sla.breached"], &[], &[], &["press"])),
            "audiences[0]"
        );
        let ok = sub(&[" sla.breached", "sla.breached"], &[], &[], &[])
            .checked()
            .unwrap();
        assert_eq!(ok.events, vec!["sla.breached"]);
    }

    #[test]
    fn email_addresses_are_checked() {
        assert!(check_email("ana@example.com").is_ok());
        for bad in [
            "ana",
            "@example.com",
            "ana@localhost",
            "a b@example.com",
            "a@b@c.com",
            "<a@b.com>",
        ] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_address(
                ChannelKind::Email,
                "url",
                "mailto:ops@example.com",
                &Default::default()
            )
            .unwrap(),
            "ops@example.com"
        );
    }

    #[test]
    fn channel_kinds_and_urls_are_checked() {
        assert_eq!(ChannelKind::parse("Slack").unwrap(), ChannelKind::Slack);
        assert!(ChannelKind::parse("pager").is_err());
        assert!(check_url("javascript:alert(1)").is_err());
        assert!(check_url("https://hooks.example.com/x").is_ok());
        let none = crate::egress::Allow::default();
        match check_address(
            ChannelKind::Webhook,
            "address",
            "http://127.0.0.1:5432/",
            &none,
        ) {
            Err(DomainError::Invalid { field, message }) => {
                assert_eq!(field, "address");
                assert!(message.contains("inside this network"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let local = crate::egress::Allow::parse("127.0.0.1").unwrap();
        assert!(
            check_address(
                ChannelKind::Webhook,
                "address",
                "http://127.0.0.1:9/",
                &local
            )
            .is_ok()
        );
    }
}
