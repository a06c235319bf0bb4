//! The incident pages: the list, one incident with its timeline and actions, and the forms to
//! open and edit one. They work without JavaScript; every state-changing form carries the
//! version it was rendered from, and a stale one gets a 409 page showing what changed.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::actions::{self, Opening, ServiceChoice};
use super::db::{self, Incident};
use super::domain::{Durations, IncidentKey, Severity, Status, Transition};
use super::handlers::{ListQuery, parse_key};
use crate::clock;
use crate::domain::format_minutes;
use crate::error::{AppError, FieldError};
use crate::http::access::{Auth, RequestActor, Responder, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_form_time};
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::people;
use crate::roles::{self, domain::Role};
use crate::services;
use crate::sla::domain::{Policy, Sla};
use crate::state::AppState;
use crate::timeline::{self, db::Event, domain::headline};

pub(super) fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

pub(super) fn see_other(key: IncidentKey) -> Response {
    Redirect::to(&format!("/incidents/{key}")).into_response()
}

/// What a form on the incident page saves: (what, the part of the page it changed, what the
/// page says there). A form answers with [`saved`], which opens the page at that part with the
/// notice (`?saved=`; quell.js drops it from the address once shown, so a reload is quiet).
const SAVED: &[(&str, &str, &str)] = &[
    ("note", "timeline-panel", "Added to the timeline."),
    ("acknowledge", "live-head", "Acknowledged."),
    ("mitigate", "live-head", "Marked mitigated."),
    ("resolve", "live-head", "Resolved."),
    ("reopen", "live-head", "Reopened."),
    ("details", "live-head", "Details saved."),
    ("severity", "severity", "Severity changed."),
    ("role", "roles", "Role saved."),
    ("update", "updates", "Stakeholder update recorded."),
    ("bridge", "bridge-form", "Bridge saved."),
    ("claim", "claims", "Claim saved."),
    ("renew", "claims", "Claim renewed."),
    ("release", "claims", "Claim ended."),
    ("verdict", "suspects", "Verdict saved."),
    ("check", "runbooks", "Checklist saved."),
];

/// What `what` saved says, and the part of the page it changed.
fn saved_entry(what: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    SAVED.iter().find(|s| s.0 == what)
}

/// The incident's page after a form saved `what`: at the part that changed, saying so.
pub(super) fn saved(key: IncidentKey, what: &str) -> Response {
    match saved_entry(what) {
        Some((what, part, _)) => saved_at(key, what, part),
        None => see_other(key),
    }
}

/// As [`saved`], opened at `anchor` within the part (one suspect change, one runbook).
pub(super) fn saved_at(key: IncidentKey, what: &str, anchor: &str) -> Response {
    Redirect::to(&format!("/incidents/{key}?saved={what}#{anchor}")).into_response()
}

/// A form of the incident page sent back because a field was wrong: the page again (422), the
/// error beside that form and what was typed still in it.
#[derive(Default)]
pub(super) struct Typed {
    /// The part of the page the form sits in (as in [`SAVED`])
    pub part: &'static str,
    pub values: Vec<(&'static str, String)>,
    pub errors: Vec<FieldError>,
}

#[derive(Deserialize, Default)]
pub struct ShowQuery {
    /// What a form just saved (see [`SAVED`])
    #[serde(default)]
    saved: Option<String>,
}

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
}

fn state_class(v: &crate::sla::domain::Verdict) -> &'static str {
    use crate::sla::domain::ClockState::*;
    match v.state {
        Met => "met",
        Breached => "breached",
        Running => "running",
        Overdue => "overdue",
    }
}

