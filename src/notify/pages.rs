//! `/admin/channels`: where notifications go — list, add (a webhook's signing secret shown
//! once), remove. Admins only.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::db::{self, Channel};
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Auth};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageError, PageResult};
use crate::state::AppState;

#[derive(Deserialize, Default)]
pub struct ChannelForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    url: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/channels.html")]
pub struct ChannelsPage {
    chrome: Chrome,
    channels: Vec<Channel>,
    /// The channel just added and its signing secret, shown this once
    issued: Option<(Channel, Option<String>)>,
    form: ChannelForm,
    errors: Vec<FieldError>,
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    issued: Option<(Channel, Option<String>)>,
    form: ChannelForm,
    errors: Vec<FieldError>,
) -> PageResult<ChannelsPage> {
    Ok(ChannelsPage {
        chrome,
        channels: db::channels(&state.pool).await?,
        issued,
        form,
        errors,
    })
}

pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Admin>,
) -> PageResult<ChannelsPage> {
    page(&state, chrome, None, ChannelForm::default(), vec![]).await
}

pub async fn create(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Admin>,
    PageForm(form): PageForm<ChannelForm>,
) -> PageResult<Response> {
    let mut tx = state.pool.begin().await?;
    match actions::create_channel(&mut tx, &auth.actor, &form.name, &form.kind, &form.url).await {
        Ok(issued) => {
            tx.commit().await?;
            Ok(
                page(&state, chrome, Some(issued), ChannelForm::default(), vec![])
                    .await?
                    .into_response(),
            )
        }
        Err(AppError::Validation(errors)) => Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            page(&state, chrome, None, form, errors).await?,
        )
            .into_response()),
        Err(other) => Err(PageError(other)),
    }
}

pub async fn delete(
    State(state): State<AppState>,
    auth: Auth<Admin>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "channel")?;
    let mut tx = state.pool.begin().await?;
    actions::delete_channel(&mut tx, &auth.actor, id).await?;
    tx.commit().await?;
    Ok(Redirect::to("/admin/channels").into_response())
}
