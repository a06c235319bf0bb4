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
use crate::error::FieldError;
use crate::http::access::{Admin, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_id, query_text};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

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
}

pub async fn list(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<RunbookQuery>,
) -> PageResult<ListPage> {
    let service = query_text(&q.service);
    Ok(ListPage {
        chrome,
        runbooks: q.list(&state.pool).await?,
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
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<RunbookForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &draft))
    });
    submitted(
        tried.await,
        |_| "/runbooks".into(),
        async |errors| {
            Ok(ListPage {
                chrome,
                runbooks: db::list(&state.pool, db::Filter::default()).await?,
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
    PageRequest(state, chrome, _): PageRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<EditPage> {
    let r = db::get(&state.pool, parse_id(&id, "runbook")?).await?;
    Ok(EditPage {
        chrome,
        id: r.id,
        owners: owner_choices(&state).await?,
        form: RunbookForm::of(&r),
        errors: vec![],
    })
}

pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<RunbookForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "runbook")?;
    let (version, draft) = (form.version, form.draft());
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, id, version, &draft))
    });
    submitted(
        tried.await,
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
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "runbook")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/runbooks").into_response())
}
