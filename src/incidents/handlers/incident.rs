//! The incident itself: open, list, read, edit, move along, severity, roles, timeline, notes.

use super::shared::*;
use axum::Json;
use axum::extract::Path;
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::clock;
use crate::error::AppResult;
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{
    ApiJson, ApiQuery, IdempotencyKey, IfMatch, OptionalIfMatch, OptionalJson, double_option,
    query_cursor, query_limit, query_text, with_etag,
};
use crate::http::request::ApiRequest;
use crate::idempotency;
use crate::incidents::actions::{self, Change, Opening, Patch, ServiceChoice};
use crate::incidents::db::{self, Cursor, Filter};
use crate::incidents::domain::{Severity, Status, Transition};
use crate::incidents::views::{EventList, EventView, IncidentList, IncidentView};
use crate::roles::domain::Role;
use crate::state::AppState;
use crate::timeline;

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
    /// Kept from the start to these teams and people (`{"restricted": true, "teams":
    /// ["security"], "people": ["ana"]}`); left out, everyone sees it
    #[serde(default)]
    access: Option<actions::AccessDraft>,
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
    ApiRequest(state, auth): ApiRequest<Responder>,
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
                restricted_to: b.access.as_ref(),
                quiet: false,
            };
            let incident = actions::open(tx, &opening, &auth.actor).await?;
            let policies = crate::sla::db::all(&mut *tx).await?;
            let policy = crate::sla::db::of(&policies, incident.peak_severity)?;
            let mut view = IncidentView::new(&incident, Some(&[]), &policy, now);
            view.access = Some(crate::incident_ref::db::access(&mut *tx, incident.id).await?);
            Ok(view)
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
    /// Only incidents of the services this team (by its slug) owns, or `mine`: those of the
    /// teams you are in
    pub team: Option<String>,
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
                // read from `team` by the handler, which knows who asks
                teams: None,
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
    responses((status = 200, description = "OK", body = IncidentList), crate::http::openapi::Invalid)
)]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> AppResult<Json<IncidentList>> {
    let mut p = query.parse()?;
    let team = query.team.as_deref();
    p.filter.teams = crate::teams::actions::narrowed(&state.pool, auth.user.id, team)
        .await?
        .ids;
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    let (rows, next) = db::page(&state.pool, &p.filter, sees, p.after, p.limit).await?;
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
    responses((status = 200, description = "The incident, with an ETag header", body = IncidentView), crate::http::openapi::NotFound)
)]
pub async fn get(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 200, description = "OK", body = IncidentView), crate::http::openapi::Replacing)
)]
pub async fn patch(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<PatchIncident>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let change = Change::now(key, &auth.actor).expecting(version);
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
    let change = Change::now(key, actor).expecting(if_match).dated(body.at);
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
                      crate::http::openapi::NotFound,
                      (status = 409, description = "Not legal from the current status; the message says why", body = crate::error::ErrorBody),
                      (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
                      (status = 422, description = "`at` is in the future, before the start or before the previous step", body = crate::error::ErrorBody))
        )]
        pub async fn $name(
            ApiRequest(state, auth): ApiRequest<Responder>,
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
pub struct SnoozeBody {
    /// How long, 1 to 10080 minutes (a week)
    minutes: i64,
    #[serde(default)]
    note: String,
}

/// Snooze an acknowledged incident: when the time is up, unless it is mitigated or resolved by
/// then, it returns to triggered and its escalation pages again from the first step. A snooze
/// again replaces the last one.
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/snooze", operation_id = "snoozeIncident",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = Option<String>, Header)),
    request_body = SnoozeBody,
    responses((status = 200, description = "OK, with `snoozed_until`", body = IncidentView), crate::http::openapi::NotFound,
              (status = 409, description = "Not acknowledged", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid)
)]
pub async fn snooze(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<SnoozeBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor).expecting(if_match);
    let b = &body.value;
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::snooze(tx, &change, b.minutes, &b.note))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EscalateBody {
    /// The next step (1-based) you saw; when the escalation has moved on since, nothing is
    /// done (409), so two people escalating together do not skip a step
    #[serde(default)]
    step: Option<i32>,
    /// The round (0 first, then each repeat of the policy) you saw it in, with `step`
    #[serde(default)]
    round: Option<i32>,
}

