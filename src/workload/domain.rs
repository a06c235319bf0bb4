//! On-call load, the rules: from who was on call when (spans), the pages each person received,
//! and the incidents they acknowledged first, the figures a manager reads to see who carries
//! the rota — per person in their own time zone, and per team as the sum of its members.

use chrono::{DateTime, Duration, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::domain::DomainError;

/// The periods offered on the page; the API takes any from 1 to 365 days.
pub const PERIODS: [i64; 2] = [30, 90];

/// The days asked for: 1 to 365, 30 when not given.
pub fn days(asked: Option<&str>) -> Result<i64, DomainError> {
    let Some(text) = asked.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(30);
    };
    text.parse::<i64>()
        .ok()
        .filter(|d| (1..=365).contains(d))
        .ok_or_else(|| {
            DomainError::invalid(
                "days",
                format!("{text:?} is not a number of days from 1 to 365 (30 and 90 are usual)"),
            )
        })
}

/// The day is 08:00 to 20:00 in the person's zone; a page outside it is off hours.
const DAY: (u32, u32) = (8, 20);
/// Sleep is 22:00 to 06:00 in the person's zone; a night with a page in it is interrupted.
const NIGHT: (u32, u32) = (22, 6);

/// Whether a page at `t` came outside 08:00–20:00 where the person lives.
pub fn off_hours(t: DateTime<Utc>, zone: Tz) -> bool {
    let h = t.with_timezone(&zone).hour();
    h < DAY.0 || h >= DAY.1
}

/// The night a page at `t` woke the person in, named by the date it began on; none when the
/// page came outside 22:00–06:00 in their zone.
pub fn night_of(t: DateTime<Utc>, zone: Tz) -> Option<NaiveDate> {
    let local = t.with_timezone(&zone).naive_local();
    let h = local.hour();
    (h >= NIGHT.0 || h < NIGHT.1).then(|| (local - Duration::hours(12)).date())
}

/// From one instant to another.
pub type Period = (DateTime<Utc>, DateTime<Utc>);

