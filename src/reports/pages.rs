//! The reports page: each metric by month as a chart, and by service and severity as tables.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::State;

use super::db;
use super::domain::{Bar, CHART_HEIGHT, CHART_WIDTH, GroupBy, Metric, Row, bars};
use crate::http::access::{Auth, Manager};
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::state::AppState;

pub struct Section {
    metric: Metric,
    by_month: Vec<Bar>,
    by_service: Vec<Row>,
    by_severity: Vec<Row>,
}

#[derive(Template, WebTemplate)]
#[template(path = "reports/index.html")]
pub struct ReportsPage {
    chrome: Chrome,
    sections: Vec<Section>,
    width: i64,
    height: i64,
}

pub async fn index(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Manager>,
) -> PageResult<ReportsPage> {
    let mut sections = Vec::new();
    for metric in Metric::ALL {
        sections.push(Section {
            metric,
            by_month: bars(&db::figures(&state.pool, metric, GroupBy::Month).await?),
            by_service: db::figures(&state.pool, metric, GroupBy::Service).await?,
            by_severity: db::figures(&state.pool, metric, GroupBy::Severity).await?,
        });
    }
    Ok(ReportsPage {
        chrome,
        sections,
        width: CHART_WIDTH,
        height: CHART_HEIGHT,
    })
}
