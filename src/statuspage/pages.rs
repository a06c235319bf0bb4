//! The status page's pages: the public page (`/status`, no sign-in, no script, light and dark,
//! a phone's width) and a page per published incident; the admins' arrangement of components
//! and the page's name (`/admin/status`); and an incident's "Publish to status page" form
//! (`/incidents/{key}/publication`).

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::db::{self, Component, Publication};
use super::domain::{ComponentDraft, ComponentStatus, DEFAULT_CLOSING, PublicationDraft};
use super::handlers::public_answer;
use super::public::{self, IncidentView, View};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult, FieldError};
use crate::http::access::{Admin, Responder, Viewer};
use crate::http::extract::{PageForm, incident_key, parse_id};
use crate::http::page::{Chrome, PageError, PageResult, form_again, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "status/page.html")]
struct PublicPage<'a> {
    v: &'a View,
}

#[derive(Template)]
#[template(path = "status/incident.html")]
struct PublicIncident<'a> {
    v: &'a View,
    i: &'a IncidentView,
}

fn html(headers: &HeaderMap, rendered: Result<String, askama::Error>) -> AppResult<Response> {
    let body = rendered.map_err(|e| AppError::Internal(format!("the status page: {e}")))?;
    Ok(public_answer(
        headers,
        "text/html; charset=utf-8",
        body.into_bytes(),
    ))
}

/// `/status`: for everyone, signed in or not.
pub async fn page(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    let v = public::view(&state.pool).await?;
    html(&headers, PublicPage { v: &v }.render())
}

/// `/status/incidents/{number}`: one published incident, open or past.
pub async fn incident(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let missing = || AppError::NotFound("There is no such incident on this page.".into());
    // Only what the public may see: published, never restricted, within the page's history;
    // a name that is no publication costs one small query.
    let id = id.trim();
    if id.len() > 40 || !db::is_public(&state.pool, id).await? {
        return Err(missing());
    }
    let v = public::view(&state.pool).await?;
    let i = v
        .open
        .iter()
        .chain(v.past.iter())
        .find(|i| i.public_id == id)
        .ok_or_else(missing)?;
    html(&headers, PublicIncident { v: &v, i }.render())
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/status.html")]
pub struct AdminPage {
    chrome: Chrome,
    settings: db::Settings,
    components: Vec<Component>,
    services: Vec<String>,
    /// Maintenance windows: (id, name, services, announced)
    windows: Vec<(i64, String, String, bool)>,
    errors: Vec<FieldError>,
}

async fn admin_page(
    state: &AppState,
    chrome: Chrome,
    errors: Vec<FieldError>,
) -> PageResult<AdminPage> {
    let announced = db::announcements(&state.pool).await?;
    let windows = crate::maintenance::db::list(&state.pool, None)
        .await?
        .into_iter()
        .filter(|w| w.cancelled_at.is_none())
        .map(|w| {
            let on = announced.iter().any(|a| a.window_id == w.id);
            (w.id, w.name, w.services.join(", "), on)
        })
        .collect();
    Ok(AdminPage {
        windows,
        chrome,
        settings: db::settings(&state.pool).await?,
        components: db::components(&state.pool).await?,
        services: crate::services::db::list(&state.pool)
            .await?
            .into_iter()
            .map(|s| s.name)
            .collect(),
        errors,
    })
}

pub async fn admin(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<AdminPage> {
    admin_page(&state, chrome, vec![]).await
}

#[derive(Deserialize)]
pub struct SettingsForm {
    name: String,
    #[serde(default)]
    intro: String,
}

pub async fn settings(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<SettingsForm>,
) -> PageResult<Response> {
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_settings(
            tx,
            &auth.actor,
            &form.name,
            &form.intro,
        ))
    })
    .await;
    submitted(
        tried,
        |_| "/admin/status".into(),
        async |errors| admin_page(&state, chrome, errors).await,
    )
    .await
}

#[derive(Deserialize, Clone)]
pub struct ComponentForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    group: String,
    #[serde(default)]
    position: String,
    /// Service names, separated by commas
    #[serde(default)]
    services: String,
    version: Option<i32>,
}

impl ComponentForm {
    fn draft(&self) -> AppResult<ComponentDraft> {
        let position = match self.position.trim() {
            "" => 0,
            p => p
                .parse()
                .map_err(|_| AppError::invalid("position", "a whole number"))?,
        };
        Ok(ComponentDraft {
            name: self.name.clone(),
            description: self.description.clone(),
            group: self.group.clone(),
            position,
            services: self
                .services
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        })
    }
}

pub async fn create_component(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<ComponentForm>,
) -> PageResult<Response> {
    let tried = match form.draft() {
        Ok(draft) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::create_component(tx, &auth.actor, draft.clone()))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |c| format!("/admin/status#c{}", c.id),
        async |errors| admin_page(&state, chrome, errors).await,
    )
    .await
}

pub async fn update_component(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    Path(id): Path<String>,
    PageForm(form): PageForm<ComponentForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "component")?;
    let tried = match form.draft() {
        Ok(draft) => {
            crate::transaction::write(&state.pool, |tx, _| {
                let draft = draft.clone();
                Box::pin(actions::update_component(
                    tx,
                    &auth.actor,
                    id,
                    form.version,
                    draft,
                ))
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |c| format!("/admin/status#c{}", c.id),
        async |errors| admin_page(&state, chrome, errors).await,
    )
    .await
}

#[derive(Deserialize)]
pub struct AnnounceForm {
    window: String,
}

/// Announces a maintenance window on the page.
pub async fn announce(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<AnnounceForm>,
) -> PageResult<Response> {
    let tried = match form.window.trim().parse::<i64>() {
        Ok(id) => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::announce(tx, &auth.actor, id))
            })
            .await
        }
        Err(_) => Err(AppError::invalid("window", "choose a maintenance window")),
    };
    submitted(
        tried,
        |_| "/admin/status#maintenance".into(),
        async |errors| admin_page(&state, chrome, errors).await,
    )
    .await
}

