//! `/api/v1/silences`: silences (responders make and end them), the alerts each held, a draft
//! tried over last week's alerts, and the longest length an admin allows; and the same
//! silences in Alertmanager's API v2 shape under `/api/v1/alertmanager`, for `amtool`.

use axum::Json;
use axum::extract::{Path, RawQuery};
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::actions::{self, SilenceDraft, SilencePreview};
use super::db::{self, HeldAlert, SilencePolicy, SilenceRecord};
use super::domain::{self, MatchOp, Matcher};
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Responder, Viewer};
use crate::http::extract::{ApiJson, ApiQuery, IdempotencyKey, IfMatch, parse_id, with_etag};
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::idempotency;
use crate::incident_ref::domain::SeenBy;

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `current` (pending and active, the default) or `expired` (the last 200)
    pub state: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SilenceList {
    /// Latest ending first
    pub items: Vec<SilenceRecord>,
}

/// Silences not yet over (or, with `state=expired`, the last 200 that are).
#[utoipa::path(get, path = "/api/v1/silences", operation_id = "listSilences", tag = "alerts",
    params(ListQuery),
    responses((status = 200, description = "OK", body = SilenceList), crate::http::openapi::Invalid))]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> AppResult<Json<SilenceList>> {
    let current = match q.state.as_deref().unwrap_or("current") {
        "current" => true,
        "expired" => false,
        _ => {
            return Err(AppError::invalid("state", "current or expired"));
        }
    };
    Ok(Json(SilenceList {
        items: db::list(&state.pool, current, 200, SeenBy::of(&auth.user)).await?,
    }))
}

/// Make a silence: matching alerts are stored and counted but open no incident and page
/// nobody until it ends.
#[utoipa::path(post, path = "/api/v1/silences", operation_id = "createSilence", tag = "alerts",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = SilenceDraft,
    responses((status = 201, description = "Created, with an ETag", body = SilenceRecord), crate::http::openapi::Invalid))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Responder>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<SilenceDraft>,
) -> AppResult<Response> {
    let person = Some(auth.user.id);
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/silences",
        idem.as_ref(),
        &body.raw,
        async |tx| actions::create(tx, &auth.actor, person, &body.value).await,
    )
    .await?;
    Ok(created.respond(|s| {
        let mut res = with_etag(StatusCode::CREATED, s.version, &s);
        if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/silences/{}", s.id)) {
            res.headers_mut().insert(LOCATION, v);
        }
        res
    }))
}

/// One silence, with how many alerts it held.
#[utoipa::path(get, path = "/api/v1/silences/{id}", operation_id = "getSilence", tag = "alerts",
    params(("id" = i64, Path, description = "Silence id")),
    responses((status = 200, description = "With an ETag", body = SilenceRecord), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = parse_id(&id, "silence")?;
    let s = actions::find(&state.pool, id, SeenBy::of(&auth.user)).await?;
    Ok(with_etag(StatusCode::OK, s.version, &s))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct HeldList {
    /// Newest first, at most 500
    pub items: Vec<HeldAlert>,
}

/// The alerts a silence held, newest first.
#[utoipa::path(get, path = "/api/v1/silences/{id}/alerts", operation_id = "listSilencedAlerts", tag = "alerts",
    params(("id" = i64, Path, description = "Silence id")),
    responses((status = 200, description = "OK", body = HeldList), crate::http::openapi::NotFound))]
pub async fn alerts(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Json<HeldList>> {
    let id = parse_id(&id, "silence")?;
    let sees = SeenBy::of(&auth.user);
    actions::find(&state.pool, id, sees).await?;
    Ok(Json(HeldList {
        items: db::held(&state.pool, id, sees, 500).await?,
    }))
}

/// End a silence now (If-Match with its ETag); alerts after this are judged as usual.
#[utoipa::path(post, path = "/api/v1/silences/{id}/expire", operation_id = "expireSilence", tag = "alerts",
    params(("id" = i64, Path, description = "Silence id"), ("If-Match" = String, Header, description = "The silence's ETag, or *")),
    responses((status = 200, description = "Ended", body = SilenceRecord),
              (status = 409, description = "Already over", body = crate::error::ErrorBody),
              crate::http::openapi::Replacing))]
pub async fn expire(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
) -> AppResult<Response> {
    let id = parse_id(&id, "silence")?;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::expire(tx, &auth.actor, id, version))
    })
    .await
}

/// Which of the last 7 days' alerts a draft silence would have held. Nothing is saved.
#[utoipa::path(post, path = "/api/v1/silences/preview", operation_id = "previewSilence", tag = "alerts",
    request_body = SilenceDraft,
    responses((status = 200, description = "OK", body = SilencePreview), crate::http::openapi::Invalid))]
