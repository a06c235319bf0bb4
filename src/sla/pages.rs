//! The admins' page for severity policies.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::db;
use super::handlers::{PolicyView, save_all};
use crate::domain::Severity;
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::PageRequest;

#[derive(Template, WebTemplate)]
#[template(path = "admin/policies.html")]
pub struct PoliciesPage {
    chrome: Chrome,
    rows: Vec<PolicyView>,
    errors: Vec<FieldError>,
    rule: &'static str,
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<PoliciesPage> {
    Ok(PoliciesPage {
        chrome,
        rows: db::all(&state.pool)
            .await?
            .iter()
            .map(PolicyView::from)
            .collect(),
        errors: vec![],
        rule: super::domain::RULE,
    })
}

/// The form posts `Sev1_ack`, `Sev1_resolve`, `Sev1_cadence`, … in minutes.
#[derive(Deserialize)]
pub struct PoliciesForm {
    #[serde(flatten)]
    fields: std::collections::HashMap<String, String>,
}

fn minutes(form: &PoliciesForm, name: &str) -> Result<Option<i64>, AppError> {
    let raw = form.fields.get(name).map(|v| v.trim()).unwrap_or("");
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<i64>()
        .map(Some)
        .map_err(|_| AppError::invalid(name, format!("{raw:?} is not a whole number of minutes")))
}

pub async fn save(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<PoliciesForm>,
) -> PageResult<Response> {
    let parsed: Result<Vec<PolicyView>, AppError> = Severity::ALL
        .into_iter()
        .map(|s| {
            let need = |suffix: &str| {
                let name = format!("{s}_{suffix}");
                minutes(&form, &name)?.ok_or_else(|| AppError::invalid(&name, "required"))
            };
            Ok(PolicyView {
                severity: s.to_string(),
                ack_target_minutes: need("ack")?,
                resolve_target_minutes: need("resolve")?,
                update_cadence_minutes: minutes(&form, &format!("{s}_cadence"))?,
            })
        })
        .collect();
    let result = async {
        let views = parsed?;
        let policies = views
            .iter()
            .map(PolicyView::policy)
            .collect::<Result<Vec<_>, _>>()?;
        crate::transaction::write(&state.pool, |tx, _| {
            Box::pin(save_all(tx, &auth.actor, &policies))
        })
        .await?;
        Ok::<_, AppError>(())
    }
    .await;
    match result {
        Ok(()) => Ok(Redirect::to("/admin/policies").into_response()),
        Err(AppError::Validation(errors)) => {
            let page = PoliciesPage {
                chrome,
                rows: db::all(&state.pool)
                    .await?
                    .iter()
                    .map(PolicyView::from)
                    .collect(),
                errors,
                rule: super::domain::RULE,
            };
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}
