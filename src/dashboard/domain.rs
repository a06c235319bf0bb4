//! The trends' figures per day and how they are drawn. Pure.

use chrono::NaiveDate;

use crate::domain::format_minutes;

/// One day's figures over the incidents detected that day (UTC).
#[derive(Debug, Clone, PartialEq)]
pub struct Day {
    pub day: NaiveDate,
    pub opened: i64,
    /// Mean acknowledged − detected of those acknowledged
    pub ack_secs: Option<f64>,
    /// Mean resolved − detected of those resolved
    pub resolve_secs: Option<f64>,
}

/// Which trend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    Opened,
    Acknowledge,
    Resolve,
}

impl Trend {
    pub const ALL: [Trend; 3] = [Self::Opened, Self::Acknowledge, Self::Resolve];

    pub fn title(self) -> &'static str {
        match self {
            Self::Opened => "Incidents",
            Self::Acknowledge => "Time to acknowledge",
            Self::Resolve => "Time to resolve",
        }
    }

    pub fn definition(self) -> &'static str {
        match self {
            Self::Opened => {
                "Incidents detected each day (UTC), whatever their severity or how they were opened."
            }
            Self::Acknowledge => {
                "Mean of acknowledged − detected over the incidents detected that day and acknowledged; days without one are blank."
            }
            Self::Resolve => {
                "Mean of resolved − detected over the incidents detected that day and resolved; days without one are blank."
            }
        }
    }

    fn value(self, d: &Day) -> Option<f64> {
        match self {
            Self::Opened => Some(d.opened as f64),
            Self::Acknowledge => d.ack_secs,
            Self::Resolve => d.resolve_secs,
        }
    }

    fn text(self, v: f64) -> String {
        match self {
            Self::Opened => format!("{}", v.round() as i64),
            _ => format_minutes(v.round() as i64),
        }
    }
}

pub const WIDTH: i64 = 300;
pub const HEIGHT: i64 = 90;
/// Room under the bars for the first and last day.
const AXIS: i64 = 16;

/// A day's bar in SVG user units, with its day and figure (said on hover and in the table of
/// each day's figure).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    /// The day, `2026-11-03`
    pub day: String,
    /// The day's figure, written out
    pub value: String,
}

impl Bar {
    /// What the bar says on hover: `2026-11-03: 5 min`.
    pub fn title(&self) -> String {
        format!("{}: {}", self.day, self.value)
    }
}

/// A small bar chart of one trend over the days.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub trend: Trend,
    /// How many days it spans
    pub span: usize,
    pub bars: Vec<Bar>,
    /// The whole period's figure: total incidents, or the mean over the period's incidents
    pub summary: String,
    pub first_day: String,
    pub last_day: String,
    /// The largest day's figure, the scale's top
    pub top: String,
}

/// The chart of `trend` over `days` (oldest first), with the mean over the whole period's
/// incidents (`period_mean`, for the times). Bars scale to the largest day; a day without a
/// figure has no bar.
pub fn chart(trend: Trend, days: &[Day], period_mean: Option<f64>) -> Chart {
    let values: Vec<Option<f64>> = days.iter().map(|d| trend.value(d)).collect();
    let span = days.len();
    let period = match span {
        1 => "1 day".to_owned(),
        n => format!("{n} days"),
    };
    let max = values.iter().flatten().copied().fold(0.0_f64, f64::max);
    let slot = if days.is_empty() {
        0
    } else {
        WIDTH / days.len() as i64
    };
    let width = (slot * 7 / 10).max(2);
    let plot = HEIGHT - AXIS;
    let bars = days
        .iter()
        .zip(&values)
        .enumerate()
        .filter_map(|(n, (d, v))| {
            let v = (*v)?;
            let height = if max > 0.0 {
                ((v / max) * plot as f64)
                    .round()
                    .max(if v > 0.0 { 1.0 } else { 0.0 }) as i64
            } else {
                0
            };
            Some(Bar {
                x: n as i64 * slot + (slot - width) / 2,
                y: plot - height,
                width,
                height,
                day: d.day.format("%Y-%m-%d").to_string(),
                value: trend.text(v),
            })
        })
        .collect();
    let summary = match (trend, period_mean) {
        (Trend::Opened, _) => format!("{} in {period}", days.iter().map(|d| d.opened).sum::<i64>()),
        (_, Some(mean)) => format!("mean {} over {period}", trend.text(mean)),
        (_, None) => format!("none measured in {period}"),
    };
    Chart {
        trend,
        span,
        bars,
        summary,
        first_day: days
            .first()
            .map(|d| d.day.format("%Y-%m-%d").to_string())
            .unwrap_or_default(),
        last_day: days
            .last()
            .map(|d| d.day.format("%Y-%m-%d").to_string())
            .unwrap_or_default(),
        top: trend.text(max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: u32, opened: i64, ack: Option<f64>) -> Day {
        Day {
            day: NaiveDate::from_ymd_opt(2026, 11, n).unwrap(),
            opened,
            ack_secs: ack,
            resolve_secs: None,
        }
    }

    #[test]
    fn bars_scale_to_the_largest_day_and_blank_days_have_none() {
        let days = [
            day(1, 2, Some(600.0)),
            day(2, 0, None),
            day(3, 4, Some(300.0)),
        ];
        let opened = chart(Trend::Opened, &days, None);
        assert_eq!(opened.bars.len(), 3, "a day with no incident is a zero bar");
        assert_eq!(opened.bars[2].height, HEIGHT - AXIS);
        assert_eq!(opened.bars[0].height, (HEIGHT - AXIS) / 2);
        assert_eq!(opened.bars[1].height, 0);
        assert_eq!(opened.summary, "6 in 3 days");
        assert_eq!(opened.bars[0].title(), "2026-11-01: 2");
        let ack = chart(Trend::Acknowledge, &days, Some(500.0));
        assert_eq!(ack.summary, "mean 8 min over 3 days");
        assert_eq!(ack.bars.len(), 2, "no acknowledgement that day, no bar");
        assert_eq!(ack.top, "10 min");
        assert_eq!(ack.bars[1].title(), "2026-11-03: 5 min");
        assert_eq!(
            ack.bars
                .iter()
                .map(|b| (b.day.clone(), b.value.clone()))
                .collect::<Vec<_>>(),
            [
                ("2026-11-01".to_owned(), "10 min".to_owned()),
                ("2026-11-03".to_owned(), "5 min".to_owned())
            ]
        );
        assert_eq!(
            (ack.first_day.as_str(), ack.last_day.as_str()),
            ("2026-11-01", "2026-11-03")
        );
    }

    #[test]
    fn an_empty_period_draws_nothing() {
        let c = chart(Trend::Resolve, &[day(1, 0, None)], None);
        assert!(c.bars.is_empty());
        assert_eq!(c.summary, "none measured in 1 day");
    }
}
