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
}

impl ChannelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Slack => "slack",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "webhook" => Ok(Self::Webhook),
            "slack" => Ok(Self::Slack),
            other => Err(DomainError::invalid(
                "kind",
                format!("{other:?} is not a channel kind; use webhook or slack"),
            )),
        }
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

    #[test]
    fn channel_kinds_and_urls_are_checked() {
        assert_eq!(ChannelKind::parse("Slack").unwrap(), ChannelKind::Slack);
        assert!(ChannelKind::parse("email").is_err());
        assert!(check_url("javascript:alert(1)").is_err());
        assert!(check_url("https://hooks.example.com/x").is_ok());
    }
}
