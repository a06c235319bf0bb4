//! The signed link a responder's page carries: `/incidents/{key}/respond/{token}` shows who asks
//! them to help with what, and its button accepts — no sign-in, the link is the credential; a
//! GET never accepts, so a mail scanner following links changes nothing.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};

use super::actions;
use super::db::Request;
use crate::domain::IncidentKey;
use crate::error::AppError;
use crate::http::access::RequestActor;
use crate::http::page::{Chrome, PageResult};
use crate::incident_ref::db::IncidentRef;
use crate::incident_ref::domain::SeenBy;
use crate::paging::actions::{check_link, invalid_link, use_link};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "responders/respond.html")]
pub struct RespondPage {
    chrome: Chrome,
    incident: IncidentRef,
    request: Request,
    /// Who the link was sent to
    person: String,
    /// When they accepted, once they have
    accepted: Option<chrono::DateTime<chrono::Utc>>,
    /// Set when this press accepted it
    done: bool,
}

/// The incident a link names, key-share locked before its link is (the order `/ack/` and the
/// engines lock them in).
async fn linked(conn: &mut sqlx::PgConnection, key: &str) -> Result<IncidentRef, AppError> {
    let key = IncidentKey::parse(key).ok_or_else(invalid_link)?;
    let i = crate::incident_ref::db::by_key(&mut *conn, key, SeenBy::ALL)
        .await?
        .ok_or_else(invalid_link)?;
    crate::incident_ref::db::share(conn, &[i.id]).await?;
    Ok(i)
}

/// The link's person may see the incident (restricted since the page, it says nothing).
async fn seen_by_them(
    conn: &mut sqlx::PgConnection,
    i: &IncidentRef,
    person_id: i64,
) -> Result<(), AppError> {
    let seen_by = SeenBy::person(person_id);
    if crate::incident_ref::db::visible(conn, i.id, seen_by).await? {
        Ok(())
    } else {
        Err(invalid_link())
    }
}

fn page(
    chrome: Chrome,
    incident: IncidentRef,
    request: Request,
    person: (i64, String),
    done: bool,
) -> RespondPage {
    let accepted = request
        .people
        .iter()
        .find(|p| p.person_id == person.0)
        .and_then(|p| p.accepted_at);
    RespondPage {
        chrome,
        incident,
        request,
        person: person.1,
        accepted,
        done,
    }
}

/// `GET /incidents/{key}/respond/{token}`.
pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<RespondPage> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let i = linked(&mut tx, &key).await?;
    let (_, link) = check_link(&mut tx, (&i.key.to_string(), i.id), &token, true).await?;
    seen_by_them(&mut tx, &i, link.person_id).await?;
    let request_id = link.request_id.ok_or_else(invalid_link)?;
    let request = actions::one(&mut tx, i.id, request_id).await?;
    tx.rollback().await?;
    Ok(page(
        chrome,
        i,
        request,
        (link.person_id, link.person),
        false,
    ))
}

/// `POST /incidents/{key}/respond/{token}`: accepts as the person the link was sent to, and
/// uses the link up.
pub async fn accept(
    State(state): State<AppState>,
    chrome: Chrome,
    RequestActor(request): RequestActor,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<RespondPage> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let i = linked(&mut tx, &key).await?;
    let (nonce, link) = check_link(&mut tx, (&i.key.to_string(), i.id), &token, true).await?;
    seen_by_them(&mut tx, &i, link.person_id).await?;
    let request_id = link.request_id.ok_or_else(invalid_link)?;
    let actor = crate::audit::Actor {
        person_id: Some(link.person_id),
        name: link.person.clone(),
        ..request
    };
    let person = (link.person_id, link.person.as_str());
    let answered = actions::accept(&mut tx, &i, request_id, person, &actor).await?;
    use_link(&mut tx, nonce).await?;
    tx.commit().await?;
    Ok(page(
        chrome,
        i,
        answered,
        (link.person_id, link.person),
        true,
    ))
}
