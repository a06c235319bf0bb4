//! `/api/v1/action-items`: every postmortem's action items, filtered; and their status.

use axum::Json;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::actions::{self, ItemEdit};
use super::db::{self, ItemFilter, ItemRow, ListedItem};
use super::domain;
use crate::action_items::domain::ItemCursor;
use crate::audit;
use crate::domain::{MAX_PAGE, PAGE};
use crate::error::{AppError, AppResult};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::parse_id;
use crate::http::extract::{
    ApiJson, ApiQuery, OptionalIfMatch, double_option, etag, query_cursor, query_flag, query_limit,
    query_period, query_text,
};
use crate::http::request::ApiRequest;
use crate::incident_ref::domain::SeenBy;
use crate::state::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ItemQuery {
    /// The owner's handle or email
    pub owner: Option<String>,
    /// open, in_progress, done, wont_do, unfinished (open or in progress) or any (the default)
    pub status: Option<String>,
    /// prevent, detect, mitigate or process
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// true: only items past their due date and not done
    pub overdue: Option<String>,
    /// Only items of incidents of the services this team (by its slug) owns, or `mine`: the
    /// teams you are in
    pub team: Option<String>,
    /// Items per page, 1 to 500 (100)
    pub limit: Option<String>,
    /// `next_cursor` of the previous page
    pub cursor: Option<String>,
}

impl ItemQuery {
    /// The filters; no status given means any.
    pub fn filter(&self) -> AppResult<ItemFilter> {
        self.filter_or("any")
    }

    /// The filters, with `status` when none is given (the page lists unfinished items unless
    /// asked).
    pub fn filter_or(&self, status: &str) -> AppResult<ItemFilter> {
        Ok(ItemFilter {
            owner: query_text(&self.owner),
            status: crate::action_items::domain::check_status_filter(
                &query_text(&self.status).unwrap_or_else(|| status.to_owned()),
            )?,
            kind: query_text(&self.kind)
                .map(|t| domain::check_action_type(&t).map(str::to_owned))
                .transpose()?,
            overdue: query_flag("overdue", &self.overdue)?,
            // read from `team` by the handler, which knows who asks
            teams: None,
        })
    }

    /// Where the page starts and how long it is.
    pub fn page(&self) -> AppResult<(Option<ItemCursor>, i64)> {
        Ok((
            query_cursor(&self.cursor, ItemCursor::decode)?,
            query_limit(&self.limit, PAGE, MAX_PAGE)?,
        ))
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ActionItemList)]
pub struct ItemList {
    pub items: Vec<ListedItem>,
    /// Pass as `cursor` for the next page; `null` on the last page
    pub next_cursor: Option<String>,
}

/// Action items across postmortems, soonest due first (no due date last), a page at a time.
#[utoipa::path(get, path = "/api/v1/action-items", operation_id = "listActionItems", tag = "postmortems", params(ItemQuery),
    responses((status = 200, description = "OK", body = ItemList), (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> AppResult<Json<ItemList>> {
    let mut filter = q.filter()?;
    let (after, limit) = q.page()?;
    let team = q.team.as_deref();
    filter.teams = crate::teams::actions::narrowed(&state.pool, auth.user.id, team)
        .await?
        .ids;
    let mut conn = state.pool.acquire().await?;
    let sees = SeenBy::of(&auth.user);
    let (items, next) = actions::list_items(&mut conn, &filter, sees, after, limit).await?;
    Ok(Json(ItemList {
        items,
        next_cursor: next.map(|c| c.encode()),
    }))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemPatch {
    pub action: Option<String>,
    /// prevent, detect, mitigate or process
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A handle or email; `null` leaves the item without an owner
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub owner: Option<Option<String>>,
    /// `YYYY-MM-DD`; `null` clears it
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub due_on: Option<Option<String>>,
    pub work_item: Option<String>,
    /// open, in_progress, done or wont_do
    pub status: Option<String>,
}

impl ItemPatch {
    fn edit(&self) -> ItemEdit<'_> {
        ItemEdit {
            action: self.action.as_deref(),
            kind: self.kind.as_deref(),
            owner: self.owner.as_ref().map(Option::as_deref),
            due_on: self.due_on.as_ref().map(Option::as_deref),
            work_item: self.work_item.as_deref(),
            status: self.status.as_deref(),
        }
    }
}

fn item_response(item: &ItemRow) -> Response {
    ([(header::ETAG, etag(item.version))], Json(item)).into_response()
}

/// Edit an action item; fields left out stay as they are. A status change alone needs no
/// `If-Match`; changing what the postmortem shows (action, type, owner, due date, work item)
/// does.
#[utoipa::path(patch, path = "/api/v1/action-items/{id}", operation_id = "updateActionItem", tag = "postmortems", request_body = ItemPatch,
    params(("id" = i64, Path, description = "Action item id"), ("If-Match" = Option<String>, Header)),
    responses((status = 200, description = "OK", body = ItemRow),
              crate::http::openapi::NotFound,
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid,
              (status = 428, description = "If-Match is missing for a change to the document", body = crate::error::ErrorBody)))]
