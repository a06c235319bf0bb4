//! The status page's API: `/api/v1/status/…` (admins arrange components and name the page;
//! everyone signed in reads them), `/api/v1/incidents/{key}/publication` (responders publish an
//! incident), and the public JSON in Atlassian Statuspage's shapes under `/status/api/v2/`, so
//! status widgets and monitors made for Statuspage read Quell's unchanged.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::actions;
use super::db::{self, Component, Publication, Settings};
use super::domain::{ComponentDraft, ComponentStatus, PublicationDraft};
use super::public::{self, ComponentView, IncidentView, MaintenanceView, View};
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Responder, Viewer};
use crate::http::extract::{ApiJson, incident_key, parse_id};
use crate::http::request::ApiRequest;
use crate::state::AppState;

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ComponentList {
    /// In the order the page shows them
    pub items: Vec<Component>,
}

/// A component as an admin writes it.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ComponentBody {
    /// Its public name
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The heading it is shown under; empty: on its own
    #[serde(default)]
    pub group: String,
    /// Smaller first
    #[serde(default)]
    pub position: i32,
    /// The services it stands for, by name (their maintenance puts it under maintenance)
    #[serde(default)]
    pub services: Vec<String>,
    /// The version it was read at, to refuse a change made from an older copy
    #[serde(default)]
    pub version: Option<i32>,
}

impl ComponentBody {
    fn draft(&self) -> ComponentDraft {
        ComponentDraft {
            name: self.name.clone(),
            description: self.description.clone(),
            group: self.group.clone(),
            position: self.position,
            services: self.services.clone(),
        }
    }
}

/// The status page's components.
#[utoipa::path(get, path = "/api/v1/status/components", operation_id = "listStatusComponents", tag = "status",
    responses((status = 200, description = "OK", body = ComponentList)))]
pub async fn components(
    ApiRequest(state, _): ApiRequest<Viewer>,
) -> AppResult<Json<ComponentList>> {
    Ok(Json(ComponentList {
        items: db::components(&state.pool).await?,
    }))
}

/// Add a component.
#[utoipa::path(post, path = "/api/v1/status/components", operation_id = "createStatusComponent", tag = "status",
    request_body = ComponentBody,
    responses((status = 201, description = "Created", body = Component), crate::http::openapi::Invalid))]
pub async fn create_component(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<ComponentBody>,
) -> AppResult<Response> {
    let draft = body.value.draft();
    let made = crate::transaction::write(&state.pool, |tx, _| {
        let (actor, draft) = (&auth.actor, draft.clone());
        Box::pin(actions::create_component(tx, actor, draft))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(made)).into_response())
}

/// Change a component (`version` refuses a change made from an older copy).
#[utoipa::path(put, path = "/api/v1/status/components/{id}", operation_id = "replaceStatusComponent", tag = "status",
    params(("id" = i64, Path, description = "Component id")),
    request_body = ComponentBody,
    responses((status = 200, description = "OK", body = Component), crate::http::openapi::NotFound,
              (status = 409, description = "Changed meanwhile", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn replace_component(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    body: ApiJson<ComponentBody>,
) -> AppResult<Json<Component>> {
    let id = parse_id(&id, "component")?;
    let (draft, version) = (body.value.draft(), body.value.version);
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let (actor, draft) = (&auth.actor, draft.clone());
        Box::pin(actions::update_component(tx, actor, id, version, draft))
    })
    .await?;
    Ok(Json(done))
}

/// Remove a component (incidents that named it no longer do).
#[utoipa::path(delete, path = "/api/v1/status/components/{id}", operation_id = "deleteStatusComponent", tag = "status",
    params(("id" = i64, Path, description = "Component id")),
    responses((status = 204, description = "Removed"), crate::http::openapi::NotFound))]
pub async fn delete_component(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "component")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete_component(tx, &auth.actor, id))
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The page's name and the text under it.
#[utoipa::path(get, path = "/api/v1/status/settings", operation_id = "getStatusSettings", tag = "status",
    responses((status = 200, description = "OK", body = Settings)))]
pub async fn settings(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<Settings>> {
    Ok(Json(db::settings(&state.pool).await?))
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsBody {
    /// The page's heading: the installation's name (1 to 100 characters)
    pub name: String,
    /// A short text under it (at most 2000 characters)
    #[serde(default)]
    pub intro: String,
}

/// Name the page.
#[utoipa::path(put, path = "/api/v1/status/settings", operation_id = "replaceStatusSettings", tag = "status",
    request_body = SettingsBody,
    responses((status = 200, description = "OK", body = Settings), crate::http::openapi::Invalid))]
