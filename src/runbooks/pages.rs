//! Runbook pages: `/runbooks` lists them (one service's with `?service=`) with a form to add one;
//! `/runbooks/{id}/edit` changes one; admins write.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::db::{self, Runbook};
use super::domain::{RunbookDraft, steps_from_lines};
use super::handlers::RunbookQuery;
use crate::auth::domain::UserRole;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_id, query_text};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;
use crate::teams;

/// What the team rule calls a runbook in a refusal.
const WHAT: &str = "runbook";

/// An owner a runbook may have, as the form's select offers it: `service:payments-gateway`,
/// `rule:3`.
pub struct OwnerChoice {
    value: String,
    label: String,
}

async fn owner_choices(state: &AppState) -> PageResult<Vec<OwnerChoice>> {
    let services = crate::services::db::list(&state.pool).await?;
    let rules = crate::routing::db::list(&state.pool).await?;
    Ok(services
        .into_iter()
        .map(|s| OwnerChoice {
            value: format!("service:{}", s.name),
            label: format!("Service {}", s.name),
        })
        .chain(rules.into_iter().map(|r| OwnerChoice {
            value: format!("rule:{}", r.id),
            label: format!("Routing rule {}", r.name),
        }))
        .collect())
}

/// The runbook form as typed.
#[derive(Deserialize, Default)]
pub struct RunbookForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    link: String,
    /// `service:<name>` or `rule:<id>`
    #[serde(default)]
    owner: String,
    /// One step per line
    #[serde(default)]
    steps: String,
    #[serde(default)]
    version: Option<i32>,
}

impl RunbookForm {
    fn of(r: &Runbook) -> Self {
        Self {
            name: r.name.clone(),
            link: r.link.clone(),
            owner: match (&r.service, r.rule_id) {
                (Some(s), _) => format!("service:{s}"),
                (None, Some(id)) => format!("rule:{id}"),
                _ => String::new(),
            },
            steps: r.steps.join("\n"),
            version: Some(r.version),
        }
    }

    fn draft(&self) -> RunbookDraft {
        let (service, rule_id) = match self.owner.split_once(':') {
            Some(("service", name)) => (Some(name.to_owned()), None),
            Some(("rule", id)) => (None, id.parse().ok()),
            _ => (None, None),
        };
        RunbookDraft {
            name: self.name.clone(),
            link: Some(self.link.clone()),
            service,
            rule_id,
            rule: None,
            steps: steps_from_lines(&self.steps),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "runbooks/list.html")]
pub struct ListPage {
    chrome: Chrome,
    runbooks: Vec<Runbook>,
    /// The one service shown, if the list is filtered.
    service: Option<String>,
    owners: Vec<OwnerChoice>,
    form: RunbookForm,
    errors: Vec<FieldError>,
    /// The runbooks the person may change (their team's, or all for an admin): their ids
    editable: Vec<i64>,
    /// Whether the person may add one (an admin, or a lead of some team)
    may_create: bool,
}

/// The runbooks of `runbooks` the person may change.
fn editable(judge: &teams::actions::Judge, runbooks: &[Runbook]) -> Vec<i64> {
    runbooks
        .iter()
        .filter(|r| judge.may(&[r.team_id], UserRole::Admin))
        .map(|r| r.id)
        .collect()
}

pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<RunbookQuery>,
) -> PageResult<ListPage> {
    let service = query_text(&q.service);
    let runbooks = q.list(&state.pool).await?;
    let judge = teams::actions::Judge::of(&state, &auth).await?;
    let may_create = judge.may_add(UserRole::Admin);
    Ok(ListPage {
        chrome,
        editable: editable(&judge, &runbooks),
        may_create,
        runbooks,
        owners: owner_choices(&state).await?,
        form: RunbookForm {
            owner: service
                .as_ref()
                .map(|s| format!("service:{s}"))
                .unwrap_or_default(),
            ..Default::default()
        },
        service,
        errors: vec![],
    })
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<RunbookForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let tried = match actions::team_of(&mut *state.pool.acquire().await?, &draft).await {
        Ok(to) => {
            teams::actions::may_configure(&state, &auth, WHAT, &[to], UserRole::Admin).await?;
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::create(tx, &auth.actor, &draft))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |_| "/runbooks".into(),
        async |errors| {
            let runbooks = db::list(&state.pool, db::Filter::default()).await?;
            let judge = teams::actions::Judge::of(&state, &auth).await?;
            Ok(ListPage {
                chrome,
                editable: editable(&judge, &runbooks),
                may_create: true,
                runbooks,
                owners: owner_choices(&state).await?,
                service: None,
                form,
                errors,
            })
        },
    )
    .await
}

#[derive(Template, WebTemplate)]
#[template(path = "runbooks/edit.html")]
pub struct EditPage {
    chrome: Chrome,
    id: i64,
    owners: Vec<OwnerChoice>,
    form: RunbookForm,
    errors: Vec<FieldError>,
}

pub async fn edit_form(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<EditPage> {
    let r = db::get(&state.pool, parse_id(&id, "runbook")?).await?;
    teams::actions::may_configure(&state, &auth, WHAT, &[r.team_id], UserRole::Admin).await?;
    Ok(EditPage {
        chrome,
        id: r.id,
        owners: owner_choices(&state).await?,
        form: RunbookForm::of(&r),
        errors: vec![],
    })
}

pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<RunbookForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "runbook")?;
    let current = db::get(&state.pool, id).await?;
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version = AppError::checked_version(form.version, current.version)?;
    let draft = form.draft();
    let tried = match actions::team_of(&mut *state.pool.acquire().await?, &draft).await {
        Ok(to) => {
            let owners = [current.team_id, to];
            teams::actions::may_configure(&state, &auth, WHAT, &owners, UserRole::Admin).await?;
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::update(tx, &auth.actor, id, version, &draft))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |_| "/runbooks".into(),
        async |errors| {
            Ok(EditPage {
                chrome,
                id,
                owners: owner_choices(&state).await?,
                form,
                errors,
            })
        },
    )
    .await
}

pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "runbook")?;
    let owner = [db::get(&state.pool, id).await?.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Admin).await?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/runbooks").into_response())
}
