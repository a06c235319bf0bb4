//! People under `/api/v1/people`: who roles can be assigned to (accounts are managed under
//! `/api/v1/users`).

use axum::Json;

use super::db::{self, Person};
use crate::error::AppResult;
use crate::http::access::Viewer;
use crate::http::request::ApiRequest;

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PersonList {
    pub items: Vec<Person>,
}

/// Everyone who can hold a role.
#[utoipa::path(
    get,
    path = "/api/v1/people", operation_id = "listPeople",
    tag = "people",
    responses((status = 200, description = "OK", body = PersonList))
)]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<PersonList>> {
    Ok(Json(PersonList {
        items: db::list(&state.pool).await?,
    }))
}
