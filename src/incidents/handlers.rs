//! The incidents REST API under `/api/v1/incidents`: thin handlers around [`super::actions`].

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::actions::{self, Change, Opening, Patch, ServiceChoice};
use super::db::{self, Cursor, Filter, Incident};
use super::domain::{IncidentKey, Severity, Status, Transition};
use super::views::{EventList, EventView, IncidentList, IncidentView};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::http::access::{Auth, Responder, Viewer};
use crate::http::extract::{
    ApiJson, ApiQuery, IdempotencyKey, IfMatch, OptionalIfMatch, OptionalJson, double_option,
    query_cursor, query_limit, query_text, with_etag,
};
use crate::idempotency;
use crate::roles::{self, domain::Role};
use crate::state::AppState;
use crate::timeline;

pub fn parse_key(key: &str) -> AppResult<IncidentKey> {
    IncidentKey::parse(key)
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {key:?}.")))
}

/// The full view of one incident, with its ETag.
async fn respond(state: &AppState, incident: &Incident, status: StatusCode) -> AppResult<Response> {
    let view = full_view(state, incident).await?;
    Ok(with_etag(status, incident.version, &view))
}

/// Read on one connection: a pooled connection is checked with a round trip each time it is
/// taken and given back, which would double the statements' own.
async fn full_view(state: &AppState, incident: &Incident) -> AppResult<IncidentView> {
    let mut c = state.pool.acquire().await?;
    let roles = roles::db::for_incident(&mut *c, incident.id).await?;
    let now = clock::now(&mut *c).await?;
    let policies = crate::sla::db::all(&mut *c).await?;
    let policy = crate::sla::db::of(&policies, incident.peak_severity)?;
    let mut view = IncidentView::new(incident, Some(&roles), &policy, now);
    view.updates = cadence_of(&mut *c, incident, &policies, now).await?;
    view.alert_count =
        Some(crate::alert_store::db::count_for_incident(&mut *c, incident.id).await?);
    view.trigger = crate::changes::db::confirmed_trigger(&mut *c, incident.id)
        .await?
        .map(|t| super::views::Trigger::of(&t, incident.detected_at));
    view.bridge = Some(crate::bridge::db::of_incident(&mut *c, incident.id).await?);
    view.claims = Some(crate::claims::db::held(&mut *c, incident.id).await?);
    Ok(view)
}

/// The update cadence record, when the incident's peak severity asks for updates.
pub async fn cadence_of(
    e: impl sqlx::PgExecutor<'_>,
    i: &Incident,
    policies: &[crate::sla::domain::Policy],
    now: DateTime<Utc>,
) -> AppResult<Option<crate::updates::domain::Cadence>> {
    if crate::sla::db::of(policies, i.peak_severity)?
        .update_cadence_secs
        .is_none()
    {
        return Ok(None);
    }
    let sent = crate::updates::db::for_incident(e, i.id).await?;
    cadence_from(i, policies, &sent, now)
}

