//! When a shift may be offered and taken: the period must be the offerer's whole and alone —
//! they are on call through all of it, with no override of the schedule already in any of it —
//! so the override a swap becomes leaves no gap and overlaps nothing.

use chrono::{DateTime, Duration, Utc};

use crate::domain::DomainError;
use crate::oncall::domain::{OverrideDoc, Span};

/// The longest period one swap hands over.
pub const LONGEST_DAYS: i64 = 31;

fn at(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// Checks the period alone: forwards, not over, not begun before `now`, at most
/// [`LONGEST_DAYS`] (so working out who is on call in it stays cheap).
pub fn check_bounds(
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    now: DateTime<Utc>,
) -> Result<(), DomainError> {
    if to <= from {
        return Err(DomainError::invalid("to", "the end comes after the start"));
    }
    if to <= now {
        return Err(DomainError::invalid("to", "this period is over"));
    }
    if from < now - Duration::minutes(5) {
        return Err(DomainError::invalid(
            "from",
            format!(
                "a shift already under way is offered from now on ({})",
                at(now)
            ),
        ));
    }
    if to - from > Duration::days(LONGEST_DAYS) {
        return Err(DomainError::invalid(
            "to",
            format!("at most {LONGEST_DAYS} days in one swap"),
        ));
    }
    Ok(())
}

/// Checks that `handle` may hand over `from`..`to` of a schedule whose spans over that period
/// are `spans` and whose overrides are `overrides`, at `now`; else which field is wrong and why.
pub fn check_period(
    handle: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    spans: &[Span],
    overrides: &[OverrideDoc],
    now: DateTime<Utc>,
) -> Result<(), DomainError> {
    check_bounds((from, to), now)?;
    // The whole period is the offerer's: no one else's part, no hole where nobody is on call.
    let mut covered = from;
    for s in spans.iter().filter(|s| s.to > from && s.from < to) {
        if s.from > covered {
            return Err(DomainError::invalid(
                "from",
                format!(
                    "nobody is on call from {} to {}: a swap there would hand over a gap",
                    at(covered),
                    at(s.from)
                ),
            ));
        }
        if s.person != handle {
            return Err(DomainError::invalid(
                if s.from <= from { "from" } else { "to" },
                format!(
                    "{} is on call from {} to {}, not {handle}: offer only your own hours",
                    s.person,
                    at(s.from.max(from)),
                    at(s.to.min(to))
                ),
            ));
        }
        covered = s.to;
    }
    if covered < to {
        return Err(DomainError::invalid(
            "to",
            format!("{handle} is on call only until {}", at(covered.max(from))),
        ));
    }
    if let Some(o) = overrides.iter().find(|o| o.from < to && from < o.to) {
        return Err(DomainError::invalid(
            "from",
            format!(
                "an override ({} in place of {}) already covers {} to {}: one override at a time",
                o.with,
                o.replaces.as_deref().unwrap_or("whoever is on call"),
                at(o.from),
                at(o.to)
            ),
        ));
    }
    Ok(())
}

pub fn check_message(message: &str) -> Result<String, DomainError> {
    let message = message.trim();
    if message.chars().count() > 1000 {
        return Err(DomainError::invalid("message", "at most 1,000 characters"));
    }
    Ok(message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-07T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            + Duration::hours(h)
    }

    fn span(person: &str, from: i64, to: i64) -> Span {
        Span {
            person: person.into(),
            from: t(from),
            to: t(to),
        }
    }

    fn field(r: Result<(), DomainError>) -> (String, String) {
        match r {
            Err(DomainError::Invalid { field, message }) => (field, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_the_offerers_own_unbroken_hours_are_offered() {
        let spans = [span("ana", 0, 24), span("ben", 24, 48), span("ana", 60, 80)];
        let now = t(-1);
        assert!(check_period("ana", (t(2), t(10)), &spans, &[], now).is_ok());
        assert!(check_period("ana", (t(0), t(24)), &spans, &[], now).is_ok());
        // Ben's hours in it.
        let (f, m) = field(check_period("ana", (t(20), t(30)), &spans, &[], now));
        assert_eq!(f, "to");
        assert!(
            m.contains("ben is on call from 2026-12-08 00:00 UTC"),
            "{m}"
        );
        // A gap (48–60) in it.
        let (f, m) = field(check_period("ben", (t(30), t(55)), &spans, &[], now));
        assert_eq!(f, "to");
        assert!(m.contains("only until 2026-12-09 00:00 UTC"), "{m}");
        let (_, m) = field(check_period("ana", (t(50), t(70)), &spans, &[], now));
        assert!(m.contains("gap"), "{m}");
        // An override already there.
        let o = OverrideDoc {
            from: t(5),
            to: t(6),
            replaces: Some("ana".into()),
            with: "lena".into(),
        };
        let (f, m) = field(check_period("ana", (t(2), t(10)), &spans, &[o], now));
        assert_eq!(f, "from");
        assert!(m.contains("lena in place of ana"), "{m}");
        // The past, backwards, too long.
        assert_eq!(
            field(check_period("ana", (t(0), t(10)), &spans, &[], t(3))).0,
            "from"
        );
        assert_eq!(
            field(check_period("ana", (t(10), t(2)), &spans, &[], now)).0,
            "to"
        );
        assert_eq!(
            field(check_period("ana", (t(0), t(24 * 40)), &spans, &[], now)).0,
            "to"
        );
    }
}
