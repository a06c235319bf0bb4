//! What the reports measure, and how their charts are drawn. Pure: the figures come from SQL,
//! the layout from here.

use serde::Serialize;

use crate::domain::{DomainError, format_minutes};

/// The three response metrics, each measured from detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Mean time to acknowledge: acknowledged − detected.
    Mtta,
    /// Mean time to mitigate: mitigated − detected.
    Mttm,
    /// Mean time to resolve: resolved − detected.
    Mttr,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Self::Mtta, Self::Mttm, Self::Mttr];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mtta => "mtta",
            Self::Mttm => "mttm",
            Self::Mttr => "mttr",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == value.to_ascii_lowercase())
            .ok_or_else(|| {
                DomainError::invalid(
                    "metric",
                    format!("{value:?} is not a report; use mtta, mttm or mttr"),
                )
            })
    }

    pub fn title(self) -> &'static str {
        match self {
            Self::Mtta => "Time to acknowledge",
            Self::Mttm => "Time to mitigate",
            Self::Mttr => "Time to resolve",
        }
    }

    /// The definition, written out beside the figures.
    pub fn definition(self) -> &'static str {
        match self {
            Self::Mtta => {
                "From detection (the incident was opened, by alert or by hand) to the first acknowledgement. Incidents never acknowledged are left out."
            }
            Self::Mttm => {
                "From detection to mitigation (customer impact stopped). Incidents not yet mitigated are left out."
            }
            Self::Mttr => "From detection to resolution. Incidents not yet resolved are left out.",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    Service,
    /// The highest severity each incident reached.
    Severity,
    /// The month of detection (UTC).
    Month,
}

impl GroupBy {
    pub const ALL: [GroupBy; 3] = [Self::Service, Self::Severity, Self::Month];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::Severity => "severity",
            Self::Month => "month",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        Self::ALL
            .into_iter()
            .find(|g| g.as_str() == value.to_ascii_lowercase())
            .ok_or_else(|| {
                DomainError::invalid(
                    "group_by",
                    format!("{value:?} is not a grouping; use service, severity or month"),
                )
            })
    }
}

/// One group's figures.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = ReportRow)]
pub struct Row {
    pub group: String,
    pub incidents: i64,
    pub mean_secs: f64,
    pub median_secs: f64,
}

impl Row {
    pub fn mean_text(&self) -> String {
        format_minutes(self.mean_secs.round() as i64)
    }
    pub fn median_text(&self) -> String {
        format_minutes(self.median_secs.round() as i64)
    }
}

/// A bar of a chart, in SVG user units, with what it says under and above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    /// The month as the data names it (`2026-06`), for the bar's title
    pub label: String,
    /// The mean, written out
    pub value: String,
    /// The centre of the bar, where its texts are anchored
    pub label_x: i64,
    /// Where the month's name (its `label`) is centred under the bar (or moved in from the
    /// drawing's edge), when this bar is one that is named
    pub month_x: Option<i64>,
    /// Whether the mean is written above the bar (when every bar's mean fits its slot)
    pub value_shown: bool,
}

impl Bar {
    /// The month named under the bar, if it is named.
    pub fn month(&self) -> Option<&str> {
        self.month_x.map(|_| self.label.as_str())
    }
}

/// A bar chart of the mean per month, laid out for its labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub width: i64,
    pub height: i64,
    /// Where the plot starts: left of it, the y axis's labels, as wide as the widest needs
    pub left: i64,
    /// Where the plot ends: under it, the months
    pub bottom: i64,
    pub ticks: Vec<Tick>,
    pub bars: Vec<Bar>,
}

/// Narrow enough that its 14-unit labels stay readable when a phone shrinks it to ~330 px.
pub const CHART_WIDTH: i64 = 480;
pub const CHART_HEIGHT: i64 = 240;
/// The size of the chart's text, in its units.
pub const FONT: f64 = 14.0;
/// Room under the plot for the months.
const AXIS: i64 = 26;
/// Room above the tallest bar for its figure.
const TOP: i64 = 24;
/// Room right of the last bar.
const RIGHT: i64 = 4;
/// The most months a chart draws.
pub const CHART_MONTHS: usize = 24;