pub async fn set_settings(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<SettingsBody>,
) -> AppResult<Json<Settings>> {
    let b = &body.value;
    let done = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_settings(tx, &auth.actor, &b.name, &b.intro))
    })
    .await?;
    Ok(Json(done))
}

/// How an incident affects one component.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AffectedBody {
    pub component: i64,
    /// degraded_performance, partial_outage or major_outage
    pub status: String,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublicationBody {
    /// The public title (the incident's own is never shown)
    pub title: String,
    /// Said publicly when it resolves; empty: "This incident has been resolved."
    #[serde(default)]
    pub closing: String,
    #[serde(default)]
    pub components: Vec<AffectedBody>,
    /// Posted as a stakeholder update for customers: the first (or next) public update
    #[serde(default)]
    pub message: String,
}

impl PublicationBody {
    pub fn draft(&self) -> AppResult<PublicationDraft> {
        let components = self
            .components
            .iter()
            .enumerate()
            .map(|(n, a)| {
                let field = format!("components[{n}].status");
                ComponentStatus::parse_affected(&field, &a.status).map(|s| (a.component, s))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PublicationDraft {
            title: self.title.clone(),
            closing: self.closing.clone(),
            components,
        })
    }
}

/// The incident's publication on the status page, if it is published.
#[utoipa::path(get, path = "/api/v1/incidents/{key}/publication", operation_id = "getPublication", tag = "status",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = Publication), crate::http::openapi::NotFound))]
pub async fn publication(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<Publication>> {
    let key = incident_key(&key)?;
    let incident = crate::incidents::db::get(&state.pool, key).await?;
    db::publication(&state.pool, incident.id)
        .await?
        .filter(|p| !p.restricted)
        .map(Json)
        .ok_or_else(|| AppError::NotFound(format!("{key} is not on the status page.")))
}

/// Publish the incident to the status page, or change what its publication says. Its public
/// updates are its stakeholder updates for the customers audience. A restricted incident is
/// refused (409).
#[utoipa::path(put, path = "/api/v1/incidents/{key}/publication", operation_id = "publishIncident", tag = "status",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    request_body = PublicationBody,
    responses((status = 200, description = "Published", body = Publication), crate::http::openapi::NotFound,
              (status = 409, description = "The incident is restricted", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn publish(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<PublicationBody>,
) -> AppResult<Json<Publication>> {
    let key = incident_key(&key)?;
    let draft = body.value.draft()?;
    let done = crate::transaction::write(&state.pool, |tx, _| {
        let (actor, draft) = (&auth.actor, draft.clone());
        let message = Some(body.value.message.as_str());
        Box::pin(actions::publish(tx, actor, key, (draft, message)))
    })
    .await?;
    Ok(Json(done))
}

/// Take the incident off the status page.
#[utoipa::path(delete, path = "/api/v1/incidents/{key}/publication", operation_id = "unpublishIncident", tag = "status",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 204, description = "Taken off"), crate::http::openapi::NotFound))]
pub async fn unpublish(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
) -> AppResult<StatusCode> {
    let key = incident_key(&key)?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::unpublish(tx, &auth.actor, key))
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct SubscriberList {
    /// Confirmed subscribers
    pub confirmed: i64,
    /// Waiting to confirm
    pub waiting: i64,
    /// Whose last message was given up on
    pub failing: i64,
    /// The first 1000 subscribers, failing first, then by address
    pub items: Vec<db::Subscriber>,
}

/// The status page's email subscribers: counts, and the first 1000, failing first (admins).
#[utoipa::path(get, path = "/api/v1/status/subscribers", operation_id = "listStatusSubscribers", tag = "status",
    responses((status = 200, description = "OK", body = SubscriberList)))]
pub async fn subscribers(
    ApiRequest(state, _): ApiRequest<Admin>,
) -> AppResult<Json<SubscriberList>> {
    let (confirmed, waiting, failing) = db::subscriber_counts(&state.pool).await?;
    Ok(Json(SubscriberList {
        confirmed,
        waiting,
        failing,
        items: db::subscribers(&state.pool, 1000).await?,
    }))
}

/// Remove a subscriber (their messages not yet sent go with them).
#[utoipa::path(delete, path = "/api/v1/status/subscribers/{id}", operation_id = "deleteStatusSubscriber", tag = "status",
    params(("id" = i64, Path, description = "Subscriber id")),
    responses((status = 204, description = "Removed"), crate::http::openapi::NotFound))]
pub async fn remove_subscriber(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "subscriber")?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::remove_subscriber(tx, &auth.actor, id))
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

// --- Statuspage's public shapes -------------------------------------------------------------

