//! `GET /api/v1/incidents/{key}/alerts`: the alerts grouped into an incident.

use axum::Json;
use axum::extract::Path;
use serde::{Deserialize, Serialize};

use crate::alert_store::db::{self, Alert};
use crate::error::{AppError, AppResult};
use crate::http::access::Viewer;
use crate::http::extract::{ApiQuery, query_cursor, query_limit, query_text};
use crate::http::request::ApiRequest;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AlertQuery {
    /// firing, acknowledged or resolved
    status: Option<String>,
    /// `next_cursor` of the previous page
    cursor: Option<String>,
    /// 1 to 500, default 100
    limit: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AlertList {
    /// Every alert the incident has had, whatever its status, counting those of months let go
    /// (`QUELL_ALERT_RETENTION_DAYS`), which `items` no longer lists
    pub total: i64,
    pub items: Vec<Alert>,
    /// Pass as `cursor` for the next page; `null` on the last page
    pub next_cursor: Option<String>,
}

/// An incident's alerts, oldest first.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/alerts", operation_id = "listIncidentAlerts", tag = "alerts", params(("key" = String, Path, description = "e.g. INC-1187"), AlertQuery),
    responses((status = 200, description = "OK", body = AlertList), crate::http::openapi::NotFound, (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
    ApiQuery(q): ApiQuery<AlertQuery>,
) -> AppResult<Json<AlertList>> {
    let incident = crate::incidents::db::get_named(&state.pool, &key).await?;
    let status = query_text(&q.status);
    if let Some(s) = &status
        && !["firing", "acknowledged", "resolved"].contains(&s.as_str())
    {
        return Err(AppError::invalid(
            "status",
            "firing, acknowledged or resolved",
        ));
    }
    let after = query_cursor(&q.cursor, |c| c.parse::<i64>().ok())?.unwrap_or(0);
    let limit = query_limit(&q.limit, 100, 500)?;
    let items = db::for_incident(
        &state.pool,
        incident.id,
        status.as_deref(),
        after,
        limit + 1,
    )
    .await?;
    let total = db::count_for_incident(&state.pool, incident.id).await?;
    let more = items.len() as i64 > limit;
    let items: Vec<Alert> = items.into_iter().take(limit as usize).collect();
    Ok(Json(AlertList {
        total,
        next_cursor: more
            .then(|| items.last().map(|a| a.id.to_string()))
            .flatten(),
        items,
    }))
}