/// Withdraws a maintenance window from the page.
pub async fn withdraw(
    PageRequest(state, _, auth): PageRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "maintenance window")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::withdraw(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/status#maintenance"))
}

pub async fn delete_component(
    PageRequest(state, _, auth): PageRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "component")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete_component(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/status"))
}

#[derive(Template, WebTemplate)]
#[template(path = "status/publish.html")]
pub struct PublishPage {
    chrome: Chrome,
    key: IncidentKey,
    restricted: bool,
    publication: Option<Publication>,
    /// Each component with how this incident affects it ("" when it does not)
    components: Vec<(Component, &'static str)>,
    statuses: [ComponentStatus; 3],
    title: String,
    closing: String,
    errors: Vec<FieldError>,
}

async fn publish_page(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    asked: Option<(&PublishForm, Vec<FieldError>)>,
) -> PageResult<PublishPage> {
    let incident = crate::incidents::db::get(&state.pool, key).await?;
    let publication = db::publication(&state.pool, incident.id).await?;
    let affected = match &publication {
        Some(p) => db::affected(&state.pool, &[p.incident_id]).await?,
        None => vec![],
    };
    let components = db::components(&state.pool)
        .await?
        .into_iter()
        .map(|c| {
            let how = match asked {
                Some((f, _)) => f.status_of(c.id).map_or("", |s| s.as_str()),
                None => affected
                    .iter()
                    .find(|a| a.component_id == c.id)
                    .map_or("", |a| ComponentStatus::stored(&a.status).as_str()),
            };
            (c, how)
        })
        .collect();
    let (title, closing, errors) = match (asked, &publication) {
        (Some((f, errors)), _) => (f.title.clone(), f.closing.clone(), errors),
        (None, Some(p)) => (p.title.clone(), p.closing.clone(), vec![]),
        (None, None) => (String::new(), DEFAULT_CLOSING.to_owned(), vec![]),
    };
    Ok(PublishPage {
        chrome,
        key,
        restricted: incident.restricted,
        publication,
        components,
        statuses: [
            ComponentStatus::DegradedPerformance,
            ComponentStatus::PartialOutage,
            ComponentStatus::MajorOutage,
        ],
        title,
        closing,
        errors,
    })
}

pub async fn publication(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(key): Path<String>,
) -> PageResult<PublishPage> {
    publish_page(&state, chrome, incident_key(&key)?, None).await
}

/// The publish form: `title`, `closing`, and `component_<id>` = how it is affected (empty:
/// not).
#[derive(Deserialize, Clone)]
pub struct PublishForm {
    #[serde(default)]
    title: String,
    #[serde(default)]
    closing: String,
    /// Posted as a stakeholder update for customers
    #[serde(default)]
    message: String,
    #[serde(flatten)]
    rest: std::collections::HashMap<String, String>,
}

impl PublishForm {
    fn status_of(&self, component: i64) -> Option<ComponentStatus> {
        let raw = self.rest.get(&format!("component_{component}"))?;
        ComponentStatus::parse_affected("components", raw).ok()
    }

    fn draft(&self) -> AppResult<PublicationDraft> {
        let mut components = Vec::new();
        for (name, value) in &self.rest {
            let Some(id) = name.strip_prefix("component_") else {
                continue;
            };
            if value.trim().is_empty() {
                continue;
            }
            let id: i64 = id.parse().map_err(|_| {
                AppError::invalid("components", format!("{name:?} is not a component"))
            })?;
            components.push((id, ComponentStatus::parse_affected("components", value)?));
        }
        components.sort_by_key(|c| c.0);
        Ok(PublicationDraft {
            title: self.title.clone(),
            closing: self.closing.clone(),
            components,
        })
    }
}

pub async fn publish(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<PublishForm>,
) -> PageResult<Response> {
    let key = incident_key(&key)?;
    let tried = match form.draft() {
        Ok(draft) => {
            crate::transaction::write(&state.pool, |tx, _| {
                let message = Some(form.message.as_str());
                Box::pin(actions::publish(
                    tx,
                    &auth.actor,
                    key,
                    (draft.clone(), message),
                ))
            })
            .await
        }
        Err(e) => Err(e),
    };
    match tried {
        Ok(_) => Ok(Redirect::to(&format!("/incidents/{key}/publication")).into_response()),
        Err(AppError::Conflict(message)) => {
            let errors = vec![FieldError {
                field: "incident".into(),
                message,
            }];
            let page = publish_page(&state, chrome, key, Some((&form, errors))).await?;
            Ok((StatusCode::CONFLICT, page).into_response())
        }
        Err(e) => {
            form_again(e, async |errors| {
                publish_page(&state, chrome, key, Some((&form, errors))).await
            })
            .await
        }
    }
}

pub async fn unpublish(
    PageRequest(state, _, auth): PageRequest<Responder>,
    Path(key): Path<String>,
) -> PageResult<Redirect> {
    let key = incident_key(&key)?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::unpublish(tx, &auth.actor, key))
    })
    .await
    .map_err(PageError)?;
    Ok(Redirect::to(&format!("/incidents/{key}/publication")))
}
