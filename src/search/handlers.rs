//! `GET /api/v1/search?q=`.

use axum::Json;
use serde::{Deserialize, Serialize};

use super::db::{self, Hit};
use crate::error::{AppError, AppResult};
use crate::http::access::Viewer;
use crate::http::extract::ApiQuery;
use crate::http::request::ApiRequest;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Words, "quoted phrases", -excluded, or: web-search syntax
    pub q: Option<String>,
}

/// The words as searched: 1 to 200 characters.
pub fn check_query(q: Option<&str>) -> AppResult<String> {
    let q = q.map(str::trim).unwrap_or("");
    if q.is_empty() || q.chars().count() > 200 {
        return Err(AppError::invalid("q", "search for 1 to 200 characters"));
    }
    Ok(q.to_owned())
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SearchResults {
    pub items: Vec<Hit>,
}

/// Incidents whose text, timeline or postmortem match, best first.
#[utoipa::path(get, path = "/api/v1/search", operation_id = "searchIncidents", tag = "postmortems", params(SearchQuery),
    responses((status = 200, description = "OK", body = SearchResults), (status = 422, description = "No words", body = crate::error::ErrorBody)))]
pub async fn search(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<SearchQuery>,
) -> AppResult<Json<SearchResults>> {
    let q = check_query(q.q.as_deref())?;
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    Ok(Json(SearchResults {
        items: db::search(&state.pool, &q, sees, 50).await?,
    }))
}
