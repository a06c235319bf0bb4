//! `GET /api/v1/reports/{metric}?group_by=…` and `GET /api/v1/reports/change-failure-rate`.

use axum::Json;
use axum::extract::Path;
use serde::{Deserialize, Serialize};

use super::db;
use super::domain::{GroupBy, Metric, Row};
use crate::changes::domain::{FAILURE_RATE_DEFINITION, FailureGroup, FailureRate};
use crate::error::AppResult;
use crate::http::access::Manager;
use crate::http::extract::{ApiQuery, query_period_bounds, query_text};
use crate::http::request::ApiRequest;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// service, severity (the highest each incident reached) or month (of detection, UTC);
    /// default month
    pub group_by: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Report {
    pub metric: Metric,
    pub group_by: GroupBy,
    /// How the figure is measured
    pub definition: &'static str,
    /// When these figures were computed: within 15 s of the last change to any incident
    pub as_of: chrono::DateTime<chrono::Utc>,
    pub items: Vec<Row>,
}

/// Mean and median of a response metric per group.
#[utoipa::path(get, path = "/api/v1/reports/{metric}", operation_id = "getResponseReport", tag = "reports",
    params(("metric" = String, Path, description = "mtta, mttm or mttr"), ReportQuery),
    responses((status = 200, description = "OK", body = Report),
              (status = 403, description = "Managers and admins only", body = crate::error::ErrorBody),
              (status = 422, description = "Unknown metric or grouping", body = crate::error::ErrorBody)))]
pub async fn report(
    ApiRequest(state, _): ApiRequest<Manager>,
    Path(metric): Path<String>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> AppResult<Json<Report>> {
    let metric = Metric::parse(&metric)?;
    let group_by = GroupBy::parse(q.group_by.as_deref().unwrap_or("month"))?;
    Ok(Json(Report {
        metric,
        group_by,
        definition: metric.definition(),
        as_of: db::refreshed_at(&state.pool).await?,
        items: db::figures(&state.pool, metric, group_by).await?,
    }))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FailureRateQuery {
    /// service or month (of the change, UTC); default month
    pub group_by: Option<String>,
    /// Changes made on or after this day (YYYY-MM-DD, UTC)
    pub from: Option<String>,
    /// Changes made on or before this day (YYYY-MM-DD, UTC)
    pub to: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct FailureRateReport {
    pub group_by: FailureGroup,
    /// How the figure is measured
    pub definition: &'static str,
    /// The period as asked; null when open
    pub from: Option<String>,
    pub to: Option<String>,
    /// Every group together
    pub overall: FailureRate,
    pub items: Vec<FailureRate>,
}

/// The change-failure rate: changes confirmed as an incident's trigger ÷ changes, per service or
/// month and overall, over a period.
#[utoipa::path(get, path = "/api/v1/reports/change-failure-rate", operation_id = "getChangeFailureRate", tag = "reports",
    params(FailureRateQuery),
    responses((status = 200, description = "OK", body = FailureRateReport),
              (status = 403, description = "Managers and admins only", body = crate::error::ErrorBody),
              (status = 422, description = "An unknown grouping or a bad period, named in details", body = crate::error::ErrorBody)))]
pub async fn change_failure_rate(
    ApiRequest(state, _): ApiRequest<Manager>,
    ApiQuery(q): ApiQuery<FailureRateQuery>,
) -> AppResult<Json<FailureRateReport>> {
    let group_by = FailureGroup::parse(query_text(&q.group_by).as_deref().unwrap_or("month"))?;
    let (from, until) = query_period_bounds(&q.from, &q.to)?;
    let items = crate::changes::db::failure_rates(&state.pool, group_by, None, from, until).await?;
    Ok(Json(FailureRateReport {
        group_by,
        definition: FAILURE_RATE_DEFINITION,
        from: query_text(&q.from),
        to: query_text(&q.to),
        overall: FailureRate::overall(&items),
        items,
    }))
}
