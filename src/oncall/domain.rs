//! Who is on call, computed and never stored: a schedule is layers of rotations plus overrides.
//!
//! A rotation hands off at a wall-clock time in a named zone: a weekly Europe/Berlin rotation
//! handing off Mondays at 09:00 hands off at 07:00 UTC in summer and 08:00 UTC in winter. Daily
//! and weekly shifts count in the zone's calendar (a shift across a daylight-saving change is an
//! hour shorter or longer); a custom length counts hours. Higher layers win where they have a
//! shift; an override puts one person in place of another (or of whoever is on call) for a
//! period. Pure rules, no I/O.

use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::domain::DomainError;

/// How long a shift lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "every", rename_all = "snake_case")]
pub enum ShiftLength {
    /// One calendar day in the rotation's zone
    Day,
    /// Seven calendar days in the rotation's zone
    Week,
    /// A fixed number of hours (1 to 8760)
    Hours { hours: u32 },
}

/// People taking turns.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotation {
    pub length: ShiftLength,
    /// The first handoff, as a wall-clock time in `zone`; the first person's shift starts here
    pub start: NaiveDateTime,
    pub zone: Tz,
    /// Handles, in turn order
    pub people: Vec<String>,
}

/// One person in another's place (or in whoever's place, when `replaces` is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub replaces: Option<String>,
    pub with: String,
}

/// Layers, lowest first, and overrides.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schedule {
    pub layers: Vec<Rotation>,
    pub overrides: Vec<Override>,
}

/// A person on call from one instant to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub person: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// A layer as written: `{"length": {"every": "week"}, "start": "2026-01-05T09:00:00",
/// "time_zone": "Europe/Berlin", "people": ["ana", "dev"]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerDoc {
    pub length: ShiftLength,
    /// The first handoff, wall-clock time in `time_zone`
    #[schema(value_type = String, example = "2026-01-05T09:00:00")]
    pub start: NaiveDateTime,
    /// An IANA zone, e.g. Europe/Lisbon
    pub time_zone: String,
    /// People's handles, in turn order
    pub people: Vec<String>,
}

/// An override as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OverrideDoc {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Whose shift it takes (a handle); none takes whoever is on call
    #[serde(default)]
    pub replaces: Option<String>,
    /// Who is on call instead (a handle)
    pub with: String,
}

/// A schedule as a person writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleDraft {
    pub name: String,
    /// Lowest first; a higher layer wins where it has a shift
    #[serde(default)]
    pub layers: Vec<LayerDoc>,
    #[serde(default)]
    pub overrides: Vec<OverrideDoc>,
}

impl ScheduleDraft {
    /// The schedule it describes, checked; an error names the field.
    pub fn schedule(&self) -> Result<Schedule, DomainError> {
        let n = self.name.trim().chars().count();
        if n == 0 || n > 100 {
            return Err(DomainError::invalid("name", "write 1 to 100 characters"));
        }
        if self.layers.len() > 20 || self.overrides.len() > 500 {
            return Err(DomainError::invalid(
                "layers",
                "at most 20 layers and 500 overrides",
            ));
        }
        let layers = self
            .layers
            .iter()
            .enumerate()
            .map(|(n, l)| {
                Ok(Rotation {
                    length: l.length,
                    start: l.start,
                    zone: parse_zone(&format!("layers[{n}].time_zone"), &l.time_zone)?,
                    people: l.people.iter().map(|p| p.trim().to_owned()).collect(),
                })
            })
            .collect::<Result<Vec<_>, DomainError>>()?;
        let s = Schedule {
            layers,
            overrides: self
                .overrides
                .iter()
                .map(|o| Override {
                    from: o.from,
                    to: o.to,
                    replaces: o.replaces.as_ref().map(|r| r.trim().to_owned()),
                    with: o.with.trim().to_owned(),
                })
                .collect(),
        };
        s.check()?;
        Ok(s)
    }

