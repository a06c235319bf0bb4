//! `GET /api/v1/audit` for admins.

use axum::Json;
use serde::{Deserialize, Serialize};

use crate::audit::db::{self, Entry, Filter};
use crate::error::{AppError, AppResult};
use crate::http::access::Admin;
use crate::http::extract::ApiQuery;
use crate::http::request::ApiRequest;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Actions starting with this, e.g. `incident.` or `login.failed`
    pub action: Option<String>,
    /// Part of the actor's name
    pub actor: Option<String>,
    /// `ok` or `refused`
    pub outcome: Option<String>,
    /// Entries older than this id (the `next_before` of the previous page)
    pub before: Option<i64>,
    /// 1 to 500, default 100
    pub limit: Option<i64>,
}

impl AuditQuery {
    pub fn filter(&self) -> AppResult<(Filter, i64)> {
        let some = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let outcome = some(&self.outcome);
        if let Some(o) = &outcome
            && o != "ok"
            && o != "refused"
        {
            return Err(AppError::invalid("outcome", "use ok or refused"));
        }
        let limit = self.limit.unwrap_or(100);
        if !(1..=500).contains(&limit) {
            return Err(AppError::invalid("limit", "a number from 1 to 500"));
        }
        Ok((
            Filter {
                action: some(&self.action),
                actor: some(&self.actor),
                outcome,
                before_id: self.before,
            },
            limit,
        ))
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AuditPage {
    pub items: Vec<Entry>,
    /// Pass as `before` for older entries; null at the end
    pub next_before: Option<i64>,
}

/// The audit log, newest first.
#[utoipa::path(get, path = "/api/v1/audit", operation_id = "listAuditLog", tag = "accounts", params(AuditQuery),
    responses((status = 200, description = "OK", body = AuditPage), crate::http::openapi::AdminsOnly))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Admin>,
    ApiQuery(query): ApiQuery<AuditQuery>,
) -> AppResult<Json<AuditPage>> {
    let (filter, limit) = query.filter()?;
    let items = db::list(&state.pool, &filter, limit).await?;
    let next_before = (items.len() as i64 == limit)
        .then(|| items.last().map(|e| e.id))
        .flatten();
    Ok(Json(AuditPage { items, next_before }))
}