/// A labelled line across the plot at a value of the y axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub y: i64,
    pub label: String,
}

fn width_of(text: &str) -> i64 {
    crate::domain::text_width(text, FONT).ceil() as i64
}

/// The chart of the mean per month (`rows` by month, oldest first). The y axis has zero, half
/// the largest mean and the largest; the plot starts where the widest of their labels ends.
/// Months (`2026-06`, as the tables write them) are named under every bar when the names fit,
/// else under every second or third (always the newest); the figures stand above the bars when each fits its slot, and the table
/// beside the chart has them all.
pub fn chart(rows: &[Row]) -> Chart {
    // The newest two years: older months stay in the table beside the chart.
    let rows = &rows[rows.len().saturating_sub(CHART_MONTHS)..];
    let max = rows.iter().map(|r| r.mean_secs).fold(1.0_f64, f64::max);
    let bottom = CHART_HEIGHT - AXIS;
    let plot = bottom - TOP;
    let ticks: Vec<Tick> = if rows.is_empty() {
        vec![]
    } else {
        [0.0, 0.5, 1.0]
            .into_iter()
            .map(|f| Tick {
                y: bottom - (f * plot as f64).round() as i64,
                label: format_minutes((f * max).round() as i64),
            })
            .collect()
    };
    let left = ticks.iter().map(|t| width_of(&t.label)).max().unwrap_or(0) + 10;
    let n = rows.len().max(1) as i64;
    let slot = (CHART_WIDTH - left - RIGHT) / n;
    let width = (slot * 7 / 10).max(4);
    // Every k-th month is named, counting back from the newest, so names never touch.
    let widest = rows.iter().map(|r| width_of(&r.group)).max().unwrap_or(0) + 6;
    let every = ((widest + slot - 1) / slot.max(1)).max(1) as usize;
    let values_fit = rows.iter().all(|r| width_of(&r.mean_text()) + 4 <= slot);
    let mut bars: Vec<Bar> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let height = ((r.mean_secs / max) * plot as f64).round().max(1.0) as i64;
            let x = left + i as i64 * slot + (slot - width) / 2;
            Bar {
                x,
                y: bottom - height,
                width,
                height,
                label: r.group.clone(),
                value: r.mean_text(),
                label_x: x + width / 2,
                month_x: None,
                value_shown: values_fit,
            }
        })
        .collect();
    // Name every k-th month from the newest, each kept inside the drawing and clear of the
    // next one named.
    // (where the last name kept begins, less the gap names keep between them)
    let mut next_left = CHART_WIDTH + 6;
    for (i, bar) in bars.iter_mut().enumerate().rev() {
        if !(rows.len() - 1 - i).is_multiple_of(every) {
            continue;
        }
        let half = width_of(&bar.label) / 2 + 1;
        let x = bar.label_x.clamp(half, (CHART_WIDTH - half).max(half));
        if x + half + 6 <= next_left {
            bar.month_x = Some(x);
            next_left = x - half;
        }
    }
    Chart {
        width: CHART_WIDTH,
        height: CHART_HEIGHT,
        left,
        bottom,
        ticks,
        bars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(group: &str, mean: f64) -> Row {
        Row {
            group: group.into(),
            incidents: 1,
            mean_secs: mean,
            median_secs: mean,
        }
    }

    #[test]
    fn metrics_and_groupings_parse() {
        assert_eq!(Metric::parse("MTTA").unwrap(), Metric::Mtta);
        assert!(Metric::parse("mtbf").is_err());
        assert_eq!(GroupBy::parse("month").unwrap(), GroupBy::Month);
        assert!(
            matches!(GroupBy::parse("team"), Err(DomainError::Invalid { field, .. }) if field == "group_by")
        );
    }

    #[test]
    fn bars_scale_to_the_largest_and_stay_inside_the_chart() {
        let c = chart(&[row("2026-08", 540.0), row("2026-09", 1080.0)]);
        let b = &c.bars;
        assert_eq!(b.len(), 2);
        assert!(b[1].height > b[0].height);
        assert_eq!(b[1].height, c.bottom - TOP);
        assert_eq!(
            c.ticks.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(),
            ["0 min", "9 min", "18 min"]
        );
        assert_eq!(c.ticks[2].y, b[1].y, "the top tick is the tallest bar");
        assert_eq!(b[0].height * 2, b[1].height);
        for bar in b {
            assert!(bar.x >= c.left && bar.x + bar.width <= CHART_WIDTH && bar.y >= 0);
        }
        assert_eq!(b[1].value, "18 min");
        assert!(b.iter().all(|b| b.value_shown), "two months leave room");
        assert_eq!(
            b.iter().map(|b| b.month()).collect::<Vec<_>>(),
            [Some("2026-08"), Some("2026-09")]
        );
        assert!(chart(&[]).bars.is_empty());
    }

    /// "6 h 53 min" read "53 min" when the y axis had a fixed 64 units: the plot now starts
    /// where the widest label ends, so every label lies inside the drawing.
    /// Two years of months with day-long means: every named month lies inside the drawing and
    /// clear of the others; more history than that is left to the table.
    #[test]
    fn month_names_stay_inside_the_drawing_and_apart() {
        let rows: Vec<Row> = (0..40)
            .map(|n| {
                row(
                    &format!("{}-{:02}", 2023 + n / 12, n % 12 + 1),
                    86_400.0 * 1.3,
                )
            })
            .collect();
        let c = chart(&rows);
        assert_eq!(c.bars.len(), CHART_MONTHS);
        assert_eq!(c.bars.last().unwrap().label, "2026-04");
        let named: Vec<(i64, i64)> = c
            .bars
            .iter()
            .filter_map(|b| Some((b.month_x?, width_of(b.month()?))))
            .collect();
        assert!(named.len() >= 4, "{named:?}");
        for (x, w) in &named {
            assert!(x - w / 2 >= 0 && x + w / 2 <= CHART_WIDTH, "{x} {w}");
        }
        for pair in named.windows(2) {
            let ((a, wa), (b, wb)) = (pair[0], pair[1]);
            assert!(a + wa / 2 < b - wb / 2, "{a} and {b} touch");
        }
        assert!(c.bars.iter().all(|b| b.width >= 4 && b.x >= c.left));
    }

    #[test]
    fn the_y_axis_is_as_wide_as_its_longest_label() {
        let c = chart(&[row("2026-06", 3.0 * 86_400.0 + 6.0 * 3600.0 + 53.0 * 60.0)]);
        let widest = c.ticks.iter().map(|t| width_of(&t.label)).max().unwrap();
        assert_eq!(c.ticks[2].label, "3 d 6 h 53 min");
        // The labels end 6 units left of the plot and start inside the drawing.
        assert!(c.left - 6 - widest >= 0, "{} {widest}", c.left);
        assert!(c.left >= widest + 6);
    }

    /// Fourteen months: names thinned so they never touch (the newest always named); the
    /// figures left to the table when they do not fit.
    #[test]
    fn many_months_are_named_without_running_together() {
        let rows: Vec<Row> = (0..14)
            .map(|n| {
                let (y, m) = (2025 + (n + 10) / 12, (n + 10) % 12 + 1);
                row(&format!("{y}-{m:02}"), 3600.0 * (n + 1) as f64 + 60.0)
            })
            .collect();
        let c = chart(&rows);
        let named: Vec<&Bar> = c.bars.iter().filter(|b| b.month().is_some()).collect();
        assert!(
            c.bars.last().unwrap().month().is_some(),
            "the newest is named"
        );
        for w in named.windows(2) {
            let (a, b) = (w[0], w[1]);
            let room = b.month_x.unwrap() - a.month_x.unwrap();
            let need = (width_of(a.month().unwrap()) + width_of(b.month().unwrap())) / 2;
            assert!(room > need, "{:?} and {:?} touch", a.month(), b.month());
        }
        assert!(
            c.bars.iter().all(|b| !b.value_shown),
            "14 means do not fit their slots"
        );
    }
}
