//! Service pages: the catalogue and the forms to add and edit. One service's own page, which
//! shows who is on call for it, is the dashboard's (`dashboard::pages::service`), which sees the
//! rooms above this one.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::Response;
use serde::Deserialize;

use super::actions;
use super::db::{self, Service};
use super::domain::ServiceDraft;
use super::handlers::ServiceQuery;
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Auth, Viewer};
use crate::http::extract::{ApiQuery, PageForm};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "services/list.html")]
pub struct ListPage {
    chrome: Chrome,
    services: Vec<Service>,
    /// The team whose services these are, when the list is narrowed to one: (slug, name)
    team: Option<(String, String)>,
}

pub async fn list(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<ServiceQuery>,
) -> PageResult<ListPage> {
    let team = match crate::http::extract::query_text(&q.team) {
        Some(slug) => {
            let t = crate::teams::db::get(&state.pool, &slug).await?;
            Some((t.slug, t.name))
        }
        None => None,
    };
    Ok(ListPage {
        chrome,
        services: q.list(&state.pool).await?,
        team,
    })
}

/// The service form as typed: numbers stay text until checked, so a bad one can be shown again.
#[derive(Deserialize, Default)]
pub struct ServiceForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    tier: String,
    #[serde(default)]
    team: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    slo_target_percent: String,
    #[serde(default)]
    avg_requests_per_second: String,
    #[serde(default)]
    peak_requests_per_second: String,
    #[serde(default)]
    peak_latency_seconds: String,
    #[serde(default)]
    runbook_url: String,
    /// Names separated by commas or spaces.
    #[serde(default)]
    depends_on: String,
    /// The bridge its Sev1 and Sev2 start with
    #[serde(default)]
    call_url: String,
    #[serde(default)]
    chat_url: String,
    #[serde(default)]
    version: Option<i32>,
}

fn number(field: &str, value: &str) -> Result<Option<f64>, AppError> {
    let v = value.trim();
    if v.is_empty() {
        return Ok(None);
    }
    v.parse::<f64>()
        .map(Some)
        .map_err(|_| AppError::invalid(field, format!("{v:?} is not a number")))
}

impl ServiceForm {
    fn of(s: &Service, bridge: &crate::bridge::domain::Bridge) -> Self {
        Self {
            call_url: bridge.call_url.clone().unwrap_or_default(),
            chat_url: bridge.chat_url.clone().unwrap_or_default(),
            name: s.name.clone(),
            tier: s.tier.to_string(),
            team: s.team_slug.clone().unwrap_or_default(),
            description: s.description.clone(),
            slo_target_percent: s
                .slo_target_percent
                .map(|v| v.to_string())
                .unwrap_or_default(),
            avg_requests_per_second: s
                .avg_requests_per_second
                .map(|v| v.to_string())
                .unwrap_or_default(),
            peak_requests_per_second: s
                .peak_requests_per_second
                .map(|v| v.to_string())
                .unwrap_or_default(),
            peak_latency_seconds: s
                .peak_latency_seconds
                .map(|v| v.to_string())
                .unwrap_or_default(),
            runbook_url: s.runbook_url.clone().unwrap_or_default(),
            depends_on: s.depends_on.join(", "),
            version: Some(s.version),
        }
    }

    fn bridge(&self) -> Result<crate::bridge::domain::Bridge, AppError> {
        Ok(crate::bridge::domain::Bridge::parse(
            Some(&self.call_url),
            Some(&self.chat_url),
        )?)
    }

    fn draft(&self) -> Result<ServiceDraft, AppError> {
        Ok(ServiceDraft {
            name: self.name.clone(),
            tier: self
                .tier
                .trim()
                .parse()
                .map_err(|_| AppError::invalid("tier", "tier is 1, 2 or 3"))?,
            team: self.team.clone(),
            description: self.description.clone(),
            slo_target_percent: number("slo_target_percent", &self.slo_target_percent)?,
            avg_requests_per_second: number(
                "avg_requests_per_second",
                &self.avg_requests_per_second,
            )?,
            peak_requests_per_second: number(
                "peak_requests_per_second",
                &self.peak_requests_per_second,
            )?,
            peak_latency_seconds: number("peak_latency_seconds", &self.peak_latency_seconds)?,
            runbook_url: Some(self.runbook_url.clone()),
            depends_on: Some(
                self.depends_on
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .map(str::to_owned)
                    .collect(),
            ),
        }
        .validated()?)
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "services/form.html")]
pub struct FormPage {
    chrome: Chrome,
    /// The service being edited; `None` for a new one.
    editing: Option<String>,
    form: ServiceForm,
    errors: Vec<FieldError>,
    /// The teams a service may belong to: (slug, name)
    teams: Vec<(String, String)>,
}

async fn form_page(
    state: &AppState,
    chrome: Chrome,
    editing: Option<String>,
    form: ServiceForm,
    errors: Vec<FieldError>,
) -> PageResult<FormPage> {
    let teams = crate::teams::db::list(&state.pool, None).await?;
    Ok(FormPage {
        chrome,
        editing,
        form,
        errors,
        teams: teams.into_iter().map(|t| (t.slug, t.name)).collect(),
    })
}

pub async fn new_form(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<FormPage> {
    let form = ServiceForm {
        tier: "2".into(),
        ..Default::default()
    };
    form_page(&state, chrome, None, form, vec![]).await
}

/// Adds (no `current`) or rewrites a service from the form, its bridge with it; a wrong field
/// comes back beside the form.
async fn save(
    state: AppState,
    chrome: Chrome,
    auth: Auth<Admin>,
    current: Option<Service>,
    form: ServiceForm,
) -> PageResult<Response> {
    let tried = match form.draft().and_then(|d| Ok((d, form.bridge()?))) {
        Ok((draft, bridge)) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(async {
                    let s = match &current {
                        None => actions::create(tx, &auth.actor, &draft).await?,
                        Some(c) => {
                            let version = form.version.unwrap_or(c.version);
                            let updated = actions::update(tx, &auth.actor, c, version, &draft);
                            updated.await?.ok_or_else(|| {
                                AppError::Conflict(format!(
                                    "Someone else changed {} since you opened the form; reload it and make your change again.",
                                    c.name
                                ))
                            })?
                        }
                    };
                    if crate::bridge::db::of_service(&mut *tx, s.id).await? != bridge {
                        actions::set_bridge(tx, &auth.actor, &s, &bridge).await?;
                    }
                    Ok(s)
                })
            })
            .await
        }
        Err(e) => Err(e),
    };
    let editing = current.map(|c| c.name);
    submitted(
        tried,
        |s| format!("/services/{}", s.name),
        async |errors| form_page(&state, chrome, editing, form, errors).await,
    )
    .await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<ServiceForm>,
) -> PageResult<Response> {
    save(state, chrome, auth, None, form).await
}

pub async fn edit_form(
    PageRequest(state, chrome, _): PageRequest<Admin>,
    Path(name): Path<String>,
) -> PageResult<FormPage> {
    let s = db::get_by_name(&state.pool, &name).await?;
    let bridge = crate::bridge::db::of_service(&state.pool, s.id).await?;
    let form = ServiceForm::of(&s, &bridge);
    form_page(&state, chrome, Some(s.name), form, vec![]).await
}

pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(name): Path<String>,
    PageForm(form): PageForm<ServiceForm>,
) -> PageResult<Response> {
    let current = db::get_by_name(&state.pool, &name).await?;
    save(state, chrome, auth, Some(current), form).await
}