/// Escalate now: the triggered incident's escalation fires its next step at once instead of
/// waiting out the current step's delay (`GET …/paging` shows which step is next).
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/escalate", operation_id = "escalateIncident",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = Option<String>, Header)),
    request_body = EscalateBody,
    responses((status = 200, description = "The next step is due now", body = IncidentView), crate::http::openapi::NotFound,
              (status = 409, description = "Not being paged (acknowledged, no policy, every step paged), or the escalation moved on since `step`", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody))
)]
pub async fn escalate(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    OptionalJson(body): OptionalJson<EscalateBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor).expecting(if_match);
    let seen = body.step.map(|s| (s, body.round));
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::escalate_now(tx, &change, seen))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// Reassign: hand the incident to a person, a schedule's on-call person or an escalation
/// policy (exactly one), with a message. An acknowledged incident goes back to triggered
/// (keeping its first acknowledgement for the SLA); its escalation runs again with the new
/// target in place of the old, whose pages not yet sent are called off; whoever acknowledges
/// takes it over. `If-Match` is required (`*` takes whatever it is now).
#[utoipa::path(
    post,
    path = "/api/v1/incidents/{key}/reassign", operation_id = "reassignIncident",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = String, Header, description = "The ETag of your copy, or `*`")),
    request_body = crate::responders::domain::AskDraft,
    responses((status = 200, description = "Reassigned: the new target is paged at once", body = IncidentView), crate::http::openapi::NotFound,
              (status = 409, description = "Mitigated or resolved: nobody needs to take it over", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody),
              (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid)
)]
pub async fn reassign(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<crate::responders::domain::AskDraft>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let (asked, message) = body.value.checked()?;
    let change = Change::now(key, &auth.actor).expecting(version);
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::reassign(tx, &change, &asked, &message))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// End a snooze early: the incident stays acknowledged and nobody is paged.
#[utoipa::path(
    delete,
    path = "/api/v1/incidents/{key}/snooze", operation_id = "endIncidentSnooze",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("If-Match" = Option<String>, Header)),
    responses((status = 200, description = "OK", body = IncidentView), crate::http::openapi::NotFound,
              (status = 409, description = "Not snoozed", body = crate::error::ErrorBody),
              (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody))
)]
pub async fn end_snooze(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let change = Change::now(key, &auth.actor).expecting(if_match);
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::end_snooze(tx, &change))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

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
    responses((status = 200, description = "OK", body = IncidentView), crate::http::openapi::NotFound, (status = 409, description = "Already at that severity", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody), (status = 422, description = "Unknown severity, missing reason, or a bad `at`", body = crate::error::ErrorBody))
)]
pub async fn change_severity(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<SeverityBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let to = Severity::parse("severity", &b.severity)?;
    let change = Change::now(key, &auth.actor)
        .expecting(if_match)
        .dated(b.at);
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
    responses((status = 200, description = "OK", body = IncidentView), crate::http::openapi::NotFound, (status = 409, description = "That person already holds the role", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody), (status = 422, description = "Unknown role or person", body = crate::error::ErrorBody))
)]
pub async fn assign_role(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<RoleBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let b = body.value;
    let change = Change::now(key, &auth.actor)
        .expecting(if_match)
        .dated(b.at);
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_role(tx, &change, role, Some(&b.person)))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// Unassign a role.
#[utoipa::path(
    delete,
    path = "/api/v1/incidents/{key}/roles/{role}", operation_id = "unassignIncidentRole",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"), ("role" = String, Path, description = "incident_commander, comms_lead, scribe or postmortem_owner"), ("If-Match" = Option<String>, Header)),
    responses((status = 200, description = "OK", body = IncidentView), crate::http::openapi::NotFound, (status = 409, description = "Nobody holds the role", body = crate::error::ErrorBody), (status = 412, description = "Your copy is stale; details.current_version has the current one", body = crate::error::ErrorBody))
)]
pub async fn unassign_role(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let change = Change::now(key, &auth.actor).expecting(if_match);
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_role(tx, &change, role, None))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}

/// The timeline in the order things happened.
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/timeline", operation_id = "listIncidentTimeline",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = EventList), crate::http::openapi::NotFound)
)]
pub async fn timeline(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 201, description = "Created", body = EventView), crate::http::openapi::NotFound, crate::http::openapi::Invalid)
)]
pub async fn add_note(
    ApiRequest(state, auth): ApiRequest<Responder>,
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
            let change = Change::now(key, &auth.actor).dated(b.at);
            let (incident, event) =
                actions::add_note(tx, &change, b.kind.as_deref(), &b.body).await?;
            Ok(EventView::new(&event, incident.detected_at))
        },
    )
    .await?;
    Ok(created.respond(|view| (StatusCode::CREATED, Json(view)).into_response()))
}
