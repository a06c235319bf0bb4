//! The signed acknowledge link a page or message carries: its confirmation page and the acknowledgement.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use crate::domain::IncidentKey;
use crate::error::AppError;
use crate::http::access::RequestActor;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::incidents::actions::{self};
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{Status, Transition};
use crate::state::AppState;

/// The page an acknowledge link opens: whose link, which incident, and a button (a GET never
/// acknowledges, so a mail scanner following links changes nothing).
#[derive(Template, WebTemplate)]
#[template(path = "incidents/ack.html")]
pub struct AckPage {
    chrome: Chrome,
    key: String,
    title: String,
    severity: String,
    status: String,
    person: String,
    /// Set once this link acknowledged the incident.
    done: bool,
    /// Who acknowledged it and when, once someone has
    acknowledged: Option<crate::timeline::db::Acknowledgement>,
}

fn ack_page(
    chrome: Chrome,
    i: &Incident,
    person: String,
    done: bool,
    acknowledged: Option<crate::timeline::db::Acknowledgement>,
) -> AckPage {
    AckPage {
        acknowledged,
        chrome,
        key: i.key.to_string(),
        title: i.title.clone(),
        severity: i.severity.as_str().to_owned(),
        status: i.status.as_str().to_owned(),
        person,
        done,
    }
}

/// `GET /incidents/{key}/ack/{token}`: no sign-in; the signed token is the credential.
pub async fn ack_link(
    State(state): State<AppState>,
    chrome: Chrome,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<AckPage> {
    let key = IncidentKey::parse(&key).ok_or_else(crate::paging::actions::invalid_link)?;
    let i = db::find(&state.pool, key)
        .await?
        .ok_or_else(crate::paging::actions::invalid_link)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let (_, link) =
        crate::paging::actions::check_link(&mut tx, (&i.key.to_string(), i.id), &token, false)
            .await?;
    tx.rollback().await?;
    let acknowledged = crate::timeline::db::acknowledgement(&state.pool, i.id).await?;
    Ok(ack_page(chrome, &i, link.person, false, acknowledged))
}

/// `POST /incidents/{key}/ack/{token}`: acknowledges as the person the link was sent to, and
/// uses the link up (also when someone else acknowledged first).
pub async fn ack_by_link(
    State(state): State<AppState>,
    chrome: Chrome,
    RequestActor(request): RequestActor,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<Response> {
    let key = IncidentKey::parse(&key).ok_or_else(crate::paging::actions::invalid_link)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let i = db::lock(&mut *tx, key).await.map_err(|e| match e {
        AppError::NotFound(_) => crate::paging::actions::invalid_link(),
        other => other,
    })?;
    let (nonce, link) =
        crate::paging::actions::check_link(&mut tx, (&key.to_string(), i.id), &token, false)
            .await?;
    let actor = crate::audit::Actor {
        person_id: Some(link.person_id),
        name: link.person.clone(),
        ..request
    };
    let acted = i.status == Status::Triggered;
    let after = if acted {
        let change = actions::Change::now(key, &actor);
        actions::transition(
            &mut tx,
            &change,
            Transition::Acknowledge,
            "Acknowledged with the link sent to them.",
        )
        .await?
    } else {
        i
    };
    crate::paging::actions::use_link(&mut tx, nonce).await?;
    let acknowledged = crate::timeline::db::acknowledgement(&mut *tx, after.id).await?;
    tx.commit().await?;
    Ok(ack_page(chrome, &after, link.person, acted, acknowledged).into_response())
}
