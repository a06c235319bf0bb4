//! Evidence pages: `/incidents/{key}/evidence` lists an incident's evidence with forms to paste
//! an item, upload a Slack, Linear or Jira export, and read a file from git;
//! `/incidents/{key}/evidence/imports/{id}` picks a channel and time range, then messages (or
//! tickets) from an upload. Viewers read; responders attach.

use std::collections::HashMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;

use super::actions::{self, Format, GitRead, ImportSummary, Pick, Upload};
use super::db::{self, Item, Row, RowFilter};
use super::domain::{Evidence, EvidenceKind, Source};
use super::handlers::parse;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{
    ApiQuery, PageForm, PageUpload, form_time, parse_form_time, parse_id, query_text,
};
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::incidents::db::{Incident, get_named};
use crate::state::AppState;

/// The paste form as typed.
#[derive(Deserialize, Default)]
pub struct PasteForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    repository: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    commit: String,
    #[serde(default)]
    language: String,
    #[serde(default)]
    channel: String,
    #[serde(default)]
    author: String,
    #[serde(default)]
    at: String,
    #[serde(default)]
    key: String,
}

fn given(v: &str) -> Option<String> {
    Some(v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl PasteForm {
    /// An empty form, a code snippet by default.
    fn fresh() -> Self {
        Self {
            kind: "code".into(),
            ..Default::default()
        }
    }

    fn evidence(&self) -> Result<Evidence, AppError> {
        let kind = EvidenceKind::parse(self.kind.trim())
            .ok_or_else(|| AppError::invalid("kind", "choose code, chat, ticket or metric"))?;
        Ok(Evidence {
            kind,
            title: self.title.clone(),
            text: self.text.clone(),
            source: Source {
                repository: given(&self.repository),
                path: given(&self.path),
                commit: given(&self.commit),
                language: given(&self.language),
                channel: given(&self.channel),
                author: given(&self.author),
                at: parse_form_time("at", &self.at)?,
                key: given(&self.key),
            },
        })
    }
}

/// The git form as typed.
#[derive(Deserialize, Default)]
pub struct GitForm {
    #[serde(default)]
    repository: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    reference: String,
    #[serde(default)]
    lines: String,
    #[serde(default)]
    language: String,
    #[serde(default)]
    title: String,
}

impl GitForm {
    fn read(&self) -> GitRead {
        GitRead {
            repository: self.repository.clone(),
            path: self.path.clone(),
            reference: given(&self.reference),
            lines: given(&self.lines),
            language: given(&self.language),
            title: given(&self.title),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "evidence/list.html")]
pub struct ListPage {
    chrome: Chrome,
    key: String,
    title: String,
    started_at: DateTime<Utc>,
    items: Vec<Item>,
    git_enabled: bool,
    paste: PasteForm,
    git: GitForm,
    /// Which form the errors belong to: paste, upload or git
    failed: &'static str,
    errors: Vec<FieldError>,
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    incident: &Incident,
    failed: &'static str,
    errors: Vec<FieldError>,
    paste: PasteForm,
    git: GitForm,
) -> PageResult<ListPage> {
    Ok(ListPage {
        chrome,
        key: incident.key.to_string(),
        title: incident.title.clone(),
        started_at: incident.started_at,
        items: db::list(&state.pool, incident.id, None).await?,
        git_enabled: !state.config.git_roots.is_empty(),
        paste,
        git,
        failed,
        errors,
    })
}

pub async fn list(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(key): Path<String>,
) -> PageResult<ListPage> {
    let incident = get_named(&state.pool, &key).await?;
    list_page(
        &state,
        chrome,
        &incident,
        "",
        vec![],
        PasteForm::fresh(),
        GitForm::default(),
    )
    .await
}

fn to_list(key: &str) -> Response {
    Redirect::to(&format!("/incidents/{key}/evidence")).into_response()
}

/// A field error re-shows the list with the form as typed; anything else is an error page.
async fn refused(
    state: &AppState,
    chrome: Chrome,
    incident: &Incident,
    failed: &'static str,
    err: AppError,
    paste: PasteForm,
    git: GitForm,
) -> PageResult<Response> {
    match err {
        AppError::Validation(errors) => Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            list_page(state, chrome, incident, failed, errors, paste, git).await?,
        )
            .into_response()),
        other => Err(PageError(other)),
    }
}

pub async fn paste(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<PasteForm>,
) -> PageResult<Response> {
    let incident = get_named(&state.pool, &key).await?;
    let attached = async {
        let item = form.evidence()?;
        crate::transaction::write(&state.pool, |tx, _| {
            Box::pin(actions::attach(tx, &auth.actor, &key, &item))
        })
        .await?;
        Ok::<_, AppError>(())
    }
    .await;
    match attached {
        Ok(()) => Ok(to_list(&incident.key.to_string())),
        Err(e) => {
            refused(
                &state,
                chrome,
                &incident,
                "paste",
                e,
                form,
                GitForm::default(),
            )
            .await
        }
    }
}

#[derive(Deserialize)]
pub struct RemoveForm {}

pub async fn remove(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
    PageForm(_): PageForm<RemoveForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "evidence item")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::remove(tx, &auth.actor, &key, id))
    })
    .await?;
    Ok(to_list(&key))
}

