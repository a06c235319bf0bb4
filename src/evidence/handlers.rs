//! The evidence API under `/api/v1/incidents/{key}/evidence`: viewers read, responders attach,
//! upload exports and pick from them, and read files from git.

use axum::Json;
use axum::body::Body;
use axum::extract::Path;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::actions::{self, Format, GitRead, ImportSummary, Pick, Upload};
use super::db::{self, Item, Row, RowFilter};
use super::domain::{Evidence, UPLOAD_LIMIT};
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::bodies::Work;
use crate::http::extract::{ApiJson, ApiQuery, parse_id, query_limit, query_text};
use crate::http::request::ApiRequest;
use crate::http::write;
use crate::incidents::db::get_named;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EvidenceList)]
pub struct ItemList {
    pub items: Vec<Item>,
}

/// An incident's evidence: pasted, imported and read from git, each with its source.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/evidence", operation_id = "listEvidence", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184")),
    responses((status = 200, description = "Oldest first", body = ItemList), (status = 404, description = "No such incident", body = crate::error::ErrorBody)))]
pub async fn list(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<ItemList>> {
    let incident = get_named(&state.pool, &key).await?;
    Ok(Json(ItemList {
        items: db::list(&state.pool, incident.id, None).await?,
    }))
}

/// Attach a pasted code snippet (repository, path, commit, language), chat excerpt (channel,
/// author, time), ticket (key) or metric description.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/evidence", operation_id = "attachEvidence", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184")),
    request_body = Evidence,
    responses((status = 201, description = "Attached", body = Item), (status = 404, description = "No such incident", body = crate::error::ErrorBody),
              (status = 422, description = "A field is wrong or missing for the kind (source.path of code …), named in details", body = crate::error::ErrorBody)))]
pub async fn attach(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<Evidence>,
) -> AppResult<(StatusCode, Json<Item>)> {
    let item = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::attach(tx, &auth.actor, &key, &body.value))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// Remove an item.
#[utoipa::path(delete, path = "/api/v1/incidents/{key}/evidence/{id}", operation_id = "removeEvidence", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184"), ("id" = i64, Path, description = "The item's id")),
    responses((status = 204, description = "Removed"), (status = 404, description = "No such incident or item", body = crate::error::ErrorBody)))]
pub async fn remove(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "evidence item")?;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::remove(tx, &auth.actor, &key, id))
    })
    .await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// slack (the workspace export's zip), slack_channel (one day file of a channel), linear or
    /// jira (CSV or JSON)
    pub format: Option<String>,
    /// slack_channel: the channel the file comes from
    pub channel: Option<String>,
    /// The file's name, for the record
    pub name: Option<String>,
}

/// The whole body, up to the upload limit (above the API's usual one); past it, 413.
pub async fn read_upload(body: Body) -> AppResult<Vec<u8>> {
    axum::body::to_bytes(body, UPLOAD_LIMIT)
        .await
        .map(|b| b.to_vec())
        .map_err(|_| AppError::TooLarge {
            limit_mib: UPLOAD_LIMIT / (1024 * 1024),
        })
}

/// Parses an upload off the async threads, once the request holds room for the work.
pub async fn parse(upload: Upload, work: &Work) -> AppResult<actions::Parsed> {
    work.need(actions::work_bytes(&upload)).await?;
    tokio::task::spawn_blocking(move || actions::parse(upload))
        .await
        .map_err(|e| AppError::Internal(format!("reading the upload stopped: {e}")))?
        .map_err(AppError::from)
}

/// Upload an export (the file is the body, at most 25 MiB): a Slack workspace export's zip, one
/// channel's day file, or a Linear or Jira export in CSV or JSON. It is parsed strictly — a bad
/// file is refused naming what is wrong, and nothing is kept — then held for a day while you
/// pick messages or tickets from it.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/evidence/imports", operation_id = "uploadEvidenceExport", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184"), UploadQuery),
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 201, description = "Held; its channels (Slack) and number of rows", body = ImportSummary),
              (status = 413, description = "Over 25 MiB", body = crate::error::ErrorBody),
              (status = 429, description = "It would take you or everyone past the upload quota", body = crate::error::ErrorBody),
              (status = 422, description = "The file is not what the format says (the file, row and problem named), or format or channel is missing", body = crate::error::ErrorBody)))]
pub async fn upload(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    ApiQuery(q): ApiQuery<UploadQuery>,
    work: Work,
    body: Body,
) -> AppResult<(StatusCode, Json<ImportSummary>)> {
    let format = Format::parse(query_text(&q.format).as_deref().unwrap_or(""))?;
    get_named(&state.pool, &key).await?;
    let bytes = read_upload(body).await?;
    let name = query_text(&q.name).unwrap_or_else(|| "upload".into());
    let parsed = parse(
        Upload {
            format,
            channel: query_text(&q.channel),
            files: vec![(name, bytes)],
        },
        &work,
    )
    .await?;
    let held = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::hold(
            tx,
            &auth.actor,
            &key,
            &parsed,
            &state.config.uploads,
        ))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(held)))
}

