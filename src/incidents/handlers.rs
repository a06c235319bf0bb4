//! The incidents REST API under `/api/v1/incidents`: thin handlers around [`super::actions`].

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::{ETAG, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::actions::{self, Opening, Patch};
use super::db::{self, Cursor, Filter, Incident};
use super::domain::{Durations, IncidentKey, Severity, Status, Transition};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::http::extract::{
    ApiJson, ApiQuery, IdempotencyKey, IfMatch, OptionalIfMatch, OptionalJson, double_option, etag,
};
use crate::idempotency;
use crate::roles::{self, db::Assignment, domain::Role};
use crate::state::AppState;
use crate::timeline::{self, db::Event};

/// Until sign-in exists (issue 3), API changes are attributed to this author.
pub const API_AUTHOR: &str = "API client";

pub fn parse_key(key: &str) -> AppResult<IncidentKey> {
    IncidentKey::parse(key)
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {key:?}.")))
}

#[derive(Serialize)]
pub struct RoleHolder {
    pub name: String,
    pub handle: String,
    pub email: String,
    pub assigned_at: DateTime<Utc>,
}

#[derive(Serialize)]
pub struct IncidentView {
    pub key: String,
    pub title: String,
    pub severity: Severity,
    pub status: Status,
    pub service: Option<String>,
    pub summary: String,
    pub impact: String,
    pub started_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<serde_json::Map<String, Value>>,
    pub metrics: Durations,
    pub allowed_transitions: Vec<&'static str>,
    pub links: Value,
}

impl IncidentView {
    pub fn new(i: &Incident, roles: Option<&[Assignment]>, now: DateTime<Utc>) -> Self {
        let key = i.key.to_string();
        let roles = roles.map(|assigned| {
            Role::ALL
                .into_iter()
                .map(|role| {
                    let holder = assigned
                        .iter()
                        .find(|a| a.role == role)
                        .map(|a| RoleHolder {
                            name: a.person.name.clone(),
                            handle: a.person.handle.clone(),
                            email: a.person.email.clone(),
                            assigned_at: a.assigned_at,
                        });
                    (role.as_str().to_owned(), json!(holder))
                })
                .collect()
        });
        Self {
            links: json!({
                "self": format!("/api/v1/incidents/{key}"),
                "timeline": format!("/api/v1/incidents/{key}/timeline"),
                "page": format!("/incidents/{key}"),
            }),
            key,
            title: i.title.clone(),
            severity: i.severity,
            status: i.status,
            service: i.service.clone(),
            summary: i.summary.clone(),
            impact: i.impact.clone(),
            started_at: i.started_at,
            detected_at: i.detected_at,
            acknowledged_at: i.acknowledged_at,
            mitigated_at: i.mitigated_at,
            resolved_at: i.resolved_at,
            version: i.version,
            created_at: i.created_at,
            updated_at: i.updated_at,
            roles,
            metrics: Durations::of(&i.milestones(), now),
            allowed_transitions: Transition::legal_from(i.status)
                .into_iter()
                .map(Transition::as_str)
                .collect(),
        }
    }
}

/// The full view of one incident, with its ETag.
async fn respond(state: &AppState, incident: &Incident, status: StatusCode) -> AppResult<Response> {
    let view = full_view(state, incident).await?;
    Ok(with_etag(status, incident.version, json!(view)))
}

async fn full_view(state: &AppState, incident: &Incident) -> AppResult<IncidentView> {
    let roles = roles::db::for_incident(&state.pool, incident.id).await?;
    let now = clock::now(&state.pool).await?;
    Ok(IncidentView::new(incident, Some(&roles), now))
}

fn with_etag(status: StatusCode, version: i32, body: Value) -> Response {
    let mut res = (status, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&etag(version)) {
        res.headers_mut().insert(ETAG, v);
    }
    res
}

#[derive(Deserialize)]
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

pub async fn create(
    State(state): State<AppState>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<CreateIncident>,
) -> AppResult<Response> {
    const SCOPE: &str = "POST /api/v1/incidents";
    let b = &body.value;
    let mut tx = state.pool.begin().await?;
    if let Some(k) = &idem
        && let Some(replay) = idempotency::claim(&mut tx, SCOPE, k, &body.raw).await?
    {
        return Ok(replay.into_response());
    }
    let incident = actions::open(
        &mut tx,
        &Opening {
            number: None,
            title: &b.title,
            severity: &b.severity,
            service: b.service.as_deref(),
            summary: &b.summary,
            impact: &b.impact,
            started_at: b.started_at,
            detected_at: b.detected_at,
            note: "",
        },
        API_AUTHOR,
    )
    .await?;
    let now = clock::now(&mut *tx).await?;
    let view = json!(IncidentView::new(&incident, Some(&[]), now));
    if let Some(k) = &idem {
        idempotency::remember(&mut tx, SCOPE, k, StatusCode::CREATED, &view).await?;
    }
    tx.commit().await?;
    let mut res = with_etag(StatusCode::CREATED, incident.version, view);
    if let Ok(v) = HeaderValue::from_str(&format!("/api/v1/incidents/{}", incident.key)) {
        res.headers_mut().insert(LOCATION, v);
    }
    Ok(res)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub status: Option<String>,
    pub severity: Option<String>,
    pub service: Option<String>,
    pub q: Option<String>,
    pub cursor: Option<String>,
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
        let nonempty = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let statuses = match nonempty(&self.status) {
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
        let severities = nonempty(&self.severity)
            .map(|s| {
                s.split(',')
                    .map(|p| Severity::parse("severity", p).map(|v| v.as_str().to_owned()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let after = nonempty(&self.cursor)
            .map(|c| {
                Cursor::decode(&c).ok_or_else(|| {
                    AppError::invalid("cursor", "use the next_cursor of a previous page")
                })
            })
            .transpose()?;
        let limit = match nonempty(&self.limit) {
            None => 50,
            Some(l) => l
                .parse::<i64>()
                .ok()
                .filter(|l| (1..=200).contains(l))
                .ok_or_else(|| AppError::invalid("limit", "a number from 1 to 200"))?,
        };
        Ok(ListParams {
            filter: Filter {
                statuses,
                severities,
                service: nonempty(&self.service),
                q: nonempty(&self.q),
            },
            after,
            limit,
        })
    }
}

pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> AppResult<Json<Value>> {
    let p = query.parse()?;
    // One row more than asked tells whether there is a next page.
    let mut rows = db::list(&state.pool, &p.filter, p.after, p.limit + 1).await?;
    let next = (rows.len() as i64 > p.limit).then(|| {
        rows.truncate(p.limit as usize);
        rows.last().map(|i| Cursor::of(i).encode())
    });
    let now = clock::now(&state.pool).await?;
    let items: Vec<_> = rows
        .iter()
        .map(|i| IncidentView::new(i, None, now))
        .collect();
    Ok(Json(
        json!({ "items": items, "next_cursor": next.flatten() }),
    ))
}

pub async fn get(State(state): State<AppState>, Path(key): Path<String>) -> AppResult<Response> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize)]
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

pub async fn patch(
    State(state): State<AppState>,
    Path(key): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<PatchIncident>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let mut tx = state.pool.begin().await?;
    let incident = actions::edit(
        &mut tx,
        key,
        version,
        Patch {
            title: b.title,
            summary: b.summary,
            impact: b.impact,
            service: b.service,
            started_at: b.started_at,
        },
        API_AUTHOR,
    )
    .await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TransitionBody {
    #[serde(default)]
    at: Option<DateTime<Utc>>,
    #[serde(default)]
    note: String,
}

async fn run_transition(
    state: AppState,
    key: String,
    transition: Transition,
    if_match: Option<i32>,
    body: TransitionBody,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let mut tx = state.pool.begin().await?;
    let incident = actions::transition(
        &mut tx, key, transition, if_match, body.at, &body.note, API_AUTHOR,
    )
    .await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

macro_rules! transition_handler {
    ($name:ident, $transition:expr) => {
        pub async fn $name(
            State(state): State<AppState>,
            Path(key): Path<String>,
            OptionalIfMatch(if_match): OptionalIfMatch,
            OptionalJson(body): OptionalJson<TransitionBody>,
        ) -> AppResult<Response> {
            run_transition(state, key, $transition, if_match, body).await
        }
    };
}

transition_handler!(acknowledge, Transition::Acknowledge);
transition_handler!(mitigate, Transition::Mitigate);
transition_handler!(resolve, Transition::Resolve);
transition_handler!(reopen, Transition::Reopen);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeverityBody {
    severity: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

pub async fn change_severity(
    State(state): State<AppState>,
    Path(key): Path<String>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<SeverityBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let b = body.value;
    let mut tx = state.pool.begin().await?;
    let incident = actions::change_severity(
        &mut tx,
        key,
        if_match,
        &b.severity,
        &b.reason,
        b.at,
        API_AUTHOR,
    )
    .await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleBody {
    person: String,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

pub async fn assign_role(
    State(state): State<AppState>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
    body: ApiJson<RoleBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let b = body.value;
    let mut tx = state.pool.begin().await?;
    let incident = actions::set_role(
        &mut tx,
        key,
        if_match,
        role,
        Some(&b.person),
        b.at,
        API_AUTHOR,
    )
    .await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

pub async fn unassign_role(
    State(state): State<AppState>,
    Path((key, role)): Path<(String, String)>,
    OptionalIfMatch(if_match): OptionalIfMatch,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let role = Role::parse(&role)?;
    let mut tx = state.pool.begin().await?;
    let incident = actions::set_role(&mut tx, key, if_match, role, None, None, API_AUTHOR).await?;
    tx.commit().await?;
    respond(&state, &incident, StatusCode::OK).await
}

#[derive(Serialize)]
pub struct EventView {
    id: i64,
    occurred_at: DateTime<Utc>,
    recorded_at: DateTime<Utc>,
    kind: &'static str,
    author: String,
    headline: String,
    body: String,
    details: Value,
}

impl EventView {
    fn new(e: &Event, detected_at: DateTime<Utc>) -> Self {
        Self {
            id: e.id,
            occurred_at: e.occurred_at,
            recorded_at: e.recorded_at,
            kind: e.kind.as_str(),
            author: e.author.clone(),
            headline: timeline::domain::headline(e.kind, &e.details, e.occurred_at, detected_at),
            body: e.body.clone(),
            details: e.details.clone(),
        }
    }
}

pub async fn timeline(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> AppResult<Json<Value>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    let events = timeline::db::for_incident(&state.pool, incident.id).await?;
    let items: Vec<_> = events
        .iter()
        .map(|e| EventView::new(e, incident.detected_at))
        .collect();
    Ok(Json(json!({ "items": items })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteBody {
    body: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    at: Option<DateTime<Utc>>,
}

pub async fn add_note(
    State(state): State<AppState>,
    Path(key): Path<String>,
    IdempotencyKey(idem): IdempotencyKey,
    body: ApiJson<NoteBody>,
) -> AppResult<Response> {
    let key = parse_key(&key)?;
    let scope = format!("POST /api/v1/incidents/{key}/timeline");
    let b = &body.value;
    let mut tx = state.pool.begin().await?;
    if let Some(k) = &idem
        && let Some(replay) = idempotency::claim(&mut tx, &scope, k, &body.raw).await?
    {
        return Ok(replay.into_response());
    }
    let (incident, event) =
        actions::add_note(&mut tx, key, b.kind.as_deref(), &b.body, b.at, API_AUTHOR).await?;
    let view = json!(EventView::new(&event, incident.detected_at));
    if let Some(k) = &idem {
        idempotency::remember(&mut tx, &scope, k, StatusCode::CREATED, &view).await?;
    }
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}
