//! `GET /api/v1/reports/{metric}?group_by=…`.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};

use super::db;
use super::domain::{GroupBy, Metric, Row};
use crate::error::AppResult;
use crate::http::access::{Auth, Manager};
use crate::http::extract::ApiQuery;
use crate::state::AppState;

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
    pub items: Vec<Row>,
}

/// Mean and median of a response metric per group.
#[utoipa::path(get, path = "/api/v1/reports/{metric}", operation_id = "getResponseReport", tag = "reports",
    params(("metric" = String, Path, description = "mtta, mttm or mttr"), ReportQuery),
    responses((status = 200, description = "OK", body = Report),
              (status = 403, description = "Managers and admins only", body = crate::error::ErrorBody),
              (status = 422, description = "Unknown metric or grouping", body = crate::error::ErrorBody)))]
pub async fn report(
    State(state): State<AppState>,
    _auth: Auth<Manager>,
    Path(metric): Path<String>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> AppResult<Json<Report>> {
    let metric = Metric::parse(&metric)?;
    let group_by = GroupBy::parse(q.group_by.as_deref().unwrap_or("month"))?;
    Ok(Json(Report {
        metric,
        group_by,
        definition: metric.definition(),
        items: db::figures(&state.pool, metric, group_by).await?,
    }))
}
