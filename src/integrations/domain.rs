//! Pure rules of integrations: their formats, their keys, and the Standard Webhooks signature
//! check a generic integration may ask for.

use serde::Serialize;

use crate::domain::DomainError;

/// The payload format an integration speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum Format {
    #[serde(rename = "alertmanager")]
    Alertmanager,
    #[serde(rename = "grafana")]
    Grafana,
    #[serde(rename = "pagerduty-events-v2")]
    PagerDuty,
    #[serde(rename = "generic")]
    Generic,
    #[serde(rename = "opsgenie")]
    Opsgenie,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Self::Alertmanager,
        Self::Grafana,
        Self::PagerDuty,
        Self::Generic,
        Self::Opsgenie,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Alertmanager => "alertmanager",
            Self::Grafana => "grafana",
            Self::PagerDuty => "pagerduty-events-v2",
            Self::Generic => "generic",
            Self::Opsgenie => "opsgenie",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Alertmanager => "Prometheus Alertmanager",
            Self::Grafana => "Grafana",
            Self::PagerDuty => "PagerDuty Events API v2",
            Self::Generic => "Generic JSON",
            Self::Opsgenie => "Opsgenie Alert API",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == value.trim())
            .ok_or_else(|| {
                DomainError::invalid(
                    "format",
                    format!(
                        "{value:?} is not a format; use alertmanager, grafana, pagerduty-events-v2, generic or opsgenie"
                    ),
                )
            })
    }

    /// Where senders of this format post, relative to Quell's address.
    pub fn endpoint(self, id: &str) -> String {
        match self {
            Self::PagerDuty => "/v2/enqueue".to_owned(),
            Self::Opsgenie => "/v2/alerts".to_owned(),
            other => format!("/hooks/{}/{id}", other.as_str()),
        }
    }
}

/// What happens to an incident once every one of its alerts has resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnAllResolved {
    Mitigate,
    Resolve,
    Nothing,
}

impl OnAllResolved {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mitigate => "mitigate",
            Self::Resolve => "resolve",
            Self::Nothing => "nothing",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        match value.trim() {
            "mitigate" => Ok(Self::Mitigate),
            "resolve" => Ok(Self::Resolve),
            "nothing" => Ok(Self::Nothing),
            other => Err(DomainError::invalid(
                "on_all_resolved",
                format!("{other:?} is not an option; use mitigate, resolve or nothing"),
            )),
        }
    }
}

/// When an alert of the integration is flapping: it fired more than `threshold` times within
/// `window_minutes` (0 turns finding it off). A flapping alert's incident mitigates (or
/// resolves) only once the alert has stayed resolved for `settle_minutes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Flapping {
    /// More fires than this within the window is flapping; 0 never finds it (default 3)
    pub threshold: i32,
    /// The window fires are counted in, 1 to 1440 minutes (default 30)
    pub window_minutes: i32,
    /// How long a flapping alert must stay resolved before its incident mitigates, 0 to 1440
    /// minutes (default 10)
    pub settle_minutes: i32,
}

impl Default for Flapping {
    fn default() -> Self {
        Self {
            threshold: 3,
            window_minutes: 30,
            settle_minutes: 10,
        }
    }
}

impl Flapping {
    /// Checks each figure against its bounds; the error names the field.
    pub fn check(self) -> Result<Self, DomainError> {
        let within = |field: &str, v: i32, lo: i32, hi: i32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(DomainError::invalid(
                    field,
                    format!("{v} is out of bounds; give {lo} to {hi}"),
                ))
            }
        };
        within("flapping.threshold", self.threshold, 0, 100)?;
        within("flapping.window_minutes", self.window_minutes, 1, 1440)?;
        within("flapping.settle_minutes", self.settle_minutes, 0, 1440)?;
        Ok(self)
    }

    /// Whether `fires` within the window is flapping.
    pub fn is_flapping(self, fires: i64) -> bool {
        self.threshold > 0 && fires > i64::from(self.threshold)
    }

    /// "more than 3 fires within 30 min, settles after 10 min resolved", for pages.
    pub fn words(self) -> String {
        if self.threshold == 0 {
            return "not watched".to_owned();
        }
        format!(
            "more than {} fires within {} min; settles after {} min resolved",
            self.threshold, self.window_minutes, self.settle_minutes
        )
    }
}

pub fn check_name(name: &str) -> Result<String, DomainError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            "name",
            "give the integration a name of 1 to 100 characters",
        ));
    }
    Ok(name.to_owned())
}

