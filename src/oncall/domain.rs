//! Who is on call, computed and never stored: a schedule is layers of rotations plus overrides.
//!
//! A rotation hands off at a wall-clock time in a named zone: a weekly Europe/Berlin rotation
//! handing off Mondays at 09:00 hands off at 07:00 UTC in summer and 08:00 UTC in winter. Daily
//! and weekly shifts count in the zone's calendar (a shift across a daylight-saving change is an
//! hour shorter or longer); a custom length counts hours. Higher layers win where they have a
//! shift; an override puts one person in place of another (or of whoever is on call) for a
//! period. Pure rules, no I/O.

use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
    Weekday,
};
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

/// When a layer is on call at all: a window that opens on each of `days` at `from` and closes
/// at `to` (the next day when `to` is not after `from`; `from` = `to` is a whole day), both
/// wall-clock times in the layer's zone. Outside it the layers below (or nobody) are on call:
/// "weekdays 09:00–17:00" is a working-hours layer over a round-the-clock one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Restriction {
    /// The days a window opens on (`mon` … `sun`); empty: every day
    #[serde(default)]
    #[schema(value_type = Vec<String>, example = json!(["mon", "tue", "wed", "thu", "fri"]))]
    pub days: Vec<Weekday>,
    /// When the window opens, e.g. `09:00`
    #[schema(value_type = String, example = "09:00")]
    pub from: NaiveTime,
    /// When it closes, e.g. `17:00`
    #[schema(value_type = String, example = "17:00")]
    pub to: NaiveTime,
}

impl Restriction {
    fn opens_on(&self, day: Weekday) -> bool {
        self.days.is_empty() || self.days.contains(&day)
    }

    /// Whether the wall-clock time `local` (in the layer's zone) is inside a window.
    pub fn covers(&self, local: NaiveDateTime) -> bool {
        let (day, t) = (local.date(), local.time());
        if self.from < self.to {
            return self.opens_on(day.weekday()) && self.from <= t && t < self.to;
        }
        // Through midnight (or a whole day): opened today at `from`, or yesterday.
        (t >= self.from && self.opens_on(day.weekday()))
            || (t < self.to && self.opens_on(day.pred_opt().unwrap_or(day).weekday()))
    }

    /// The instants windows may open or close between `from` and `to` (exclusive), in `zone`:
    /// each window's wall-clock edges (both instants of one a clock change repeats), and the
    /// clock changes themselves, which move the wall clock across an edge.
    fn edges(&self, zone: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let first = from.with_timezone(&zone).date_naive() - Duration::days(1);
        let last = to.with_timezone(&zone).date_naive() + Duration::days(1);
        let mut out = clock_changes(zone, from, to);
        let mut day: NaiveDate = first;
        while day <= last {
            if self.opens_on(day.weekday()) {
                let close_day = if self.to > self.from {
                    day
                } else {
                    day + Duration::days(1)
                };
                for local in [day.and_time(self.from), close_day.and_time(self.to)] {
                    let at = match zone.from_local_datetime(&local) {
                        LocalResult::Single(t) => vec![t.with_timezone(&Utc)],
                        LocalResult::Ambiguous(a, b) => {
                            vec![a.with_timezone(&Utc), b.with_timezone(&Utc)]
                        }
                        LocalResult::None => vec![gap_end(zone, local)],
                    };
                    out.extend(at.into_iter().filter(|e| from < *e && *e < to));
                }
            }
            day += Duration::days(1);
        }
        out
    }

    /// Checks the window, naming the field under `at`.
    fn check(&self, at: &str) -> Result<(), DomainError> {
        if self.days.len() > 7
            || self
                .days
                .iter()
                .enumerate()
                .any(|(n, d)| self.days[..n].contains(d))
        {
            return Err(DomainError::invalid(
                &format!("{at}.days"),
                "each day of the week at most once",
            ));
        }
        Ok(())
    }

