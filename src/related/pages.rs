//! The related-incidents forms of the incident page: link one (typed, or a suggestion in one
//! click) and unlink one.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::handlers::path_key;
use crate::http::access::{Auth, Responder};
use crate::http::extract::PageForm;
use crate::http::page::PageResult;
use crate::state::AppState;

#[derive(Deserialize)]
pub struct LinkForm {
    #[serde(default)]
    incident: String,
    #[serde(default)]
    note: String,
}

pub async fn link(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<LinkForm>,
) -> PageResult<Response> {
    let this = actions::incident(&state.pool, path_key(&key)?).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::link(&mut tx, &this, &f.incident, &f.note, &auth.actor).await?;
    tx.commit().await?;
    Ok(Redirect::to(&format!("/incidents/{}#related", this.key)).into_response())
}

pub async fn unlink(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, other)): Path<(String, String)>,
) -> PageResult<Response> {
    let this = actions::incident(&state.pool, path_key(&key)?).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::unlink(&mut tx, &this, &other, &auth.actor).await?;
    tx.commit().await?;
    Ok(Redirect::to(&format!("/incidents/{}#related", this.key)).into_response())
}
