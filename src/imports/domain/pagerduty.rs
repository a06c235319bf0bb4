//! Pure rules of importing from PagerDuty: its REST API's objects as it documents them (the
//! shapes other vendors' objects are read into too, see `opsgenie`), and what each becomes in
//! Quell — a user a person, a schedule's layers Quell's layers (a
//! restriction Quell's windows, one layer per distinct window), an override ahead an override,
//! an escalation policy a policy, a service a service, an Events API v2 integration a Quell
//! integration keeping its key — or why it cannot. No I/O.

use std::collections::HashMap;

use chrono::{DateTime, Duration, FixedOffset, NaiveTime, Timelike, Utc, Weekday};
use serde::Deserialize;

use crate::oncall::domain::{LayerDoc, OverrideDoc, Restriction, ShiftLength, Span};

/// A reference to another object: `{"id", "type", "summary"}`.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
pub struct Reference {
    pub id: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub summary: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct User {
    pub id: String,
    pub name: String,
    pub email: String,
    #[serde(default)]
    pub time_zone: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Team {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// One member of a team: `manager` (a lead in Quell), `responder` or `observer`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TeamMember {
    pub user: Reference,
    #[serde(default)]
    pub role: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct LayerUser {
    pub user: Reference,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct PdRestriction {
    #[serde(rename = "type")]
    pub kind: String,
    /// `08:00:00`
    pub start_time_of_day: String,
    pub duration_seconds: i64,
    /// 1 (Monday) … 7, weekly restrictions only
    #[serde(default)]
    pub start_day_of_week: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Layer {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub start: DateTime<FixedOffset>,
    #[serde(default)]
    pub end: Option<DateTime<FixedOffset>>,
    pub rotation_virtual_start: DateTime<FixedOffset>,
    pub rotation_turn_length_seconds: i64,
    pub users: Vec<LayerUser>,
    #[serde(default)]
    pub restrictions: Vec<PdRestriction>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Schedule {
    pub id: String,
    pub name: String,
    pub time_zone: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub schedule_layers: Vec<Layer>,
    #[serde(default)]
    pub teams: Vec<Reference>,
    /// What reading another vendor's object into this shape could not keep, each a sentence
    #[serde(skip)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct PdOverride {
    #[serde(default)]
    pub id: String,
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub user: Reference,
}

/// One entry of a schedule's `final_schedule.rendered_schedule_entries`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Entry {
    pub start: DateTime<FixedOffset>,
    pub end: DateTime<FixedOffset>,
    pub user: Option<Reference>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Rule {
    pub escalation_delay_in_minutes: i64,
    pub targets: Vec<Reference>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Policy {
    pub id: String,
    pub name: String,
    pub escalation_rules: Vec<Rule>,
    #[serde(default)]
    pub num_loops: i64,
    #[serde(default)]
    pub teams: Vec<Reference>,
    /// What reading another vendor's object into this shape could not keep, each a sentence
    #[serde(skip)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Service {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub escalation_policy: Option<Reference>,
    #[serde(default)]
    pub integrations: Vec<Reference>,
    #[serde(default)]
    pub teams: Vec<Reference>,
    /// What reading another vendor's object into this shape could not keep, each a sentence
    #[serde(skip)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Integration {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub integration_key: Option<String>,
}

/// The integration types whose senders Quell takes unchanged (Events API v2).
pub fn speaks_events_v2(kind: &str) -> bool {
    kind.trim_end_matches("_reference") == "events_api_v2_inbound_integration"
}

/// A PagerDuty name as a Quell service name: lowercase letters, digits and dashes.
pub fn service_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(63).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "service".into()
    } else {
        out
    }
}

/// How long a turn is, in Quell's words; `None` for a length Quell cannot keep (not whole hours).
pub fn shift_length(seconds: i64) -> Option<ShiftLength> {
    match seconds {
        86_400 => Some(ShiftLength::Day),
        604_800 => Some(ShiftLength::Week),
        s if s > 0 && s % 3600 == 0 && s / 3600 <= 8760 => Some(ShiftLength::Hours {
            hours: (s / 3600) as u32,
        }),
        _ => None,
    }
}

fn weekday(n: u32) -> Option<Weekday> {
    Some(match n {
        1 => Weekday::Mon,
        2 => Weekday::Tue,
        3 => Weekday::Wed,
        4 => Weekday::Thu,
        5 => Weekday::Fri,
        6 => Weekday::Sat,
        7 => Weekday::Sun,
        _ => return None,
    })
}

/// A layer's restrictions as Quell's windows: each day-long piece of a restriction is a window
/// that opens on its day, and pieces with the same hours share one window (their days
/// together). `None` inside: no restriction (on call all the time). An error says which
/// restriction cannot be read.
pub fn windows(restrictions: &[PdRestriction]) -> Result<Vec<Option<Restriction>>, String> {
    if restrictions.is_empty() {
        return Ok(vec![None]);
    }
    const DAY: i64 = 86_400;
    let midnight = NaiveTime::MIN;
    // (day, from, to): to = midnight closes at the end of the day
    let mut pieces: Vec<(Option<Weekday>, NaiveTime, NaiveTime)> = Vec::new();
    for (n, r) in restrictions.iter().enumerate() {
        let start = NaiveTime::parse_from_str(r.start_time_of_day.trim(), "%H:%M:%S")
            .or_else(|_| NaiveTime::parse_from_str(r.start_time_of_day.trim(), "%H:%M"))
            .map_err(|_| {
                format!(
                    "restriction {n}: start_time_of_day {:?}",
                    r.start_time_of_day
                )
            })?;
        let d = r.duration_seconds;
        match r.kind.as_str() {
            "daily_restriction" if (1..=DAY).contains(&d) => {
                let end = start + Duration::seconds(d % DAY);
                // A whole day is the window that opens and closes at the same time.
                pieces.push((None, start, end));
            }
            "weekly_restriction" if (1..=7 * DAY).contains(&d) => {
                let first = r
                    .start_day_of_week
                    .and_then(weekday)
                    .ok_or_else(|| format!("restriction {n}: start_day_of_week"))?;
                if d == 7 * DAY {
                    return Ok(vec![None]);
                }
                // Walk the restriction a day at a time from its start.
                let mut day = first;
                let mut from = start;
                let mut left = d;
                while left > 0 {
                    let to_midnight = DAY - i64::from(from.num_seconds_from_midnight());
                    if left >= to_midnight {
                        pieces.push((Some(day), from, midnight));
                        left -= to_midnight;
                        day = day.succ();
                        from = midnight;
                    } else {
                        pieces.push((Some(day), from, from + Duration::seconds(left)));
                        left = 0;
                    }
                }
            }
            other => {
                return Err(format!(
                    "restriction {n}: {other} of {d} seconds is not one PagerDuty documents"
                ));
            }
        }
    }
    // An every-day piece covers all seven days; days join under the same hours.
    let mut by_hours: Vec<((NaiveTime, NaiveTime), Vec<Weekday>, bool)> = Vec::new();
    for (day, from, to) in pieces {
        let at = match by_hours.iter_mut().position(|(h, _, _)| *h == (from, to)) {
            Some(i) => i,
            None => {
                by_hours.push(((from, to), Vec::new(), false));
                by_hours.len() - 1
            }
        };
        match day {
            None => by_hours[at].2 = true,
            Some(d) if !by_hours[at].1.contains(&d) => by_hours[at].1.push(d),
            Some(_) => {}
        }
    }
    Ok(by_hours
        .into_iter()
        .map(|((from, to), mut days, every)| {
            if every || days.len() == 7 {
                days.clear();
            }
            days.sort_by_key(Weekday::num_days_from_monday);
            Some(Restriction { days, from, to })
        })
        .collect())
}

/// What a schedule becomes, and what of it could not come along.
#[derive(Debug, Clone, PartialEq)]
pub struct Layers {
    /// Lowest first, as Quell orders them
    pub layers: Vec<LayerDoc>,
    pub overrides: Vec<OverrideDoc>,
    /// What differs from PagerDuty, each a sentence
    pub caveats: Vec<String>,
}

/// A schedule's layers (as PagerDuty's `GET` lists them: `highest_first` when its first layer
/// wins) and its overrides still ahead at `now`, with people named by `handles` (PagerDuty's
/// user id → handle). An error says why the schedule cannot be imported at all.
pub fn schedule_layers(
    vendor: &str,
    s: &Schedule,
    overrides: &[PdOverride],
    handles: &HashMap<String, String>,
    now: DateTime<Utc>,
    highest_first: bool,
) -> Result<Layers, String> {
    let zone: chrono_tz::Tz = s
        .time_zone
        .parse()
        .map_err(|_| format!("its time zone {:?} is not one Quell knows", s.time_zone))?;
    let mut caveats = s.notes.clone();
    let mut ordered: Vec<&Layer> = s.schedule_layers.iter().collect();
    if highest_first {
        ordered.reverse();
    }
    let mut layers = Vec::new();
    for l in ordered {
        let label = if l.name.is_empty() { &l.id } else { &l.name };
        if l.end.is_some_and(|e| e <= now) {
            caveats.push(format!("layer {label:?} ended; not imported"));
            continue;
        }
        let length = shift_length(l.rotation_turn_length_seconds).ok_or_else(|| {
            format!(
                "layer {label:?} turns every {} seconds; Quell's shifts are whole hours",
                l.rotation_turn_length_seconds
            )
        })?;
        let people = l
            .users
            .iter()
            .map(|u| {
                handles.get(&u.user.id).cloned().ok_or_else(|| {
                    format!(
                        "layer {label:?} names user {} who is not imported",
                        u.user.id
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(end) = l.end {
            caveats.push(format!(
                "layer {label:?} ends at {end} in {vendor}; Quell's layers do not end, so it keeps rotating after"
            ));
        }
        let mut start = l.rotation_virtual_start.with_timezone(&zone).naive_local();
        let mut people = people;
        // A layer that starts later starts at its first handoff from then, with whoever's
        // turn that is first (the part turn before it is said).
        if l.start > now && l.start > l.rotation_virtual_start && !people.is_empty() {
            let turn = l.rotation_turn_length_seconds;
            let turns = (l.start - l.rotation_virtual_start)
                .num_seconds()
                .div_euclid(turn)
                + i64::from((l.start - l.rotation_virtual_start).num_seconds() % turn != 0);
            start = match length {
                ShiftLength::Day => start + Duration::days(turns),
                ShiftLength::Week => start + Duration::weeks(turns),
                ShiftLength::Hours { .. } => (l.rotation_virtual_start
                    + Duration::seconds(turns * turn))
                .with_timezone(&zone)
                .naive_local(),
            };
            let by = turns.rem_euclid(people.len() as i64) as usize;
            people.rotate_left(by);
            caveats.push(format!(
                "layer {label:?} starts at {} in {vendor}; in Quell from its first handoff after that, {start} {}",
                l.start, s.time_zone
            ));
        }
        if matches!(length, ShiftLength::Hours { .. }) && observes_dst(zone) {
            caveats.push(format!(
                "layer {label:?} turns every {} hours, counted as hours across daylight-saving changes in {}",
                l.rotation_turn_length_seconds / 3600,
                s.time_zone
            ));
        }
        for restriction in windows(&l.restrictions).map_err(|e| format!("layer {label:?}: {e}"))? {
            layers.push(LayerDoc {
                length,
                start,
                time_zone: s.time_zone.clone(),
                people: people.clone(),
                restriction,
            });
        }
    }
    if layers.len() > 20 {
        return Err(format!(
            "its restrictions need {} Quell layers; a schedule has at most 20",
            layers.len()
        ));
    }
    let mut kept = Vec::new();
    for o in overrides.iter().filter(|o| o.end > now) {
        match handles.get(&o.user.id) {
            Some(h) => kept.push(OverrideDoc {
                from: o.start.with_timezone(&Utc),
                to: o.end.with_timezone(&Utc),
                replaces: None,
                with: h.clone(),
            }),
            None => caveats.push(format!(
                "the override from {} names user {} who is not imported; left out",
                o.start, o.user.id
            )),
        }
    }
    kept.sort_by_key(|o| o.from);
    // Overrides that overlap: the later one takes over from its start.
    let mut clipped = 0;
    for n in 1..kept.len() {
        let next = kept[n].from;
        if kept[n - 1].to > next {
            kept[n - 1].to = next;
            clipped += 1;
        }
    }
    kept.retain(|o| o.from < o.to);
    if clipped > 0 {
        caveats.push(format!(
            "{clipped} override(s) overlapped the next; each ends where the next begins"
        ));
    }
    Ok(Layers {
        layers,
        overrides: kept,
        caveats,
    })
}

/// Whether a zone's offset changes over the year (daylight-saving time).
fn observes_dst(zone: chrono_tz::Tz) -> bool {
    use chrono::{Offset, TimeZone};
    let at = |m| {
        zone.offset_from_utc_datetime(
            &chrono::NaiveDate::from_ymd_opt(2027, m, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .unwrap_or_default(),
        )
        .fix()
    };
    at(1) != at(7)
}

/// A vendor's rendering (in order of start) as spans of handles, one person's entries that
/// touch or overlap joined; an entry
/// with nobody is a gap.
pub fn rendered(entries: &[Entry], handles: &HashMap<String, String>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for e in entries {
        let Some(user) = &e.user else { continue };
        let person = handles
            .get(&user.id)
            .cloned()
            .unwrap_or_else(|| format!("{} (not imported)", user.id));
        let (from, to) = (e.start.with_timezone(&Utc), e.end.with_timezone(&Utc));
        // One person's entries that touch or overlap (two rotations at once) are one span.
        match out.last_mut() {
            Some(last) if last.person == person && from <= last.to => last.to = last.to.max(to),
            _ => out.push(Span { person, from, to }),
        }
    }
    out
}

/// Where two renderings of the same period first differ, said for a person; `None` when they
/// agree.
pub fn first_difference(ours: &[Span], theirs: &[Span], vendor: &str) -> Option<String> {
    // Quell has one person on call at a time; a vendor may have several.
    if let Some(w) = theirs
        .windows(2)
        .find(|w| w[1].from < w[0].to && w[1].person != w[0].person)
    {
        return Some(format!(
            "{} and {} are on call at once in {vendor} from {}; Quell has one person on call at a time",
            w[0].person,
            w[1].person,
            w[1].from.format("%Y-%m-%d %H:%M")
        ));
    }
    for (n, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a != b {
            return Some(format!(
                "shift {} is {} {}–{} in Quell but {} {}–{} in {vendor}",
                n + 1,
                a.person,
                a.from.format("%Y-%m-%d %H:%M"),
                a.to.format("%Y-%m-%d %H:%M"),
                b.person,
                b.from.format("%Y-%m-%d %H:%M"),
                b.to.format("%Y-%m-%d %H:%M")
            ));
        }
    }
    match ours.len().cmp(&theirs.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!(
            "Quell has {} more shifts than {vendor}, from {}",
            ours.len() - theirs.len(),
            ours[theirs.len()].from.format("%Y-%m-%d %H:%M")
        )),
        std::cmp::Ordering::Less => Some(format!(
            "{vendor} has {} more shifts than Quell, from {}",
            theirs.len() - ours.len(),
            theirs[ours.len()].from.format("%Y-%m-%d %H:%M")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn restriction(kind: &str, start: &str, seconds: i64, day: Option<u32>) -> PdRestriction {
        PdRestriction {
            kind: kind.into(),
            start_time_of_day: start.into(),
            duration_seconds: seconds,
            start_day_of_week: day,
        }
    }

    fn t(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn restrictions_become_windows_with_the_same_hours_sharing_a_layer() {
        // PagerDuty's documented example: every day 08:00 for nine hours.
        let daily = windows(&[restriction("daily_restriction", "08:00:00", 32_400, None)]);
        assert_eq!(
            daily.unwrap(),
            vec![Some(Restriction {
                days: vec![],
                from: t(8, 0),
                to: t(17, 0)
            })]
        );
        // Overnight, and a whole day (no restriction at all in effect).
        let night = windows(&[restriction("daily_restriction", "20:00:00", 43_200, None)]);
        assert_eq!(night.unwrap()[0].as_ref().unwrap().to, t(8, 0));
        // Monday 09:00 to Friday 17:30 in one weekly restriction: Monday from 09:00, three whole
        // days, Friday until 17:30.
        let week = windows(&[restriction(
            "weekly_restriction",
            "09:00:00",
            4 * 86_400 + 8 * 3600 + 1800,
            Some(1),
        )])
        .unwrap();
        let w = |days: Vec<Weekday>, from, to| Some(Restriction { days, from, to });
        use Weekday::*;
        assert_eq!(
            week,
            vec![
                w(vec![Mon], t(9, 0), t(0, 0)),
                w(vec![Tue, Wed, Thu], t(0, 0), t(0, 0)),
                w(vec![Fri], t(0, 0), t(17, 30)),
            ]
        );
        // Five weekly restrictions of the same hours are one window over five days.
        let weekdays: Vec<_> = (1..=5)
            .map(|d| restriction("weekly_restriction", "09:00:00", 28_800, Some(d)))
            .collect();
        assert_eq!(
            windows(&weekdays).unwrap(),
            vec![w(vec![Mon, Tue, Wed, Thu, Fri], t(9, 0), t(17, 0))]
        );
        assert_eq!(windows(&[]).unwrap(), vec![None]);
        assert!(windows(&[restriction("monthly", "09:00:00", 60, None)]).is_err());
        assert!(windows(&[restriction("weekly_restriction", "09:00:00", 60, Some(9))]).is_err());
    }

    #[test]
    fn turn_lengths_names_and_renderings() {
        assert_eq!(shift_length(86_400), Some(ShiftLength::Day));
        assert_eq!(shift_length(604_800), Some(ShiftLength::Week));
        assert_eq!(shift_length(43_200), Some(ShiftLength::Hours { hours: 12 }));
        assert_eq!(shift_length(3605), None);
        assert_eq!(
            service_name("My Application Service"),
            "my-application-service"
        );
        assert_eq!(service_name("  Checkout / API (EU) "), "checkout-api-eu");
        assert_eq!(service_name("***"), "service");
        assert!(speaks_events_v2(
            "events_api_v2_inbound_integration_reference"
        ));
        assert!(!speaks_events_v2(
            "generic_email_inbound_integration_reference"
        ));

        let at = |h: u32| {
            Utc.with_ymd_and_hms(2030, 1, 7, h, 0, 0)
                .unwrap()
                .fixed_offset()
        };
        let r = |id: &str| {
            Some(Reference {
                id: id.into(),
                ..Default::default()
            })
        };
        let entries = vec![
            Entry {
                start: at(0),
                end: at(8),
                user: r("P1"),
            },
            Entry {
                start: at(8),
                end: at(9),
                user: r("P1"),
            },
            Entry {
                start: at(9),
                end: at(10),
                user: None,
            },
            Entry {
                start: at(10),
                end: at(12),
                user: r("P2"),
            },
        ];
        let handles: HashMap<String, String> =
            [("P1".to_owned(), "ana".to_owned())].into_iter().collect();
        let spans = rendered(&entries, &handles);
        let span = |p: &str, a: u32, b: u32| Span {
            person: p.into(),
            from: at(a).to_utc(),
            to: at(b).to_utc(),
        };
        assert_eq!(
            spans,
            vec![span("ana", 0, 9), span("P2 (not imported)", 10, 12)]
        );
        assert_eq!(first_difference(&spans, &spans, "PagerDuty"), None);
        let other = vec![span("ana", 0, 9), span("dev", 10, 12)];
        assert!(
            first_difference(&spans, &other, "PagerDuty")
                .unwrap()
                .starts_with("shift 2 is")
        );
        assert!(
            first_difference(&spans[..1], &other, "PagerDuty")
                .unwrap()
                .contains("PagerDuty has 1 more")
        );
    }

    fn at(t: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(t).unwrap()
    }

    #[test]
    fn a_later_layer_starts_at_its_first_handoff_and_overlapping_overrides_give_way() {
        let user = |id: &str| LayerUser {
            user: Reference {
                id: id.into(),
                ..Default::default()
            },
        };
        let layer = |start: &str, turn: i64| Layer {
            id: "L".into(),
            name: "Layer 1".into(),
            start: at(start),
            end: None,
            rotation_virtual_start: at("2030-01-07T09:00:00+01:00"),
            rotation_turn_length_seconds: turn,
            users: vec![user("A"), user("B"), user("C")],
            restrictions: vec![],
        };
        let handles: HashMap<String, String> = [("A", "ana"), ("B", "bo"), ("C", "cy")]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect();
        let now = at("2030-01-01T00:00:00Z").to_utc();
        let s = Schedule {
            teams: vec![],
            notes: vec![],
            id: "S".into(),
            name: "Primary".into(),
            time_zone: "Europe/Berlin".into(),
            description: None,
            // Starts on the 8th at noon: its first handoff after is the 9th at 09:00, Cy's.
            schedule_layers: vec![layer("2030-01-08T12:00:00+01:00", 86_400)],
        };
        let o = |from: &str, to: &str, who: &str| PdOverride {
            id: String::new(),
            start: at(from),
            end: at(to),
            user: Reference {
                id: who.into(),
                ..Default::default()
            },
        };
        let overrides = vec![
            o("2030-01-20T08:00:00Z", "2030-01-20T18:00:00Z", "A"),
            o("2030-01-20T12:00:00Z", "2030-01-20T14:00:00Z", "B"),
            o("2029-12-20T08:00:00Z", "2029-12-21T08:00:00Z", "C"),
        ];
        let l = schedule_layers("PagerDuty", &s, &overrides, &handles, now, true).unwrap();
        let first = &l.layers[0];
        assert_eq!(first.start.to_string(), "2030-01-09 09:00:00");
        assert_eq!(first.people, vec!["cy", "ana", "bo"]);
        assert!(
            l.caveats.iter().any(|c| c.contains("first handoff")),
            "{:?}",
            l.caveats
        );
        // The past override is gone; the first of the two ends where the second begins.
        let spans: Vec<(String, String)> = l
            .overrides
            .iter()
            .map(|o| {
                (
                    o.with.clone(),
                    format!("{}–{}", o.from.format("%d %H:%M"), o.to.format("%d %H:%M")),
                )
            })
            .collect();
        assert_eq!(
            spans,
            vec![
                ("ana".to_owned(), "20 08:00–20 12:00".to_owned()),
                ("bo".to_owned(), "20 12:00–20 14:00".to_owned())
            ]
        );
        // Twelve-hour turns in a zone with daylight saving are said to count hours.
        let twelve = Schedule {
            schedule_layers: vec![layer("2029-01-01T00:00:00Z", 43_200)],
            ..s.clone()
        };
        let l = schedule_layers("PagerDuty", &twelve, &[], &handles, now, true).unwrap();
        assert!(
            l.caveats.iter().any(|c| c.contains("daylight-saving")),
            "{:?}",
            l.caveats
        );
        let utc = Schedule {
            time_zone: "UTC".into(),
            ..twelve
        };
        let l = schedule_layers("PagerDuty", &utc, &[], &handles, now, true).unwrap();
        assert!(l.caveats.is_empty(), "{:?}", l.caveats);
        // A user not imported cannot be in a layer.
        let mut fewer = handles.clone();
        fewer.remove("B");
        assert!(
            schedule_layers("PagerDuty", &s, &[], &fewer, now, true)
                .unwrap_err()
                .contains("user B")
        );
    }
}
