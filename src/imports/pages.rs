//! The admins' import page: the vendor (PagerDuty or Opsgenie), its API key (never kept), the
//! plan, and the import.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::actions::{self, Plan};
use super::vendor::{OPSGENIE_API, PAGERDUTY_API, check_reachable};
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::PageRequest;

#[derive(Template, WebTemplate)]
#[template(path = "admin/import.html")]
pub struct ImportPage {
    chrome: Chrome,
    vendor: String,
    api_url: String,
    plan: Option<Plan>,
    errors: Vec<FieldError>,
    days: i64,
    pagerduty_api: &'static str,
    opsgenie_api: &'static str,
}

fn page(
    chrome: Chrome,
    (vendor, api_url): (String, String),
    plan: Option<Plan>,
    errors: Vec<FieldError>,
) -> ImportPage {
    ImportPage {
        chrome,
        vendor,
        api_url,
        plan,
        errors,
        days: actions::COMPARED_DAYS,
        pagerduty_api: PAGERDUTY_API,
        opsgenie_api: OPSGENIE_API,
    }
}

pub async fn show(PageRequest(_, chrome, _): PageRequest<Admin>) -> ImportPage {
    page(chrome, ("pagerduty".into(), String::new()), None, vec![])
}

#[derive(Deserialize)]
pub struct ImportForm {
    /// pagerduty (when not given) or opsgenie
    #[serde(default = "pagerduty")]
    vendor: String,
    token: String,
    /// empty: the vendor's own address
    #[serde(default)]
    api_url: String,
    /// present: make the changes; absent: the plan only
    apply: Option<String>,
    /// present: import schedules that differ from PagerDuty's rendering too
    accept_differences: Option<String>,
}

fn pagerduty() -> String {
    "pagerduty".into()
}

/// Plans the import, or (with `apply`) does it; the token is used for this request only.
pub async fn run(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<ImportForm>,
) -> PageResult<Response> {
    let given = form.api_url.trim().to_owned();
    let apply = form.apply.as_deref().is_some_and(|a| !a.is_empty());
    let vendor = form.vendor.trim().to_owned();
    let (default, opsgenie) = match vendor.as_str() {
        "pagerduty" => (PAGERDUTY_API, false),
        "opsgenie" => (OPSGENIE_API, true),
        _ => {
            let why = AppError::invalid("vendor", "pagerduty or opsgenie");
            return Err(PageError(why));
        }
    };
    let api_url = if given.is_empty() { default } else { &given };
    let done = match check_reachable(api_url, &state.config.webhook_allow).await {
        Ok(pinned) => {
            let source = (api_url, form.token.as_str());
            let options = actions::Options {
                apply,
                accept_differences: form.accept_differences.is_some(),
                pinned: Some(pinned),
            };
            if opsgenie {
                actions::opsgenie(&state.pool, &auth.actor, source, options).await
            } else {
                actions::pagerduty(&state.pool, &auth.actor, source, options).await
            }
        }
        Err(e) => Err(e),
    };
    let errors = match done {
        Ok(plan) => {
            let shown = page(chrome, (vendor, given), Some(plan), vec![]);
            return Ok(shown.into_response());
        }
        Err(AppError::Validation(errors)) => errors,
        Err(AppError::BadRequest { message, .. }) => vec![FieldError {
            field: "token".into(),
            message,
        }],
        Err(other) => return Err(PageError(other)),
    };
    let refused = page(chrome, (vendor, given), None, errors);
    Ok((StatusCode::UNPROCESSABLE_ENTITY, refused).into_response())
}