pub async fn from_git(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<GitForm>,
) -> PageResult<Response> {
    let incident = get_named(&state.pool, &key).await?;
    let attached = async {
        let (file, read) =
            actions::read_git(state.config.git_roots.clone(), &incident, form.read()).await?;
        crate::transaction::write(&state.pool, |tx, _| {
            Box::pin(actions::attach_git(tx, &auth.actor, &key, &file, &read))
        })
        .await?;
        Ok::<_, AppError>(())
    }
    .await;
    match attached {
        Ok(()) => Ok(to_list(&incident.key.to_string())),
        Err(e) => {
            let paste = PasteForm::fresh();
            refused(&state, chrome, &incident, "git", e, paste, form).await
        }
    }
}

pub async fn upload(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    work: crate::http::bodies::Work,
    form: PageUpload,
) -> PageResult<Response> {
    let incident = get_named(&state.pool, &key).await?;
    let held = async {
        let format = Format::parse(form.field("format"))?;
        let channel = given(form.field("channel"));
        let files = form
            .files
            .into_iter()
            .filter(|(field, _, _)| field == "file")
            .map(|(_, name, bytes)| (name, bytes))
            .collect();
        let parsed = parse(
            Upload {
                format,
                channel,
                files,
            },
            &work,
        )
        .await?;
        let mut tx = crate::transaction::begin(&state.pool).await?;
        let held =
            actions::hold(&mut tx, &auth.actor, &key, &parsed, &state.config.uploads).await?;
        tx.commit().await?;
        Ok::<_, AppError>(held)
    }
    .await;
    match held {
        Ok(h) => Ok(Redirect::to(&format!(
            "/incidents/{}/evidence/imports/{}",
            incident.key, h.import.id
        ))
        .into_response()),
        Err(e) => {
            let paste = PasteForm::fresh();
            refused(
                &state,
                chrome,
                &incident,
                "upload",
                e,
                paste,
                GitForm::default(),
            )
            .await
        }
    }
}

#[derive(Deserialize)]
pub struct PickQuery {
    channel: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "evidence/import.html")]
pub struct ImportPage {
    chrome: Chrome,
    key: String,
    held: ImportSummary,
    channel: String,
    from: String,
    to: String,
    rows: Vec<Row>,
    /// More rows matched than are shown
    more: bool,
    errors: Vec<FieldError>,
}

impl ImportPage {
    fn chat(&self) -> bool {
        self.held.import.format == "slack"
    }

    fn time(&self, at: &Option<DateTime<Utc>>) -> String {
        at.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_default()
    }
}

const SHOWN: i64 = 500;