/// The update cadence record from the updates already read.
pub fn cadence_from(
    i: &Incident,
    policies: &[crate::sla::domain::Policy],
    sent: &[crate::updates::db::Update],
    now: DateTime<Utc>,
) -> AppResult<Option<crate::updates::domain::Cadence>> {
    let Some(every) = crate::sla::db::of(policies, i.peak_severity)?.update_cadence_secs else {
        return Ok(None);
    };
    let sent: Vec<_> = sent.iter().map(|u| u.sent_at).collect();
    Ok(Some(crate::updates::domain::cadence(
        every,
        i.detected_at,
        i.mitigated_at,
        &sent,
        now,
    )))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIncident {
    title: String,
    severity: String,
    #[serde(default)]
    service: Option<String>,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    impact: String,
    #[serde(default)]
    started_at: Option<DateTime<Utc>>,
    #[serde(default)]
    detected_at: Option<DateTime<Utc>>,
}

/// Open an incident.
#[utoipa::path(
    post,
    path = "/api/v1/incidents", operation_id = "createIncident",
    tag = "incidents",
    params(("Idempotency-Key" = Option<String>, Header, description = "Retry-safe create: the same key and body replays the answer")),
    request_body = CreateIncident,
    responses((status = 201, description = "Opened; Location and ETag headers", body = IncidentView), (status = 400, description = "The body is not JSON", body = crate::error::ErrorBody), (status = 422, description = "A field is wrong (named in details), or the Idempotency-Key was used for another body", body = crate::error::ErrorBody))
)]
pub async fn create(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<CreateIncident>,
) -> AppResult<Response> {
    let b = &body.value;
    let severity = Severity::parse("severity", &b.severity)?;
    let created = idempotency::create_once(
        &state.pool,
        "POST /api/v1/incidents",
        idem.as_ref(),
        &body.raw,
        async |tx| {
            let now = clock::now(&mut *tx).await?;
            let opening = Opening {
                number: None,
                title: &b.title,
                severity,
                service: b
                    .service
                    .as_deref()
                    .map_or(ServiceChoice::None, ServiceChoice::Named),
                summary: &b.summary,
                impact: &b.impact,
                started_at: b.started_at,
                detected_at: b.detected_at,
                note: "",
                now,
            };
            let incident = actions::open(tx, &opening, &auth.actor).await?;
            let policies = crate::sla::db::all(&mut *tx).await?;
            let policy = crate::sla::db::of(&policies, incident.peak_severity)?;
            Ok(IncidentView::new(&incident, Some(&[]), &policy, now))
        },
    )
    .await?;
    Ok(created.respond(|view| {
        let location = format!("/api/v1/incidents/{}", view.key);
        let mut res = with_etag(StatusCode::CREATED, view.version, &view);
        if let Ok(v) = HeaderValue::from_str(&location) {
            res.headers_mut().insert(LOCATION, v);
        }
        res
    }))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Comma-separated statuses, or `open` for every status but resolved
    pub status: Option<String>,
    /// Comma-separated severities, e.g. `Sev1,Sev2`
    pub severity: Option<String>,
    /// A service name
    pub service: Option<String>,
    /// Text in the title, summary or impact, or an incident key
    pub q: Option<String>,
    /// `next_cursor` of the previous page
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (default 50)
    pub limit: Option<String>,
}

/// Parsed list parameters, shared with the list page.
pub struct ListParams {
    pub filter: Filter,
    pub after: Option<Cursor>,
    pub limit: i64,
}

