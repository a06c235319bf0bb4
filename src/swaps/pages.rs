//! `/schedules/{id}/swaps`: a schedule's shift swaps — offer your hours (to someone, or to
//! anyone), take one offered to you, withdraw yours. Refused forms come back naming the field.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::actions::{self, Answer, OfferDraft};
use super::db::{self, Swap};
use super::handlers::{answered, me};
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{PageForm, parse_form_time, parse_id};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

#[derive(Deserialize, Clone, Default)]
pub struct OfferForm {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    offered_to: String,
    #[serde(default)]
    message: String,
}

/// A form with nothing but its CSRF token (taking or withdrawing).
#[derive(Deserialize)]
pub struct Empty {}

#[derive(Template, WebTemplate)]
#[template(path = "swaps/page.html")]
pub struct SwapsPage {
    chrome: Chrome,
    schedule_id: i64,
    schedule: String,
    swaps: Vec<Swap>,
    /// The signed-in person's handle
    me: String,
    /// People who could take a shift (handle, name)
    people: Vec<(String, String)>,
    /// Your next shifts in it, to offer (from, to)
    mine: Vec<(chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)>,
    form: OfferForm,
    errors: Vec<FieldError>,
    /// Offers whose hours are over show as such
    now: chrono::DateTime<chrono::Utc>,
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    id: i64,
    (form, errors): (OfferForm, Vec<FieldError>),
) -> PageResult<SwapsPage> {
    let mut conn = state.pool.acquire().await?;
    let s = crate::oncall::db::get(&mut *conn, id).await?;
    let now = crate::clock::now(&mut *conn).await?;
    let me = chrome
        .user
        .as_ref()
        .map(|u| u.handle.clone())
        .unwrap_or_default();
    let mine = crate::oncall::actions::rules(&s)?
        .spans(now, now + chrono::Duration::days(28))
        .into_iter()
        .filter(|sp| sp.person == me)
        .map(|sp| (sp.from.max(now), sp.to))
        .collect();
    // Only people who can be on call can take a shift.
    let everyone = crate::people::db::list(&mut *conn).await?;
    let ids: Vec<i64> = everyone.iter().map(|p| p.id).collect();
    let acting = crate::people::db::can_acknowledge(&mut *conn, &ids).await?;
    let people = everyone
        .into_iter()
        .filter(|p| p.handle != me && acting.contains(&p.id))
        .map(|p| (p.handle, p.name))
        .collect();
    Ok(SwapsPage {
        chrome,
        schedule_id: id,
        schedule: s.name,
        swaps: db::list(&mut *conn, id, None).await?,
        now,
        me,
        people,
        mine,
        form,
        errors,
    })
}

/// `GET /schedules/{id}/swaps`.
pub async fn show(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(id): Path<String>,
) -> PageResult<SwapsPage> {
    let id = parse_id(&id, "schedule")?;
    page(&state, chrome, id, (OfferForm::default(), vec![])).await
}

/// `POST /schedules/{id}/swaps`: offer.
pub async fn offer(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<OfferForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "schedule")?;
    let draft = (|| -> Result<OfferDraft, AppError> {
        let from = parse_form_time("from", &form.from)?
            .ok_or_else(|| AppError::invalid("from", "when the hours you offer start (UTC)"))?;
        let to = parse_form_time("to", &form.to)?
            .ok_or_else(|| AppError::invalid("to", "when they end (UTC)"))?;
        Ok(OfferDraft {
            from,
            to,
            offered_to: Some(form.offered_to.clone()),
            message: form.message.clone(),
        })
    })();
    let tried = match draft {
        Ok(d) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::offer(tx, me(&auth), id, &d))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |s| format!("/schedules/{id}/swaps#swap-{}", s.id),
        async |errors| page(&state, chrome, id, (form.clone(), errors)).await,
    )
    .await
}

/// `POST /schedules/{id}/swaps/{swap}/{take|withdraw}`.
pub async fn answer(
    PageRequest(state, _, auth): PageRequest<Responder>,
    Path((id, swap, what)): Path<(String, String, String)>,
    PageForm(_): PageForm<Empty>,
) -> PageResult<Response> {
    let answer = match what.as_str() {
        "take" => Answer::Take,
        "withdraw" => Answer::Withdraw,
        _ => return Err(AppError::NotFound("There is no such page.".into()).into()),
    };
    let done = answered(&state, &auth, (id, swap), answer).await?;
    let to = format!("/schedules/{}/swaps#swap-{}", done.schedule_id, done.id);
    Ok(axum::response::Redirect::to(&to).into_response())
}
