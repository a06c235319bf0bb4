//! `/admin/trackers`: the admins' list of work-item trackers, added, changed and removed.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::db::{self, Tracker};
use super::handlers::{TrackerDraft, remove, save};
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Auth};
use crate::http::extract::PageForm;
use crate::http::extract::parse_id;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "admin/trackers.html")]
pub struct TrackersPage {
    chrome: Chrome,
    trackers: Vec<Tracker>,
    errors: Vec<FieldError>,
    /// What the refused form said, to show it again.
    draft: (String, String, String),
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    errors: Vec<FieldError>,
    draft: (String, String, String),
) -> PageResult<TrackersPage> {
    Ok(TrackersPage {
        chrome,
        trackers: db::all(&state.pool).await?,
        errors,
        draft,
    })
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<TrackersPage> {
    page(&state, chrome, vec![], Default::default()).await
}

#[derive(Deserialize)]
pub struct TrackerForm {
    prefix: String,
    name: String,
    url_template: String,
}

/// Adds (`/admin/trackers`) or changes (`/admin/trackers/{id}`) a tracker; a refused form comes
/// back with what was wrong and what was typed.
async fn submit(
    state: AppState,
    chrome: Chrome,
    auth: Auth<Admin>,
    id: Option<i64>,
    form: TrackerForm,
) -> PageResult<Response> {
    let draft = TrackerDraft {
        prefix: form.prefix,
        name: form.name,
        url_template: form.url_template,
    };
    let (status, errors) = match save(&state, &auth.actor, id, &draft).await {
        Ok(_) => return Ok(Redirect::to("/admin/trackers").into_response()),
        Err(AppError::Validation(errors)) => (StatusCode::UNPROCESSABLE_ENTITY, errors),
        Err(AppError::Conflict(message)) => (
            StatusCode::CONFLICT,
            vec![FieldError {
                field: "prefix".into(),
                message,
            }],
        ),
        Err(other) => return Err(PageError(other)),
    };
    let typed = (draft.prefix, draft.name, draft.url_template);
    Ok((status, page(&state, chrome, errors, typed).await?).into_response())
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<TrackerForm>,
) -> PageResult<Response> {
    submit(state, chrome, auth, None, form).await
}

pub async fn update(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<TrackerForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "tracker")?;
    submit(state, chrome, auth, Some(id), form).await
}

pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "tracker")?;
    remove(&state, &auth.actor, id).await?;
    Ok(Redirect::to("/admin/trackers"))
}
