//! Pure rules of heartbeat monitors: their names (as Opsgenie's ping address carries them),
//! their interval and grace, when one is missed, and the state a person reads.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::domain::DomainError;

/// The alert severities a monitor's missed-ping alert may carry, as a sender's word.
pub const SEVERITIES: [&str; 4] = ["critical", "error", "warning", "info"];

/// A monitor's name: 1 to 100 letters, digits, spaces and `-_.:`, so it is a path segment as
/// written (`/v2/heartbeats/{name}/ping`).
pub fn check_name(name: &str) -> Result<String, DomainError> {
    let name = name.trim();
    let fits = |c: char| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | ':');
    let dots = name.chars().all(|c| c == '.');
    if name.is_empty() || dots || name.chars().count() > 100 || !name.chars().all(fits) {
        return Err(DomainError::invalid(
            "name",
            "1 to 100 letters, digits, spaces and - _ . : (it is part of the ping address)",
        ));
    }
    Ok(name.to_owned())
}

/// The interval (1 minute to a week) and the grace after it (0 to a day), in minutes.
pub fn check_times(interval_minutes: i32, grace_minutes: i32) -> Result<(), DomainError> {
    if !(1..=10_080).contains(&interval_minutes) {
        return Err(DomainError::invalid(
            "interval_minutes",
            format!("{interval_minutes} is out of bounds; give 1 to 10080 minutes (a week)"),
        ));
    }
    if !(0..=1_440).contains(&grace_minutes) {
        return Err(DomainError::invalid(
            "grace_minutes",
            format!("{grace_minutes} is out of bounds; give 0 to 1440 minutes (a day)"),
        ));
    }
    Ok(())
}

pub fn check_severity(word: &str) -> Result<String, DomainError> {
    let w = word.trim().to_ascii_lowercase();
    if SEVERITIES.contains(&w.as_str()) {
        Ok(w)
    } else {
        Err(DomainError::invalid(
            "severity",
            format!("{word:?} is not one of critical, error, warning, info"),
        ))
    }
}

pub fn check_description(text: &str) -> Result<String, DomainError> {
    if text.chars().count() > 2_000 {
        return Err(DomainError::invalid(
            "description",
            "at most 2000 characters",
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(DomainError::invalid(
            "description",
            "control characters cannot be shown",
        ));
    }
    Ok(text.trim().to_owned())
}

/// When a monitor last heard from at `from` (a ping, or its making) is missed.
pub fn due_after(from: DateTime<Utc>, interval_minutes: i32, grace_minutes: i32) -> DateTime<Utc> {
    from + Duration::minutes(i64::from(interval_minutes) + i64::from(grace_minutes))
}

/// What a person reads of a monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// Not pinged yet; missed if no ping comes by its due time
    Waiting,
    /// Pinged within its interval
    Up,
    /// Past its interval, within its grace
    Late,
    /// Missed: its alert fires until the next ping
    Down,
    /// Turned off: pings are recorded, nothing is missed
    Paused,
}

impl Health {
    /// `stored` is the engine's word (`waiting`, `up`, `down`).
    pub fn of(
        enabled: bool,
        stored: &str,
        last_ping_at: Option<DateTime<Utc>>,
        interval_minutes: i32,
        now: DateTime<Utc>,
    ) -> Self {
        match (enabled, stored, last_ping_at) {
            (false, _, _) => Self::Paused,
            (_, "down", _) => Self::Down,
            (_, _, None) => Self::Waiting,
            (_, _, Some(at)) if now > at + Duration::minutes(i64::from(interval_minutes)) => {
                Self::Late
            }
            _ => Self::Up,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Up => "up",
            Self::Late => "late",
            Self::Down => "down",
            Self::Paused => "paused",
        }
    }
}

/// The dedup (and group) key of a monitor's missed-ping alert: one open alert per monitor.
pub fn dedup_key(id: uuid::Uuid) -> String {
    format!("heartbeat:{id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn names_are_path_segments_and_times_have_bounds() {
        assert_eq!(check_name("  nightly backup ").unwrap(), "nightly backup");
        assert!(check_name("a/b").is_err());
        assert!(check_name("..").is_err());
        assert!(check_description("a\u{7}").is_err());
        assert!(check_name("").is_err());
        assert!(check_name(&"x".repeat(101)).is_err());
        assert!(check_times(1, 0).is_ok());
        let e = check_times(0, 0).unwrap_err();
        assert!(format!("{e:?}").contains("interval_minutes"));
        let e = check_times(60, 1441).unwrap_err();
        assert!(format!("{e:?}").contains("grace_minutes"));
        assert_eq!(check_severity("Critical").unwrap(), "critical");
        assert!(check_severity("sev1").is_err());
    }

    #[test]
    fn health_reads_the_engine_word_and_the_clock() {
        let t = Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap();
        let m = Duration::minutes;
        assert_eq!(Health::of(true, "waiting", None, 5, t), Health::Waiting);
        assert_eq!(Health::of(true, "up", Some(t - m(4)), 5, t), Health::Up);
        assert_eq!(Health::of(true, "up", Some(t - m(6)), 5, t), Health::Late);
        assert_eq!(
            Health::of(true, "down", Some(t - m(60)), 5, t),
            Health::Down
        );
        assert_eq!(Health::of(false, "down", None, 5, t), Health::Paused);
        assert_eq!(due_after(t, 5, 2), t + m(7));
    }
}
