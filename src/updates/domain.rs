//! Audiences, and the cadence rule: while an incident is unmitigated, stakeholders hear from it at
//! least every `cadence`; each update restarts the clock.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::domain::{DomainError, format_minutes};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Audience {
    Internal,
    Executives,
    Customers,
}

impl Audience {
    pub const ALL: [Audience; 3] = [Self::Internal, Self::Executives, Self::Customers];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Internal => "internal",
            Self::Executives => "executives",
            Self::Customers => "customers",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|a| a.as_str() == v)
            .ok_or_else(|| {
                DomainError::invalid(
                    "audience",
                    format!("{value:?} is not an audience; use internal, executives or customers"),
                )
            })
    }
}

pub fn check_body(body: &str) -> Result<String, DomainError> {
    let body = body.trim();
    if body.is_empty() {
        return Err(DomainError::invalid("body", "write the update"));
    }
    if body.chars().count() > 10_000 {
        return Err(DomainError::invalid(
            "body",
            "an update is at most 10 000 characters",
        ));
    }
    Ok(body.to_owned())
}

/// How an incident kept its update cadence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Cadence {
    pub cadence_secs: i64,
    /// Updates the cadence asked for up to mitigation (or now)
    pub required: u32,
    /// Of those, how many went out in time
    pub on_time: u32,
    /// When the next one is due, while the incident is unmitigated
    pub next_due_at: Option<DateTime<Utc>>,
    /// `1 of 1 updates on time`
    pub text: String,
    /// `next update due in 12 min`, `next update overdue by 3 min`, or empty once mitigated
    pub next_text: String,
}

/// The cadence record of updates sent at `sent` (any order), for an incident detected at
/// `detected_at` and mitigated at `mitigated_at` (still running at `now` when `None`). One update
/// is asked for per `cadence_secs` gap; a late one still restarts the clock.
pub fn cadence(
    cadence_secs: i64,
    detected_at: DateTime<Utc>,
    mitigated_at: Option<DateTime<Utc>>,
    sent: &[DateTime<Utc>],
    now: DateTime<Utc>,
) -> Cadence {
    let step = Duration::seconds(cadence_secs.max(60));
    let end = mitigated_at.unwrap_or(now);
    let mut ups: Vec<_> = sent.iter().copied().filter(|t| *t >= detected_at).collect();
    ups.sort();
    let (mut prev, mut required, mut on_time, mut i) = (detected_at, 0u32, 0u32, 0usize);
    loop {
        let due = prev + step;
        if due > end {
            break;
        }
        required += 1;
        while i < ups.len() && ups[i] <= prev {
            i += 1;
        }
        match ups.get(i) {
            Some(u) if *u <= due => {
                on_time += 1;
                prev = *u;
            }
            Some(u) if *u <= end => prev = *u,
            _ => prev = due,
        }
    }
    // What a responder must do next: the update owed since the last one sent (or detection).
    let last = ups.last().copied().unwrap_or(detected_at);
    let next_due_at = mitigated_at.is_none().then_some(last + step);
    let next_text = match next_due_at {
        None => String::new(),
        Some(d) if d >= now => format!(
            "next update due in {}",
            format_minutes((d - now).num_seconds())
        ),
        Some(d) => format!(
            "next update overdue by {}",
            format_minutes((now - d).num_seconds())
        ),
    };
    Cadence {
        cadence_secs,
        required,
        on_time,
        next_due_at,
        text: format!("{on_time} of {required} updates on time"),
        next_text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 17, h, m, 0).unwrap()
    }

    #[test]
    fn inc_1187_kept_its_30_minute_cadence_until_mitigation() {
        let c = cadence(
            1800,
            t(16, 7),
            Some(t(16, 52)),
            &[t(17, 22), t(16, 24)],
            t(23, 0),
        );
        assert_eq!((c.on_time, c.required), (1, 1));
        assert_eq!(c.text, "1 of 1 updates on time");
        assert_eq!(c.next_due_at, None);
    }

    #[test]
    fn a_late_update_counts_as_late_and_restarts_the_clock() {
        // Due 10:30 (late, sent 10:40), then 11:10 (on time, 11:05), then 11:35 (missed).
        let c = cadence(
            1800,
            t(10, 0),
            Some(t(11, 50)),
            &[t(10, 40), t(11, 5)],
            t(12, 0),
        );
        assert_eq!((c.on_time, c.required), (1, 3));
    }

    #[test]
    fn silence_misses_every_due_point_and_the_next_is_shown() {
        let c = cadence(1800, t(10, 0), None, &[], t(11, 35));
        assert_eq!((c.on_time, c.required), (0, 3));
        assert_eq!(
            c.next_due_at,
            Some(t(10, 30)),
            "the first update is still owed"
        );
        assert_eq!(c.next_text, "next update overdue by 1 h 5 min");
        let c = cadence(1800, t(10, 0), None, &[t(10, 20)], t(10, 35));
        assert_eq!(c.next_text, "next update due in 15 min");
        let c = cadence(1800, t(10, 0), None, &[t(10, 20)], t(10, 55));
        assert_eq!(c.next_text, "next update overdue by 5 min");
        assert_eq!((c.on_time, c.required), (1, 2));
    }

    #[test]
    fn audiences_parse() {
        assert_eq!(Audience::parse("Executives").unwrap(), Audience::Executives);
        assert!(Audience::parse("press").is_err());
        assert!(check_body("  ").is_err());
    }
}
