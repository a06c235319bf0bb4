//! `/api/v1/action-items`: every postmortem's action items, filtered; and their status.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::db::{self, ItemFilter, ListedItem};
use super::domain;
use crate::audit;
use crate::auth::handlers::parse_id;
use crate::auth::{Auth, Responder, Viewer};
use crate::error::{AppError, AppResult};
use crate::http::extract::{ApiJson, ApiQuery};
use crate::state::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ItemQuery {
    /// The owner's handle or email
    pub owner: Option<String>,
    /// open, in_progress, done or wont_do
    pub status: Option<String>,
    /// prevent, detect, mitigate or process
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// true: only items past their due date and not done
    pub overdue: Option<String>,
}

impl ItemQuery {
    pub fn filter(&self) -> AppResult<ItemFilter> {
        let text = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        Ok(ItemFilter {
            owner: text(&self.owner),
            status: text(&self.status)
                .map(|s| domain::check_item_status(&s))
                .transpose()?,
            kind: text(&self.kind)
                .map(|t| domain::check_action_type(&t))
                .transpose()?,
            overdue: match text(&self.overdue).as_deref() {
                None | Some("false") => false,
                Some("true") => true,
                Some(_) => return Err(AppError::invalid("overdue", "true or false")),
            },
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ItemList {
    pub items: Vec<ListedItem>,
}

/// Action items across postmortems, soonest due first.
#[utoipa::path(get, path = "/api/v1/action-items", tag = "postmortems", params(ItemQuery),
    responses((status = 200, description = "OK", body = ItemList), (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> AppResult<Json<ItemList>> {
    Ok(Json(ItemList {
        items: db::list_items(&state.pool, &q.filter()?).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemPatch {
    /// open, in_progress, done or wont_do
    pub status: String,
}

/// Move an action item along: open, in progress, done, won't do.
#[utoipa::path(patch, path = "/api/v1/action-items/{id}", tag = "postmortems", request_body = ItemPatch,
    params(("id" = i64, Path, description = "Action item id")),
    responses((status = 200, description = "OK", body = Object), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 422, description = "Unknown status", body = crate::error::ErrorBody)))]
pub async fn patch(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(id): Path<String>,
    body: ApiJson<ItemPatch>,
) -> AppResult<Json<serde_json::Value>> {
    let id = parse_id(&id, "action item")?;
    let status = set_status(&state, &auth.actor, id, &body.value.status).await?;
    Ok(Json(json!({ "id": id, "status": status })))
}

/// Sets the status, audited; shared with the page.
pub async fn set_status(
    state: &AppState,
    actor: &audit::Actor,
    id: i64,
    status: &str,
) -> AppResult<String> {
    let status = domain::check_item_status(status)?;
    let mut tx = state.pool.begin().await?;
    let incident = db::set_item_status(&mut *tx, id, &status)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no action item {id}.")))?;
    audit::record(
        &mut tx,
        actor,
        "action_item.status",
        &incident,
        None,
        Some(json!({ "id": id, "status": status })),
    )
    .await?;
    tx.commit().await?;
    Ok(status)
}
