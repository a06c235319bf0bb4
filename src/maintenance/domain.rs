//! Pure rules of maintenance windows: when a window's occurrences start and end (one-off, or
//! weekly on chosen weekdays at a wall-clock time in a named zone, through daylight-saving
//! changes), which is active at an instant, the next start or end the engine acts on, and what
//! a window may be.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::domain::DomainError;

/// What a window does to its services' alerts while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Held like a silence: stored and counted, no incident, nobody paged
    Silence,
    /// Incidents open as usual but page nobody until the window ends
    Quiet,
}

impl Mode {
    pub fn parse(field: &str, text: &str) -> Result<Self, DomainError> {
        match text.trim() {
            "silence" => Ok(Mode::Silence),
            "quiet" => Ok(Mode::Quiet),
            _ => Err(DomainError::invalid(
                field,
                "silence (alerts are held: no incident) or quiet (incidents open but page nobody)",
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Silence => "silence",
            Mode::Quiet => "quiet",
        }
    }
}

/// A window as the rules read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub id: i64,
    pub mode: Mode,
    /// The first occurrence's start on the zone's wall clock
    pub local_start: NaiveDateTime,
    pub zone: Tz,
    pub duration: Duration,
    pub weekly: bool,
    /// ISO weekdays (1 = Monday) a weekly window starts on
    pub weekdays: Vec<u32>,
    /// The last local day a weekly window may start on
    pub repeat_until: Option<NaiveDate>,
    /// From then on it applies no more
    pub cancelled_at: Option<DateTime<Utc>>,
}

/// A wall-clock time in `zone` as an instant, as rotas read one: in a gap (clocks going
/// forward) the instant the clocks jumped; in a repeated hour the first of the two.
pub use crate::oncall::domain::instant;

/// One occurrence: its start and end.
pub type Span = (DateTime<Utc>, DateTime<Utc>);

impl Window {
    /// The occurrences that overlap `[from, to)`, in order, each cut at the cancellation.
    pub fn occurrences(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Span> {
        let mut out = Vec::new();
        let cut = |(s, e): Span| -> Option<Span> {
            let e = self.cancelled_at.map_or(e, |c| e.min(c));
            (s < e).then_some((s, e))
        };
        let first = instant(self.zone, self.local_start);
        if !self.weekly {
            if let Some((s, e)) = cut((first, first + self.duration))
                && s < to
                && e > from
            {
                out.push((s, e));
            }
            return out;
        }
        let time = self.local_start.time();
        let start_day = self.local_start.date();
        // Local days whose occurrence could overlap the range: from the day before
        // `from - duration` to the day after `to`, never before the first day.
        let lo = (from - self.duration)
            .with_timezone(&self.zone)
            .date_naive()
            - Duration::days(1);
        let hi = to.with_timezone(&self.zone).date_naive() + Duration::days(1);
        let mut day = lo.max(start_day);
        while day <= hi {
            if self.repeat_until.is_some_and(|u| day > u) {
                break;
            }
            if self.weekdays.contains(&day.weekday().number_from_monday()) {
                let s = instant(self.zone, day.and_time(time));
                if let Some((s, e)) = cut((s, s + self.duration))
                    && s < to
                    && e > from
                {
                    out.push((s, e));
                }
            }
            day += Duration::days(1);
        }
        out
    }

    /// The occurrence going on at `t`, if any.
    pub fn active_at(&self, t: DateTime<Utc>) -> Option<Span> {
        self.occurrences(t, t + Duration::seconds(1))
            .into_iter()
            .find(|(s, e)| *s <= t && t < *e)
    }

    /// The first occurrence that ends after `t` (going on, or the next).
    pub fn current_or_next(&self, t: DateTime<Utc>) -> Option<Span> {
        // A weekly window's next occurrence is within a week (and a day for the zone); a
        // one-off's is its only one.
        let horizon = if self.weekly {
            Duration::days(8) + self.duration
        } else {
            Duration::days(1) + self.duration
        };
        // From the first start when it is still to come.
        let base = t.max(instant(self.zone, self.local_start));
        self.occurrences(t, base + horizon)
            .into_iter()
            .find(|(_, e)| *e > t)
    }

    /// The next start or end at or after `t` the engine acts on: the start of the occurrence
    /// going on or next (unless `started` says its start was written), else its end.
    pub fn next_edge(&self, t: DateTime<Utc>, started: Option<DateTime<Utc>>) -> Option<Edge> {
        let (s, e) = self.current_or_next(t)?;
        if started == Some(s) {
            Some(Edge {
                at: e,
                kind: EdgeKind::End,
                occurrence: s,
            })
        } else {
            Some(Edge {
                at: s.max(t),
                kind: EdgeKind::Start,
                occurrence: s,
            })
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    Start,
    End,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Start => "start",
            EdgeKind::End => "end",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "start" => Some(EdgeKind::Start),
            "end" => Some(EdgeKind::End),
            _ => None,
        }
    }
}

/// A start or end of one occurrence, due at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub at: DateTime<Utc>,
    pub kind: EdgeKind,
    pub occurrence: DateTime<Utc>,
}

/// What the alert lanes ask of the windows at a batch's instant: which window, if any, is going
/// on for a service (by name), in which mode. The lowest id wins where two overlap.
#[derive(Debug, Default, Clone)]
pub struct Active {
    by_service: std::collections::HashMap<String, (i64, Mode, String)>,
}

impl Active {
    /// From each window with its services' names and its name, at `t`.
    pub fn at<'a>(
        windows: impl IntoIterator<Item = (&'a Window, &'a [String], &'a str)>,
        t: DateTime<Utc>,
    ) -> Self {
        let mut by_service: std::collections::HashMap<String, (i64, Mode, String)> =
            Default::default();
        for (w, services, name) in windows {
            if w.active_at(t).is_none() {
                continue;
            }
            for s in services {
                let slot = by_service
                    .entry(s.clone())
                    .or_insert((w.id, w.mode, name.to_owned()));
                if w.id < slot.0 {
                    *slot = (w.id, w.mode, name.to_owned());
                }
            }
        }
        Self { by_service }
    }

