//! The reports page: each metric by month as a chart, and by service and severity as tables;
//! the change-failure rate by month and by service.

use askama::Template;
use askama_web::WebTemplate;

use super::db;
use super::domain::{Chart, GroupBy, Metric, Row, chart};
use crate::changes::domain::{FAILURE_RATE_DEFINITION, FailureGroup, FailureRate};
use crate::http::access::Manager;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::PageRequest;

pub struct Section {
    metric: Metric,
    chart: Chart,
    /// The chart's figures as a table: each month's incidents, mean and median
    by_month: Vec<Row>,
    by_service: Vec<Row>,
    by_severity: Vec<Row>,
}

#[derive(Template, WebTemplate)]
#[template(path = "reports/index.html")]
pub struct ReportsPage {
    chrome: Chrome,
    sections: Vec<Section>,
    /// When the response figures were computed (`YYYY-MM-DD HH:MM`).
    as_of: String,
    /// The change-failure rate by month and by service, and overall.
    failure_by_month: Vec<FailureRate>,
    failure_by_service: Vec<FailureRate>,
    failure_overall: FailureRate,
    failure_definition: &'static str,
}

pub async fn index(PageRequest(state, chrome, _): PageRequest<Manager>) -> PageResult<ReportsPage> {
    let mut sections = Vec::new();
    for metric in Metric::ALL {
        let monthly = db::figures(&state.pool, metric, GroupBy::Month).await?;
        sections.push(Section {
            metric,
            chart: chart(&monthly),
            by_month: monthly,
            by_service: db::figures(&state.pool, metric, GroupBy::Service).await?,
            by_severity: db::figures(&state.pool, metric, GroupBy::Severity).await?,
        });
    }
    let rates = |group| crate::changes::db::failure_rates(&state.pool, group, None, None, None);
    let failure_by_month = rates(FailureGroup::Month).await?;
    Ok(ReportsPage {
        chrome,
        sections,
        as_of: db::refreshed_at(&state.pool)
            .await?
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        failure_overall: FailureRate::overall(&failure_by_month),
        failure_by_month,
        failure_by_service: rates(FailureGroup::Service).await?,
        failure_definition: FAILURE_RATE_DEFINITION,
    })
}