/// The SLA of an incident under the current policies.
fn sla_of(i: &Incident, policies: &[Policy], now: DateTime<Utc>) -> Result<Sla, AppError> {
    let policy = crate::sla::db::of(policies, i.peak_severity)?;
    Ok(Sla::of(
        &policy,
        i.detected_at,
        i.acknowledged_at,
        i.resolved_at,
        now,
    ))
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
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> PageResult<Response> {
    // Typing a key into the search box goes straight to that incident.
    if let Some(key) = query
        .q
        .as_deref()
        .and_then(|q| IncidentKey::parse(q.trim()))
        && db::find(&state.pool, key).await?.is_some()
    {
        return Ok(see_other(key));
    }
    Ok(list_page(&state, chrome, query).await?.into_response())
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    query: ListQuery,
) -> Result<ListPage, AppError> {
    let p = query.parse()?;
    let (rows, next) = db::page(&state.pool, &p.filter, p.after, p.limit).await?;
    let next_page = next.map(|cursor| {
        let filters = crate::http::page::filters_query([
            ("status", query.status.as_deref()),
            ("severity", query.severity.as_deref()),
            ("service", query.service.as_deref()),
            ("q", query.q.as_deref()),
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
        crate::action_items::db::owned_unfinished(&state.pool, &my_handle, false).await?
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
    pub(super) title: String,
    #[serde(default)]
    pub(super) severity: String,
    #[serde(default)]
    pub(super) service: String,
    #[serde(default)]
    pub(super) summary: String,
    #[serde(default)]
    pub(super) impact: String,
    #[serde(default)]
    pub(super) started_at: String,
    #[serde(default)]
    pub(super) detected_at: String,
    #[serde(default)]
    pub(super) version: Option<i32>,
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

pub(super) async fn service_names(state: &AppState) -> Result<Vec<String>, AppError> {
    Ok(services::db::list(&state.pool)
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect())
}

pub async fn new_form(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Responder>,
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

/// A form that failed validation is shown again with what the person typed.
pub(super) fn field_errors(err: AppError) -> Result<Vec<FieldError>, PageError> {
    match err {
        AppError::Validation(fields) => Ok(fields),
        other => Err(PageError(other)),
    }
}

pub async fn create(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Responder>,
    PageForm(form): PageForm<IncidentForm>,
) -> PageResult<Response> {
    let result = async {
        let severity = Severity::parse("severity", &form.severity)?;
        let (started_at, detected_at) = (
            parse_form_time("started_at", &form.started_at)?,
            parse_form_time("detected_at", &form.detected_at)?,
        );
        let mut tx = crate::transaction::begin(&state.pool).await?;
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

struct DurationRow {
    label: &'static str,
    value: String,
    running: bool,
    since_iso: String,
}

/// The figures the incident's header shows; `change_at` is the confirmed trigger's time.
fn duration_rows(
    i: &Incident,
    now: DateTime<Utc>,
    change_at: Option<DateTime<Utc>>,
) -> Vec<DurationRow> {
    let d = Durations::of(&i.milestones(), now);
    let fixed = |label, secs: i64| DurationRow {
        label,
        value: format_minutes(secs),
        running: false,
        since_iso: String::new(),
    };
    let mut rows = vec![fixed("Time to detect", d.time_to_detect_secs)];
    rows.extend(change_at.map(|c| {
        fixed(
            "Time to detect from the change",
            (i.detected_at - c).num_seconds(),
        )
    }));
    rows.extend(
        d.time_to_acknowledge_secs
            .map(|s| fixed("Time to acknowledge", s)),
    );
    rows.extend(
        d.time_to_mitigate_secs
            .map(|s| fixed("Time to mitigate", s)),
    );
    match d.time_to_resolve_secs {
        Some(s) => {
            rows.push(fixed("Time to resolve", s));
            if let Some(line) = d.duration {
                rows.push(DurationRow {
                    label: "Duration",
                    value: line,
                    running: false,
                    since_iso: String::new(),
                });
            }
        }
        None => rows.push(DurationRow {
            label: "Open for",
            value: format_minutes(d.open_for_secs),
            running: true,
            since_iso: i.detected_at.to_rfc3339(),
        }),
    }
    rows
}

pub struct TimelineRow {
    pub(super) date_break: Option<String>,
    pub(super) time: String,
    pub(super) occurred_iso: String,
    pub(super) kind: &'static str,
    pub(super) headline: String,
    pub(super) body: String,
    pub(super) author: String,
    pub(super) recorded: Option<String>,
}

impl TimelineRow {
    /// The headline in runs, its dates marked, so each date stays on one line.
    fn headline_runs(&self) -> Vec<(bool, &str)> {
        crate::domain::date_runs(&self.headline)
    }
}

pub(super) fn timeline_rows(events: &[Event], detected_at: DateTime<Utc>) -> Vec<TimelineRow> {
    let mut last_day = None;
    events
        .iter()
        .map(|e| {
            let day = e.occurred_at.date_naive();
            let date_break = (last_day != Some(day)).then(|| day.format("%A %Y-%m-%d").to_string());
            last_day = Some(day);
            // Show when it was written only where that differs from when it happened.
            let recorded = ((e.recorded_at - e.occurred_at).num_seconds().abs() >= 60)
                .then(|| utc(e.recorded_at));
            TimelineRow {
                date_break,
                time: e.occurred_at.format("%H:%M").to_string(),
                occurred_iso: e.occurred_at.to_rfc3339(),
                kind: e.kind.as_str(),
                headline: headline(e.kind, &e.details, e.occurred_at, detected_at),
                body: e.body.clone(),
                author: e.author.clone(),
                recorded,
            }
        })
        .collect()
}

struct RoleRow {
    role: &'static str,
    label: &'static str,
    holder: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "incidents/show.html")]
pub struct ShowPage {
    chrome: Chrome,
    key: String,
    i: Incident,
    started: String,
    detected: String,
    durations: Vec<DurationRow>,
    transitions: Vec<Transition>,
    timeline: Vec<TimelineRow>,
    roles: Vec<RoleRow>,
    people: Vec<people::db::Person>,
    severities: [Severity; 4],
    sla: Sla,
    ack_class: &'static str,
    resolve_class: &'static str,
    updates: Vec<crate::updates::db::Update>,
    cadence: Option<crate::updates::domain::Cadence>,
    audiences: [crate::updates::domain::Audience; 3],
    deliveries: Vec<crate::notify::db::Delivery>,
    escalation: Option<crate::paging::db::Escalation>,
    alert_lines: Vec<crate::alert_store::db::AlertGroupLine>,
    alert_total: i64,
    /// The changes that may have caused it, best first.
    suspects: Vec<crate::changes::db::Suspect>,
    verdicts: [crate::changes::domain::Verdict; 3],
    /// Linked incidents, and incidents that may be related.
    related: Vec<crate::related::db::Related>,
    suggestions: Vec<crate::related::db::Suggestion>,
    /// Its runbooks with their checklists.
    checklists: Vec<crate::runbooks::actions::Checklist>,
    /// What a Sev1 or Sev2 lacks before it is resolved (shown beside Resolve)
    before_resolving: Vec<&'static str>,
    /// Why resolving now asks first, if it does
    confirm_resolve: Option<&'static str>,
    /// Why lowering the severity asks first (a Sev1), if it does
    confirm_lower: Option<&'static str>,
    /// The signed-in person's handle, when they may take incident commander in one click
    take_commander: Option<String>,
    /// Where responders meet, and whether its absence is worth saying (a Sev1 or Sev2)
    bridge: crate::bridge::domain::Bridge,
    bridge_wanted: bool,
    /// Who is looking into what
    claims: Vec<crate::claims::db::Claim>,
    claim_minutes: i64,
    /// The signed-in person's id, to offer renewing their own claims
    me: Option<i64>,
    /// The newest timeline entry shown: the live stream starts after it
    newest: i64,
    /// What a form just saved: the part and what the page says there
    saved: Option<(&'static str, &'static str)>,
    /// A form sent back refused, with what was typed
    sent_back: Typed,
}

impl ShowPage {
    /// The notice for `part`, when a form just saved something there.
    fn notice(&self, part: &str) -> Option<&'static str> {
        self.saved.filter(|(p, _)| *p == part).map(|(_, text)| text)
    }

    /// What was typed into `field` of the form in `part`, when it came back refused.
    fn typed(&self, part: &str, field: &str) -> &str {
        if self.sent_back.part != part {
            return "";
        }
        self.sent_back
            .values
            .iter()
            .find(|(f, _)| *f == field)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Whether `value` was chosen in `field` of the form in `part`, refused; else `default`.
    fn chosen(&self, part: &str, field: &str, value: &str, default: bool) -> bool {
        if self.sent_back.part == part {
            self.typed(part, field) == value
        } else {
            default
        }
    }

    /// The version a form in `part` carries: the one it was first rendered from when it came
    /// back refused (so a change made meanwhile is still caught as stale), else the incident's.
    fn version_in(&self, part: &str) -> String {
        match self.typed(part, "version") {
            "" => self.i.version.to_string(),
            seen => seen.to_owned(),
        }
    }

    /// What a person calls a form's field, for a refusal beside the form.
    fn label_of<'a>(&self, field: &'a str) -> &'a str {
        match field {
            "at" => "When",
            "body" => "Text",
            "kind" => "Kind",
            "note" => "Note",
            "reason" => "Reason",
            "severity" => "Severity",
            "audience" => "Audience",
            "role" => "Role",
            "person" => "Person",
            "subject" => "What you are looking into",
            "call_url" => "Call link",
            "chat_url" => "Chat channel link",
            "version" => "Version",
            other => other,
        }
    }

    /// Why the form in `part` was refused, field by field.
    fn errors_in(&self, part: &str) -> &[FieldError] {
        if self.sent_back.part == part {
            &self.sent_back.errors
        } else {
            &[]
        }
    }

    /// Whether a claim is the signed-in person's own.
    fn mine(&self, person_id: impl std::borrow::Borrow<i64>) -> bool {
        self.me == Some(*person_id.borrow())
    }

    fn verdict_label(&self, verdict: &str) -> &'static str {
        crate::changes::domain::Verdict::parse("verdict", verdict)
            .map_or("", crate::changes::domain::Verdict::label)
    }

    fn change_kind_label(&self, kind: &str) -> &'static str {
        crate::changes::domain::ChangeKind::parse("kind", kind)
            .map_or("change", crate::changes::domain::ChangeKind::label)
    }
}

pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
    ApiQuery(q): ApiQuery<ShowQuery>,
) -> PageResult<ShowPage> {
    let saved = q
        .saved
        .and_then(|what| saved_entry(&what))
        .map(|(_, part, text)| (*part, *text));
    Ok(page(&state, chrome, parse_key(&key)?, saved, Typed::default()).await?)
}

/// A form of the page refused: the page again with the error beside it and what was typed, or
/// the error page when what went wrong is not a field.
pub(super) async fn refused(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    err: AppError,
    part: &'static str,
    values: Vec<(&'static str, String)>,
) -> PageResult<Response> {
    let errors = field_errors(err)?;
    let typed = Typed {
        part,
        values,
        errors,
    };
    let page = page(state, chrome, key, None, typed).await?;
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}

/// The incident's page, with what a form just saved or a refused form's typing.
async fn page(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    saved: Option<(&'static str, &'static str)>,
    typed: Typed,
) -> Result<ShowPage, AppError> {
    // Read on one connection: a pooled connection is checked with a round trip each time it is
    // taken and given back, which would double the page's thirty-odd statements.
    let mut c = state.pool.acquire().await?;
    let i = db::get(&mut *c, key).await?;
    let events = timeline::db::for_incident(&mut *c, i.id).await?;
    let assigned = roles::db::for_incident(&mut *c, i.id).await?;
    let now = clock::now(&mut *c).await?;
    let policies = crate::sla::db::all(&mut *c).await?;
    let sla = sla_of(&i, &policies, now)?;
    let updates = crate::updates::db::for_incident(&mut *c, i.id).await?;
    let cadence = super::handlers::cadence_from(&i, &policies, &updates, now)?;
    let suspects =
        crate::changes::actions::suspects(&mut *c, &super::views::suspecting(&i)).await?;
    let trigger = suspects
        .iter()
        .find(|s| s.verdict.as_deref() == Some("confirmed_trigger"))
        .map(|s| s.change.occurred_at);
    let checklists =
        crate::runbooks::actions::checklist(&mut c, &super::views::checking(&i)).await?;
    let people = people::db::list(&mut *c).await?;
    let commander = assigned
        .iter()
        .find(|a| a.role == Role::IncidentCommander)
        .map(|a| a.person.handle.clone());
    let take_commander = chrome
        .user
        .as_ref()
        .filter(|u| people.iter().any(|p| p.handle == u.handle))
        .filter(|u| commander.as_deref() != Some(u.handle.as_str()))
        .filter(|_| i.status != super::domain::Status::Resolved)
        .map(|u| u.handle.clone());
    let transitions = Transition::legal_from(i.status);
    let before_resolving = if transitions.contains(&Transition::Resolve) {
        super::domain::before_resolving(
            i.severity,
            commander.is_some(),
            !i.impact.trim().is_empty(),
            !updates.is_empty(),
        )
    } else {
        vec![]
    };
    let bridge = crate::bridge::db::of_incident(&mut *c, i.id).await?;
    Ok(ShowPage {
        bridge_wanted: crate::bridge::domain::wanted(i.severity)
            && i.status != super::domain::Status::Resolved,
        bridge,
        claims: crate::claims::db::held(&mut *c, i.id).await?,
        claim_minutes: state.config.live.claim_minutes,
        me: chrome.user.as_ref().map(|u| u.id),
        newest: events.iter().map(|e| e.id).max().unwrap_or(0),
        before_resolving,
        confirm_resolve: super::domain::confirmation(i.status, Transition::Resolve),
        confirm_lower: super::domain::severity_confirmation(i.severity, Severity::Sev4),
        take_commander,
        checklists,
        related: crate::related::db::list(&mut *c, i.id).await?,
        suggestions: crate::related::actions::suggestions(&mut *c, &super::views::related_ref(&i))
            .await?,
        suspects,
        verdicts: crate::changes::domain::Verdict::ALL,
        chrome,
        updates,
        cadence,
        audiences: crate::updates::domain::Audience::ALL,
        deliveries: crate::notify::db::for_incident(&mut *c, i.id).await?,
        escalation: crate::paging::db::escalation(&mut *c, i.id).await?,
        alert_lines: crate::alert_store::db::lines_for_incident(&mut *c, i.id).await?,
        alert_total: crate::alert_store::db::count_for_incident(&mut *c, i.id).await?,
        ack_class: state_class(&sla.ack),
        resolve_class: state_class(&sla.resolve),
        sla,
        key: i.key.to_string(),
        started: utc(i.started_at),
        detected: utc(i.detected_at),
        durations: duration_rows(&i, now, trigger),
        transitions,
        timeline: timeline_rows(&events, i.detected_at),
        roles: Role::ALL
            .into_iter()
            .map(|role| RoleRow {
                role: role.as_str(),
                label: role.label(),
                holder: assigned
                    .iter()
                    .find(|a| a.role == role)
                    .map(|a| a.person.name.clone()),
            })
            .collect(),
        people,
        severities: Severity::ALL,
        i,
        saved,
        sent_back: typed,
    })
}

/// The page an acknowledge link opens: whose link, which incident, and a button (a GET never
/// acknowledges, so a mail scanner following links changes nothing).
#[derive(Template, WebTemplate)]
#[template(path = "incidents/ack.html")]
pub struct AckPage {
    chrome: Chrome,
    key: String,
    title: String,
    severity: String,
    status: String,
    person: String,
    /// Set once this link acknowledged the incident.
    done: bool,
    /// Who acknowledged it and when, once someone has
    acknowledged: Option<crate::timeline::db::Acknowledgement>,
}

fn ack_page(
    chrome: Chrome,
    i: &Incident,
    person: String,
    done: bool,
    acknowledged: Option<crate::timeline::db::Acknowledgement>,
) -> AckPage {
    AckPage {
        acknowledged,
        chrome,
        key: i.key.to_string(),
        title: i.title.clone(),
        severity: i.severity.as_str().to_owned(),
        status: i.status.as_str().to_owned(),
        person,
        done,
    }
}

/// `GET /incidents/{key}/ack/{token}`: no sign-in; the signed token is the credential.
pub async fn ack_link(
    State(state): State<AppState>,
    chrome: Chrome,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<AckPage> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let (_, link) =
        crate::paging::actions::check_link(&mut tx, &i.key.to_string(), i.id, &token).await?;
    tx.rollback().await?;
    let acknowledged = crate::timeline::db::acknowledgement(&state.pool, i.id).await?;
    Ok(ack_page(chrome, &i, link.person, false, acknowledged))
}

/// `POST /incidents/{key}/ack/{token}`: acknowledges as the person the link was sent to, and
/// uses the link up (also when someone else acknowledged first).
pub async fn ack_by_link(
    State(state): State<AppState>,
    chrome: Chrome,
    RequestActor(request): RequestActor,
    Path((key, token)): Path<(String, String)>,
) -> PageResult<Response> {
    let key = parse_key(&key)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let i = db::lock(&mut *tx, key).await?;
    let (nonce, link) =
        crate::paging::actions::check_link(&mut tx, &key.to_string(), i.id, &token).await?;
    let actor = crate::audit::Actor {
        person_id: Some(link.person_id),
        name: link.person.clone(),
        ..request
    };
    let acted = i.status == Status::Triggered;
    let after = if acted {
        let change = actions::Change {
            key,
            expected_version: None,
            at: None,
            actor: &actor,
        };
        actions::transition(
            &mut tx,
            &change,
            Transition::Acknowledge,
            "Acknowledged with the link sent to them.",
        )
        .await?
    } else {
        i
    };
    crate::paging::actions::use_link(&mut tx, nonce).await?;
    let acknowledged = crate::timeline::db::acknowledgement(&mut *tx, after.id).await?;
    tx.commit().await?;
    Ok(ack_page(chrome, &after, link.person, acted, acknowledged).into_response())
}
