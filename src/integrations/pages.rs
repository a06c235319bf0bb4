//! The admins' page for integrations: the list with each endpoint, adding one (its key shown
//! once, with the sender's configuration), rotating keys, disabling.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::actions::{self, WithSecrets};
use super::db::{self, Integration};
use super::domain::{Flapping, Format};
use super::handlers::parse_uuid;
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

pub struct Row {
    pub i: Integration,
    pub url: String,
    pub alerts_24h: i64,
    pub last_alert: Option<DateTime<Utc>>,
}

/// A key just issued, with what to paste into the sender.
pub struct Issued {
    pub name: String,
    pub format: Format,
    pub url: String,
    pub key: String,
    pub signing_secret: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/integrations.html")]
pub struct IntegrationsPage {
    chrome: Chrome,
    rows: Vec<Row>,
    formats: [Format; 5],
    issued: Option<Issued>,
    errors: Vec<FieldError>,
    name: String,
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    issued: Option<Issued>,
    errors: Vec<FieldError>,
    name: String,
) -> PageResult<IntegrationsPage> {
    let activity = db::activity(&state.pool).await?;
    let rows = db::list(&state.pool)
        .await?
        .into_iter()
        .map(|i| {
            let seen = activity.iter().find(|(id, _, _)| *id == i.id);
            Row {
                url: format!("{}{}", state.config.base_url, i.endpoint),
                alerts_24h: seen.map_or(0, |s| s.1),
                last_alert: seen.and_then(|s| s.2),
                i,
            }
        })
        .collect();
    Ok(IntegrationsPage {
        chrome,
        rows,
        formats: Format::ALL,
        issued,
        errors,
        name,
    })
}

fn issued(state: &AppState, w: WithSecrets) -> Issued {
    Issued {
        url: format!("{}{}", state.config.base_url, w.integration.endpoint),
        name: w.integration.name,
        format: w.integration.format,
        key: w.key,
        signing_secret: w.signing_secret,
    }
}

pub async fn list(
    PageRequest(state, chrome, _): PageRequest<Admin>,
) -> PageResult<IntegrationsPage> {
    page(&state, chrome, None, vec![], String::new()).await
}

#[derive(Deserialize)]
pub struct NewForm {
    name: String,
    format: String,
    on_all_resolved: String,
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<NewForm>,
) -> PageResult<Response> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    match actions::create(
        &mut tx,
        &auth.actor,
        &form.name,
        &form.format,
        Some(&form.on_all_resolved),
        None,
        None,
    )
    .await
    {
        Ok(created) => {
            tx.commit().await?;
            let shown = issued(&state, created);
            Ok((
                StatusCode::CREATED,
                page(&state, chrome, Some(shown), vec![], String::new()).await?,
            )
                .into_response())
        }
        Err(AppError::Validation(errors)) => {
            tx.rollback().await?;
            Ok((
                StatusCode::UNPROCESSABLE_ENTITY,
                page(&state, chrome, None, errors, form.name).await?,
            )
                .into_response())
        }
        Err(AppError::Conflict(message)) => {
            tx.rollback().await?;
            let errors = vec![FieldError {
                field: "name".into(),
                message,
            }];
            Ok((
                StatusCode::CONFLICT,
                page(&state, chrome, None, errors, form.name).await?,
            )
                .into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}

pub async fn rotate(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(id): Path<String>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<IntegrationsPage> {
    let id = parse_uuid(&id)?;
    let rotated = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::rotate(tx, &auth.actor, id))
    })
    .await?;
    let shown = issued(&state, rotated);
    page(&state, chrome, Some(shown), vec![], String::new()).await
}

#[derive(Deserialize)]
pub struct UpdateForm {
    enabled: Option<String>,
    on_all_resolved: String,
    flap_threshold: Option<i32>,
    flap_window_minutes: Option<i32>,
    flap_settle_minutes: Option<i32>,
}

pub async fn update(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<UpdateForm>,
) -> PageResult<Redirect> {
    let id = parse_uuid(&id)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::update(
        &mut tx,
        &auth.actor,
        id,
        None,
        Some(form.enabled.is_some()),
        Some(&form.on_all_resolved),
        match (
            form.flap_threshold,
            form.flap_window_minutes,
            form.flap_settle_minutes,
        ) {
            (Some(threshold), Some(window_minutes), Some(settle_minutes)) => Some(Flapping {
                threshold,
                window_minutes,
                settle_minutes,
            }),
            _ => None,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Redirect::to("/admin/integrations"))
}