/// Remove an uploaded export before it is forgotten (its uploader, or an admin), freeing its
/// room in the upload quota.
#[utoipa::path(delete, path = "/api/v1/incidents/{key}/evidence/imports/{import_id}", operation_id = "removeEvidenceExport", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184"), ("import_id" = i64, Path, description = "The upload's id")),
    responses((status = 204, description = "Removed"), (status = 403, description = "Someone else's upload", body = crate::error::ErrorBody),
              (status = 404, description = "No such incident or upload", body = crate::error::ErrorBody)))]
pub async fn forget(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
) -> AppResult<StatusCode> {
    let import_id = parse_id(&import_id, "upload")?;
    let admin = auth.user.role == crate::auth::domain::UserRole::Admin;
    write::removed(&state.pool, |tx, _| {
        Box::pin(actions::forget(tx, &auth.actor, admin, &key, import_id))
    })
    .await
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RowQuery {
    /// Slack: one channel's messages
    pub channel: Option<String>,
    /// Messages at or after this time (RFC 3339)
    pub from: Option<String>,
    /// Messages at or before this time (RFC 3339)
    pub to: Option<String>,
    /// At most this many rows (default 500, at most 2000)
    pub limit: Option<String>,
}

fn query_time(field: &str, v: &Option<String>) -> AppResult<Option<DateTime<Utc>>> {
    query_text(v)
        .map(|t| {
            DateTime::parse_from_rfc3339(&t)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| AppError::invalid(field, "a time like 2026-10-21T22:10:00Z"))
        })
        .transpose()
}

impl RowQuery {
    pub fn filter(&self) -> AppResult<(Option<String>, RowFilter<'static>)> {
        Ok((
            query_text(&self.channel).map(|c| c.trim_start_matches('#').to_owned()),
            RowFilter {
                from: query_time("from", &self.from)?,
                to: query_time("to", &self.to)?,
                limit: query_limit(&self.limit, 500, 2000)?,
                ..Default::default()
            },
        ))
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct HeldExport {
    #[serde(flatten)]
    pub summary: ImportSummary,
    /// Messages (channel, author, at, text) or tickets (key, title, at = created, text), each
    /// with the number to pick it by
    pub rows: Vec<Row>,
}

/// An uploaded export: its channels, and its messages in a channel and time range (or its
/// tickets), to pick from.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/evidence/imports/{import_id}", operation_id = "getEvidenceExport", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184"), ("import_id" = i64, Path, description = "The upload's id"), RowQuery),
    responses((status = 200, description = "OK", body = HeldExport), (status = 404, description = "No such incident or upload (uploads are kept a day)", body = crate::error::ErrorBody),
              (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn held(
    ApiRequest(state, _): ApiRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<RowQuery>,
) -> AppResult<Json<HeldExport>> {
    let import_id = parse_id(&import_id, "upload")?;
    let (channel, mut filter) = q.filter()?;
    let mut conn = state.pool.acquire().await?;
    let incident = get_named(&mut *conn, &key).await?;
    let summary = actions::summary(&mut conn, &incident, import_id).await?;
    filter.channel = channel.as_deref();
    let rows = db::rows(&mut *conn, import_id, &filter).await?;
    Ok(Json(HeldExport { summary, rows }))
}

/// Attach from an uploaded export: the picked messages (of one channel) as one chat excerpt, or
/// each picked ticket.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/evidence/imports/{import_id}/pick", operation_id = "pickEvidence", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184"), ("import_id" = i64, Path, description = "The upload's id")),
    request_body = Pick,
    responses((status = 201, description = "Attached", body = ItemList), (status = 404, description = "No such incident or upload", body = crate::error::ErrorBody),
              (status = 422, description = "Nothing picked, a row the upload lacks, messages from two channels …", body = crate::error::ErrorBody)))]
pub async fn pick(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
    body: ApiJson<Pick>,
) -> AppResult<(StatusCode, Json<ItemList>)> {
    let import_id = parse_id(&import_id, "upload")?;
    let items = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::pick(tx, &auth.actor, &key, import_id, &body.value))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(ItemList { items })))
}

/// Attach a file from a git repository on this server (under `QUELL_GIT_ROOTS`) as it was at
/// the last commit before the incident started, with its repository, path, commit and language.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/evidence/git", operation_id = "attachEvidenceFromGit", tag = "incidents",
    params(("key" = String, Path, description = "e.g. INC-184")),
    request_body = GitRead,
    responses((status = 201, description = "Attached", body = Item), (status = 404, description = "No such incident", body = crate::error::ErrorBody),
              (status = 422, description = "Reading git is not set up, the repository is outside the allowed folders or not one, no commit before the incident, no such file, not text, bad lines …", body = crate::error::ErrorBody)))]
pub async fn from_git(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<GitRead>,
) -> AppResult<(StatusCode, Json<Item>)> {
    let incident = get_named(&state.pool, &key).await?;
    let (file, read) =
        actions::read_git(state.config.git_roots.clone(), &incident, body.value).await?;
    let item = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::attach_git(tx, &auth.actor, &key, &file, &read))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(item)))
}