    /// Every handle it names, with the field that names it.
    pub fn handles(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        for (n, l) in self.layers.iter().enumerate() {
            for (m, p) in l.people.iter().enumerate() {
                out.push((format!("layers[{n}].people[{m}]"), p.trim()));
            }
        }
        for (n, o) in self.overrides.iter().enumerate() {
            out.push((format!("overrides[{n}].with"), o.with.trim()));
            if let Some(r) = &o.replaces {
                out.push((format!("overrides[{n}].replaces"), r.trim()));
            }
        }
        out
    }
}

/// The zone a name gives, or an error naming `field`.
pub fn parse_zone(field: &str, name: &str) -> Result<Tz, DomainError> {
    name.trim().parse::<Tz>().map_err(|_| {
        DomainError::invalid(
            field,
            format!(
                "{:?} is not a time zone; use an IANA name such as Europe/Lisbon or UTC",
                name.trim()
            ),
        )
    })
}

/// A wall-clock time in `zone` as an instant: in a gap (clocks going forward) the first instant
/// after it, in a repeated hour the first of the two.
fn instant(zone: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    let mut probe = local;
    for _ in 0..4 {
        if let Some(t) = zone.from_local_datetime(&probe).earliest() {
            return t.with_timezone(&Utc);
        }
        probe += Duration::minutes(30);
    }
    Utc.from_utc_datetime(&local)
}

impl Rotation {
    /// Checks a rotation, naming the field under `at` that is wrong.
    pub fn check(&self, at: &str) -> Result<(), DomainError> {
        if self.people.is_empty() {
            return Err(DomainError::invalid(
                &format!("{at}.people"),
                "a rotation needs at least one person",
            ));
        }
        if let ShiftLength::Hours { hours } = self.length
            && !(1..=8760).contains(&hours)
        {
            return Err(DomainError::invalid(
                &format!("{at}.length.hours"),
                "a shift of 1 to 8760 hours",
            ));
        }
        Ok(())
    }

    /// The shift number at `t` (negative before the rotation starts), and its start and end.
    fn shift_at(&self, t: DateTime<Utc>) -> (i64, DateTime<Utc>, DateTime<Utc>) {
        match self.length {
            ShiftLength::Hours { hours } => {
                let start = instant(self.zone, self.start);
                let len = Duration::hours(i64::from(hours));
                let k = (t - start).num_seconds().div_euclid(len.num_seconds());
                let from = start + len * k as i32;
                (k, from, from + len)
            }
            ShiftLength::Day | ShiftLength::Week => {
                let days = if self.length == ShiftLength::Day {
                    1
                } else {
                    7
                };
                // Calendar arithmetic on the zone's wall clock: the handoff keeps its local time.
                let local = t.with_timezone(&self.zone).naive_local();
                let elapsed = (local - self.start).num_seconds();
                let k = elapsed.div_euclid(days * 86_400);
                let from_local = self.start + Duration::days(days * k);
                let mut from = instant(self.zone, from_local);
                let mut to = instant(self.zone, from_local + Duration::days(days));
                // In the repeated hour the wall clock runs twice; keep the instant inside.
                if t < from {
                    to = from;
                    from = instant(self.zone, from_local - Duration::days(days));
                } else if t >= to {
                    from = to;
                    to = instant(self.zone, from_local + Duration::days(2 * days));
                }
                (k, from, to)
            }
        }
    }

    /// Who is on call at `t`, from when to when; nobody before the rotation starts.
    pub fn at(&self, t: DateTime<Utc>) -> Option<Span> {
        let (k, from, to) = self.shift_at(t);
        if k < 0 || self.people.is_empty() {
            return None;
        }
        let n = self.people.len() as i64;
        Some(Span {
            person: self.people[k.rem_euclid(n) as usize].clone(),
            from,
            to,
        })
    }
}