const PAGE_ID: &str = "quell";

fn page_object(v: &View, base: &str) -> Value {
    json!({
        "id": PAGE_ID,
        "name": v.settings.name,
        "url": format!("{}/status", base.trim_end_matches('/')),
        "time_zone": "Etc/UTC",
        "updated_at": v.updated_at,
    })
}

/// A group's id: the same for the same name, however components move.
fn group_id(name: &str) -> String {
    let sum = format!("{:x}", Sha256::digest(name.as_bytes()));
    format!("g{}", &sum[..12])
}

fn component_object(c: &ComponentView, group_id: Option<&str>) -> Value {
    json!({
        "id": format!("c{}", c.id),
        "name": c.name,
        "status": c.status.as_str(),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "position": c.position,
        "description": if c.description.is_empty() { Value::Null } else { json!(c.description) },
        "showcase": true,
        "start_date": Value::Null,
        "group_id": group_id,
        "page_id": PAGE_ID,
        "group": false,
        "only_show_if_degraded": false,
    })
}

/// Components as Statuspage lists them: each group a component of its own (`group: true`,
/// naming its members), its members pointing back at it.
fn component_objects(v: &View) -> Vec<Value> {
    let mut out = Vec::new();
    for g in &v.groups {
        if g.name.is_empty() {
            out.extend(g.components.iter().map(|c| component_object(c, None)));
            continue;
        }
        let id = group_id(&g.name);
        let worst = g
            .components
            .iter()
            .map(|c| c.status)
            .max()
            .unwrap_or(ComponentStatus::Operational);
        let first = g.components.first();
        out.push(json!({
            "id": id,
            "name": g.name,
            "status": worst.as_str(),
            "created_at": first.map(|c| c.created_at),
            "updated_at": g.components.iter().map(|c| c.updated_at).max(),
            "position": first.map_or(0, |c| c.position),
            "description": Value::Null,
            "showcase": false,
            "start_date": Value::Null,
            "group_id": Value::Null,
            "page_id": PAGE_ID,
            "group": true,
            "only_show_if_degraded": false,
            "components": g.components.iter().map(|c| format!("c{}", c.id)).collect::<Vec<_>>(),
        }));
        out.extend(g.components.iter().map(|c| component_object(c, Some(&id))));
    }
    out
}

fn incident_object(i: &IncidentView, v: &View, base: &str) -> Value {
    let id = &i.public_id;
    let affected: Vec<Value> = i
        .components
        .iter()
        .map(|(cid, name, status)| {
            json!({"code": format!("c{cid}"), "name": name, "old_status": "operational",
                   "new_status": status.as_str()})
        })
        .collect();
    // The components changed with the first update (newest first: the last).
    let first = i.updates.len().saturating_sub(1);
    let updates: Vec<Value> = i
        .updates
        .iter()
        .enumerate()
        .map(|(n, u)| {
            let changed = if n == first {
                json!(affected)
            } else {
                Value::Null
            };
            json!({
                "id": u.id, "status": u.status.as_str(), "body": u.body, "incident_id": id,
                "created_at": u.at, "updated_at": u.at, "display_at": u.at,
                "affected_components": changed, "deliver_notifications": true,
                "custom_tweet": Value::Null, "tweet_id": Value::Null,
            })
        })
        .collect();
    let components: Vec<Value> = i
        .components
        .iter()
        .filter_map(|(cid, _, _)| v.components.iter().find(|c| c.id == *cid))
        .map(|c| component_object(c, grouped(c).as_deref()))
        .collect();
    json!({
        "id": id,
        "name": i.title,
        "status": i.status.as_str(),
        "created_at": i.published_at,
        "updated_at": i.updated_at,
        "monitoring_at": i.mitigated_at,
        "resolved_at": i.resolved_at,
        "impact": i.impact,
        "shortlink": format!("{}/status/incidents/{}", base.trim_end_matches('/'), i.public_id),
        "started_at": i.started_at,
        "page_id": PAGE_ID,
        "incident_updates": updates,
        "components": components,
    })
}

/// The group id of a component in one.
fn grouped(c: &ComponentView) -> Option<String> {
    (!c.group.is_empty()).then(|| group_id(&c.group))
}

