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
use super::handlers::{FRESH_FOR, Rendered, current, served};
use super::public::{self, IncidentView, View};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult, FieldError};
use crate::http::access::{Admin, RequestActor, Responder, Viewer};
use crate::http::extract::{OpenForm, PageForm, incident_key, parse_id};
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

fn html(rendered: Result<String, askama::Error>) -> AppResult<Vec<u8>> {
    rendered
        .map(String::into_bytes)
        .map_err(|e| AppError::Internal(format!("the status page: {e}")))
}

const HTML: &str = "text/html; charset=utf-8";

/// `/status`: for everyone, signed in or not.
pub async fn page(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    served(&state, &headers, "page", HTML, |v| {
        html(PublicPage { v }.render())
    })
    .await
}

/// `/status/incidents/{id}`: one published incident, open or past — an older one than the
/// page keeps too, by the link it was given.
pub async fn incident(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let missing = || AppError::NotFound("There is no such incident on this page.".into());
    // Only what the public may see: published, never restricted.
    let id = id.trim();
    if id.is_empty() || id.len() > 40 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(missing());
    }
    let (version, v) = current(&state).await?;
    if v.open
        .iter()
        .chain(v.past.iter())
        .any(|i| i.public_id == id)
    {
        return served(&state, &headers, &format!("incident {id}"), HTML, |v| {
            let i = v
                .open
                .iter()
                .chain(v.past.iter())
                .find(|i| i.public_id == id)
                .ok_or_else(missing)?;
            html(PublicIncident { v, i }.render())
        })
        .await;
    }
    // Older than the page keeps: a miss is one small query, made outside the copies' lock so
    // that guessing ids holds back no rebuild; one found is kept as the others.
    if db::public_incident(&state.pool, id).await?.is_none() {
        return Err(missing());
    }
    let made = state
        .public_copies
        .get_or_build(&format!("incident {id}"), version, FRESH_FOR, || async {
            let i = public::incident(&state.pool, id)
                .await?
                .ok_or_else(missing)?;
            let body = html(PublicIncident { v: &v, i: &i }.render())?;
            Ok::<_, AppError>(Rendered::new(HTML, body, v.generated_at))
        })
        .await?;
    Ok(made.answer(&headers))
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
    /// Confirmed, waiting to confirm, failing
    counts: (i64, i64, i64),
    /// The first 100, failing first
    subscribers: Vec<db::Subscriber>,
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
    let subscribers = db::subscribers(&state.pool, 100).await?;
    Ok(AdminPage {
        windows,
        counts: db::subscriber_counts(&state.pool).await?,
        subscribers,
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

pub async fn remove_subscriber(
    PageRequest(state, _, auth): PageRequest<Admin>,
    Path(id): Path<String>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "subscriber")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::remove_subscriber(tx, &auth.actor, id))
    })
    .await?;
    Ok(Redirect::to("/admin/status#subscribers"))
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

// --- Subscribing by email (no sign-in) -------------------------------------------------------

/// A subscriber's choice as a form sends it: `scope` all or some, and a `component_<id>` box
/// per component ticked.
#[derive(Debug, Deserialize)]
pub struct ChooseForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    scope: String,
    #[serde(flatten)]
    rest: std::collections::HashMap<String, String>,
}

impl ChooseForm {
    fn ticked(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self
            .rest
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .filter_map(|(k, _)| k.strip_prefix("component_")?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Every component (`None`), or those ticked.
    fn components(&self) -> Option<Vec<i64>> {
        (self.scope == "some").then(|| self.ticked())
    }
}

#[derive(Template)]
#[template(path = "status/subscribe.html")]
struct SubscribePage<'a> {
    v: &'a View,
    error: Option<String>,
    email: String,
    all: bool,
    chosen: Vec<i64>,
}

#[derive(Template)]
#[template(path = "status/subscription.html")]
struct SubscriptionPage<'a> {
    v: &'a View,
    notice: Option<&'a str>,
    error: Option<String>,
    email: &'a str,
    token: &'a str,
    confirmed: bool,
    all: bool,
    chosen: Vec<i64>,
}

impl SubscribePage<'_> {
    fn ticked(&self, id: &i64) -> bool {
        self.chosen.contains(id)
    }
}

impl SubscriptionPage<'_> {
    fn ticked(&self, id: &i64) -> bool {
        self.chosen.contains(id)
    }
}

#[derive(Template)]
#[template(path = "status/notice.html")]
struct NoticePage<'a> {
    v: &'a View,
    heading: &'a str,
    text: &'a str,
}

