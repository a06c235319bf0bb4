//! The changes API: `POST /api/v1/changes` to record one, `GET /api/v1/changes` to list them.

use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::actions;
use super::db::{self, Change, Filter};
use super::domain::{ChangeCursor, ChangeDraft, ChangeKind};
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{
    ApiJson, ApiQuery, IdempotencyKey, parse_id, query_cursor, query_limit, query_period_bounds,
    query_text,
};
use crate::http::request::ApiRequest;
use crate::idempotency;

/// Record a change to a service: a deploy, a configuration change, a feature flag or an
/// infrastructure change.
#[utoipa::path(post, path = "/api/v1/changes", operation_id = "createChange", tag = "changes",
    request_body = ChangeDraft,
    params(("Idempotency-Key" = Option<String>, Header, description = "Retry-safe create: the same key and body replays the answer")),
    responses((status = 201, description = "Recorded; Location names it", body = Change),
              (status = 422, description = "A field is wrong (an unknown service, a time in the future …), named in details", body = crate::error::ErrorBody)))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<ChangeDraft>,
) -> AppResult<Response> {
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/changes",
        idem.as_ref(),
        &body.raw,
        async |tx| actions::record(tx, &auth.actor, &body.value).await,
    )
    .await?;
    Ok(created.respond(|change| {
        let location = HeaderValue::from_str(&format!("/api/v1/changes/{}", change.id));
        let mut res = (StatusCode::CREATED, Json(change)).into_response();
        if let Ok(v) = location {
            res.headers_mut().insert(LOCATION, v);
        }
        res
    }))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChangeQuery {
    /// A service's name
    pub service: Option<String>,
    /// deploy, config, feature_flag or infrastructure
    pub kind: Option<String>,
    /// Changes on or after this day (YYYY-MM-DD, UTC)
    pub from: Option<String>,
    /// Changes on or before this day (YYYY-MM-DD, UTC)
    pub to: Option<String>,
    /// `next_cursor` of the previous page
    pub cursor: Option<String>,
    /// 1 to 200, default 50
    pub limit: Option<String>,
}

impl ChangeQuery {
    /// One page of the changes this query asks for, and the cursor of the next page if there
    /// is one.
    pub async fn page(
        &self,
        e: impl sqlx::PgExecutor<'_>,
        limit: i64,
    ) -> AppResult<(Vec<Change>, Option<ChangeCursor>)> {
        let after = query_cursor(&self.cursor, ChangeCursor::decode)?;
        let mut items = db::list(e, &self.filter()?, after, limit + 1).await?;
        let more = items.len() as i64 > limit;
        items.truncate(limit as usize);
        let next = more.then(|| items.last()).flatten().map(|c| ChangeCursor {
            occurred_at: c.occurred_at,
            id: c.id,
        });
        Ok((items, next))
    }

    pub fn filter(&self) -> AppResult<Filter> {
        let (from, until) = query_period_bounds(&self.from, &self.to)?;
        Ok(Filter {
            service: query_text(&self.service),
            kind: query_text(&self.kind)
                .map(|k| ChangeKind::parse("kind", &k))
                .transpose()?,
            from,
            until,
            ..Default::default()
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ChangeList {
    pub items: Vec<Change>,
    /// Pass as `cursor` for the next page; `null` on the last page
    pub next_cursor: Option<String>,
}

/// Changes, newest first.
#[utoipa::path(get, path = "/api/v1/changes", operation_id = "listChanges", tag = "changes", params(ChangeQuery),
    responses((status = 200, description = "OK", body = ChangeList), (status = 422, description = "A bad filter, named in details", body = crate::error::ErrorBody)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> AppResult<Json<ChangeList>> {
    let limit = query_limit(&q.limit, 50, 200)?;
    let (items, next) = q.page(&state.pool, limit).await?;
    Ok(Json(ChangeList {
        next_cursor: next.map(|c| c.encode()),
        items,
    }))
}

/// One change.
#[utoipa::path(get, path = "/api/v1/changes/{id}", operation_id = "getChange", tag = "changes",
    params(("id" = i64, Path, description = "The change's id")),
    responses((status = 200, description = "OK", body = Change), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Json<Change>> {
    let id = parse_id(&id, "change")?;
    db::get(&state.pool, id)
        .await?
        .map(Json)
        .ok_or_else(|| AppError::NotFound(format!("There is no change {id}.")))
}
