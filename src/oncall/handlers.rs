//! The schedules API under `/api/v1/schedules`: viewers read who is on call; a team's leads
//! write its schedules, managers every schedule.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::actions;
use super::db::{self, StoredSchedule};
use super::domain::ScheduleDraft;
use crate::auth::domain::UserRole;
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiJson, ApiQuery, IfMatch, parse_id, query_text, with_etag};
use crate::http::request::ApiRequest;
use crate::teams;
use crate::teams::domain::TeamQuery;

/// A schedule with who is on call now.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleView {
    #[serde(flatten)]
    pub schedule: StoredSchedule,
    /// The handle of who is on call now, if anyone
    pub on_call_now: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleList {
    pub items: Vec<ScheduleView>,
}

fn view(s: StoredSchedule, now: DateTime<Utc>) -> AppResult<ScheduleView> {
    let on_call_now = actions::rules(&s)?.on_call(now);
    Ok(ScheduleView {
        schedule: s,
        on_call_now,
    })
}

/// Every schedule, with who is on call now.
#[utoipa::path(get, path = "/api/v1/schedules", operation_id = "listSchedules", tag = "oncall",
    params(TeamQuery),
    responses((status = 200, description = "By name", body = ScheduleList)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<TeamQuery>,
) -> AppResult<Json<ScheduleList>> {
    let now = clock::now(&state.pool).await?;
    let items = db::list(&state.pool, None)
        .await?
        .into_iter()
        .filter(|s| q.keeps(s.team.as_deref()))
        .map(|s| view(s, now))
        .collect::<AppResult<_>>()?;
    Ok(Json(ScheduleList { items }))
}

/// Add a schedule: layers of rotations (each handing off at a wall-clock time in a named zone)
/// and overrides.
#[utoipa::path(post, path = "/api/v1/schedules", operation_id = "createSchedule", tag = "oncall",
    request_body = ScheduleDraft,
    responses((status = 201, description = "Created, with an ETag", body = ScheduleView), crate::http::openapi::NotYours,
              (status = 409, description = "The name is taken", body = crate::error::ErrorBody),
              (status = 422, description = "A field is wrong (an unknown zone or person, an empty rotation, overlapping overrides …), named in details", body = crate::error::ErrorBody)))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<ScheduleDraft>,
) -> AppResult<Response> {
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    teams::actions::may_configure(&state, &auth, "schedule", &[to], UserRole::Manager).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let id = actions::create(&mut tx, &auth.actor, &body.value).await?;
    let s = db::get(&mut *tx, id).await?;
    let now = clock::now(&mut *tx).await?;
    tx.commit().await?;
    let version = s.version;
    Ok(with_etag(StatusCode::CREATED, version, &view(s, now)?))
}

/// One schedule, with who is on call now.
#[utoipa::path(get, path = "/api/v1/schedules/{id}", operation_id = "getSchedule", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id")),
    responses((status = 200, description = "With an ETag", body = ScheduleView), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let s = db::get(&state.pool, parse_id(&id, "schedule")?).await?;
    let now = clock::now(&state.pool).await?;
    let version = s.version;
    Ok(with_etag(StatusCode::OK, version, &view(s, now)?))
}

/// Replace a schedule (If-Match with its ETag).
#[utoipa::path(put, path = "/api/v1/schedules/{id}", operation_id = "updateSchedule", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id"), ("If-Match" = String, Header)),
    request_body = ScheduleDraft,
    responses((status = 200, description = "OK", body = ScheduleView), crate::http::openapi::NotYours, crate::http::openapi::Replacing))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<ScheduleDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id, "schedule")?;
    let now_of = db::get(&state.pool, id).await?;
    let to = teams::actions::named(&state.pool, &body.value.team).await?;
    let owners = [now_of.team_id, to];
    teams::actions::may_configure(&state, &auth, "schedule", &owners, UserRole::Manager).await?;
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = AppError::checked_version(version, now_of.version)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let s = actions::update(&mut tx, &auth.actor, id, version, &body.value).await?;
    let now = clock::now(&mut *tx).await?;
    tx.commit().await?;
    let version = s.version;
    Ok(with_etag(StatusCode::OK, version, &view(s, now)?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OnCallQuery {
    /// From this instant (RFC 3339; default now)
    pub from: Option<String>,
    /// Until this instant (RFC 3339; default four weeks after `from`, at most a year)
    pub to: Option<String>,
}

/// A person on call over part of the period.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SpanView {
    pub person: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct OnCall {
    /// Who is on call at `from`
    pub at_from: Option<String>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Who is on call over the period, in order; gaps with nobody are left out
    pub spans: Vec<SpanView>,
}

fn instant(field: &str, v: &Option<String>) -> AppResult<Option<DateTime<Utc>>> {
    query_text(v)
        .map(|t| {
            DateTime::parse_from_rfc3339(&t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| AppError::invalid(field, "a time like 2026-10-26T08:00:00Z"))
        })
        .transpose()
}

/// Who is on call over a period (default: the next four weeks), computed from the layers and
/// overrides.
#[utoipa::path(get, path = "/api/v1/schedules/{id}/on-call", operation_id = "getOnCall", tag = "oncall",
    params(("id" = i64, Path, description = "The schedule's id"), OnCallQuery),
    responses((status = 200, description = "OK", body = OnCall), crate::http::openapi::NotFound,
              (status = 422, description = "A bad time, `to` before `from`, or more than a year", body = crate::error::ErrorBody)))]
pub async fn on_call(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<OnCallQuery>,
) -> AppResult<Json<OnCall>> {
    let s = db::get(&state.pool, parse_id(&id, "schedule")?).await?;
    let from = match instant("from", &q.from)? {
        Some(t) => t,
        None => clock::now(&state.pool).await?,
    };
    let to = instant("to", &q.to)?.unwrap_or(from + Duration::weeks(4));
    if to <= from || to - from > Duration::days(366) {
        return Err(AppError::invalid(
            "to",
            "after `from`, and at most a year after it",
        ));
    }
    let rules = actions::rules(&s)?;
    Ok(Json(OnCall {
        at_from: rules.on_call(from),
        from,
        to,
        spans: rules
            .spans(from, to)
            .into_iter()
            .map(|s| SpanView {
                person: s.person,
                from: s.from,
                to: s.to,
            })
            .collect(),
    }))
}