impl ListQuery {
    /// `status` and `severity` take comma-separated lists; `status=open` means every status but
    /// resolved.
    pub fn parse(&self) -> AppResult<ListParams> {
        let statuses = match query_text(&self.status) {
            None => None,
            Some(s) => {
                let mut out = Vec::new();
                for part in s.split(',') {
                    if part.trim() == "open" {
                        out.extend(["triggered", "acknowledged", "mitigated"].map(String::from));
                    } else {
                        out.push(Status::parse("status", part)?.as_str().to_owned());
                    }
                }
                Some(out)
            }
        };
        let severities = query_text(&self.severity)
            .map(|s| {
                s.split(',')
                    .map(|p| Severity::parse("severity", p).map(|v| v.as_str().to_owned()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let after = query_cursor(&self.cursor, Cursor::decode)?;
        let limit = query_limit(&self.limit, 50, 200)?;
        Ok(ListParams {
            filter: Filter {
                statuses,
                severities,
                service: query_text(&self.service),
                q: query_text(&self.q),
            },
            after,
            limit,
        })
    }
}

/// List incidents: open first, then by severity, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/incidents", operation_id = "listIncidents",
    tag = "incidents",
    params(ListQuery),
    responses((status = 200, description = "OK", body = IncidentList), (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn list(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> AppResult<Json<IncidentList>> {
    let p = query.parse()?;
    let (rows, next) = db::page(&state.pool, &p.filter, p.after, p.limit).await?;
    let now = clock::now(&state.pool).await?;
    let policies = crate::sla::db::all(&state.pool).await?;
    let items = rows
        .iter()
        .map(|i| {
            let policy = crate::sla::db::of(&policies, i.peak_severity)?;
            Ok(IncidentView::new(i, None, &policy, now))
        })
        .collect::<AppResult<Vec<_>>>()?;
    Ok(Json(IncidentList {
        items,
        next_cursor: next.map(|c| c.encode()),
    }))
}

/// One incident with roles and computed durations.
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}", operation_id = "getIncident",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "The incident, with an ETag header", body = IncidentView), (status = 404, description = "Not found", body = crate::error::ErrorBody))
)]
pub async fn get(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Response> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchIncident {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    impact: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    service: Option<Option<String>>,
    #[serde(default)]
    started_at: Option<DateTime<Utc>>,
}

/// Edit title, summary, impact, service or impact start.
#[utoipa::path(
    patch,
    path = "/api/v1/incidents/{key}", operation_id = "updateIncident",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = String, Header, description = "The ETag of your copy")),
    request_body = PatchIncident,
    responses((status = 200, description = "OK", body = IncidentView), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale", body = crate::error::ErrorBody), (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody), (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody))
)]
pub async fn patch(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<PatchIncident>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let change = Change {
        key,
        expected_version: version,
        at: None,
        actor: &auth.actor,
    };
    let incident = actions::edit(
        &mut tx,
        &change,
        Patch {
            title: b.title,
            summary: b.summary,
            impact: b.impact,
            service: b.service,
            started_at: b.started_at,
        },
    )
    .await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransitionBody {
    #[serde(default)]
    at: Option<DateTime<Utc>>,
    #[serde(default)]
    note: String,
}

async fn run_transition(
    state: AppState,
    actor: &crate::audit::Actor,
    key: String,
    transition: Transition,
    if_match: Option<i32>,
    body: TransitionBody,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let change = Change {
        key,
        expected_version: if_match,
        at: body.at,
        actor,
    };
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::transition(tx, &change, transition, &body.note))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

macro_rules! transition_handler {
    ($name:ident, $operation:literal, $transition:expr, $path:literal, $doc:literal) => {
        #[doc = $doc]
        #[utoipa::path(
            post,
            path = $path,
            operation_id = $operation,
            tag = "incidents",
            params(("key" = String, Path, description = "Incident key, e.g. INC-1187"),
                   ("If-Match" = Option<String>, Header, description = "Refuse with 412 unless the incident is still at this ETag")),
            request_body(content = Option<TransitionBody>, description = "Optional: when it happened (`at`) and a note"),
            responses((status = 200, description = "OK", body = IncidentView),
                      (status = 404, description = "Not found", body = crate::error::ErrorBody),
                      (status = 409, description = "Not legal from the current status; the message says why", body = crate::error::ErrorBody),
                      (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
                      (status = 422, description = "`at` is in the future, before the start or before the previous step", body = crate::error::ErrorBody))
        )]
        pub async fn $name(
            State(state): State<AppState>,
            auth: Auth<Responder>,
            Path(key): Path<String>,
            OptionalIfMatch(if_match): OptionalIfMatch,
            OptionalJson(body): OptionalJson<TransitionBody>,
        ) -> AppResult<Response> {
            run_transition(state, &auth.actor, key, $transition, if_match, body).await
        }
    };
}

transition_handler!(
    acknowledge,
    "acknowledgeIncident",
    Transition::Acknowledge,
    "/api/v1/incidents/{key}/acknowledge",
    "triggered → acknowledged."
);
transition_handler!(
    mitigate,
    "mitigateIncident",
    Transition::Mitigate,
    "/api/v1/incidents/{key}/mitigate",
    "→ mitigated; stamps a skipped acknowledgement."
);
transition_handler!(
    resolve,
    "resolveIncident",
    Transition::Resolve,
    "/api/v1/incidents/{key}/resolve",
    "→ resolved; stamps skipped steps."
);
transition_handler!(
    reopen,
    "reopenIncident",
    Transition::Reopen,
    "/api/v1/incidents/{key}/reopen",
    "resolved → acknowledged (keeps the first acknowledgement)."
);

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeverityBody {
    severity: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

/// Raise or lower the severity, with a reason.
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/severity", operation_id = "changeIncidentSeverity", operation_id = "changeIncidentSeverity",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = Option<String>, Header)),
    request_body = SeverityBody,
    responses((status = 200, description = "OK", body = IncidentView), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 409, description = "Already at that severity", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody), (status = 422, description = "Unknown severity, missing reason, or a bad `at`", body = crate::error::ErrorBody))
)]
pub async fn change_severity(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<SeverityBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let to = Severity::parse("severity", &b.severity)?;
    let change = Change {
        key,
        expected_version: if_match,
        at: b.at,
        actor: &auth.actor,
    };
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::change_severity(tx, &change, to, &b.reason))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleBody {
    person: String,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

/// Assign a role to a person (by handle or email).
#[utoipa::path(
    put,
    path = "/api/v1/incidents/{key}/roles/{role}", operation_id = "assignIncidentRole",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("role" = String, Path, description = "incident_commander, comms_lead, scribe or postmortem_owner"), ("If-Match" = Option<String>, Header)),
    request_body = RoleBody,
    responses((status = 200, description = "OK", body = IncidentView), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 409, description = "That person already holds the role", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody), (status = 422, description = "Unknown role or person", body = crate::error::ErrorBody))
)]
pub async fn assign_role(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<RoleBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let b = body.value;
    let change = Change {
        key,
        expected_version: if_match,
        at: b.at,
        actor: &auth.actor,
    };
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let incident = actions::set_role(&mut tx, &change, role, Some(&b.person)).await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// Unassign a role.
#[utoipa::path(
    delete,
    path = "/api/v1/incidents/{key}/roles/{role}", operation_id = "unassignIncidentRole",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("role" = String, Path, description = "incident_commander, comms_lead, scribe or postmortem_owner"), ("If-Match" = Option<String>, Header)),
    responses((status = 200, description = "OK", body = IncidentView), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 409, description = "Nobody holds the role", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody))
)]
pub async fn unassign_role(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let change = Change {
        key,
        expected_version: if_match,
        at: None,
        actor: &auth.actor,
    };
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let incident = actions::set_role(&mut tx, &change, role, None).await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// The timeline in the order things happened.
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/timeline", operation_id = "listIncidentTimeline",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = EventList), (status = 404, description = "Not found", body = crate::error::ErrorBody))
)]
pub async fn timeline(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<EventList>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    let events = timeline::db::for_incident(&state.pool, incident.id).await?;
    let items: Vec<_> = events
        .iter()
        .map(|e| EventView::new(e, incident.detected_at))
        .collect();
    Ok(Json(EventList { items }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteBody {
    body: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

/// Add a note, or background context that may predate the incident.
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/timeline", operation_id = "addIncidentNote",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("Idempotency-Key" = Option<String>, Header)),
    request_body = NoteBody,
    responses((status = 201, description = "Created", body = EventView), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn add_note(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<NoteBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = &body.value;
    let created = idempotency::create_once(
        &state.pool,
        &format!("POST /api/v1/incidents/{key}/timeline"),
        idem.as_ref(),
        &body.raw,
        async |tx| {
            let change = Change {
                key,
                expected_version: None,
                at: b.at,
                actor: &auth.actor,
            };
            let (incident, event) =
                actions::add_note(tx, &change, b.kind.as_deref(), &b.body).await?;
            Ok(EventView::new(&event, incident.detected_at))
        },
    )
    .await?;
    Ok(created.respond(|view| (StatusCode::CREATED, Json(view)).into_response()))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBody {
    /// internal, executives or customers
    audience: String,
    body: String,
    /// When it was sent, if earlier than now
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct UpdateList {
    pub items: Vec<crate::updates::db::Update>,
    pub cadence: Option<crate::updates::domain::Cadence>,
}

/// The stakeholder updates of an incident, and how the cadence was kept.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/updates", operation_id = "listStakeholderUpdates", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = UpdateList), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn updates(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<UpdateList>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    let now = clock::now(&state.pool).await?;
    let policies = crate::sla::db::all(&state.pool).await?;
    Ok(Json(UpdateList {
        items: crate::updates::db::for_incident(&state.pool, incident.id).await?,
        cadence: cadence_of(&state.pool, &incident, &policies, now).await?,
    }))
}

/// Record a stakeholder update; it restarts the cadence clock.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/updates", operation_id = "addStakeholderUpdate", tag = "incidents", request_body = UpdateBody,
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 201, description = "Created", body = crate::updates::db::Update),
              (status = 404, description = "Not found", body = crate::error::ErrorBody),
              (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody)))]
pub async fn add_update(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<UpdateBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = &body.value;
    let created = idempotency::create_once(
        &state.pool,
        &format!("POST /api/v1/incidents/{key}/updates"),
        idem.as_ref(),
        &body.raw,
        async |tx| {
            let change = Change {
                key,
                expected_version: None,
                at: b.at,
                actor: &auth.actor,
            };
            actions::add_stakeholder_update(tx, &change, &b.audience, &b.body).await
        },
    )
    .await?;
    Ok(created.respond(|u| (StatusCode::CREATED, Json(u)).into_response()))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct DeliveryList {
    pub items: Vec<crate::notify::db::Delivery>,
}

/// What was sent about this incident, and whether it arrived.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/notifications", operation_id = "listIncidentNotifications", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = DeliveryList), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn notifications(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<DeliveryList>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    Ok(Json(DeliveryList {
        items: crate::notify::db::for_incident(&state.pool, incident.id).await?,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Paging {
    /// The incident's escalation, if its service has a policy
    pub escalation: Option<crate::paging::db::Escalation>,
    /// Every page and channel message about it, with its delivery state
    pub notifications: Vec<crate::notify::db::Delivery>,
}

/// Who was paged for this incident, how, when, and whether it arrived; where the escalation
/// stands.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/paging", operation_id = "getIncidentPaging", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = Paging), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn paging(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<Paging>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    Ok(Json(Paging {
        escalation: crate::paging::db::escalation(&state.pool, incident.id).await?,
        notifications: crate::notify::db::for_incident(&state.pool, incident.id).await?,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SuspectList {
    /// Best first: capacity changes, then production, then the nearest in time
    pub items: Vec<crate::changes::db::Suspect>,
    /// How far before the incident's start changes are looked for
    pub window_hours: i64,
}

/// The changes that may have caused the incident: those to its service and the services it
/// depends on in the 24 hours before it started, and any a verdict was given on.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/suspect-changes", operation_id = "listSuspectChanges", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = SuspectList), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn suspect_changes(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<SuspectList>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let items =
        crate::changes::actions::suspects(&state.pool, &super::views::suspecting(&i)).await?;
    Ok(Json(SuspectList {
        items,
        window_hours: crate::changes::domain::SUSPECT_WINDOW_HOURS,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerdictBody {
    /// suspected, ruled_out or confirmed_trigger
    verdict: String,
    /// When it was reached, if earlier than now
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

/// Give a verdict on a suspect change; it goes on the timeline. At most one change is the
/// confirmed trigger, and it sets the time to detect from the change.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/suspect-changes/{change_id}", operation_id = "judgeSuspectChange", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("change_id" = i64, Path, description = "The change's id")),
    request_body = VerdictBody,
    responses((status = 200, description = "The suspect with its verdict", body = crate::changes::db::Suspect),
              (status = 404, description = "No such incident, or the change is not one of its suspects", body = crate::error::ErrorBody),
              (status = 409, description = "Another change is already the confirmed trigger", body = crate::error::ErrorBody),
              (status = 422, description = "An unknown verdict or a bad `at`", body = crate::error::ErrorBody)))]
pub async fn judge_suspect_change(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, change_id)): Path<(String, String)>,
    body: ApiJson<VerdictBody>,
) -> AppResult<Json<crate::changes::db::Suspect>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let change_id = crate::http::extract::parse_id(&change_id, "change")?;
    let verdict = crate::changes::domain::Verdict::parse("verdict", &body.value.verdict)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let judged = crate::changes::actions::judge(
        &mut tx,
        &super::views::suspecting(&i),
        &crate::changes::actions::Judgement {
            change_id,
            verdict,
            at: body.value.at,
            actor: &auth.actor,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Json(judged))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ChecklistList {
    /// The runbooks of the incident's service, then those of the rules that routed its alerts,
    /// each with this incident's checks
    pub items: Vec<crate::runbooks::actions::Checklist>,
}

/// The incident's runbooks and how far their checklists got.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/checklist", operation_id = "getChecklist", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = ChecklistList), (status = 404, description = "Not found", body = crate::error::ErrorBody)))]
pub async fn checklist(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<ChecklistList>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let mut conn = state.pool.acquire().await?;
    Ok(Json(ChecklistList {
        items: crate::runbooks::actions::checklist(&mut conn, &super::views::checking(&i)).await?,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TickBody {
    runbook_id: i64,
    /// The step's position in the runbook, from 0
    position: i32,
    /// true to check it (the default), false to uncheck it
    #[serde(default = "yes")]
    checked: bool,
}

fn yes() -> bool {
    true
}

/// Check or uncheck a step of one of the incident's runbooks; who and when go on the timeline.
#[utoipa::path(post, path = "/api/v1/incidents/{key}/checklist", operation_id = "tickChecklist", tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    request_body = TickBody,
    responses((status = 200, description = "The runbook's checklist on this incident", body = crate::runbooks::actions::Checklist),
              (status = 404, description = "No such incident, or the runbook is not one it shows", body = crate::error::ErrorBody),
              (status = 422, description = "A position past the runbook's steps", body = crate::error::ErrorBody)))]
pub async fn tick_checklist(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    body: ApiJson<TickBody>,
) -> AppResult<Json<crate::runbooks::actions::Checklist>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let b = &body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let list = crate::runbooks::actions::tick(
        &mut tx,
        &super::views::checking(&i),
        &crate::runbooks::actions::Tick {
            runbook_id: b.runbook_id,
            position: b.position,
            checked: b.checked,
            actor: &auth.actor,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Json(list))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ClaimList {
    items: Vec<crate::claims::db::Claim>,
}

/// Who is looking into what: the claims held now (released and lapsed ones are on the
/// timeline).
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/claims", operation_id = "listClaims",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "Held claims, oldest first", body = ClaimList), (status = 404, description = "Not found", body = crate::error::ErrorBody))
)]
pub async fn claims(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<ClaimList>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    let items = crate::claims::db::held(&state.pool, incident.id).await?;
    Ok(Json(ClaimList { items }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimBody {
    /// What you are looking into, e.g. "processor status page"
    subject: String,
    /// Claim it even though someone else is on the same lead (a 409 named them)
    #[serde(default)]
    also: bool,
}

/// Say what you are looking into. Someone else already on the same lead (the same words after
/// stemming) answers 409 naming them, and nothing is saved unless `also` is true. Your own
/// claim on the same lead is renewed instead.
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/claims", operation_id = "claimLead",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    request_body = ClaimBody,
    responses((status = 201, description = "Claimed (or your claim renewed)", body = crate::claims::db::Claim), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 409, description = "Someone is on the same lead, or the incident is resolved", body = crate::error::ErrorBody), (status = 422, description = "A field is wrong; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn claim(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    body: ApiJson<ClaimBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let b = &body.value;
    let minutes = state.config.live.claim_minutes;
    let claim = actions::claim(&mut tx, &change, &b.subject, b.also, minutes).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(claim)).into_response())
}

/// Hold your claim longer (claims lapse without renewal).
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/claims/{id}/renew", operation_id = "renewClaim",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("id" = i64, Path, description = "Claim id")),
    responses((status = 200, description = "Renewed", body = crate::claims::db::Claim), (status = 403, description = "Not your claim", body = crate::error::ErrorBody), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 410, description = "Released or lapsed", body = crate::error::ErrorBody))
)]
pub async fn renew_claim(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, id)): Path<(String, i64)>,
) -> AppResult<Json<crate::claims::db::Claim>> {
    let change = Change::now(parse_key(&key)?, &auth.actor);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let minutes = state.config.live.claim_minutes;
    let claim = actions::renew_claim(&mut tx, &change, id, minutes).await?;
    tx.commit().await?;
    Ok(Json(claim))
}

/// Release a claim: yours when you are done, or someone else's to free the lead (the timeline
/// names both).
#[utoipa::path(
    delete,
    path = "/api/v1/incidents/{key}/claims/{id}", operation_id = "releaseClaim",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("id" = i64, Path, description = "Claim id")),
    responses((status = 200, description = "Released", body = crate::claims::db::Claim), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 410, description = "Already released", body = crate::error::ErrorBody))
)]
pub async fn release_claim(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path((key, id)): Path<(String, i64)>,
) -> AppResult<Json<crate::claims::db::Claim>> {
    let change = Change::now(parse_key(&key)?, &auth.actor);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let claim = actions::release_claim(&mut tx, &change, id).await?;
    tx.commit().await?;
    Ok(Json(claim))
}