impl Schedule {
    /// Checks every layer and override; overrides may not overlap one another.
    pub fn check(&self) -> Result<(), DomainError> {
        for (n, layer) in self.layers.iter().enumerate() {
            layer.check(&format!("layers[{n}]"))?;
        }
        for (n, o) in self.overrides.iter().enumerate() {
            if o.to <= o.from {
                return Err(DomainError::invalid(
                    &format!("overrides[{n}].to"),
                    "an override ends after it starts",
                ));
            }
            if o.with.trim().is_empty() {
                return Err(DomainError::invalid(
                    &format!("overrides[{n}].with"),
                    "who is on call instead",
                ));
            }
            if let Some(m) = self.overrides[..n]
                .iter()
                .position(|p| p.from < o.to && o.from < p.to)
            {
                return Err(DomainError::invalid(
                    &format!("overrides[{n}]"),
                    format!("overlaps overrides[{m}]; one override at a time"),
                ));
            }
        }
        Ok(())
    }

    /// Who is on call at `t`: the highest layer with a shift then, unless an override replaces
    /// them.
    pub fn on_call(&self, t: DateTime<Utc>) -> Option<String> {
        let scheduled = self
            .layers
            .iter()
            .rev()
            .find_map(|l| l.at(t))
            .map(|s| s.person);
        for o in &self.overrides {
            if o.from <= t && t < o.to {
                match (&o.replaces, &scheduled) {
                    (None, _) => return Some(o.with.clone()),
                    (Some(r), Some(s)) if r == s => return Some(o.with.clone()),
                    _ => {}
                }
            }
        }
        scheduled
    }

