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
use crate::auth::domain::UserRole;
use crate::error::{AppError, FieldError};
use crate::http::access::{Auth, Manager, Responder, Viewer};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;
use crate::teams;

/// What the team rule calls a policy in a refusal.
const WHAT: &str = "escalation policy";

#[derive(Template, WebTemplate)]
#[template(path = "oncall/now.html")]
pub struct OnCallPage {
    chrome: Chrome,
    services: Vec<ServiceOnCall>,
    policies: Vec<StoredPolicy>,
    /// The policies the person may change (its team's leads, managers): their ids
    editable: Vec<i64>,
    /// Whether the person may write a new policy (a manager, or a lead of some team)
    may_create: bool,
    /// Contact methods that stopped working, shown to admins.
    failing: Vec<crate::notify::db::FailingMethod>,
}

pub async fn show(PageRequest(state, chrome, auth): PageRequest<Viewer>) -> PageResult<OnCallPage> {
    let mut conn = state.pool.acquire().await?;
    let services = actions::on_call_now(&mut conn).await?;
    let policies = db::list(&mut *conn, None).await?;
    let judge = teams::actions::Judge::of(&state, &auth).await?;
    let editable = policies
        .iter()
        .filter(|p| judge.may(&[p.team_id], UserRole::Manager))
        .map(|p| p.id)
        .collect();
    let may_create = judge.may_add(UserRole::Manager);
    let failing = if chrome.can("admin") {
        crate::notify::db::failing_methods(&mut *conn).await?
    } else {
        vec![]
    };
    Ok(OnCallPage {
        chrome,
        services,
        policies,
        editable,
        may_create,
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
    /// The teams a policy may belong to: (slug, name)
    teams: Vec<(String, String)>,
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

    async fn page(
        self,
        state: &AppState,
        chrome: Chrome,
        id: Option<i64>,
        errors: Vec<FieldError>,
    ) -> PageResult<PolicyPage> {
        let teams = teams::db::list(&state.pool, None).await?;
        Ok(PolicyPage {
            teams: teams.into_iter().map(|t| (t.slug, t.name)).collect(),
            chrome,
            id,
            version: self.version.trim().parse().unwrap_or(0),
            name: self.name,
            steps: self.steps,
            repeat: self.repeat,
            team: self.team,
            errors,
        })
    }
}

pub async fn new_policy(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
) -> PageResult<PolicyPage> {
    if !teams::actions::Judge::of(&state, &auth)
        .await?
        .may_add(UserRole::Manager)
    {
        let refused = AppError::Forbidden(
            "Writing an escalation policy needs the manager role, or to lead a team.".into(),
        );
        return Err(auth.refused(&state, refused).await.into());
    }
    PolicyForm {
        steps: "5 | schedule: \n10 | person: ".into(),
        repeat: "0".into(),
        ..Default::default()
    }
    .page(&state, chrome, None, vec![])
    .await
}

pub async fn edit_policy(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<PolicyPage> {
    let p = db::get(&state.pool, parse_id(&id, "escalation policy")?).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[p.team_id], UserRole::Manager).await?;
    PolicyForm {
        name: p.name.clone(),
        steps: steps_to_lines(&p.steps.0),
        repeat: p.repeat.to_string(),
        team: p.team.clone().unwrap_or_default(),
        version: p.version.to_string(),
    }
    .page(&state, chrome, Some(p.id), vec![])
    .await
}

/// Creates (no `id`) or replaces a policy from the form; a wrong field comes back beside it.
async fn save(
    state: AppState,
    chrome: Chrome,
    auth: Auth<Responder>,
    id: Option<i64>,
    form: PolicyForm,
) -> PageResult<Response> {
    let current = match id {
        Some(id) => Some(db::get(&state.pool, id).await?),
        None => None,
    };
    let to = teams::actions::named(&state.pool, &form.team).await?;
    let owners = [current.as_ref().map_or(to, |c| c.team_id), to];
    teams::actions::may_configure(&state, &auth, WHAT, &owners, UserRole::Manager).await?;
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = form.version.trim().parse::<i32>().ok();
    let version = match &current {
        Some(c) => AppError::checked_version(version, c.version)?,
        None => None,
    };
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
        async |errors| form.page(&state, chrome, id, errors).await,
    )
    .await
}

pub async fn create_policy(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<PolicyForm>,
) -> PageResult<Response> {
    save(state, chrome, auth, None, form).await
}

pub async fn update_policy(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<PolicyForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "escalation policy")?;
    save(state, chrome, auth, Some(id), form).await
}

pub async fn delete_policy(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "escalation policy")?;
    let owner = [db::get(&state.pool, id).await?.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Manager).await?;
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