/// The incident's call and chat links.
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/bridge", operation_id = "getBridge",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "The bridge (empty fields when unset)", body = crate::bridge::domain::Bridge), (status = 404, description = "Not found", body = crate::error::ErrorBody))
)]
pub async fn bridge(
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<crate::bridge::domain::Bridge>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    Ok(Json(
        crate::bridge::db::of_incident(&state.pool, incident.id).await?,
    ))
}

/// Set the incident's call and chat links (both blank removes the bridge). Written to the
/// timeline and sent with every notification after.
#[utoipa::path(
    put,
    path = "/api/v1/incidents/{key}/bridge", operation_id = "setBridge",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    request_body = crate::bridge::domain::Links,
    responses((status = 200, description = "Set", body = crate::bridge::domain::Bridge), (status = 404, description = "Not found", body = crate::error::ErrorBody), (status = 422, description = "A link is not an http(s) URL; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn set_bridge(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(key): Path<String>,
    body: ApiJson<crate::bridge::domain::Links>,
) -> AppResult<Json<crate::bridge::domain::Bridge>> {
    let bridge = body.value.checked()?;
    let change = Change::now(parse_key(&key)?, &auth.actor);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    actions::set_bridge(&mut tx, &change, &bridge).await?;
    tx.commit().await?;
    Ok(Json(bridge))
}
