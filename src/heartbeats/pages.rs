//! `/heartbeats`: every monitor with its health and last ping, a form to add one (its key shown
//! once), and each one's settings, pause and removal.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions::{self, MonitorDraft};
use super::domain::SEVERITIES;
use super::handlers::{Heartbeat, HeartbeatWithKey, parse_id};
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

/// A monitor's form as typed.
#[derive(Deserialize, Clone)]
pub struct MonitorForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    interval_minutes: String,
    #[serde(default)]
    grace_minutes: String,
    #[serde(default)]
    severity: String,
    #[serde(default)]
    description: String,
    enabled: Option<String>,
    version: Option<i32>,
}

impl Default for MonitorForm {
    fn default() -> Self {
        Self {
            name: String::new(),
            service: String::new(),
            interval_minutes: "60".into(),
            grace_minutes: "5".into(),
            severity: "error".into(),
            description: String::new(),
            enabled: Some("on".into()),
            version: None,
        }
    }
}

fn minutes(field: &str, text: &str) -> Result<i32, AppError> {
    text.trim()
        .parse()
        .map_err(|_| AppError::invalid(field, "a whole number of minutes"))
}

impl MonitorForm {
    fn draft(&self) -> Result<MonitorDraft, AppError> {
        Ok(MonitorDraft {
            name: self.name.clone(),
            description: self.description.clone(),
            service: self.service.clone(),
            interval_minutes: minutes("interval_minutes", &self.interval_minutes)?,
            grace_minutes: minutes("grace_minutes", &self.grace_minutes)?,
            severity: Some(self.severity.clone()),
            enabled: Some(self.enabled.is_some()),
        })
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "heartbeats/list.html")]
pub struct ListPage {
    chrome: Chrome,
    monitors: Vec<Heartbeat>,
    services: Vec<String>,
    severities: [&'static str; 4],
    form: MonitorForm,
    errors: Vec<FieldError>,
    made: Option<HeartbeatWithKey>,
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    form: MonitorForm,
    errors: Vec<FieldError>,
    made: Option<HeartbeatWithKey>,
) -> PageResult<ListPage> {
    let now = crate::clock::now(&state.pool).await?;
    Ok(ListPage {
        monitors: super::db::list(&state.pool)
            .await?
            .into_iter()
            .map(|m| Heartbeat::of(m, &state.config.base_url, now))
            .collect(),
        services: crate::services::db::list(&state.pool)
            .await?
            .into_iter()
            .map(|s| s.name)
            .collect(),
        severities: SEVERITIES,
        chrome,
        form,
        errors,
        made,
    })
}

pub async fn list(PageRequest(state, chrome, _): PageRequest<Viewer>) -> PageResult<ListPage> {
    list_page(&state, chrome, MonitorForm::default(), vec![], None).await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<MonitorForm>,
) -> PageResult<Response> {
    let tried = match form.draft() {
        Ok(draft) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::create(tx, &auth.actor, &draft))
            })
            .await
        }
        Err(e) => Err(e),
    };
    match tried {
        Ok(made) => {
            let now = crate::clock::now(&state.pool).await?;
            let shown = HeartbeatWithKey {
                heartbeat: Heartbeat::of(made.monitor, &state.config.base_url, now),
                key: made.key,
            };
            let page = list_page(&state, chrome, MonitorForm::default(), vec![], Some(shown));
            Ok((StatusCode::CREATED, page.await?).into_response())
        }
        Err(e) => {
            crate::http::page::form_again(e, async |errors| {
                let page = list_page(&state, chrome, form.clone(), errors, None).await?;
                Ok((StatusCode::UNPROCESSABLE_ENTITY, page))
            })
            .await
        }
    }
}

pub async fn update(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<MonitorForm>,
) -> PageResult<Response> {
    let id = parse_id(&id)?;
    let tried = match form.draft() {
        Ok(draft) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::update(tx, &auth.actor, id, &draft, form.version))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |m| format!("/heartbeats#hb-{}", m.id),
        async |errors| {
            let page = list_page(&state, chrome, form.clone(), errors, None).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page))
        },
    )
    .await
}

#[derive(Deserialize)]
pub struct RemoveForm {
    version: Option<i32>,
}

pub async fn delete(
    PageRequest(state, _, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<RemoveForm>,
) -> PageResult<Redirect> {
    let id = parse_id(&id)?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id, form.version))
    })
    .await?;
    Ok(Redirect::to("/heartbeats"))
}
