//! `/api/v1/schedules/{id}/swaps`: a schedule's shift swaps; offering your own hours, taking a
//! swap (it becomes an override), withdrawing your offer.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use serde::Serialize;

use super::actions::{self, Answer, Me, OfferDraft};
use super::db::{self, Swap};
use crate::error::AppResult;
use crate::http::access::{Auth, Responder, Viewer};
use crate::http::extract::{ApiJson, parse_id};
use crate::http::request::ApiRequest;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ShiftSwapList)]
pub struct SwapList {
    pub items: Vec<Swap>,
}

pub(super) fn me(auth: &Auth<Responder>) -> Me<'_> {
    Me {
        id: auth.user.id,
        handle: &auth.user.handle,
        actor: &auth.actor,
    }
}

/// A schedule's shift swaps: open ones first, then the latest hours first.
#[utoipa::path(get, path = "/api/v1/schedules/{id}/swaps", operation_id = "listShiftSwaps", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id")),
    responses((status = 200, description = "Open first, then the newest", body = SwapList), crate::http::openapi::NotFound))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Json<SwapList>> {
    let id = parse_id(&id, "schedule")?;
    crate::oncall::db::get(&state.pool, id).await?;
    Ok(Json(SwapList {
        items: db::list(&state.pool, id, None).await?,
    }))
}

/// Offer part (or all) of your shift: you must be on call through the whole period, with no
/// override there; name who should take it (`offered_to`) or leave it to anyone who can.
#[utoipa::path(post, path = "/api/v1/schedules/{id}/swaps", operation_id = "offerShiftSwap", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id")),
    request_body = OfferDraft,
    responses((status = 201, description = "Offered", body = Swap), crate::http::openapi::NotFound,
              (status = 422, description = "Not all yours (someone else's hours, a gap, an override there), in the past, or an unknown taker; the field and why", body = crate::error::ErrorBody)))]
pub async fn offer(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    body: ApiJson<OfferDraft>,
) -> AppResult<(StatusCode, Json<Swap>)> {
    let id = parse_id(&id, "schedule")?;
    let made = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::offer(tx, me(&auth), id, &body.value))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// Take a swap offered to you (or to anyone): it becomes an override of the schedule — you in
/// the offerer's place for the period — checked again against the schedule as it is now.
#[utoipa::path(post, path = "/api/v1/schedules/{id}/swaps/{swap}/take", operation_id = "takeShiftSwap", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id"), ("swap" = i64, Path, description = "The swap's id")),
    responses((status = 200, description = "Taken: the override is on the schedule", body = Swap), crate::http::openapi::NotFound,
              (status = 403, description = "Offered to someone else", body = crate::error::ErrorBody),
              (status = 409, description = "Taken or withdrawn already, your own, or no longer possible as offered (why)", body = crate::error::ErrorBody)))]
pub async fn take(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((id, swap)): Path<(String, String)>,
) -> AppResult<Json<Swap>> {
    answered(&state, &auth, (id, swap), Answer::Take).await
}

/// Withdraw your offer while nobody has taken it.
#[utoipa::path(post, path = "/api/v1/schedules/{id}/swaps/{swap}/withdraw", operation_id = "withdrawShiftSwap", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id"), ("swap" = i64, Path, description = "The swap's id")),
    responses((status = 200, description = "Withdrawn", body = Swap), crate::http::openapi::NotFound,
              (status = 403, description = "Not your offer", body = crate::error::ErrorBody),
              (status = 409, description = "Taken or withdrawn already", body = crate::error::ErrorBody)))]
pub async fn withdraw(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((id, swap)): Path<(String, String)>,
) -> AppResult<Json<Swap>> {
    answered(&state, &auth, (id, swap), Answer::Withdraw).await
}

/// Takes or withdraws the swap a path names, in one transaction.
pub(super) async fn answered(
    state: &crate::state::AppState,
    auth: &Auth<Responder>,
    (id, swap): (String, String),
    answer: Answer,
) -> AppResult<Json<Swap>> {
    let id = parse_id(&id, "schedule")?;
    let swap = parse_id(&swap, "shift swap")?;
    let who = me(auth);
    let done = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::answer(tx, who, (id, swap), answer))
    })
    .await?;
    Ok(Json(done))
}
