//! `/oncall`: who each service pages first right now, every escalation policy in words, and
//! for managers the forms to write policies (`/escalation-policies/…`, steps one per line) and
//! to point services at them.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions::{self, ServiceOnCall};
use super::db::{self, StoredPolicy};
use super::domain::{PolicyDraft, steps_from_lines, steps_to_lines};
use crate::error::{AppError, FieldError};
use crate::http::access::{Auth, Manager, Viewer};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "oncall/now.html")]
pub struct OnCallPage {
    chrome: Chrome,
    services: Vec<ServiceOnCall>,
    policies: Vec<StoredPolicy>,
    /// Contact methods that stopped working, shown to admins.
    failing: Vec<crate::notify::db::FailingMethod>,
}

pub async fn show(PageRequest(state, chrome, _): PageRequest<Viewer>) -> PageResult<OnCallPage> {
    let mut conn = state.pool.acquire().await?;
    let services = actions::on_call_now(&mut conn).await?;
    let policies = db::list(&mut *conn, None).await?;
    let failing = if chrome.can("admin") {
        crate::notify::db::failing_methods(&mut *conn).await?
    } else {
        vec![]
    };
    Ok(OnCallPage {
        chrome,
        services,
        policies,
        failing,
    })
}

/// The policy form: new (`id` none) or editing one; the steps one per line.
#[derive(Template, WebTemplate)]
#[template(path = "oncall/policy.html")]
pub struct PolicyPage {
    chrome: Chrome,
    id: Option<i64>,
    version: i32,
    name: String,
    steps: String,
    repeat: String,
    team: String,
    errors: Vec<FieldError>,
}

#[derive(Deserialize, Default)]
pub struct PolicyForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    steps: String,
    #[serde(default)]
    repeat: String,
    /// The owning team's slug, kept as it is (a hidden field)
    #[serde(default)]
    team: String,
    #[serde(default)]
    version: String,
}

impl PolicyForm {
    fn draft(&self) -> Result<PolicyDraft, AppError> {
        let repeat = match self.repeat.trim() {
            "" => 0,
            r => r
                .parse::<u32>()
                .map_err(|_| AppError::invalid("repeat", "a whole number, 0 to 9"))?,
        };
        Ok(PolicyDraft {
            name: self.name.clone(),
            team: self.team.clone(),
            steps: steps_from_lines(&self.steps)?,
            repeat,
        })
    }

    fn page(self, chrome: Chrome, id: Option<i64>, errors: Vec<FieldError>) -> PolicyPage {
        PolicyPage {
            chrome,
            id,
            version: self.version.trim().parse().unwrap_or(0),
            name: self.name,
            steps: self.steps,
            repeat: self.repeat,
            team: self.team,
            errors,
        }
    }
}

pub async fn new_policy(chrome: Chrome, _auth: Auth<Manager>) -> PolicyPage {
    PolicyForm {
        steps: "5 | schedule: \n10 | person: ".into(),
        repeat: "0".into(),
        ..Default::default()
    }
    .page(chrome, None, vec![])
}

pub async fn edit_policy(
    PageRequest(state, chrome, _): PageRequest<Manager>,
    Path(id): Path<String>,
) -> PageResult<PolicyPage> {
    let p = db::get(&state.pool, parse_id(&id, "escalation policy")?).await?;
    Ok(PolicyForm {
        name: p.name.clone(),
        steps: steps_to_lines(&p.steps.0),
        repeat: p.repeat.to_string(),
        team: p.team.clone().unwrap_or_default(),
        version: p.version.to_string(),
    }
    .page(chrome, Some(p.id), vec![]))
}

/// Creates (no `id`) or replaces a policy from the form; a wrong field comes back beside it.
async fn save(
    state: AppState,
    chrome: Chrome,
    auth: Auth<Manager>,
    id: Option<i64>,
    form: PolicyForm,
) -> PageResult<Response> {
    let version = form.version.trim().parse::<i32>().ok();
    let tried = match form.draft() {
        Ok(d) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(async {
                    match id {
                        None => actions::create(tx, &auth.actor, &d).await,
                        Some(id) => Ok(actions::update(tx, &auth.actor, id, version, &d).await?.id),
                    }
                })
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |_| "/oncall#policies".into(),
        async |errors| Ok(form.page(chrome, id, errors)),
    )
    .await
}

pub async fn create_policy(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    PageForm(form): PageForm<PolicyForm>,
) -> PageResult<Response> {
    save(state, chrome, auth, None, form).await
}

pub async fn update_policy(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path(id): Path<String>,
    PageForm(form): PageForm<PolicyForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "escalation policy")?;
    save(state, chrome, auth, Some(id), form).await
}

pub async fn delete_policy(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "escalation policy")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/oncall#policies").into_response())
}

#[derive(Deserialize, Default)]
pub struct AssignForm {
    #[serde(default)]
    service: String,
    #[serde(default)]
    policy: String,
}

/// Points a service at a policy (or none) from `/oncall`.
pub async fn assign(
    ApiRequest(state, auth): ApiRequest<Manager>,
    PageForm(form): PageForm<AssignForm>,
) -> PageResult<Response> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::assign(
        &mut tx,
        &auth.actor,
        &form.service,
        Some(form.policy.as_str()),
    )
    .await?;
    tx.commit().await?;
    Ok(Redirect::to("/oncall").into_response())
}
