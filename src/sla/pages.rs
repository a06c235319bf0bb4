//! The admins' page for severity policies.

use askama::Template;
use askama_web::WebTemplate;
use axum::response::Response;
use serde::Deserialize;

use super::db;
use super::handlers::{PolicyView, save_all};
use crate::domain::Severity;
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "admin/policies.html")]
pub struct PoliciesPage {
    chrome: Chrome,
    rows: Vec<PolicyView>,
    errors: Vec<FieldError>,
    rule: &'static str,
}

/// The page with the stored policies, and what was wrong with a refused form.
async fn page(
    state: &AppState,
    chrome: Chrome,
    errors: Vec<FieldError>,
) -> PageResult<PoliciesPage> {
    let rows = db::all(&state.pool).await?;
    Ok(PoliciesPage {
        chrome,
        rows: rows.iter().map(PolicyView::from).collect(),
        errors,
        rule: super::domain::RULE,
    })
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<PoliciesPage> {
    page(&state, chrome, vec![]).await
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
    let tried = async {
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
    submitted(
        tried,
        |()| "/admin/policies".into(),
        async |errors| page(&state, chrome, errors).await,
    )
    .await
}