async fn import_page(
    state: &AppState,
    chrome: Chrome,
    incident: &Incident,
    import_id: i64,
    q: &PickQuery,
    errors: Vec<FieldError>,
) -> PageResult<ImportPage> {
    let mut conn = state.pool.acquire().await?;
    let held = actions::summary(&mut conn, incident, import_id).await?;
    let chat = held.import.format == "slack";
    // A channel must be picked before its messages show: the first one by default. The range
    // defaults to the hour before the incident started until it was resolved (or now).
    let channel = query_text(&q.channel)
        .map(|c| c.trim_start_matches('#').to_owned())
        .or_else(|| held.channels.first().map(|c| c.name.clone()))
        .unwrap_or_default();
    let from = match query_text(&q.from) {
        Some(f) => parse_form_time("from", &f)?,
        None if chat => Some(incident.started_at - Duration::hours(1)),
        None => None,
    };
    let to = match query_text(&q.to) {
        Some(t) => parse_form_time("to", &t)?,
        None => None,
    };
    let filter = RowFilter {
        channel: chat.then_some(channel.as_str()),
        from,
        to,
        ns: None,
        limit: SHOWN + 1,
    };
    let mut rows = db::rows(&mut *conn, import_id, &filter).await?;
    let more = rows.len() as i64 > SHOWN;
    rows.truncate(SHOWN as usize);
    Ok(ImportPage {
        chrome,
        key: incident.key.to_string(),
        held,
        channel,
        from: from.map(form_time).unwrap_or_default(),
        to: to.map(form_time).unwrap_or_default(),
        rows,
        more,
        errors,
    })
}

pub async fn held(
    PageRequest(state, chrome, _): PageRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<PickQuery>,
) -> PageResult<ImportPage> {
    let import_id = parse_id(&import_id, "upload")?;
    let incident = get_named(&state.pool, &key).await?;
    import_page(&state, chrome, &incident, import_id, &q, vec![]).await
}

/// `POST …/imports/{id}/remove`: forgets the upload (its uploader, or an admin), back to the
/// incident's evidence.
pub async fn remove_upload(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
    PageForm(_): PageForm<HashMap<String, String>>,
) -> PageResult<Response> {
    let import_id = parse_id(&import_id, "upload")?;
    let admin = auth.user.role == crate::auth::domain::UserRole::Admin;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::forget(tx, &auth.actor, admin, &key, import_id))
    })
    .await?;
    let incident = get_named(&state.pool, &key).await?;
    Ok(Redirect::to(&format!("/incidents/{}/evidence", incident.key)).into_response())
}

/// The pick form: a checkbox `row.<n>` per message or ticket, the excerpt's title, and the
/// channel and range it was shown with (to show it again on an error).
#[derive(Deserialize)]
pub struct PickForm {
    #[serde(flatten)]
    fields: HashMap<String, String>,
}

pub async fn pick(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path((key, import_id)): Path<(String, String)>,
    PageForm(form): PageForm<PickForm>,
) -> PageResult<Response> {
    let import_id = parse_id(&import_id, "upload")?;
    let incident = get_named(&state.pool, &key).await?;
    let mut rows: Vec<i32> = form
        .fields
        .keys()
        .filter_map(|k| k.strip_prefix("row.")?.parse().ok())
        .collect();
    rows.sort_unstable();
    let field = |k: &str| form.fields.get(k).cloned();
    let p = Pick {
        rows,
        title: field("title").and_then(|t| given(&t)),
    };
    let picked = async {
        crate::transaction::write(&state.pool, |tx, _| {
            Box::pin(actions::pick(tx, &auth.actor, &key, import_id, &p))
        })
        .await?;
        Ok::<_, AppError>(())
    }
    .await;
    match picked {
        Ok(()) => Ok(to_list(&incident.key.to_string())),
        Err(AppError::Validation(errors)) => {
            let q = PickQuery {
                channel: field("channel"),
                from: field("from"),
                to: field("to"),
            };
            Ok((
                StatusCode::UNPROCESSABLE_ENTITY,
                import_page(&state, chrome, &incident, import_id, &q, errors).await?,
            )
                .into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}