/// Hours covered by `spans` (a person's, from every schedule) within `from`..`to`, each
/// instant once however many schedules had them on call at it.
pub fn hours_on_call(spans: &[Period], from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    let mut clipped: Vec<_> = spans
        .iter()
        .map(|(a, b)| ((*a).max(from), (*b).min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    clipped.sort();
    let mut total = Duration::zero();
    let mut open: Option<Period> = None;
    for (a, b) in clipped {
        open = match open {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = open {
        total += e - s;
    }
    total.num_seconds() as f64 / 3600.0
}

/// An incident a person acknowledged first: when it was detected and when they acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub detected: DateTime<Utc>,
    pub acknowledged: DateTime<Utc>,
}

/// The figures of one person or one team over the period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Figures {
    /// Hours on call (spans of every schedule, each instant once), to one decimal
    pub hours_on_call: f64,
    /// Pages received: each page (one incident, one step) counted once however many of its
    /// messages were delivered
    pub pages: i64,
    /// Pages received outside 08:00–20:00 in the person's zone
    pub pages_off_hours: i64,
    /// Nights (22:00–06:00 in the person's zone) with at least one page
    pub nights_interrupted: i64,
    /// Incidents the person acknowledged first
    pub incidents_acknowledged: i64,
    /// Mean time to acknowledge those (acknowledged − detected), in seconds
    pub mtta_seconds: Option<i64>,
    /// The sum behind the mean, for a team's figure
    #[serde(skip)]
    ack_seconds: i64,
}

impl Figures {
    /// A person's figures from their spans, the instants their pages arrived, and their
    /// acknowledgements, in their zone.
    pub fn of_person(hours: f64, pages: &[DateTime<Utc>], acks: &[Ack], zone: Tz) -> Self {
        let mut nights: Vec<NaiveDate> = pages.iter().filter_map(|t| night_of(*t, zone)).collect();
        nights.sort();
        nights.dedup();
        let ack_seconds: i64 = acks
            .iter()
            .map(|a| (a.acknowledged - a.detected).num_seconds().max(0))
            .sum();
        let mut f = Self {
            hours_on_call: (hours * 10.0).round() / 10.0,
            pages: pages.len() as i64,
            pages_off_hours: pages.iter().filter(|t| off_hours(**t, zone)).count() as i64,
            nights_interrupted: nights.len() as i64,
            incidents_acknowledged: acks.len() as i64,
            mtta_seconds: None,
            ack_seconds,
        };
        f.settle();
        f
    }

    /// A team's figures: its members' summed (a night is each member's own), the mean over
    /// every acknowledgement of theirs.
    pub fn of_team<'a>(members: impl IntoIterator<Item = &'a Figures>) -> Self {
        let mut f = Self::default();
        for m in members {
            f.hours_on_call += m.hours_on_call;
            f.pages += m.pages;
            f.pages_off_hours += m.pages_off_hours;
            f.nights_interrupted += m.nights_interrupted;
            f.incidents_acknowledged += m.incidents_acknowledged;
            f.ack_seconds += m.ack_seconds;
        }
        f.hours_on_call = (f.hours_on_call * 10.0).round() / 10.0;
        f.settle();
        f
    }

    fn settle(&mut self) {
        self.mtta_seconds = (self.incidents_acknowledged > 0)
            .then(|| (self.ack_seconds as f64 / self.incidents_acknowledged as f64).round() as i64);
    }

    /// The mean time to acknowledge as people read it (`12 min`), or a dash.
    pub fn mtta_text(&self) -> String {
        self.mtta_seconds
            .map_or_else(|| "–".to_owned(), crate::domain::format_minutes)
    }
}

/// One row of a horizontal bar chart: a name and its parts, drawn end to end.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The name in full, for the row's title
    pub name: String,
    /// The name as drawn: shortened when too wide
    pub label: String,
    /// Where the row's bar and label sit
    pub y: i64,
    /// Each part's start and width, in the chart's units
    pub parts: Vec<(i64, i64)>,
    /// The figure written after the bar, and where
    pub value: String,
    pub value_x: i64,
}

/// A horizontal bar chart: a row per name, bars from a common left edge, scaled to the
/// largest total.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub width: i64,
    pub height: i64,
    pub left: i64,
    pub rows: Vec<Row>,
}

const WIDTH: i64 = 480;
const ROW: i64 = 26;
const BAR: i64 = 16;
const FONT: f64 = 14.0;
/// How much wider bold figures run than [`crate::domain::text_width`] estimates.
const BOLD: f64 = 1.17;

/// The chart of `rows` (a name, its parts and the figure to write): names as wide as the widest
/// needs (at most a third of the chart, longer ones shortened), the figure after each bar.
pub fn chart(rows: &[(String, Vec<f64>, String)]) -> Chart {
    let width_of = |t: &str| crate::domain::text_width(t, FONT).ceil() as i64;
    let short = |t: &str| -> String {
        if width_of(t) <= WIDTH / 3 {
            return t.to_owned();
        }
        let mut s: String = t.to_owned();
        while !s.is_empty() && width_of(&format!("{s}…")) > WIDTH / 3 {
            s.pop();
        }
        format!("{s}…")
    };
    let labels: Vec<String> = rows.iter().map(|(l, _, _)| short(l)).collect();
    let left = labels.iter().map(|l| width_of(l)).max().unwrap_or(0) + 8;
    // The figures are bold (600): in the fonts browsers fall back to (DejaVu Sans Bold) a
    // sixth wider than the estimate, which is for regular text.
    let room = rows
        .iter()
        .map(|(_, _, v)| (width_of(v) as f64 * BOLD).ceil() as i64)
        .max()
        .unwrap_or(0)
        + 6;
    let plot = (WIDTH - left - room).max(1);
    let max = rows
        .iter()
        .map(|(_, parts, _)| parts.iter().sum::<f64>())
        .fold(0.0_f64, f64::max);
    let scale = if max > 0.0 { plot as f64 / max } else { 0.0 };
    let drawn = rows
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(n, ((_, parts, value), label))| {
            let mut x = left;
            let parts = parts
                .iter()
                .map(|p| {
                    let w = (p * scale).round() as i64;
                    let part = (x, w);
                    x += w;
                    part
                })
                .collect();
            Row {
                name: rows[n].0.clone(),
                label,
                y: n as i64 * ROW + (ROW - BAR) / 2,
                parts,
                value: value.clone(),
                value_x: x + 6,
            }
        })
        .collect();
    Chart {
        width: WIDTH,
        height: (rows.len() as i64 * ROW).max(ROW),
        left,
        rows: drawn,
    }
}

