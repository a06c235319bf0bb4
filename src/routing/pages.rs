//! The admins' page for routing rules: the ordered list, editing each rule, moving it up or
//! down, and trying a draft over last week's alerts before saving it.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions::{self, Preview, RuleDraft};
use super::db::{self, RuleRecord};
use crate::error::{AppError, FieldError};
use crate::http::access::Admin;
use crate::http::extract::PageForm;
use crate::http::extract::parse_id;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "admin/routing.html")]
pub struct RoutingPage {
    chrome: Chrome,
    rules: Vec<RuleRecord>,
    draft: RuleDraft,
    preview: Option<Preview>,
    errors: Vec<FieldError>,
    /// The rule whose form the errors belong to; none for the new-rule form.
    errors_for: Option<i64>,
}

impl RoutingPage {
    fn editing(&self, r: &RuleRecord) -> bool {
        self.errors_for == Some(r.id)
    }

    fn picks(&self, r: &RuleRecord, s: &crate::domain::Severity) -> bool {
        r.severity == Some(*s)
    }

    fn severity_of(&self, r: &RuleRecord) -> String {
        r.severity
            .map_or_else(|| "from the alert".to_owned(), |s| s.to_string())
    }
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    draft: RuleDraft,
    preview: Option<Preview>,
    errors: Vec<FieldError>,
    errors_for: Option<i64>,
) -> PageResult<RoutingPage> {
    Ok(RoutingPage {
        chrome,
        rules: db::list(&state.pool).await?,
        draft,
        preview,
        errors,
        errors_for,
    })
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<RoutingPage> {
    page(&state, chrome, RuleDraft::default(), None, vec![], None).await
}

/// A rule as the form sends it: conditions one per line.
#[derive(Deserialize)]
pub struct RuleForm {
    name: String,
    conditions: String,
    service: String,
    severity: String,
    title_template: String,
    /// The owning team's slug, kept as it is (a hidden field)
    #[serde(default)]
    team: String,
    /// Fields to group by, separated by commas or spaces
    #[serde(default)]
    group_by: String,
    /// Minutes; empty: 10
    #[serde(default)]
    group_window_minutes: String,
    version: Option<i32>,
}

impl RuleForm {
    fn draft(&self) -> RuleDraft {
        RuleDraft {
            name: self.name.clone(),
            conditions: self
                .conditions
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            service: self.service.clone(),
            severity: Some(self.severity.clone()),
            title_template: self.title_template.clone(),
            team: self.team.clone(),
            group_by: self
                .group_by
                .split([',', ' '])
                .filter(|f| !f.trim().is_empty())
                .map(str::to_owned)
                .collect(),
            // A window that is not a number is refused by the rule's check, naming the field.
            group_window_minutes: match self.group_window_minutes.trim() {
                "" => None,
                w => Some(w.parse().unwrap_or(0)),
            },
        }
    }
}

/// Validation errors go back to the form with what was typed; anything else is an error page.
async fn refused(
    state: &AppState,
    chrome: Chrome,
    draft: RuleDraft,
    err: AppError,
    rule: Option<i64>,
) -> PageResult<Response> {
    let (status, errors) = match err {
        AppError::Validation(errors) => (StatusCode::UNPROCESSABLE_ENTITY, errors),
        AppError::Stale { .. } => (
            StatusCode::CONFLICT,
            vec![FieldError {
                field: "version".into(),
                message: "someone changed this rule since you loaded the page; it now shows their version".into(),
            }],
        ),
        other => return Err(PageError(other)),
    };
    let draft = if rule.is_some() {
        RuleDraft::default()
    } else {
        draft
    };
    Ok((
        status,
        page(state, chrome, draft, None, errors, rule).await?,
    )
        .into_response())
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<RuleForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let mut tx = crate::transaction::begin(&state.pool).await?;
    match actions::create(&mut tx, &auth.actor, &draft).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(Redirect::to("/admin/routing").into_response())
        }
        Err(err) => {
            tx.rollback().await?;
            refused(&state, chrome, draft, err, None).await
        }
    }
}

pub async fn preview(
    PageRequest(state, chrome, _): PageRequest<Admin>,
    PageForm(form): PageForm<RuleForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let mut conn = state.pool.acquire().await?;
    // Admins only: they see every incident's alerts.
    let sees = crate::incident_ref::domain::SeenBy::ALL;
    match actions::preview(&mut conn, &draft, sees).await {
        Ok(p) => Ok(page(&state, chrome, draft, Some(p), vec![], None)
            .await?
            .into_response()),
        Err(err) => refused(&state, chrome, draft, err, None).await,
    }
}

pub async fn update(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<RuleForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "routing rule")?;
    let draft = form.draft();
    let version = form.version.ok_or_else(|| {
        AppError::invalid("version", "the form lost its version; reload the page")
    })?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    match actions::update(&mut tx, &auth.actor, id, Some(version), &draft).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(Redirect::to("/admin/routing").into_response())
        }
        Err(err) => {
            tx.rollback().await?;
            refused(&state, chrome, draft, err, Some(id)).await
        }
    }
}

pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "routing rule")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/routing"))
}

#[derive(Deserialize)]
pub struct MoveForm {
    /// up or down
    direction: String,
}

pub async fn move_rule(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<MoveForm>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "routing rule")?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let mut order: Vec<i64> = db::list(&mut *tx)
        .await?
        .iter()
        .filter(|r| !r.is_default)
        .map(|r| r.id)
        .collect();
    let Some(at) = order.iter().position(|r| *r == id) else {
        return Err(PageError(AppError::NotFound(format!(
            "There is no movable routing rule {id}."
        ))));
    };
    match form.direction.as_str() {
        "up" if at > 0 => order.swap(at, at - 1),
        "down" if at + 1 < order.len() => order.swap(at, at + 1),
        "up" | "down" => return Ok(Redirect::to("/admin/routing")),
        _ => return Err(PageError(AppError::invalid("direction", "up or down"))),
    }
    actions::reorder(&mut tx, &auth.actor, &order).await?;
    tx.commit().await?;
    Ok(Redirect::to("/admin/routing"))
}