pub async fn preview(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<SilenceDraft>,
) -> AppResult<Json<SilencePreview>> {
    let mut conn = state.pool.acquire().await?;
    let sees = SeenBy::of(&auth.user);
    Ok(Json(actions::preview(&mut conn, &body.value, sees).await?))
}

/// The longest a silence may last.
#[utoipa::path(get, path = "/api/v1/silences/policy", operation_id = "getSilencePolicy", tag = "alerts",
    responses((status = 200, description = "With an ETag", body = SilencePolicy)))]
pub async fn policy(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Response> {
    let p = db::policy(&state.pool).await?;
    Ok(with_etag(StatusCode::OK, p.version, &p))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SilencePolicyDraft {
    /// The longest a silence may last, in hours (1 to 8784)
    pub max_hours: i32,
}

/// Set the longest a silence may last (admins; If-Match). Silences already made keep their end.
#[utoipa::path(put, path = "/api/v1/silences/policy", operation_id = "setSilencePolicy", tag = "alerts",
    params(("If-Match" = String, Header, description = "The policy's ETag")),
    request_body = SilencePolicyDraft,
    responses((status = 200, description = "OK", body = SilencePolicy), crate::http::openapi::Replacing, crate::http::openapi::AdminsOnly))]
pub async fn set_policy(
    ApiRequest(state, auth): ApiRequest<Admin>,
    IfMatch(version): IfMatch,
    body: ApiJson<SilencePolicyDraft>,
) -> AppResult<Response> {
    let hours = body.value.max_hours;
    write::versioned(&state.pool, StatusCode::OK, |tx, _| {
        Box::pin(actions::set_policy(tx, &auth.actor, hours, version))
    })
    .await
}

impl write::Versioned for SilenceRecord {
    fn version(&self) -> i32 {
        self.version
    }
}

impl write::Versioned for SilencePolicy {
    fn version(&self) -> i32 {
        self.version
    }
}

// Alertmanager's API v2 silences, as `amtool` speaks them: point `amtool --alertmanager.url`
// at `<quell>/api/v1/alertmanager` with a Quell API token as its bearer credential.

/// A matcher as Alertmanager's API writes it.
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AmMatcher {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub is_regex: bool,
    /// false: `!=` or `!~`
    #[serde(default = "yes")]
    pub is_equal: bool,
}

fn yes() -> bool {
    true
}

/// Alertmanager's `PostableSilence`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostableSilence {
    /// Given: the silence this one replaces (it is ended, as Alertmanager does)
    #[serde(default)]
    pub id: Option<String>,
    pub matchers: Vec<AmMatcher>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Kept in the comment when it is not the token's owner
    #[serde(default)]
    pub created_by: String,
    #[serde(default)]
    pub comment: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SilenceCreated {
    #[serde(rename = "silenceID")]
    pub silence_id: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AmStatus {
    /// pending, active or expired
    pub state: String,
}

/// Alertmanager's `GettableSilence`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GettableSilence {
    pub id: String,
    pub status: AmStatus,
    pub updated_at: DateTime<Utc>,
    pub matchers: Vec<AmMatcher>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub created_by: String,
    pub comment: String,
}

fn gettable(s: SilenceRecord) -> GettableSilence {
    let matchers = s
        .matchers
        .iter()
        .flat_map(|t| domain::read_matchers("matchers", t).unwrap_or_default())
        .map(|m| AmMatcher {
            is_regex: matches!(m.op, MatchOp::Re | MatchOp::NotRe),
            is_equal: matches!(m.op, MatchOp::Eq | MatchOp::Re),
            name: m.name,
            value: m.value,
        })
        .collect();
    GettableSilence {
        id: s.id.to_string(),
        status: AmStatus {
            state: s.state.as_str().to_owned(),
        },
        updated_at: s.updated_at,
        matchers,
        starts_at: s.starts_at,
        ends_at: s.ends_at,
        created_by: s.created_by,
        comment: s.comment,
    }
}

/// What `amtool` asks first: who is answering.
#[utoipa::path(get, path = "/api/v1/alertmanager/api/v2/status", operation_id = "alertmanagerStatus", tag = "alerts",
    responses((status = 200, description = "Alertmanager's status shape, enough for amtool", body = Object)))]