impl Chart {
    /// Where a row's text sits: its bar's middle, a little down for the font's baseline.
    pub fn text_y(&self, row: &Row) -> i64 {
        row.y + BAR / 2 + 5
    }

    pub fn bar(&self) -> i64 {
        BAR
    }
}

/// A CSV cell a spreadsheet never reads as a formula: a leading `=`, `+`, `-`, `@`, tab or
/// carriage return (or a full-width `＝`, `＋`, `－`, `＠`) gets a `'` (the csv writer does the
/// quoting).
pub fn not_a_formula(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠']) {
        format!("'{text}")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(d: u32, h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, d, h, m, 0).unwrap()
    }

    #[test]
    fn days_are_one_to_a_year() {
        assert_eq!(days(None), Ok(30));
        assert_eq!(days(Some(" 90 ")), Ok(90));
        for bad in ["0", "366", "x", "-5"] {
            assert!(
                matches!(days(Some(bad)), Err(DomainError::Invalid { field, .. }) if field == "days")
            );
        }
    }

    #[test]
    fn hours_count_each_instant_once_inside_the_period() {
        let spans = [
            (t(1, 0, 0), t(1, 12, 0)),
            // the same person on a second schedule, overlapping by two hours
            (t(1, 10, 0), t(1, 14, 0)),
            (t(2, 0, 0), t(3, 0, 0)),
        ];
        assert_eq!(hours_on_call(&spans, t(1, 0, 0), t(5, 0, 0)), 38.0);
        // clipped to the period
        assert_eq!(hours_on_call(&spans, t(1, 6, 0), t(2, 6, 0)), 14.0);
        assert_eq!(hours_on_call(&[], t(1, 0, 0), t(2, 0, 0)), 0.0);
    }

    #[test]
    fn days_and_nights_are_the_persons_own() {
        let lisbon = chrono_tz::Europe::Lisbon; // UTC+0 in November
        let tokyo = chrono_tz::Asia::Tokyo; // UTC+9
        assert!(!off_hours(t(3, 8, 0), lisbon));
        assert!(!off_hours(t(3, 19, 59), lisbon));
        assert!(off_hours(t(3, 20, 0), lisbon));
        assert!(off_hours(t(3, 7, 59), lisbon));
        // 10:00 UTC is 19:00 in Tokyo (day), 12:00 UTC is 21:00 there (off hours)
        assert!(!off_hours(t(3, 10, 0), tokyo));
        assert!(off_hours(t(3, 12, 0), tokyo));
        // 23:30 on the 3rd and 02:00 on the 4th are one night, the 3rd's; 21:00 is no night
        assert_eq!(
            night_of(t(3, 23, 30), lisbon),
            NaiveDate::from_ymd_opt(2026, 11, 3)
        );
        assert_eq!(
            night_of(t(4, 2, 0), lisbon),
            NaiveDate::from_ymd_opt(2026, 11, 3)
        );
        assert_eq!(night_of(t(3, 21, 0), lisbon), None);
        assert_eq!(night_of(t(4, 6, 0), lisbon), None);
        // 15:00 UTC is midnight in Tokyo
        assert_eq!(
            night_of(t(3, 15, 0), tokyo),
            NaiveDate::from_ymd_opt(2026, 11, 3)
        );
    }

    #[test]
    fn a_persons_figures_and_their_teams() {
        let lisbon = chrono_tz::Europe::Lisbon;
        let pages = [
            t(3, 10, 0),
            t(3, 23, 30),
            t(4, 2, 0),
            t(9, 3, 0),
            t(9, 21, 0),
        ];
        let acks = [
            Ack {
                detected: t(3, 10, 0),
                acknowledged: t(3, 10, 4),
            },
            Ack {
                detected: t(9, 3, 0),
                acknowledged: t(9, 3, 10),
            },
        ];
        let ana = Figures::of_person(38.04, &pages, &acks, lisbon);
        assert_eq!(ana.hours_on_call, 38.0);
        assert_eq!(ana.pages, 5);
        assert_eq!(ana.pages_off_hours, 4);
        assert_eq!(ana.nights_interrupted, 2);
        assert_eq!(ana.incidents_acknowledged, 2);
        assert_eq!(ana.mtta_seconds, Some(420));
        let ben = Figures::of_person(
            10.0,
            &[t(5, 12, 0)],
            &[Ack {
                detected: t(5, 12, 0),
                acknowledged: t(5, 12, 1),
            }],
            lisbon,
        );
        let team = Figures::of_team([&ana, &ben]);
        assert_eq!(team.hours_on_call, 48.0);
        assert_eq!(team.pages, 6);
        assert_eq!(team.nights_interrupted, 2);
        // the mean over all three acknowledgements, not the mean of the two means
        assert_eq!(team.mtta_seconds, Some((240 + 600 + 60) / 3));
        assert_eq!(Figures::of_team([]).mtta_seconds, None);
    }

    #[test]
    fn bars_scale_to_the_largest_and_leave_room_for_names_and_figures() {
        let rows = vec![
            ("Ana".to_owned(), vec![6.0, 4.0], "10".to_owned()),
            (
                "Bartholomew Featherstonehaugh-Smythe".to_owned(),
                vec![5.0, 0.0],
                "5".to_owned(),
            ),
            ("Cy".to_owned(), vec![0.0, 0.0], "0".to_owned()),
        ];
        let c = chart(&rows);
        assert!(
            c.rows[1].label.ends_with('…') && c.left <= WIDTH / 3 + 8,
            "{c:?}"
        );
        let ana = &c.rows[0];
        let end = ana.parts[1].0 + ana.parts[1].1;
        assert_eq!(ana.value_x, end + 6);
        let ten = crate::domain::text_width("10", FONT);
        assert!(
            ana.value_x as f64 + ten <= WIDTH as f64,
            "the figure fits: {c:?}"
        );
        assert_eq!(ana.parts[0].0, c.left);
        assert_eq!(ana.parts[1].0, c.left + ana.parts[0].1);
        // half the largest total, to the unit each part is rounded to
        let half = c.rows[1].parts[0].1 * 2 - (ana.parts[0].1 + ana.parts[1].1);
        assert!(half.abs() <= 2, "{c:?}");
        assert_eq!(c.rows[2].parts[0].1, 0);
        assert_eq!(c.height, 3 * ROW);
        assert_eq!(chart(&[]).rows.len(), 0);
    }

    #[test]
    fn csv_cells_are_never_formulas() {
        assert_eq!(not_a_formula("Ana Ribeiro"), "Ana Ribeiro");
        assert_eq!(not_a_formula("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(not_a_formula("@SUM"), "'@SUM");
        assert_eq!(not_a_formula("\t=1"), "'\t=1");
        assert_eq!(not_a_formula("＝1+1"), "'＝1+1");
    }
}