fn maintenance_object(m: &MaintenanceView, v: &View, base: &str) -> Value {
    let components: Vec<Value> = m
        .components
        .iter()
        .filter_map(|(cid, _)| v.components.iter().find(|c| c.id == *cid))
        .map(|c| component_object(c, grouped(c).as_deref()))
        .collect();
    let said = format!(
        "{} from {} to {} UTC.",
        m.name,
        m.starts_at.format("%Y-%m-%d %H:%M"),
        m.ends_at.format("%Y-%m-%d %H:%M")
    );
    let update = json!({
        "id": format!("{}-1", m.id), "status": m.status, "body": said, "incident_id": m.id,
        "created_at": m.starts_at, "updated_at": m.starts_at, "display_at": m.starts_at,
        "affected_components": Value::Null, "deliver_notifications": true,
        "custom_tweet": Value::Null, "tweet_id": Value::Null,
    });
    json!({
        "id": m.id,
        "name": m.name,
        "status": m.status,
        "created_at": m.starts_at,
        "updated_at": m.starts_at,
        "monitoring_at": Value::Null,
        "resolved_at": Value::Null,
        "impact": "maintenance",
        "shortlink": format!("{}/status", base.trim_end_matches('/')),
        "started_at": m.starts_at,
        "page_id": PAGE_ID,
        "incident_updates": [update],
        "components": components,
        "scheduled_for": m.starts_at,
        "scheduled_until": m.ends_at,
    })
}

/// How long a replica serves its copy of a public answer while the page's version holds:
/// the bound on what changes with time alone (a maintenance window starting, a new day's bar).
/// Browsers and proxies may keep it as long (`Cache-Control`).
pub const FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// A public answer as made once per version of the page: its bytes and their tag.
pub struct Rendered {
    content_type: &'static str,
    body: axum::body::Bytes,
    etag: String,
    /// When it was made (the database's clock)
    made: chrono::DateTime<chrono::Utc>,
}

impl Rendered {
    pub fn new(
        content_type: &'static str,
        body: Vec<u8>,
        made: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let etag = format!("\"{:x}\"", Sha256::digest(&body));
        Self {
            content_type,
            body: body.into(),
            etag,
            made,
        }
    }

    /// The answer: cacheable for a short while by anyone, with its ETag and Last-Modified
    /// (when this copy was made), and a 304 to a client that has the same bytes. Only the
    /// ETag decides: a date cannot tell a change within its second, nor one that took
    /// something away (a restricted incident) from nothing changed.
    pub fn answer(&self, headers: &HeaderMap) -> Response {
        let modified = self.made.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
        let fresh = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|tags| {
                tags.split(',')
                    .any(|t| t.trim() == self.etag || t.trim() == "*")
            });
        let mut res = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            (StatusCode::OK, self.body.clone()).into_response()
        };
        let h = res.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=10"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        if let Ok(v) = HeaderValue::from_str(&self.etag) {
            h.insert(header::ETAG, v);
        }
        if let Ok(v) = HeaderValue::from_str(&modified) {
            h.insert(header::LAST_MODIFIED, v);
        }
        res
    }
}

/// What the public sees now, as this replica keeps it: built again only when the page's
/// version in the database moved (a change any replica made) or the copy is 10 s old.
pub async fn current(state: &AppState) -> AppResult<(i64, std::sync::Arc<View>)> {
    let version = db::version(&state.pool).await?;
    let v = state
        .public_copies
        .get_or_build("view", version, FRESH_FOR, || public::view(&state.pool))
        .await?;
    Ok((version, v))
}

/// Answers public output `name`, made by `render` from what the public sees once per version
/// of the page in this replica; every other request is answered from the copy.
pub async fn served(
    state: &AppState,
    headers: &HeaderMap,
    name: &str,
    content_type: &'static str,
    render: impl FnOnce(&View) -> AppResult<Vec<u8>>,
) -> AppResult<Response> {
    let (version, v) = current(state).await?;
    // Named with the data's own making, so an answer lives no longer than the data it shows.
    let name = format!("{name} {}", v.generated_at.timestamp_micros());
    let made = state
        .public_copies
        .get_or_build(&name, version, FRESH_FOR, || async {
            let body = render(&v)?;
            Ok::<_, AppError>(Rendered::new(content_type, body, v.generated_at))
        })
        .await?;
    Ok(made.answer(headers))
}

fn json_body(v: Value) -> AppResult<Vec<u8>> {
    serde_json::to_vec(&v).map_err(|e| AppError::Internal(format!("the status JSON: {e}")))
}

/// `/status/api/v2/{name}.json` and `/status/api/v2/incidents/unresolved.json`.
pub async fn statuspage(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    if !SHAPES.contains(&name.as_str()) {
        return Err(AppError::NotFound(format!("There is no {name}.")));
    }
    let base = state.config.base_url.clone();
    served(&state, &headers, &name, "application/json", |v| {
        json_body(statuspage_object(v, &name, &base))
    })
    .await
}

