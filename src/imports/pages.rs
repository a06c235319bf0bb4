//! The admins' import page: PagerDuty's API token (never kept), the plan, and the import.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::actions::{self, Plan};
use super::vendor::{PAGERDUTY_API, check_reachable};
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::PageRequest;

#[derive(Template, WebTemplate)]
#[template(path = "admin/import.html")]
pub struct ImportPage {
    chrome: Chrome,
    api_url: String,
    plan: Option<Plan>,
    errors: Vec<FieldError>,
    days: i64,
}

fn page(
    chrome: Chrome,
    api_url: String,
    plan: Option<Plan>,
    errors: Vec<FieldError>,
) -> ImportPage {
    ImportPage {
        chrome,
        api_url,
        plan,
        errors,
        days: actions::COMPARED_DAYS,
    }
}

pub async fn show(PageRequest(_, chrome, _): PageRequest<Admin>) -> ImportPage {
    page(chrome, PAGERDUTY_API.to_owned(), None, vec![])
}

#[derive(Deserialize)]
pub struct ImportForm {
    token: String,
    api_url: String,
    /// present: make the changes; absent: the plan only
    apply: Option<String>,
    /// present: import schedules that differ from PagerDuty's rendering too
    accept_differences: Option<String>,
}

/// Plans the import, or (with `apply`) does it; the token is used for this request only.
pub async fn run(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<ImportForm>,
) -> PageResult<Response> {
    let api_url = form.api_url.trim().to_owned();
    let apply = form.apply.as_deref().is_some_and(|a| !a.is_empty());
    let done = match check_reachable(&api_url, &state.config.webhook_allow).await {
        Ok(pinned) => {
            let source = (api_url.as_str(), form.token.as_str());
            let options = actions::Options {
                apply,
                accept_differences: form.accept_differences.is_some(),
                pinned: Some(pinned),
            };
            actions::pagerduty(&state.pool, &auth.actor, source, options).await
        }
        Err(e) => Err(e),
    };
    let errors = match done {
        Ok(plan) => return Ok(page(chrome, api_url, Some(plan), vec![]).into_response()),
        Err(AppError::Validation(errors)) => errors,
        Err(AppError::BadRequest { message, .. }) => vec![FieldError {
            field: "token".into(),
            message,
        }],
        Err(other) => return Err(PageError(other)),
    };
    let refused = page(chrome, api_url, None, errors);
    Ok((StatusCode::UNPROCESSABLE_ENTITY, refused).into_response())
}
