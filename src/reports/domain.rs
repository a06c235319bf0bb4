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

/// A bar of a chart, in SVG user units.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    pub label: String,
    pub value: String,
    pub label_x: i64,
}

/// Narrow enough that its 14-unit labels stay readable when a phone shrinks it to ~330 px.
pub const CHART_WIDTH: i64 = 480;
pub const CHART_HEIGHT: i64 = 220;
/// Room under the plot for the month labels.
pub const AXIS: i64 = 28;
/// Room left of the plot for the y axis's labels.
pub const LEFT: i64 = 64;
const TOP: i64 = 22;

/// A labelled line across the plot at a value of the y axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub y: i64,
    pub label: String,
}

/// The y axis: zero, half the largest mean and the largest, each at its height.
pub fn ticks(rows: &[Row]) -> Vec<Tick> {
    if rows.is_empty() {
        return vec![];
    }
    let max = rows.iter().map(|r| r.mean_secs).fold(1.0_f64, f64::max);
    let plot = CHART_HEIGHT - AXIS - TOP;
    [0.0, 0.5, 1.0]
        .into_iter()
        .map(|f| Tick {
            y: TOP + plot - (f * plot as f64).round() as i64,
            label: format_minutes((f * max).round() as i64),
        })
        .collect()
}

/// Bars of the mean per group, scaled to the largest.
pub fn bars(rows: &[Row]) -> Vec<Bar> {
    if rows.is_empty() {
        return vec![];
    }
    let max = rows.iter().map(|r| r.mean_secs).fold(1.0_f64, f64::max);
    let slot = (CHART_WIDTH - LEFT) / rows.len() as i64;
    let width = (slot * 7 / 10).max(4);
    let plot = CHART_HEIGHT - AXIS - TOP;
    rows.iter()
        .enumerate()
        .map(|(n, r)| {
            let height = ((r.mean_secs / max) * plot as f64).round().max(1.0) as i64;
            let x = LEFT + n as i64 * slot + (slot - width) / 2;
            Bar {
                x,
                y: TOP + plot - height,
                width,
                height,
                label: r.group.clone(),
                value: r.mean_text(),
                label_x: x + width / 2,
            }
        })
        .collect()
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
        let b = bars(&[row("2026-08", 540.0), row("2026-09", 1080.0)]);
        assert_eq!(b.len(), 2);
        assert!(b[1].height > b[0].height);
        assert_eq!(b[1].height, CHART_HEIGHT - AXIS - 22);
        let t = ticks(&[row("2026-08", 540.0), row("2026-09", 1080.0)]);
        assert_eq!(
            t.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(),
            ["0 min", "9 min", "18 min"]
        );
        assert_eq!(t[2].y, b[1].y, "the top tick is the tallest bar");
        assert_eq!(b[0].height * 2, b[1].height);
        for bar in &b {
            assert!(bar.x >= LEFT && bar.x + bar.width <= CHART_WIDTH && bar.y >= 0);
        }
        assert_eq!(b[1].value, "18 min");
        assert!(bars(&[]).is_empty());
    }
}
