//! What the postmortem pages share: the incident and document behind a key, a change and the way back.

use axum::response::Redirect;
use sqlx::PgConnection;

use crate::clock;
use crate::error::{AppError, AppResult};
use crate::http::page::PageError;
use crate::incidents::db::{self as incidents_db, Incident};
use crate::postmortems::actions::{self};
use crate::postmortems::db::ItemRow;
use crate::postmortems::document::Document;
use crate::state::AppState;

pub(super) async fn incident(state: &AppState, key: &str) -> Result<Incident, AppError> {
    incidents_db::get_named(&state.pool, key).await
}

pub(super) async fn document(state: &AppState, i: &Incident) -> Result<Document, AppError> {
    let mut conn = state.pool.acquire().await?;
    let now = clock::now(&mut *conn).await?;
    Document::load(&mut conn, i, now).await
}

/// Back to the postmortem after an edit, still editing (a published one reads as a document
/// otherwise).
pub(super) fn back(i: &Incident) -> Redirect {
    Redirect::to(&format!("/incidents/{}/postmortem?edit", i.key))
}

/// One change to the postmortem of the incident `key`, in its own transaction: committed when
/// it goes through, rolled back (explicitly, so the row locks go at once) and answered with the
/// refusal when not. Returns the incident, for the redirect, and what the change returned.
pub(super) async fn change<T>(
    state: &AppState,
    key: &str,
    f: impl AsyncFnOnce(&mut PgConnection, &Incident) -> AppResult<T>,
) -> Result<(Incident, T), PageError> {
    let i = incident(state, key).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    match f(&mut tx, &i).await {
        Ok(v) => {
            tx.commit().await?;
            Ok((i, v))
        }
        Err(err) => {
            tx.rollback().await?;
            Err(refused(err))
        }
    }
}

/// A refused edit: a stale version is a 409 page saying so; anything else as usual.
pub(super) fn refused(err: AppError) -> PageError {
    match err {
        AppError::Stale { .. } => PageError(AppError::Conflict(
            "Someone changed this postmortem since you loaded it; your edit was not saved. Reload the page, then edit again.".into(),
        )),
        other => PageError(other),
    }
}

/// The item `id` of this incident's postmortem; another incident's is not found here.
pub(super) async fn own_item(conn: &mut PgConnection, i: &Incident, id: i64) -> AppResult<ItemRow> {
    // The incident is one the person sees (its address passed the gate).
    let item = actions::item(conn, id, crate::incident_ref::domain::SeenBy::ALL).await?;
    if item.incident != i.key {
        return Err(AppError::NotFound(format!(
            "{} has no action item {id}.",
            i.key
        )));
    }
    Ok(item)
}