/// The shapes served under `/status/api/v2/`.
const SHAPES: [&str; 5] = [
    "summary.json",
    "status.json",
    "components.json",
    "incidents.json",
    "scheduled-maintenances.json",
];

fn statuspage_object(v: &View, name: &str, base: &str) -> Value {
    let page = page_object(v, base);
    let status = json!({"indicator": v.indicator, "description": v.description});
    let open: Vec<Value> = v.open.iter().map(|i| incident_object(i, v, base)).collect();
    let maintenance: Vec<Value> = v
        .maintenance
        .iter()
        .map(|m| maintenance_object(m, v, base))
        .collect();
    match name {
        "summary.json" => json!({
            "page": page, "components": component_objects(v), "incidents": open,
            "scheduled_maintenances": maintenance, "status": status,
        }),
        "status.json" => json!({"page": page, "status": status}),
        "components.json" => json!({"page": page, "components": component_objects(v)}),
        "incidents.json" => {
            let all: Vec<Value> = v
                .open
                .iter()
                .chain(v.past.iter())
                .take(50)
                .map(|i| incident_object(i, v, base))
                .collect();
            json!({"page": page, "incidents": all})
        }
        _ => json!({"page": page, "scheduled_maintenances": maintenance}),
    }
}

/// `/status/api/v2/scheduled-maintenances/upcoming.json` (not yet begun) and `active.json`
/// (under way).
pub async fn maintenances(
    State(state): State<AppState>,
    Path(which): Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let status = match which.as_str() {
        "upcoming.json" => "scheduled",
        "active.json" => "in_progress",
        _ => return Err(AppError::NotFound(format!("There is no {which}."))),
    };
    let base = state.config.base_url.clone();
    let name = format!("maintenance {which}");
    served(&state, &headers, &name, "application/json", |v| {
        let list: Vec<Value> = v
            .maintenance
            .iter()
            .filter(|m| m.status == status)
            .map(|m| maintenance_object(m, v, &base))
            .collect();
        json_body(json!({"page": page_object(v, &base), "scheduled_maintenances": list}))
    })
    .await
}

/// `/status/api/v2/incidents/unresolved.json`.
pub async fn unresolved(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    let base = state.config.base_url.clone();
    served(
        &state,
        &headers,
        "unresolved.json",
        "application/json",
        |v| {
            let open: Vec<Value> = v
                .open
                .iter()
                .map(|i| incident_object(i, v, &base))
                .collect();
            json_body(json!({"page": page_object(v, &base), "incidents": open}))
        },
    )
    .await
}

/// Text as XML character data (and attribute values).
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for other control characters.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `/status/history.atom`: an Atom feed of the published incidents of the last 90 days, one
/// entry each, its content the public updates newest first.
pub async fn feed(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    let base = state.config.base_url.clone();
    served(
        &state,
        &headers,
        "history.atom",
        "application/atom+xml; charset=utf-8",
        |v| Ok(atom(v, base.trim_end_matches('/')).into_bytes()),
    )
    .await
}

fn atom(v: &View, base: &str) -> String {
    let host = url::Url::parse(base)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "quell".into());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    out.push_str("<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"en\">\n");
    out.push_str(&format!(
        "<id>tag:{},2026:status</id>\n<title>{} — incident history</title>\n<updated>{}</updated>\n",
        xml(&host),
        xml(&v.settings.name),
        v.updated_at.to_rfc3339()
    ));
    out.push_str(&format!(
        "<link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n<link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n",
        xml(&format!("{base}/status")),
        xml(&format!("{base}/status/history.atom"))
    ));
    out.push_str(&format!(
        "<author><name>{}</name></author>\n",
        xml(&v.settings.name)
    ));
    for i in v.open.iter().chain(v.past.iter()) {
        let link = format!("{base}/status/incidents/{}", i.public_id);
        let mut content = String::new();
        for u in &i.updates {
            content.push_str(&format!(
                "<p><small>{}</small><br><strong>{}</strong> - {}</p>",
                u.at.format("%Y-%m-%d %H:%M UTC"),
                u.status.label(),
                xml(&u.body)
            ));
        }
        out.push_str(&format!(
            "<entry>\n<id>tag:{},2026:incident/{}</id>\n<title>{}</title>\n<published>{}</published>\n<updated>{}</updated>\n<link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n<content type=\"html\">{}</content>\n</entry>\n",
            xml(&host),
            xml(&i.public_id),
            xml(&i.title),
            i.published_at.to_rfc3339(),
            i.updated_at.to_rfc3339(),
            xml(&link),
            xml(&content)
        ));
    }
    out.push_str("</feed>\n");
    out
}
