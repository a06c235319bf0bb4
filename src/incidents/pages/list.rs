//! The incident list and the form to open an incident.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::clock;
use crate::domain::format_minutes;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_form_time};
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::PageRequest;
use crate::incidents::actions::{self, Opening, ServiceChoice};
use crate::incidents::db::{self};
use crate::incidents::domain::{Durations, IncidentKey, Severity, Status};
use crate::incidents::handlers::ListQuery;
use crate::services;
use crate::sla::domain::Sla;
use crate::state::AppState;
use crate::timeline;

use super::shared::*;

struct ListRow {
    key: String,
    title: String,
    severity: Severity,
    status: Status,
    service: Option<String>,
    detected: String,
    detected_iso: String,
    open_for: String,
    /// The clock to watch, e.g. `ack due in 6 min`.
    sla: String,
    /// `met`, `breached`, `running` or `overdue`, for its colour.
    sla_state: &'static str,
    /// Kept to named teams and people
    restricted: bool,
}

/// The worst state of the two clocks, for the list's colour.
fn worst(sla: &Sla) -> &'static str {
    let order = ["overdue", "breached", "running", "met"];
    let (a, b) = (state_class(&sla.ack), state_class(&sla.resolve));
    if order.iter().position(|x| *x == a) < order.iter().position(|x| *x == b) {
        a
    } else {
        b
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "incidents/list.html")]
pub struct ListPage {
    chrome: Chrome,
    rows: Vec<ListRow>,
    status_options: Vec<(&'static str, &'static str)>,
    severities: [Severity; 4],
    services: Vec<String>,
    filter_status: String,
    filter_severity: String,
    filter_service: String,
    filter_q: String,
    /// The teams to narrow the list to: (slug, name)
    teams: Vec<(String, String)>,
    filter_team: String,
    next_page: Option<String>,
    /// The signed-in person's unfinished action items.
    my_items: Vec<crate::action_items::db::ListedItem>,
    my_handle: String,
    /// The newest timeline entry when rendered: the live stream starts after it
    newest: i64,
}

impl ListPage {
    fn my_overdue(&self) -> usize {
        self.my_items.iter().filter(|a| a.overdue).count()
    }
}

pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> PageResult<Response> {
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    // Typing a key into the search box goes straight to that incident (one the person sees).
    if let Some(key) = query
        .q
        .as_deref()
        .and_then(|q| IncidentKey::parse(q.trim()))
        && crate::incident_ref::db::sight(&state.pool, key, sees)
            .await?
            .is_some_and(|s| s.visible)
    {
        return Ok(see_other(key));
    }
    let team = query.team.as_deref();
    let narrowed = crate::teams::actions::narrowed_page(&state.pool, auth.user.id, team).await?;
    Ok(list_page(&state, chrome, (sees, narrowed), query)
        .await?
        .into_response())
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    (sees, narrowed): (
        crate::incident_ref::domain::SeenBy,
        crate::teams::actions::Narrowed,
    ),
    query: ListQuery,
) -> Result<ListPage, AppError> {
    let mut p = query.parse()?;
    p.filter.teams = narrowed.ids;
    let (rows, next) = db::page(&state.pool, &p.filter, sees, p.after, p.limit).await?;
    let next_page = next.map(|cursor| {
        let filters = crate::http::page::filters_query([
            ("status", query.status.as_deref()),
            ("severity", query.severity.as_deref()),
            ("service", query.service.as_deref()),
            ("q", query.q.as_deref()),
            ("team", narrowed.team.as_deref()),
        ]);
        crate::http::page::next_page("/incidents", &filters, &cursor.encode())
    });
    let now = clock::now(&state.pool).await?;
    let services = services::db::list(&state.pool).await?;
    let policies = crate::sla::db::all(&state.pool).await?;
    let my_handle = chrome
        .user
        .as_ref()
        .map(|u| u.handle.clone())
        .unwrap_or_default();
    let my_items = if my_handle.is_empty() {
        vec![]
    } else {
        // The panel shows no work-item links, so the plain list will do.
        crate::action_items::db::owned_unfinished(&state.pool, &my_handle, false, sees).await?
    };
    Ok(ListPage {
        newest: timeline::db::newest_id(&state.pool, None).await?,
        my_items,
        my_handle,
        chrome,
        rows: rows
            .into_iter()
            .map(|i| {
                let sla = sla_of(&i, &policies, now)?;
                Ok(ListRow {
                    sla: sla.headline(),
                    sla_state: worst(&sla),
                    key: i.key.to_string(),
                    open_for: format_minutes(Durations::of(&i.milestones(), now).open_for_secs),
                    // The column says UTC once; each cell need not.
                    detected: i.detected_at.format("%Y-%m-%d %H:%M").to_string(),
                    detected_iso: i.detected_at.to_rfc3339(),
                    title: i.title,
                    severity: i.severity,
                    status: i.status,
                    service: i.service,
                    restricted: i.restricted,
                })
            })
            .collect::<Result<_, AppError>>()?,
        status_options: vec![
            ("", "Any"),
            ("open", "Open (not resolved)"),
            ("triggered", "Triggered"),
            ("acknowledged", "Acknowledged"),
            ("mitigated", "Mitigated"),
            ("resolved", "Resolved"),
        ],
        severities: Severity::ALL,
        services: services.into_iter().map(|s| s.name).collect(),
        teams: crate::teams::db::choices(&state.pool).await?,
        filter_team: narrowed.team.clone().unwrap_or_default(),
        filter_status: query.status.clone().unwrap_or_default(),
        filter_severity: query.severity.clone().unwrap_or_default(),
        filter_service: query.service.clone().unwrap_or_default(),
        filter_q: query.q.clone().unwrap_or_default(),
        next_page,
    })
}