pub async fn patch(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    OptionalIfMatch(version): OptionalIfMatch,
    headers: HeaderMap,
    body: ApiJson<ItemPatch>,
) -> AppResult<Response> {
    let id = parse_id(&id, "action item")?;
    let edit = body.value.edit();
    if !edit.changes_the_document() && edit.status.is_none() {
        return Err(AppError::invalid("body", "nothing to change"));
    }
    if edit.changes_the_document() && !headers.contains_key(header::IF_MATCH) {
        return Err(AppError::PreconditionRequired);
    }
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let was = actions::item(&mut tx, id, SeenBy::of(&auth.user)).await?;
    actions::edit_action_item(&mut tx, &auth.actor, &was, version, &edit).await?;
    let item = actions::item(&mut tx, id, SeenBy::of(&auth.user)).await?;
    tx.commit().await?;
    Ok(item_response(&item))
}

/// Remove an action item (its number is not reused). `If-Match` is checked when sent.
#[utoipa::path(delete, path = "/api/v1/action-items/{id}", operation_id = "deleteActionItem", tag = "postmortems",
    params(("id" = i64, Path, description = "Action item id"), ("If-Match" = Option<String>, Header)),
    responses(crate::http::openapi::Deleting,
              (status = 412, description = "Your copy is stale", body = crate::error::ErrorBody)))]
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    OptionalIfMatch(version): OptionalIfMatch,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "action item")?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let was = actions::item(&mut tx, id, SeenBy::of(&auth.user)).await?;
    actions::delete_action_item(&mut tx, &auth.actor, &was, version).await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sets the status alone (the action-items page), audited.
pub async fn set_status(
    state: &AppState,
    user: &crate::auth::CurrentUser,
    actor: &audit::Actor,
    id: i64,
    status: &str,
) -> AppResult<()> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let edit = ItemEdit {
        status: Some(status),
        ..Default::default()
    };
    let was = actions::item(&mut tx, id, SeenBy::of(user)).await?;
    actions::edit_action_item(&mut tx, actor, &was, None, &edit).await?;
    tx.commit().await?;
    Ok(())
}

/// A postmortem as the API returns it: the written sections as Markdown, the computed header,
/// figures and timeline, the action items, and where review and publication stand.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PostmortemJson {
    pub incident: String,
    pub title: String,
    /// draft, in_review or published
    pub status: String,
    pub version: i32,
    /// Each text section's Markdown, by name (summary, impact, root_cause, …)
    #[schema(value_type = Object)]
    pub sections: serde_json::Map<String, serde_json::Value>,
    /// The header table, label and value, in the document's order
    #[schema(value_type = Vec<Object>)]
    pub header: Vec<serde_json::Value>,
    /// The computed impact lines (failed requests, error budget)
    pub figures: Vec<String>,
    /// Time to detect / acknowledge / mitigate
    pub response: String,
    /// The Timeline as printed: the chosen events, one line per minute
    #[schema(value_type = Vec<Object>)]
    pub timeline: Vec<serde_json::Value>,
    pub action_items: Vec<db::ActionItem>,
    /// Incidents linked to this one, with their notes
    pub related: Vec<crate::related::db::Related>,
    pub published_version: Option<i32>,
    pub edited_after_publication: bool,
    pub open_comments: usize,
}

