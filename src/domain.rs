//! Rules shared by every capability's `domain.rs`: the error a pure rule returns and the way
//! durations are written for people.

use serde::Serialize;
use std::fmt;

/// `Sev1` is the worst. Ordering follows the name, so `Sev1 < Sev2` means "more severe".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
pub enum Severity {
    Sev1,
    Sev2,
    Sev3,
    Sev4,
}

impl Severity {
    pub const ALL: [Severity; 4] = [Self::Sev1, Self::Sev2, Self::Sev3, Self::Sev4];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sev1 => "Sev1",
            Self::Sev2 => "Sev2",
            Self::Sev3 => "Sev3",
            Self::Sev4 => "Sev4",
        }
    }

    /// Accepts `Sev1`, `sev1`, `SEV1` and `1`.
    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase();
        let v = v.strip_prefix("sev").unwrap_or(&v);
        match v {
            "1" => Ok(Self::Sev1),
            "2" => Ok(Self::Sev2),
            "3" => Ok(Self::Sev3),
            "4" => Ok(Self::Sev4),
            _ => Err(DomainError::invalid(
                field,
                format!("{value:?} is not a severity; use Sev1 (worst), Sev2, Sev3 or Sev4"),
            )),
        }
    }

    pub fn is_more_severe_than(self, other: Severity) -> bool {
        self < other
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a rule refused. Handlers turn it into an HTTP answer: `Invalid` → 422 naming the field,
/// `Conflict` → 409 with the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainError {
    Invalid { field: String, message: String },
    Conflict(String),
}

impl DomainError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// `9 min`, `2 h 2 min`, `4 h`, `3 d 2 h 5 min`. Truncates to the minute, as the reference
/// document does.
pub fn format_minutes(secs: i64) -> String {
    let sign = if secs < 0 { "−" } else { "" };
    let total = secs.unsigned_abs() / 60;
    let (d, h, m) = (total / 1440, total / 60 % 24, total % 60);
    let mut parts = Vec::new();
    if d > 0 {
        parts.push(format!("{d} d"));
    }
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 || parts.is_empty() {
        parts.push(format!("{m} min"));
    }
    format!("{sign}{}", parts.join(" "))
}

/// `0:45`, `3:33`, `27:05`: hours and minutes, as the postmortem header writes a duration.
pub fn format_hmm(secs: i64) -> String {
    let total = secs.max(0) / 60;
    format!("{}:{:02}", total / 60, total % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_read_like_the_reference_document() {
        assert_eq!(format_minutes(9 * 60), "9 min");
        assert_eq!(format_minutes(9 * 60 + 59), "9 min");
        assert_eq!(format_minutes(2 * 3600 + 2 * 60), "2 h 2 min");
        assert_eq!(format_minutes(4 * 3600), "4 h");
        assert_eq!(format_minutes(3 * 86400 + 5 * 60), "3 d 5 min");
        assert_eq!(format_minutes(0), "0 min");
        assert_eq!(format_minutes(-120), "−2 min");
    }

    #[test]
    fn hours_and_minutes_like_the_postmortem_header() {
        assert_eq!(format_hmm(45 * 60), "0:45");
        assert_eq!(format_hmm(3 * 3600 + 33 * 60), "3:33");
        assert_eq!(format_hmm(27 * 3600 + 5 * 60), "27:05");
    }
}