    /// How a person reads it: `Mon–Fri 09:00–17:00`, `every day 20:00–08:00`.
    pub fn describe(&self) -> String {
        let days = if self.days.is_empty() || self.days.len() == 7 {
            "every day".to_owned()
        } else {
            self.days
                .iter()
                .map(|d| format!("{d}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let hours = if self.from == self.to {
            format!("all day from {}", self.from.format("%H:%M"))
        } else {
            format!("{}–{}", self.from.format("%H:%M"), self.to.format("%H:%M"))
        };
        format!("{days} {hours}")
    }
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
    /// When the layer is on call at all; `None`: always
    pub restriction: Option<Restriction>,
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
    /// When the layer is on call at all (weekdays, working hours); absent: always
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restriction: Option<Restriction>,
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
    /// The team that owns it, by slug or name; empty: the installation's
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub team: String,
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
                    restriction: l.restriction.clone(),
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

/// A wall-clock time in `zone` as an instant: in a gap (clocks going forward) the instant the
/// clocks jumped, the first one after it; in a repeated hour the first of the two. Monotonic:
/// a later wall-clock time is never an earlier instant, so handoffs keep their order.
pub fn instant(zone: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(a, b) => a.min(b).with_timezone(&Utc),
        LocalResult::None => gap_end(zone, local),
    }
}

/// The instants between `from` and `to` at which `zone` changes its clocks: each hour's offset
/// is compared with the next, and a change is found to the second by halving.
fn clock_changes(zone: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    use chrono::Offset;
    let offset = |t: DateTime<Utc>| zone.offset_from_utc_datetime(&t.naive_utc()).fix();
    let mut out = Vec::new();
    let mut t = from;
    while t < to {
        let next = (t + Duration::hours(1)).min(to);
        if offset(t) != offset(next) {
            let (mut before, mut after) = (t.timestamp(), next.timestamp());
            while after - before > 1 {
                let mid = before + (after - before) / 2;
                let at = DateTime::from_timestamp(mid, 0).unwrap_or(next);
                if offset(at) == offset(t) {
                    before = mid;
                } else {
                    after = mid;
                }
            }
            let change = DateTime::from_timestamp(after, 0).unwrap_or(next);
            if from < change && change < to {
                out.push(change);
            }
        }
        t = next;
    }
    out
}

/// The instant a gap holding the wall-clock time `local` ended. The first wall-clock time after
/// it that exists (in steps of a quarter hour; the longest gap on record is a day) bounds the
/// jump from above, a quarter hour before it from below, and halving finds the second.
fn gap_end(zone: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    let step = Duration::minutes(15);
    let mut after = local;
    for _ in 0..(26 * 4) {
        let Some(next) = after.checked_add_signed(step) else {
            break;
        };
        after = next;
        if let Some(t) = zone.from_local_datetime(&after).earliest() {
            // Whole seconds: zones change their clocks on a second.
            let (mut before, mut at) = (t.timestamp() - step.num_seconds(), t.timestamp());
            // Before the jump the wall clock reads earlier than `local`, from it on later.
            while at - before > 1 {
                let mid = before + (at - before) / 2;
                let wall =
                    DateTime::from_timestamp(mid, 0).map(|t| t.with_timezone(&zone).naive_local());
                if wall.is_none_or(|wall| wall > local) {
                    at = mid;
                } else {
                    before = mid;
                }
            }
            return DateTime::from_timestamp(at, 0).unwrap_or(t.with_timezone(&Utc));
        }
    }
    // No zone skips more than a day; read the time as UTC rather than fail.
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
        // Far from the calendar's ends, so every handoff of a period anyone asks about is a
        // time chrono can add to and read in a zone.
        if !(1900..=2199).contains(&self.start.year()) {
            return Err(DomainError::invalid(
                &format!("{at}.start"),
                "a first handoff from the year 1900 to 2199",
            ));
        }
        if let Some(r) = &self.restriction {
            r.check(&format!("{at}.restriction"))?;
        }
        Ok(())
    }

    /// When shift `k` starts: the start's wall-clock time `k` days or weeks later in the zone,
    /// or `k` times the shift's hours after the start. Never earlier for a later shift.
    fn handoff(&self, k: i64) -> DateTime<Utc> {
        match self.length {
            ShiftLength::Hours { hours } => {
                instant(self.zone, self.start) + Duration::hours(i64::from(hours) * k)
            }
            ShiftLength::Day => instant(self.zone, self.start + Duration::days(k)),
            ShiftLength::Week => instant(self.zone, self.start + Duration::days(7 * k)),
        }
    }

    /// The shift number at `t` (negative before the rotation starts), and its start and end:
    /// the last shift whose handoff is at or before `t`, so `at` and `spans` give one answer.
    fn shift_at(&self, t: DateTime<Utc>) -> (i64, DateTime<Utc>, DateTime<Utc>) {
        let mut k = match self.length {
            ShiftLength::Hours { hours } => {
                let len = i64::from(hours) * 3600;
                (t - instant(self.zone, self.start))
                    .num_seconds()
                    .div_euclid(len)
            }
            // The wall clock gives the shift to within one: around a daylight-saving change it
            // runs an hour twice or skips one. The handoffs' instants settle it below.
            ShiftLength::Day | ShiftLength::Week => {
                let period = if self.length == ShiftLength::Day {
                    1
                } else {
                    7
                } * 86_400;
                let local = t.with_timezone(&self.zone).naive_local();
                (local - self.start).num_seconds().div_euclid(period)
            }
        };
        while self.handoff(k) > t {
            k -= 1;
        }
        while self.handoff(k + 1) <= t {
            k += 1;
        }
        (k, self.handoff(k), self.handoff(k + 1))
    }

    /// Who is on call at `t`, from when to when (the shift, whatever its restriction); nobody
    /// before the rotation starts or outside its restriction's windows.
    pub fn at(&self, t: DateTime<Utc>) -> Option<Span> {
        let (k, from, to) = self.shift_at(t);
        if k < 0 || self.people.is_empty() {
            return None;
        }
        if let Some(r) = &self.restriction
            && !r.covers(t.with_timezone(&self.zone).naive_local())
        {
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
            if let Some(r) = &layer.restriction {
                edges.extend(r.edges(layer.zone, from, to));
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
mod tests;
