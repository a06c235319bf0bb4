//! `/api/v1/oncall/load`: the on-call load of the last 30 (or any 1–365) days, per person and
//! per team, for managers.

use axum::Json;
use serde::Deserialize;

use super::domain;
use super::views::{self, Load};
use crate::error::AppResult;
use crate::http::access::Manager;
use crate::http::extract::ApiQuery;
use crate::http::request::ApiRequest;
use crate::state::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LoadQuery {
    /// The last this many days, 1 to 365 (default 30)
    pub days: Option<String>,
}

/// The load asked for, worked out in one read-only transaction.
pub(super) async fn read(state: &AppState, q: &LoadQuery) -> AppResult<Load> {
    let days = domain::days(q.days.as_deref())?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let load = views::load(&mut tx, days).await?;
    tx.commit().await?;
    Ok(load)
}

/// Who carries the rota: per person (in their own zone) and per team (its members summed),
/// hours on call, pages received, pages outside 08:00–20:00, nights (22:00–06:00) with a page,
/// incidents acknowledged first and the mean time to acknowledge them.
#[utoipa::path(get, path = "/api/v1/oncall/load", operation_id = "getOnCallLoad", tag = "oncall",
    params(LoadQuery),
    responses((status = 200, description = "OK", body = Load),
              (status = 403, description = "Managers and admins only", body = crate::error::ErrorBody),
              (status = 422, description = "`days` is not 1 to 365", body = crate::error::ErrorBody)))]
pub async fn load(
    ApiRequest(state, _): ApiRequest<Manager>,
    ApiQuery(q): ApiQuery<LoadQuery>,
) -> AppResult<Json<Load>> {
    Ok(Json(read(&state, &q).await?))
}