/// The incident's postmortem (started as an empty draft if it has none).
#[utoipa::path(get, path = "/api/v1/incidents/{key}/postmortem", operation_id = "getPostmortem", tag = "postmortems",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = PostmortemJson), crate::http::openapi::NotFound))]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Response> {
    let i = crate::incidents::db::get_named(&state.pool, &key).await?;
    let mut conn = state.pool.acquire().await?;
    let now = crate::clock::now(&mut *conn).await?;
    let doc = super::document::Document::load(&mut conn, &i, now).await?;
    let published = db::versions(&mut *conn, doc.pm.id)
        .await?
        .into_iter()
        .next();
    let comments = db::comments(&mut *conn, doc.pm.id).await?;
    let sections = domain::Section::ALL
        .into_iter()
        .map(|s| (s.as_str().to_owned(), doc.pm.section(s).into()))
        .collect();
    let body = PostmortemJson {
        incident: doc.key.clone(),
        title: doc.title.clone(),
        status: doc.pm.status.clone(),
        version: doc.pm.version,
        sections,
        header: doc
            .header
            .iter()
            .map(|(label, value)| serde_json::json!({ "label": label, "value": value }))
            .collect(),
        figures: doc.figures(),
        response: doc.response.clone(),
        timeline: doc
            .rows
            .iter()
            .map(|(time, text)| serde_json::json!({ "time": time, "text": text }))
            .collect(),
        published_version: published.as_ref().map(|p| p.number),
        edited_after_publication: doc.edited_after_publication(),
        open_comments: comments.iter().filter(|c| c.resolved_at.is_none()).count(),
        action_items: doc.items,
        related: doc.related,
    };
    Ok(([(header::ETAG, etag(body.version))], Json(body)).into_response())
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CommentList {
    pub items: Vec<db::Comment>,
}

/// Reviewers' comments on the postmortem, oldest first.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/postmortem/comments", operation_id = "listPostmortemComments", tag = "postmortems",
    params(("key" = String, Path, description = "Incident key")),
    responses((status = 200, description = "OK", body = CommentList), crate::http::openapi::NotFound))]
pub async fn comments(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<CommentList>> {
    let i = crate::incidents::db::get_named(&state.pool, &key).await?;
    let mut conn = state.pool.acquire().await?;
    let now = crate::clock::now(&mut *conn).await?;
    let pm = db::for_incident_or_draft(&mut *conn, i.id, now).await?;
    Ok(Json(CommentList {
        items: db::comments(&mut *conn, pm.id).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewComment {
    /// summary, impact, figures, timeline, root_cause, contributing_factors, detection,
    /// went_well, was_hard, got_lucky, action_items or lessons
    pub part: String,
    pub body: String,
}

/// Comment on a part of the postmortem (it changes nothing in the document).
#[utoipa::path(post, path = "/api/v1/incidents/{key}/postmortem/comments", operation_id = "addPostmortemComment", tag = "postmortems",
    params(("key" = String, Path, description = "Incident key")), request_body = NewComment,
    responses((status = 201, description = "Created", body = db::Comment),
              crate::http::openapi::NotFound,
              crate::http::openapi::Invalid))]
pub async fn add_comment(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<NewComment>,
) -> AppResult<Response> {
    let i = crate::incidents::db::get_named(&state.pool, &key).await?;
    let c = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::comment(
            tx,
            &auth.actor,
            &i,
            &body.value.part,
            &body.value.body,
        ))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(c)).into_response())
}

/// Mark a comment addressed.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/postmortem/comments/{id}/resolve", operation_id = "resolvePostmortemComment", tag = "postmortems",
    params(("key" = String, Path, description = "Incident key"), ("id" = i64, Path, description = "Comment id")),
    responses((status = 200, description = "OK", body = db::Comment), crate::http::openapi::NotFound))]
pub async fn resolve_comment(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
) -> AppResult<Json<db::Comment>> {
    let i = crate::incidents::db::get_named(&state.pool, &key).await?;
    let id = parse_id(&id, "comment")?;
    let c = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::resolve_comment(tx, &auth.actor, &i, id))
    })
    .await?;
    Ok(Json(c))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PostmortemQuery {
    /// published (the default), in_review, draft or any
    pub status: Option<String>,
    /// The service's name
    pub service: Option<String>,
    /// The highest severity the incident reached: Sev1 … Sev4
    pub severity: Option<String>,
    /// Incidents detected on or after this day (YYYY-MM-DD, UTC)
    pub from: Option<String>,
    /// Incidents detected on or before this day (YYYY-MM-DD, UTC)
    pub to: Option<String>,
    /// true: only postmortems with action items still open or in progress
    pub open_items: Option<String>,
    /// Only postmortems of incidents of the services this team (by its slug) owns, or `mine`:
    /// the teams you are in
    pub team: Option<String>,
    /// Postmortems per page, 1 to 500 (100)
    pub limit: Option<String>,
    /// `next_cursor` of the previous page
    pub cursor: Option<String>,
}

