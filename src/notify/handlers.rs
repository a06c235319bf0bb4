//! `/api/v1/notification-channels` for admins.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::db::{self, Channel};
use crate::error::AppResult;
use crate::http::access::{Admin, Auth};
use crate::http::extract::ApiJson;
use crate::http::extract::parse_id;
use crate::state::AppState;

#[derive(Serialize, utoipa::ToSchema)]
pub struct ChannelList {
    pub items: Vec<Channel>,
}

/// Where breaches are announced.
#[utoipa::path(get, path = "/api/v1/notification-channels", operation_id = "listNotificationChannels", tag = "sla",
    responses((status = 200, description = "OK", body = ChannelList), (status = 403, description = "Admins only", body = crate::error::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    _auth: Auth<Admin>,
) -> AppResult<Json<ChannelList>> {
    Ok(Json(ChannelList {
        items: db::channels(&state.pool).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewChannel {
    pub name: String,
    /// webhook or slack
    pub kind: String,
    pub url: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedChannel {
    #[serde(flatten)]
    pub channel: Channel,
    /// A webhook's Standard Webhooks signing secret, shown this once
    pub secret: Option<String>,
}

/// Add a channel. A webhook gets a signing secret, returned once.
#[utoipa::path(post, path = "/api/v1/notification-channels", operation_id = "createNotificationChannel", tag = "sla", request_body = NewChannel,
    responses((status = 201, description = "Created", body = CreatedChannel),
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              (status = 422, description = "A field is wrong", body = crate::error::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    auth: Auth<Admin>,
    body: ApiJson<NewChannel>,
) -> AppResult<Response> {
    let b = body.value;
    let mut tx = state.pool.begin().await?;
    let (channel, secret) =
        super::actions::create_channel(&mut tx, &auth.actor, &b.name, &b.kind, &b.url).await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedChannel { channel, secret }),
    )
        .into_response())
}

/// Remove a channel (its queued notifications go with it).
#[utoipa::path(delete, path = "/api/v1/notification-channels/{id}", operation_id = "deleteNotificationChannel", tag = "sla",
    params(("id" = i64, Path, description = "Channel id")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "channel")?;
    let mut tx = state.pool.begin().await?;
    super::actions::delete_channel(&mut tx, &auth.actor, id).await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}