/// A page of one person's own: never kept by a cache, and its address (a credential) never
/// sent on as a referrer.
fn own(status: StatusCode, rendered: Result<String, askama::Error>) -> AppResult<Response> {
    let body = html(rendered)?;
    Ok((
        status,
        [
            (axum::http::header::CONTENT_TYPE, HTML),
            (axum::http::header::CACHE_CONTROL, "no-store"),
            (axum::http::header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response())
}

/// What a refusal says, field by field.
fn said(e: &AppError) -> String {
    match e {
        AppError::Validation(fields) => fields
            .iter()
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// `GET /status/subscribe`: the form.
pub async fn subscribe_form(State(state): State<AppState>) -> AppResult<Response> {
    let (_, v) = current(&state).await?;
    let page = SubscribePage {
        v: &v,
        error: None,
        email: String::new(),
        all: true,
        chosen: vec![],
    };
    own(StatusCode::OK, page.render())
}

/// `POST /status/subscribe`: sends a confirmation link; the answer is the same for every
/// address, subscribed or not.
pub async fn subscribe(
    State(state): State<AppState>,
    RequestActor(asking): RequestActor,
    OpenForm(form): OpenForm<ChooseForm>,
) -> AppResult<Response> {
    let components = form.components();
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let request = actions::SubscriptionRequest {
            email: &form.email,
            components: components.clone(),
            from: asking.client_addr.as_deref(),
        };
        Box::pin(actions::subscribe(tx, request))
    })
    .await;
    let (_, v) = current(&state).await?;
    match done {
        Ok(()) => {
            let text = format!(
                "If {} can receive email, a link to confirm your subscription is on its way. Nothing else is sent until you open it.",
                form.email.trim()
            );
            let page = NoticePage {
                v: &v,
                heading: "Check your inbox",
                text: &text,
            };
            own(StatusCode::OK, page.render())
        }
        Err(e @ (AppError::Validation(_) | AppError::LimitReached(_))) => {
            let page = SubscribePage {
                v: &v,
                error: Some(said(&e)),
                email: form.email.clone(),
                all: components.is_none(),
                chosen: form.ticked(),
            };
            own(e.status(), page.render())
        }
        Err(e) => Err(e),
    }
}

/// A link that is no longer valid, said as a page.
fn gone(v: &View, e: &AppError) -> AppResult<Response> {
    let text = said(e);
    let page = NoticePage {
        v,
        heading: "Link no longer valid",
        text: &text,
    };
    own(StatusCode::NOT_FOUND, page.render())
}

fn subscription_page(
    v: &View,
    s: &db::Subscriber,
    (notice, error): (Option<&str>, Option<String>),
    status: StatusCode,
) -> AppResult<Response> {
    let page = SubscriptionPage {
        v,
        notice,
        error,
        email: &s.email,
        token: &s.token,
        confirmed: s.confirmed_at.is_some(),
        all: s.all_components,
        chosen: s.components.clone(),
    };
    own(status, page.render())
}

/// A page of the subscriber these links belong to, drawn by `show`; a link no longer valid
/// says so.
async fn of_subscriber(
    state: &AppState,
    token: &str,
    show: impl FnOnce(&View, &db::Subscriber) -> AppResult<Response>,
) -> AppResult<Response> {
    let (_, v) = current(state).await?;
    let mut conn = state.pool.acquire().await?;
    match actions::subscriber(&mut conn, token).await {
        Ok(s) => show(&v, &s),
        Err(e @ AppError::NotFound(_)) => gone(&v, &e),
        Err(e) => Err(e),
    }
}

/// `GET /status/subscription/{token}`: confirm, choose components, or leave.
pub async fn subscription(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> AppResult<Response> {
    of_subscriber(&state, &token, |v, s| {
        subscription_page(v, s, (None, None), StatusCode::OK)
    })
    .await
}

/// `POST /status/subscription/{token}/confirm`.
pub async fn confirm(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> AppResult<Response> {
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let token = token.clone();
        Box::pin(async move { actions::confirm(tx, &token).await })
    })
    .await;
    let (_, v) = current(&state).await?;
    match done {
        Ok(s) => {
            let n = "Confirmed: you will get email about incidents posted here.";
            subscription_page(&v, &s, (Some(n), None), StatusCode::OK)
        }
        Err(e @ AppError::NotFound(_)) => gone(&v, &e),
        Err(e) => Err(e),
    }
}

/// `POST /status/subscription/{token}`: which components.
pub async fn choose(
    State(state): State<AppState>,
    Path(token): Path<String>,
    OpenForm(form): OpenForm<ChooseForm>,
) -> AppResult<Response> {
    let components = form.components();
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let (token, components) = (token.clone(), components.clone());
        Box::pin(async move { actions::choose(tx, &token, components).await })
    })
    .await;
    let (_, v) = current(&state).await?;
    match done {
        Ok(s) => subscription_page(&v, &s, (Some("Saved."), None), StatusCode::OK),
        Err(e @ AppError::NotFound(_)) => gone(&v, &e),
        Err(e @ AppError::Validation(_)) => {
            let mut conn = state.pool.acquire().await?;
            let s = actions::subscriber(&mut conn, &token).await?;
            subscription_page(
                &v,
                &s,
                (None, Some(said(&e))),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
        Err(e) => Err(e),
    }
}

#[derive(Template)]
#[template(path = "status/leave.html")]
struct LeavePage<'a> {
    v: &'a View,
    email: &'a str,
    token: &'a str,
}

/// `GET /status/subscription/{token}/unsubscribe`: the message's link leads here, to one
/// button (mail scanners open every link; a link alone unsubscribes no one).
pub async fn leave(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> AppResult<Response> {
    of_subscriber(&state, &token, |v, s| {
        let page = LeavePage {
            v,
            email: &s.email,
            token: &s.token,
        };
        own(StatusCode::OK, page.render())
    })
    .await
}

/// `POST /status/subscription/{token}/unsubscribe`: the button, or the mail client's own
/// (RFC 8058 one-click), no sign-in; the address is forgotten.
pub async fn unsubscribe(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> AppResult<Response> {
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let token = token.clone();
        Box::pin(async move { actions::unsubscribe(tx, &token).await })
    })
    .await;
    let (_, v) = current(&state).await?;
    match done {
        Ok(email) => {
            let text = format!(
                "{email} will receive no more email from {}. Its address is forgotten.",
                v.settings.name
            );
            let page = NoticePage {
                v: &v,
                heading: "Unsubscribed",
                text: &text,
            };
            own(StatusCode::OK, page.render())
        }
        Err(e @ AppError::NotFound(_)) => gone(&v, &e),
        Err(e) => Err(e),
    }
}