pub async fn am_status(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<Value>> {
    let now = crate::clock::now(&state.pool).await?;
    Ok(Json(json!({
        "cluster": {"status": "disabled", "peers": []},
        "config": {"original": ""},
        "uptime": now,
        "versionInfo": {"version": env!("CARGO_PKG_VERSION"), "branch": "quell",
                        "buildDate": "", "buildUser": "", "goVersion": "", "revision": ""},
    })))
}

/// Silences in Alertmanager's shape (every current one and the last 200 over); each `filter`
/// (`amtool silence query alertname=Foo` sends one per matcher) keeps those with a matcher of
/// that name whose value it matches, as Alertmanager does.
#[utoipa::path(get, path = "/api/v1/alertmanager/api/v2/silences", operation_id = "alertmanagerListSilences", tag = "alerts",
    params(("filter" = Option<Vec<String>>, Query, description = "A matcher such as alertname=Foo; repeated")),
    responses((status = 200, description = "OK", body = Vec<GettableSilence>), crate::http::openapi::Invalid))]
pub async fn am_list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    RawQuery(query): RawQuery,
) -> AppResult<Json<Vec<GettableSilence>>> {
    let mut filters: Vec<Matcher> = Vec::new();
    for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if k == "filter" {
            filters.extend(domain::read_matchers("filter", &v)?);
        }
    }
    let mut all = db::list(&state.pool, true, 1000, SeenBy::ALL).await?;
    all.extend(db::list(&state.pool, false, 200, SeenBy::ALL).await?);
    let kept = all.into_iter().map(gettable).filter(|g| {
        filters.iter().all(|f| {
            g.matchers
                .iter()
                .any(|m| m.name == f.name && f.holds(Some(&m.value)))
        })
    });
    Ok(Json(kept.collect()))
}

/// One silence in Alertmanager's shape.
#[utoipa::path(get, path = "/api/v1/alertmanager/api/v2/silence/{id}", operation_id = "alertmanagerGetSilence", tag = "alerts",
    params(("id" = String, Path, description = "Silence id")),
    responses((status = 200, description = "OK", body = GettableSilence), crate::http::openapi::NotFound))]
pub async fn am_get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<Json<GettableSilence>> {
    let id = parse_id(&id, "silence")?;
    Ok(Json(gettable(
        actions::find(&state.pool, id, SeenBy::ALL).await?,
    )))
}

/// Make a silence from Alertmanager's `PostableSilence` (`amtool silence add`); with an
/// `id`, the silence it names is ended and this one replaces it (`amtool silence update`).
#[utoipa::path(post, path = "/api/v1/alertmanager/api/v2/silences", operation_id = "alertmanagerPostSilence", tag = "alerts",
    request_body = PostableSilence,
    responses((status = 200, description = "Made", body = SilenceCreated), crate::http::openapi::Invalid))]
pub async fn am_post(
    ApiRequest(state, auth): ApiRequest<Responder>,
    body: ApiJson<PostableSilence>,
) -> AppResult<Json<SilenceCreated>> {
    let p = &body.value;
    let mut texts = Vec::with_capacity(p.matchers.len());
    for m in &p.matchers {
        let op = match (m.is_equal, m.is_regex) {
            (true, false) => MatchOp::Eq,
            (false, false) => MatchOp::Ne,
            (true, true) => MatchOp::Re,
            (false, true) => MatchOp::NotRe,
        };
        texts.push(Matcher::new("matchers", &m.name, op, &m.value)?.text());
    }
    let by = p.created_by.trim();
    let comment = if by.is_empty() || by == auth.actor.name {
        p.comment.clone()
    } else {
        format!("{} (by {by})", p.comment.trim())
    };
    let draft = SilenceDraft {
        matchers: texts,
        starts_at: Some(p.starts_at),
        ends_at: Some(p.ends_at),
        duration: None,
        comment,
    };
    let replaces = match p.id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some(id) => Some(parse_id(id, "silence")?),
        None => None,
    };
    let person = Some(auth.user.id);
    let made = crate::transaction::write(&state.pool, |tx, _| {
        let (draft, actor) = (&draft, &auth.actor);
        Box::pin(async move {
            if let Some(old) = replaces {
                let before = actions::find(&mut *tx, old, SeenBy::ALL).await?;
                if before.state != domain::State::Expired {
                    actions::expire(&mut *tx, actor, old, None).await?;
                }
            }
            actions::create(tx, actor, person, draft).await
        })
    })
    .await?;
    Ok(Json(SilenceCreated {
        silence_id: made.id.to_string(),
    }))
}

/// End a silence (`amtool silence expire`).
#[utoipa::path(delete, path = "/api/v1/alertmanager/api/v2/silence/{id}", operation_id = "alertmanagerDeleteSilence", tag = "alerts",
    params(("id" = String, Path, description = "Silence id")),
    responses((status = 200, description = "Ended"), crate::http::openapi::NotFound,
              (status = 409, description = "Already over", body = crate::error::ErrorBody)))]
pub async fn am_delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "silence")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::expire(tx, &auth.actor, id, None))
    })
    .await?;
    Ok(StatusCode::OK)
}