impl PostmortemQuery {
    pub fn filter(&self) -> AppResult<db::PostmortemFilter> {
        let status = match query_text(&self.status).as_deref() {
            None | Some("published") => Some("published".to_owned()),
            Some("any") => None,
            Some(s @ ("draft" | "in_review")) => Some(s.to_owned()),
            Some(other) => {
                return Err(AppError::invalid(
                    "status",
                    format!("{other:?} is not a status; use published, in_review, draft or any"),
                ));
            }
        };
        let (from, to) = query_period(&self.from, &self.to)?;
        Ok(db::PostmortemFilter {
            status,
            service: query_text(&self.service),
            severity: query_text(&self.severity)
                .map(|s| crate::domain::Severity::parse("severity", &s).map(|s| s.to_string()))
                .transpose()?,
            from,
            to,
            open_items: query_flag("open_items", &self.open_items)?,
            // read from `team` by the handler, which knows who asks
            teams: None,
        })
    }

    /// Where the page starts and how long it is.
    pub fn page(&self) -> AppResult<(Option<crate::domain::TimeCursor>, i64)> {
        Ok((
            query_cursor(&self.cursor, crate::domain::TimeCursor::decode)?,
            query_limit(&self.limit, PAGE, MAX_PAGE)?,
        ))
    }
}

/// A postmortem in the managers' list, its figures computed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PostmortemSummary {
    pub incident: String,
    pub title: String,
    pub service: Option<String>,
    /// The highest severity the incident reached
    pub severity: String,
    pub detected_at: chrono::DateTime<chrono::Utc>,
    /// draft, in_review or published
    pub status: String,
    pub published_at: Option<chrono::DateTime<chrono::Utc>>,
    pub owner: Option<String>,
    /// `detection → mitigation 0:45; → resolution 3:33`, once both are known
    pub duration: Option<String>,
    pub action_items: i64,
    pub open_action_items: i64,
    pub overdue_action_items: i64,
    /// Share of the service's monthly error budget the incident's failed requests used
    pub budget_consumed_percent: Option<i64>,
}

impl From<db::ListedPostmortem> for PostmortemSummary {
    fn from(p: db::ListedPostmortem) -> Self {
        let budget = domain::error_budget(
            p.slo_target_percent,
            p.avg_requests_per_second,
            p.failed_requests,
        );
        Self {
            duration: crate::incidents::domain::duration_line(
                p.detected_at,
                p.mitigated_at,
                p.resolved_at,
            ),
            budget_consumed_percent: budget.as_ref().map(domain::ErrorBudget::consumed_percent),
            incident: p.key.to_string(),
            title: p.title,
            service: p.service,
            severity: p.severity,
            detected_at: p.detected_at,
            status: p.status,
            published_at: p.published_at,
            owner: p.owner,
            action_items: p.items,
            open_action_items: p.open_items,
            overdue_action_items: p.overdue_items,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct PostmortemList {
    pub items: Vec<PostmortemSummary>,
    /// Pass as `cursor` for the next page; `null` on the last page
    pub next_cursor: Option<String>,
}

/// Postmortems for review: published ones by default, filtered by service, severity, period
/// and open action items; newest incident first, a page at a time.
#[utoipa::path(get, path = "/api/v1/postmortems", operation_id = "listPostmortems", tag = "postmortems", params(PostmortemQuery),
    responses((status = 200, description = "OK", body = PostmortemList), (status = 422, description = "A bad filter", body = crate::error::ErrorBody)))]
pub async fn list_postmortems(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    ApiQuery(q): ApiQuery<PostmortemQuery>,
) -> AppResult<Json<PostmortemList>> {
    let mut filter = q.filter()?;
    let (after, limit) = q.page()?;
    let team = q.team.as_deref();
    filter.teams = crate::teams::actions::narrowed(&state.pool, auth.user.id, team)
        .await?
        .ids;
    let sees = SeenBy::of(&auth.user);
    let (rows, next) = db::list(&state.pool, &filter, sees, after, limit).await?;
    Ok(Json(PostmortemList {
        items: rows.into_iter().map(PostmortemSummary::from).collect(),
        next_cursor: next.map(|c| c.encode()),
    }))
}
