//! The admins' credits page: the starting grant a person's account opens with, and every
//! person's balance with what they earned by solving and spent on hints.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::{actions, db};
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageResult};
use crate::http::request::PageRequest;
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "admin/credits.html")]
pub struct CreditsPage {
    chrome: Chrome,
    starting_grant: String,
    balances: Vec<db::Balance>,
    errors: Vec<FieldError>,
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    starting_grant: Option<String>,
    errors: Vec<FieldError>,
) -> PageResult<CreditsPage> {
    let starting_grant = match starting_grant {
        Some(typed) => typed,
        None => db::starting_grant(&state.pool).await?.to_string(),
    };
    Ok(CreditsPage {
        chrome,
        starting_grant,
        balances: db::balances(&state.pool).await?,
        errors,
    })
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<CreditsPage> {
    page(&state, chrome, None, vec![]).await
}

#[derive(Deserialize)]
pub struct GrantForm {
    starting_grant: String,
}

pub async fn save(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<GrantForm>,
) -> PageResult<Response> {
    let typed = form.starting_grant.trim().to_owned();
    let result = async {
        let grant: i32 = typed.parse().map_err(|_| {
            AppError::invalid(
                "starting_grant",
                format!("{typed:?} is not a whole number of credits"),
            )
        })?;
        crate::transaction::write(&state.pool, |tx, _| {
            Box::pin(actions::set_starting_grant(tx, &auth.actor, grant))
        })
        .await
    }
    .await;
    match result {
        Ok(()) => Ok(Redirect::to("/admin/credits").into_response()),
        Err(AppError::Validation(errors)) => {
            let page = page(&state, chrome, Some(typed), errors).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(e) => Err(e.into()),
    }
}