    /// Who is on call from `from` to `to`, as consecutive spans (nobody's gaps left out).
    pub fn spans(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Span> {
        let mut edges = vec![from];
        for layer in &self.layers {
            let mut t = from;
            // Walk the layer's handoffs; a shift is at least an hour, so this ends.
            while t < to {
                let (_, _, end) = layer.shift_at(t);
                let next = if end > t { end } else { t + Duration::hours(1) };
                if next < to {
                    edges.push(next);
                }
                t = next;
            }
        }
        for o in &self.overrides {
            for e in [o.from, o.to] {
                if from < e && e < to {
                    edges.push(e);
                }
            }
        }
        edges.sort();
        edges.dedup();
        let mut spans: Vec<Span> = Vec::new();
        for (n, start) in edges.iter().enumerate() {
            let end = edges.get(n + 1).copied().unwrap_or(to);
            let Some(person) = self.on_call(*start) else {
                continue;
            };
            match spans.last_mut() {
                Some(last) if last.person == person && last.to == *start => last.to = end,
                _ => spans.push(Span {
                    person,
                    from: *start,
                    to: end,
                }),
            }
        }
        spans
    }
}

/// One shift in a person's calendar: which schedule, when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shift {
    pub schedule_id: i64,
    pub schedule: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

fn ical_text(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace(';', "\\;")
        .replace(',', "\\,")
        .replace(['\r', '\n'], " ")
}

fn ical_time(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// An iCalendar (RFC 5545) feed of `handle`'s shifts, times in UTC, CRLF line ends.
pub fn ical(handle: &str, shifts: &[Shift], stamp: DateTime<Utc>) -> String {
    let mut out = String::from(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Quell//On call//EN\r\nCALSCALE:GREGORIAN\r\n",
    );
    out.push_str(&format!(
        "X-WR-CALNAME:{}\r\n",
        ical_text(&format!("On call: {handle}"))
    ));
    for s in shifts {
        out.push_str("BEGIN:VEVENT\r\n");
        out.push_str(&format!(
            "UID:{}-{}-{}@quell\r\n",
            s.schedule_id,
            s.from.timestamp(),
            ical_text(handle)
        ));
        out.push_str(&format!("DTSTAMP:{}\r\n", ical_time(stamp)));
        out.push_str(&format!("DTSTART:{}\r\n", ical_time(s.from)));
        out.push_str(&format!("DTEND:{}\r\n", ical_time(s.to)));
        out.push_str(&format!(
            "SUMMARY:{}\r\n",
            ical_text(&format!("On call: {}", s.schedule))
        ));
        out.push_str("END:VEVENT\r\n");
    }
    out.push_str("END:VCALENDAR\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn local(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    fn weekly_berlin() -> Rotation {
        Rotation {
            length: ShiftLength::Week,
            // A Monday, 09:00 in Berlin.
            start: local("2026-01-05 09:00"),
            zone: chrono_tz::Europe::Berlin,
            people: vec!["ana".into(), "dev".into(), "priya".into()],
        }
    }

    /// (instant, who) across both of 2026's daylight-saving changes in Berlin (29 March and
    /// 25 October): the Monday 09:00 handoff is 08:00 UTC in winter and 07:00 UTC in summer.
    #[test]
    fn a_berlin_rotation_hands_off_at_nine_local_in_summer_and_winter() {
        let r = weekly_berlin();
        let cases = [
            ("2026-01-05T07:59:00Z", None),
            ("2026-01-05T08:00:00Z", Some("ana")),
            ("2026-01-12T07:59:00Z", Some("ana")),
            ("2026-01-12T08:00:00Z", Some("dev")),
            // Monday 23 March (shift 11), still winter: 08:00 UTC.
            ("2026-03-23T07:59:00Z", Some("dev")),
            ("2026-03-23T08:00:00Z", Some("priya")),
            // Monday 30 March (shift 12), the day after clocks went forward: 07:00 UTC.
            ("2026-03-30T06:59:00Z", Some("priya")),
            ("2026-03-30T07:00:00Z", Some("ana")),
            // Monday 19 October (shift 41), summer: 07:00 UTC; Monday 26 October (shift 42),
            // winter again: 08:00 UTC.
            ("2026-10-19T06:59:00Z", Some("dev")),
            ("2026-10-19T07:00:00Z", Some("priya")),
            ("2026-10-26T07:59:00Z", Some("priya")),
            ("2026-10-26T08:00:00Z", Some("ana")),
        ];
        for (at, who) in cases {
            assert_eq!(
                r.at(utc(at)).map(|s| s.person),
                who.map(str::to_owned),
                "{at}"
            );
        }
        // The shift across the October change is an hour longer (169 h).
        let s = r.at(utc("2026-10-20T12:00:00Z")).unwrap();
        assert_eq!(
            (s.from, s.to),
            (utc("2026-10-19T07:00:00Z"), utc("2026-10-26T08:00:00Z"))
        );
        assert_eq!((s.to - s.from).num_hours(), 169);
    }

    #[test]
    fn daily_and_hourly_rotations_and_a_handoff_in_the_spring_gap() {
        let daily = Rotation {
            length: ShiftLength::Day,
            // 02:30 does not exist in Berlin on 29 March: that handoff happens at 03:00.
            start: local("2026-03-27 02:30"),
            zone: chrono_tz::Europe::Berlin,
            people: vec!["a".into(), "b".into()],
        };
        let s = daily.at(utc("2026-03-29T01:10:00Z")).unwrap();
        assert_eq!(s.person, "a");
        assert_eq!(s.from, utc("2026-03-29T01:00:00Z"));
        let hourly = Rotation {
            length: ShiftLength::Hours { hours: 12 },
            start: local("2026-03-28 20:00"),
            zone: chrono_tz::UTC,
            people: vec!["x".into(), "y".into(), "z".into()],
        };
        assert_eq!(hourly.at(utc("2026-03-29T08:00:00Z")).unwrap().person, "y");
        assert_eq!(hourly.at(utc("2026-03-29T20:00:00Z")).unwrap().person, "z");
        assert_eq!(hourly.at(utc("2026-03-30T08:00:00Z")).unwrap().person, "x");
    }

    #[test]
    fn higher_layers_and_overrides_win_and_spans_merge() {
        let base = weekly_berlin();
        let weekend = Rotation {
            length: ShiftLength::Week,
            start: local("2026-10-24 09:00"),
            zone: chrono_tz::Europe::Berlin,
            people: vec!["sam".into()],
        };
        let s = Schedule {
            layers: vec![base, weekend],
            overrides: vec![Override {
                from: utc("2026-10-22T12:00:00Z"),
                to: utc("2026-10-22T18:00:00Z"),
                replaces: Some("priya".into()),
                with: "lena".into(),
            }],
        };
        s.check().unwrap();
        assert_eq!(
            s.on_call(utc("2026-10-22T13:00:00Z")).as_deref(),
            Some("lena")
        );
        assert_eq!(
            s.on_call(utc("2026-10-22T19:00:00Z")).as_deref(),
            Some("priya")
        );
        assert_eq!(
            s.on_call(utc("2026-10-25T12:00:00Z")).as_deref(),
            Some("sam")
        );
        let spans = s.spans(utc("2026-10-22T00:00:00Z"), utc("2026-10-25T00:00:00Z"));
        let who: Vec<(&str, String)> = spans
            .iter()
            .map(|s| (s.person.as_str(), s.from.format("%d %H:%M").to_string()))
            .collect();
        assert_eq!(
            who,
            [
                ("priya", "22 00:00".into()),
                ("lena", "22 12:00".into()),
                ("priya", "22 18:00".into()),
                ("sam", "24 07:00".into())
            ]
        );
    }

    #[test]
    fn bad_schedules_name_the_field() {
        let field = |s: &Schedule| match s.check().unwrap_err() {
            DomainError::Invalid { field, .. } => field,
            DomainError::Conflict(m) => m,
        };
        let mut s = Schedule {
            layers: vec![weekly_berlin()],
            overrides: vec![],
        };
        s.layers[0].people.clear();
        assert_eq!(field(&s), "layers[0].people");
        s.layers[0] = weekly_berlin();
        s.layers[0].length = ShiftLength::Hours { hours: 0 };
        assert_eq!(field(&s), "layers[0].length.hours");
        s.layers[0] = weekly_berlin();
        let o = |from: &str, to: &str| Override {
            from: utc(from),
            to: utc(to),
            replaces: None,
            with: "lena".into(),
        };
        s.overrides = vec![o("2026-10-22T12:00:00Z", "2026-10-22T11:00:00Z")];
        assert_eq!(field(&s), "overrides[0].to");
        s.overrides = vec![
            o("2026-10-22T12:00:00Z", "2026-10-22T18:00:00Z"),
            o("2026-10-22T17:00:00Z", "2026-10-22T20:00:00Z"),
        ];
        assert_eq!(field(&s), "overrides[1]");
        match parse_zone("time_zone", "Europe/Lisbn").unwrap_err() {
            DomainError::Invalid { field, message } => {
                assert_eq!(field, "time_zone");
                assert!(message.contains("Europe/Lisbn"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_zone("z", "Europe/Lisbon").unwrap(),
            chrono_tz::Europe::Lisbon
        );
    }

    #[test]
    fn a_calendar_feed_lists_shifts_in_utc_and_escapes_text() {
        let t = |h| Utc.with_ymd_and_hms(2026, 10, 26, h, 0, 0).unwrap();
        let feed = ical(
            "ana",
            &[Shift {
                schedule_id: 3,
                schedule: "Payments, primary; EU".into(),
                from: t(9),
                to: t(17),
            }],
            t(8),
        );
        assert!(feed.starts_with("BEGIN:VCALENDAR\r\n"));
        assert!(feed.ends_with("END:VCALENDAR\r\n"));
        assert!(feed.contains("DTSTART:20261026T090000Z\r\nDTEND:20261026T170000Z\r\n"));
        assert!(
            feed.contains("SUMMARY:On call: Payments\\, primary\\; EU\r\n"),
            "{feed}"
        );
        assert_eq!(feed.matches("BEGIN:VEVENT").count(), 1);
    }
}
