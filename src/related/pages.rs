//! The related-incidents forms of the incident page: link one (typed, or a suggestion in one
//! click) and unlink one.

use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::handlers::path_key;
use crate::http::access::Responder;
use crate::http::extract::PageForm;
use crate::http::page::PageResult;
use crate::http::request::ApiRequest;
use crate::incident_ref::domain::SeenBy;

#[derive(Deserialize)]
pub struct LinkForm {
    #[serde(default)]
    incident: String,
    #[serde(default)]
    note: String,
}

pub async fn link(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(f): PageForm<LinkForm>,
) -> PageResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let this = actions::incident(&state.pool, path_key(&key)?, sees).await?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::link(
            tx,
            &this,
            &f.incident,
            &f.note,
            (&auth.actor, sees),
        ))
    })
    .await?;
    Ok(Redirect::to(&format!("/incidents/{}#related", this.key)).into_response())
}

pub async fn unlink(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, other)): Path<(String, String)>,
) -> PageResult<Response> {
    let sees = SeenBy::of(&auth.user);
    let this = actions::incident(&state.pool, path_key(&key)?, sees).await?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::unlink(tx, &this, &other, (&auth.actor, sees)))
    })
    .await?;
    Ok(Redirect::to(&format!("/incidents/{}#related", this.key)).into_response())
}
