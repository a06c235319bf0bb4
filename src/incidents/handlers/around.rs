//! What hangs off an incident: stakeholder updates, notifications, paging, suspect changes,
//! the runbook checklist, claims and the bridge.

use super::shared::*;
use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::clock;
use crate::error::AppResult;
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiJson, IdempotencyKey, OptionalIfMatch};
use crate::http::request::ApiRequest;
use crate::idempotency;
use crate::incidents::actions::{self, Change};
use crate::incidents::db::{self};
use crate::incidents::views::IncidentView;

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
    responses((status = 200, description = "OK", body = UpdateList), crate::http::openapi::NotFound))]
pub async fn updates(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
              crate::http::openapi::NotFound,
              crate::http::openapi::Invalid))]
pub async fn add_update(
    ApiRequest(state, auth): ApiRequest<Responder>,
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
            let change = Change::now(key, &auth.actor).dated(b.at);
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
    responses((status = 200, description = "OK", body = DeliveryList), crate::http::openapi::NotFound))]
pub async fn notifications(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 200, description = "OK", body = Paging), crate::http::openapi::NotFound))]
pub async fn paging(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 200, description = "OK", body = SuspectList), crate::http::openapi::NotFound))]
pub async fn suspect_changes(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<SuspectList>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let items =
        crate::changes::actions::suspects(&state.pool, &crate::incidents::views::suspecting(&i))
            .await?;
    Ok(Json(SuspectList {
        items,
        window_hours: crate::changes::domain::SUSPECT_WINDOW_HOURS,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SuspectVerdict)]
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
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, change_id)): Path<(String, String)>,
    body: ApiJson<VerdictBody>,
) -> AppResult<Json<crate::changes::db::Suspect>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let change_id = crate::http::extract::parse_id(&change_id, "change")?;
    let verdict = crate::changes::domain::Verdict::parse("verdict", &body.value.verdict)?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let judged = crate::changes::actions::judge(
        &mut tx,
        &crate::incidents::views::suspecting(&i),
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
    responses((status = 200, description = "OK", body = ChecklistList), crate::http::openapi::NotFound))]
pub async fn checklist(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<ChecklistList>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let mut conn = state.pool.acquire().await?;
    Ok(Json(ChecklistList {
        items: crate::runbooks::actions::checklist(
            &mut conn,
            &crate::incidents::views::checking(&i),
        )
        .await?,
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
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<TickBody>,
) -> AppResult<Json<crate::runbooks::actions::Checklist>> {
    let i = db::get(&state.pool, parse_key(&key)?).await?;
    let b = &body.value;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let list = crate::runbooks::actions::tick(
        &mut tx,
        &crate::incidents::views::checking(&i),
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
    responses((status = 200, description = "Held claims, oldest first", body = ClaimList), crate::http::openapi::NotFound)
)]
pub async fn claims(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 201, description = "Claimed (or your claim renewed)", body = crate::claims::db::Claim), crate::http::openapi::NotFound, (status = 409, description = "Someone is on the same lead, or the incident is resolved", body = crate::error::ErrorBody), crate::http::openapi::Invalid)
)]
pub async fn claim(
    ApiRequest(state, auth): ApiRequest<Responder>,
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
    responses((status = 200, description = "Renewed", body = crate::claims::db::Claim), (status = 403, description = "Not your claim", body = crate::error::ErrorBody), crate::http::openapi::NotFound, (status = 410, description = "Released or lapsed", body = crate::error::ErrorBody))
)]
pub async fn renew_claim(
    ApiRequest(state, auth): ApiRequest<Responder>,
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
    responses((status = 200, description = "Released", body = crate::claims::db::Claim), crate::http::openapi::NotFound, (status = 410, description = "Already released", body = crate::error::ErrorBody))
)]
pub async fn release_claim(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, i64)>,
) -> AppResult<Json<crate::claims::db::Claim>> {
    let change = Change::now(parse_key(&key)?, &auth.actor);
    let claim = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::release_claim(tx, &change, id))
    })
    .await?;
    Ok(Json(claim))
}

/// The incident's call and chat links.
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/bridge", operation_id = "getBridge",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "The bridge (empty fields when unset)", body = crate::bridge::domain::Bridge), crate::http::openapi::NotFound)
)]
pub async fn bridge(
    ApiRequest(state, _): ApiRequest<Viewer>,
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
    responses((status = 200, description = "Set", body = crate::bridge::domain::Bridge), crate::http::openapi::NotFound, (status = 422, description = "A link is not an http(s) URL; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn set_bridge(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    body: ApiJson<crate::bridge::domain::Links>,
) -> AppResult<Json<crate::bridge::domain::Bridge>> {
    let bridge = body.value.checked()?;
    let change = Change::now(parse_key(&key)?, &auth.actor);
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_bridge(tx, &change, &bridge))
    })
    .await?;
    Ok(Json(bridge))
}

/// Who may see the incident: everyone, or the teams and people it is kept to (and admins).
#[utoipa::path(
    get,
    path = "/api/v1/incidents/{key}/access", operation_id = "getIncidentAccess",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187")),
    responses((status = 200, description = "OK", body = crate::incident_ref::db::Access), crate::http::openapi::NotFound)
)]
pub async fn access(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> AppResult<Json<crate::incident_ref::db::Access>> {
    let incident = db::get(&state.pool, parse_key(&key)?).await?;
    Ok(Json(
        crate::incident_ref::db::access(&state.pool, incident.id).await?,
    ))
}

/// Keep the incident to named teams and people (a security incident, an incident about a
/// person), or open it to everyone. Whoever restricts it and is named in none of it is added.
/// The change is on the timeline; from then on nobody else finds the incident anywhere, and
/// its key answers 404 to them.
#[utoipa::path(
    put,
    path = "/api/v1/incidents/{key}/access", operation_id = "setIncidentAccess",
    tag = "incidents",
    params(("key" = String, Path, description = "Incident key, e.g. INC-1187"),
           ("If-Match" = Option<String>, Header, description = "Refuse with 412 unless the incident is still at this ETag")),
    request_body = actions::AccessDraft,
    responses((status = 200, description = "Set; the incident, with its new ETag", body = IncidentView),
              crate::http::openapi::NotFound,
              (status = 412, description = "Your copy is stale", body = crate::error::ErrorBody),
              (status = 422, description = "An unknown team or person, or nobody named; details.fields names it", body = crate::error::ErrorBody))
)]
pub async fn set_access(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    OptionalIfMatch(version): OptionalIfMatch,
    body: ApiJson<actions::AccessDraft>,
) -> AppResult<Response> {
    let change = Change::now(parse_key(&key)?, &auth.actor).expecting(version);
    let incident = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_access(tx, &change, &body.value))
    })
    .await?;
    respond(&state, &incident, StatusCode::OK).await
}