    /// The window going on for this service: its id, mode and name.
    pub fn of(&self, service: Option<&str>) -> Option<(i64, Mode, &str)> {
        let (id, mode, name) = self.by_service.get(service?)?;
        Some((*id, *mode, name.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.by_service.is_empty()
    }
}

/// The zone by its IANA name, or an error naming `field`.
pub fn zone(field: &str, name: &str) -> Result<Tz, DomainError> {
    crate::oncall::domain::parse_zone(field, name)
}

/// Weekdays as written: `mon,wed`, `Monday Friday`, `1,3` (ISO numbers).
pub fn weekdays(field: &str, text: &[String]) -> Result<Vec<u32>, DomainError> {
    let mut out = Vec::new();
    for word in text
        .iter()
        .flat_map(|t| t.split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|w| !w.is_empty())
    {
        let w = word.to_ascii_lowercase();
        let n = match w.parse::<u32>() {
            Ok(n) if (1..=7).contains(&n) => n,
            _ => match w
                .parse::<chrono::Weekday>()
                .ok()
                .map(|d| d.number_from_monday())
            {
                Some(n) => n,
                None => {
                    return Err(DomainError::invalid(
                        field,
                        format!("{word:?} is not a weekday (mon … sun, or 1 … 7 from Monday)"),
                    ));
                }
            },
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The longest one occurrence may last: a week.
pub const MAX_MINUTES: i64 = 7 * 24 * 60;

/// The longest a weekly window on these weekdays may last: two hours short of the shortest gap
/// between one start and the next (a daylight-saving change moves a start by an hour), so its
/// occurrences never touch or overlap.
pub fn longest_weekly(weekdays: &[u32]) -> Duration {
    let mut days: Vec<u32> = weekdays.to_vec();
    days.sort_unstable();
    days.dedup();
    let gap = match days.as_slice() {
        [] | [_] => 7,
        _ => days
            .iter()
            .zip(days.iter().cycle().skip(1))
            .map(|(a, b)| (b + 7 - a - 1) % 7 + 1)
            .min()
            .unwrap_or(7),
    };
    Duration::days(gap.into()) - Duration::hours(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn local(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap()
    }

    fn weekly(start: &str, zone: &str, minutes: i64, days: &[u32]) -> Window {
        Window {
            id: 1,
            mode: Mode::Silence,
            local_start: local(start),
            zone: zone.parse().unwrap(),
            duration: Duration::minutes(minutes),
            weekly: true,
            weekdays: days.to_vec(),
            repeat_until: None,
            cancelled_at: None,
        }
    }

    #[test]
    fn a_weekly_window_keeps_its_wall_clock_time_across_daylight_saving() {
        // Sundays 01:30–03:30 in Lisbon; clocks go back on 25 October 2026 at 02:00 WEST to
        // 01:00 WET, so 01:30 happens twice that night: the first is taken.
        let w = weekly("2026-10-11T01:30", "Europe/Lisbon", 120, &[7]);
        let got = w.occurrences(t("2026-10-10T00:00:00Z"), t("2026-11-02T00:00:00Z"));
        assert_eq!(
            got.iter().map(|(s, _)| s.to_rfc3339()).collect::<Vec<_>>(),
            [
                "2026-10-11T00:30:00+00:00",
                "2026-10-18T00:30:00+00:00",
                "2026-10-25T00:30:00+00:00",
                "2026-11-01T01:30:00+00:00",
            ]
        );
        assert!(got.iter().all(|(s, e)| *e - *s == Duration::hours(2)));
    }

    #[test]
    fn a_start_the_clocks_skip_is_the_instant_they_jumped() {
        // New York springs forward on 8 March 2026 at 02:00 → 03:00: 02:30 is 03:00 that night.
        let w = weekly("2026-03-01T02:30", "America/New_York", 60, &[7]);
        let got = w.occurrences(t("2026-03-07T00:00:00Z"), t("2026-03-16T00:00:00Z"));
        assert_eq!(
            got.iter().map(|(s, _)| s.to_rfc3339()).collect::<Vec<_>>(),
            ["2026-03-08T07:00:00+00:00", "2026-03-15T06:30:00+00:00"]
        );
    }

    #[test]
    fn weekdays_repeat_until_and_cancellation_bound_the_occurrences() {
        let mut w = weekly("2026-12-01T22:00", "UTC", 60, &[2, 4]);
        w.repeat_until = Some(NaiveDate::from_ymd_opt(2026, 12, 10).unwrap());
        let got = w.occurrences(t("2026-11-01T00:00:00Z"), t("2027-01-01T00:00:00Z"));
        assert_eq!(got.len(), 4, "Tue 1, Thu 3, Tue 8, Thu 10 December");
        w.cancelled_at = Some(t("2026-12-03T22:30:00Z"));
        let got = w.occurrences(t("2026-11-01T00:00:00Z"), t("2027-01-01T00:00:00Z"));
        assert_eq!(
            got.last().unwrap().1,
            t("2026-12-03T22:30:00Z"),
            "cut short"
        );
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn active_and_next_edges() {
        let w = Window {
            weekly: false,
            ..weekly("2026-12-03T20:00", "Europe/Berlin", 90, &[])
        };
        let (s, e) = (t("2026-12-03T19:00:00Z"), t("2026-12-03T20:30:00Z"));
        assert_eq!(w.active_at(t("2026-12-03T18:59:00Z")), None);
        assert_eq!(w.active_at(t("2026-12-03T19:00:00Z")), Some((s, e)));
        assert_eq!(w.active_at(t("2026-12-03T20:30:00Z")), None);
        let before = w.next_edge(t("2026-12-03T12:00:00Z"), None).unwrap();
        assert_eq!((before.at, before.kind), (s, EdgeKind::Start));
        // Made while going on: its start is due now.
        let now = t("2026-12-03T19:10:00Z");
        let during = w.next_edge(now, None).unwrap();
        assert_eq!(
            (during.at, during.kind, during.occurrence),
            (now, EdgeKind::Start, s)
        );
        let after_start = w.next_edge(now, Some(s)).unwrap();
        assert_eq!((after_start.at, after_start.kind), (e, EdgeKind::End));
        assert_eq!(
            w.next_edge(e, Some(s)),
            None,
            "a one-off has nothing after its end"
        );
        let wk = weekly("2026-12-03T20:00", "Europe/Berlin", 90, &[4]);
        let next = wk.next_edge(e, Some(s)).unwrap();
        assert_eq!(
            (next.at, next.kind),
            (t("2026-12-10T19:00:00Z"), EdgeKind::Start)
        );
        // A weekly window whose first start is years away is still to come.
        let later = weekly("2030-01-06T02:00", "Europe/Lisbon", 120, &[7]);
        let first = later.next_edge(t("2026-12-03T12:00:00Z"), None).unwrap();
        assert_eq!(first.at, t("2030-01-06T02:00:00Z"));
    }

    #[test]
    fn weekly_occurrences_never_touch() {
        assert_eq!(longest_weekly(&[7]), Duration::hours(7 * 24 - 2));
        assert_eq!(
            longest_weekly(&[6, 7]),
            Duration::hours(22),
            "Saturday then Sunday"
        );
        assert_eq!(
            longest_weekly(&[1, 4]),
            Duration::hours(3 * 24 - 2),
            "Mon→Thu 3 d, Thu→Mon 4 d"
        );
        assert_eq!(longest_weekly(&[1, 2, 3, 4, 5, 6, 7]), Duration::hours(22));
    }

    #[test]
    fn zones_and_weekdays_are_read_with_the_field_named() {
        assert!(zone("time_zone", "Europe/Lisbon").is_ok());
        assert!(
            format!("{:?}", zone("time_zone", "Mars/Olympus").unwrap_err()).contains("time_zone")
        );
        assert_eq!(
            weekdays("weekdays", &["mon, Wednesday".into(), "7".into()]).unwrap(),
            [1, 3, 7]
        );
        assert!(weekdays("weekdays", &["funday".into()]).is_err());
        assert!(Mode::parse("mode", "loud").is_err());
    }
}
