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
    /// The teams to narrow the by-service tables to: (slug, name); and the choice
    teams: Vec<(String, String)>,
    filter_team: String,
}

pub async fn index(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        crate::teams::domain::TeamQuery,
    >,
) -> PageResult<ReportsPage> {
    let asked = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed_page(&state.pool, auth.user.id, asked).await?;
    // Narrowed to teams, the by-service tables keep the services those teams own.
    let owned: Option<Vec<String>> = match &narrowed.ids {
        None => None,
        Some(ids) => Some(
            crate::services::db::list(&state.pool)
                .await?
                .into_iter()
                .filter(|s| s.team_id.is_some_and(|t| ids.contains(&t)))
                .map(|s| s.name)
                .collect(),
        ),
    };
    let kept = |group: &str| owned.as_ref().is_none_or(|o| o.iter().any(|s| s == group));
    let mut sections = Vec::new();
    for metric in Metric::ALL {
        let monthly = db::figures(&state.pool, metric, GroupBy::Month).await?;
        let mut by_service = db::figures(&state.pool, metric, GroupBy::Service).await?;
        by_service.retain(|r| kept(&r.group));
        sections.push(Section {
            metric,
            chart: chart(&monthly),
            by_month: monthly,
            by_service,
            by_severity: db::figures(&state.pool, metric, GroupBy::Severity).await?,
        });
    }
    let rates = |group| crate::changes::db::failure_rates(&state.pool, group, None, None, None);
    let failure_by_month = rates(FailureGroup::Month).await?;
    let mut failure_by_service = rates(FailureGroup::Service).await?;
    failure_by_service.retain(|r| kept(&r.group));
    let teams = crate::teams::db::choices(&state.pool).await?;
    Ok(ReportsPage {
        teams,
        filter_team: narrowed.team.unwrap_or_default(),
        chrome,
        sections,
        as_of: db::refreshed_at(&state.pool)
            .await?
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        failure_overall: FailureRate::overall(&failure_by_month),
        failure_by_month,
        failure_by_service,
        failure_definition: FAILURE_RATE_DEFINITION,
    })
}