/// An integration key: 32 lowercase hex digits from 16 random bytes, the length PagerDuty
/// senders expect of a routing key.
pub fn key_from_bytes(bytes: &[u8; 16]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How far a signed request's timestamp may be from the server's clock.
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// The longest `webhook-id` taken: it is remembered to recognise replays, and Standard Webhooks
/// ids are short (`msg_2KWPBgLlAfxdpx2AI54pPJ85f4W`).
pub const MAX_WEBHOOK_ID_LEN: usize = 255;

/// Checks Standard Webhooks headers against the body: the timestamp within five minutes of
/// `now`, and one of the space-separated `v1,<base64>` signatures equal (in constant time) to
/// the HMAC-SHA256 of `{id}.{timestamp}.{body}`. The error says which part failed.
pub fn verify_signature(
    secret: &str,
    msg_id: &str,
    timestamp: &str,
    signatures: &str,
    body: &str,
    now_unix: i64,
) -> Result<(), &'static str> {
    if msg_id.trim().is_empty() {
        return Err("webhook-id is missing");
    }
    if msg_id.len() > MAX_WEBHOOK_ID_LEN {
        return Err("webhook-id is longer than 255 bytes");
    }
    let ts: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| "webhook-timestamp is not a Unix time in seconds")?;
    if (now_unix - ts).abs() > SIGNATURE_TOLERANCE_SECS {
        return Err("webhook-timestamp is more than 5 minutes away from now");
    }
    let expected = crate::notify::domain::sign(secret, msg_id, ts, body)
        .ok_or("the integration's signing secret is unusable")?;
    let expected = expected.as_bytes();
    let good = signatures
        .split_whitespace()
        .filter(|s| s.starts_with("v1,") && s.len() > 3)
        .any(|s| crate::auth::domain::constant_time_eq(s.as_bytes(), expected));
    if good {
        Ok(())
    } else {
        Err("webhook-signature does not match the body")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_32_hex_digits() {
        let k = key_from_bytes(&[0xab; 16]);
        assert_eq!(k.len(), 32);
        assert!(k.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn signatures_are_checked_for_time_and_content() {
        let secret = crate::notify::domain::secret_from_bytes(&[7; 32]);
        let body = r#"{"title":"x"}"#;
        let sig = crate::notify::domain::sign(&secret, "msg_1", 1_000_000, body).unwrap();
        assert_eq!(
            verify_signature(&secret, "msg_1", "1000000", &sig, body, 1_000_100),
            Ok(())
        );
        let several = format!("v1,bm9wZQ== {sig}");
        assert!(verify_signature(&secret, "msg_1", "1000000", &several, body, 1_000_000).is_ok());
        assert!(verify_signature(&secret, "msg_1", "1000000", &sig, body, 1_000_301).is_err());
        assert!(verify_signature(&secret, "msg_1", "1000000", &sig, "{}", 1_000_000).is_err());
        assert!(verify_signature(&secret, "msg_1", "1000000", "v1,", body, 1_000_000).is_err());
        assert!(verify_signature(&secret, "msg_1", "1000000", "", body, 1_000_000).is_err());
        assert!(verify_signature(&secret, "msg_2", "1000000", &sig, body, 1_000_000).is_err());
        assert!(verify_signature(&secret, "msg_1", "soon", &sig, body, 1_000_000).is_err());
    }

    #[test]
    fn formats_name_their_endpoints() {
        assert_eq!(
            Format::parse("alertmanager").unwrap().endpoint("abc"),
            "/hooks/alertmanager/abc"
        );
        assert_eq!(Format::PagerDuty.endpoint("abc"), "/v2/enqueue");
        assert!(Format::parse("nagios").is_err());
        assert!(OnAllResolved::parse("close").is_err());
    }

    #[test]
    fn flapping_is_more_fires_than_the_threshold_and_checks_name_the_field() {
        let f = Flapping::default();
        assert!(!f.is_flapping(3));
        assert!(f.is_flapping(4));
        let off = Flapping { threshold: 0, ..f };
        assert!(!off.is_flapping(1000));
        let e = Flapping {
            window_minutes: 0,
            ..f
        }
        .check()
        .unwrap_err();
        assert!(
            format!("{e:?}").contains("flapping.window_minutes"),
            "{e:?}"
        );
        let e = Flapping {
            settle_minutes: 1441,
            ..f
        }
        .check()
        .unwrap_err();
        assert!(
            format!("{e:?}").contains("flapping.settle_minutes"),
            "{e:?}"
        );
        assert!(
            Flapping {
                threshold: 101,
                ..f
            }
            .check()
            .is_err()
        );
        assert_eq!(f.check().unwrap(), f);
    }
}