#[derive(Deserialize, Default)]
pub struct IncidentForm {
    #[serde(default)]
    pub(in crate::incidents) title: String,
    #[serde(default)]
    pub(in crate::incidents) severity: String,
    #[serde(default)]
    pub(in crate::incidents) service: String,
    #[serde(default)]
    pub(in crate::incidents) summary: String,
    #[serde(default)]
    pub(in crate::incidents) impact: String,
    #[serde(default)]
    pub(in crate::incidents) started_at: String,
    #[serde(default)]
    pub(in crate::incidents) detected_at: String,
    #[serde(default)]
    pub(in crate::incidents) version: Option<i32>,
    /// A new incident kept from the start to teams and people (commas between them)
    #[serde(default)]
    pub(in crate::incidents) restricted: Option<String>,
    #[serde(default)]
    pub(in crate::incidents) teams: String,
    #[serde(default)]
    pub(in crate::incidents) people: String,
}

impl IncidentForm {
    /// Whom a new incident is kept to, if the form says to keep it.
    fn access(&self) -> Option<actions::AccessDraft> {
        let kept = self.restricted.as_deref().is_some_and(|v| !v.is_empty());
        kept.then(|| actions::AccessDraft::of_form(true, &self.teams, &self.people))
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "incidents/new.html")]
pub struct NewPage {
    chrome: Chrome,
    form: IncidentForm,
    errors: Vec<FieldError>,
    severities: [Severity; 4],
    services: Vec<String>,
}

pub async fn new_form(
    PageRequest(state, chrome, _): PageRequest<Responder>,
) -> PageResult<NewPage> {
    Ok(NewPage {
        chrome,
        form: IncidentForm {
            severity: "Sev2".into(),
            ..Default::default()
        },
        errors: vec![],
        severities: Severity::ALL,
        services: service_names(&state).await?,
    })
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<IncidentForm>,
) -> PageResult<Response> {
    let result = async {
        let severity = Severity::parse("severity", &form.severity)?;
        let (started_at, detected_at) = (
            parse_form_time("started_at", &form.started_at)?,
            parse_form_time("detected_at", &form.detected_at)?,
        );
        let mut tx = crate::transaction::begin(&state.pool).await?;
        let access = form.access();
        let opening = Opening {
            number: None,
            title: &form.title,
            severity,
            service: ServiceChoice::Named(&form.service),
            summary: &form.summary,
            impact: &form.impact,
            started_at,
            detected_at,
            note: "",
            now: clock::now(&mut *tx).await?,
            restricted_to: access.as_ref(),
            quiet: false,
        };
        let incident = actions::open(&mut tx, &opening, &auth.actor).await?;
        tx.commit().await?;
        Ok::<_, AppError>(incident)
    }
    .await;
    match result {
        Ok(incident) => Ok(see_other(incident.key)),
        Err(err) => {
            let errors = field_errors(err)?;
            let page = NewPage {
                chrome,
                form,
                errors,
                severities: Severity::ALL,
                services: service_names(&state).await?,
            };
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
    }
}
