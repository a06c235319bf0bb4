//! The webhook endpoints senders post to, outside sessions and CSRF: Alertmanager and Grafana
//! (`/hooks/{format}/{id}` with a bearer key), PagerDuty Events API v2 (`/v2/enqueue`,
//! `/v2/change/enqueue`, the key in the body, PagerDuty's own answers), and Quell's generic
//! format (a bearer key or a Standard Webhooks signature). Each answers 202 only once the alerts
//! are committed.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::alerts::domain::{self, Reasons};
use crate::alerts::ingest::Ingestor;
use crate::alerts::ingest::{
    Credential, Payload, RETRY_AFTER_SECS, Refused, Submission, check_sender,
};
use crate::error::AppError;
use crate::http::extract;
use crate::integrations::domain::Format;
use crate::state::AppState;

/// What the webhook handlers work with: the application's state and the alert lanes of this
/// replica, which the router hands them.
#[derive(Clone)]
pub struct HookState {
    pub app: AppState,
    pub ingest: Ingestor,
}

pub(super) fn body_of(body: Result<Bytes, BytesRejection>) -> Result<Bytes, AppError> {
    body.map_err(|e| extract::unreadable(e.status(), e.body_text(), AppError::too_large()))
}

/// The payload as JSON, with every NUL removed from its strings and keys: PostgreSQL cannot
/// store one, an alert loses nothing without it, and refusing would lose the whole post.
pub(super) fn json_of(bytes: &[u8]) -> Result<Value, String> {
    let mut value =
        serde_json::from_slice(bytes).map_err(|e| format!("the body is not valid JSON: {e}"))?;
    crate::domain::strip_unstorable(&mut value);
    Ok(value)
}

pub(super) fn invalid(reasons: Reasons) -> AppError {
    AppError::BadRequest {
        code: "invalid_payload",
        message: reasons.join("; "),
    }
}

const WRONG_KEY: &str = "the integration key is wrong";

fn integration_id(id: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(id).map_err(|_| AppError::Unauthorized(WRONG_KEY.into()))
}

pub(super) fn bearer(headers: &HeaderMap) -> Option<String> {
    key_of(headers, "bearer")
}

/// Who is sending, for the audit log: the address as far as it is known, and the route template
/// posted to (the tally of refusals is keyed by these, never by what the sender wrote).
#[derive(Clone)]
pub struct Sender {
    addr: Option<String>,
    route: String,
}

impl axum::extract::FromRequestParts<HookState> for Sender {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &HookState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self {
            addr: crate::http::access::client_addr(parts, &state.app),
            route: crate::http::access::route_of(parts),
        })
    }
}

/// A wrong key or signature is a refused attempt: tallied in the audit log (one row per minute
/// per route and address, however many arrive).
pub(super) async fn audit_unauthorized(state: &HookState, sender: &Sender, target: &str) {
    let actor = crate::audit::Actor {
        name: "webhook sender".into(),
        client_addr: sender.addr.clone(),
        ..Default::default()
    };
    let refusal = crate::audit::db::Refusal {
        action: "alerts.unauthorized",
        route: &sender.route,
        target,
    };
    if let Err(err) = crate::audit::db::refusal(&state.app.pool, &actor, refusal).await {
        tracing::warn!(error = %err, "could not record a refused webhook");
    }
}

pub(super) fn answer(refused: Refused) -> AppError {
    match refused {
        Refused::Unauthorized(why) => AppError::Unauthorized(why),
        Refused::Unstorable(why) => AppError::BadRequest {
            code: "unstorable_payload",
            message: why,
        },
        Refused::Unavailable => AppError::Overloaded {
            doing: "storing other alerts",
            retry_after: RETRY_AFTER_SECS,
        },
    }
}

pub(super) fn accepted(body: Value) -> Response {
    (StatusCode::ACCEPTED, Json(body)).into_response()
}

/// A payload that cannot be read is explained only to a sender whose key is right: anyone else
/// hears that the key is wrong, and learns nothing of what Quell expects.
pub(super) async fn unreadable(
    state: &HookState,
    format: Format,
    credential: &Credential,
    reasons: Reasons,
) -> AppError {
    match check_sender(&state.app.pool, format, credential).await {
        Ok(Ok(())) => invalid(reasons),
        Ok(Err(refused)) => answer(refused),
        Err(err) => err,
    }
}

/// Stores what a webhook carried, answering once it is committed.
pub(super) async fn store(state: &HookState, submission: Submission) -> Result<(), AppError> {
    state.ingest.submit(submission).await.map_err(answer)
}

async fn alertmanager_like(
    state: &HookState,
    format: Format,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let bytes = body_of(body)?;
    let credential = Credential::Bearer {
        integration_id: integration_id(id)?,
        key: bearer(headers).ok_or_else(|| {
            AppError::Unauthorized("send the integration key as Authorization: Bearer <key>".into())
        })?,
    };
    let parsed = json_of(&bytes)
        .map_err(|e| vec![e])
        .and_then(|value| domain::parse_alertmanager(&value, format == Format::Grafana));
    // The body is not needed while the alerts wait to be stored.
    drop(bytes);
    let alerts = match parsed {
        Ok(alerts) => alerts,
        Err(reasons) => return Err(unreadable(state, format, &credential, reasons).await),
    };
    let count = alerts.len();
    store(
        state,
        Submission {
            format,
            credential,
            payload: Payload::Alerts(alerts),
        },
    )
    .await?;
    Ok(accepted(json!({ "status": "accepted", "alerts": count })))
}

/// `/hooks/{format}/{id}`: Prometheus Alertmanager's webhook (v4), Grafana's webhook contact
/// point (the Alertmanager envelope, read leniently) and Quell's generic JSON format. A 401 is
/// also tallied in the audit log.
pub async fn hook(
    State(state): State<HookState>,
    sender: Sender,
    Path((format, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let answer = match format.as_str() {
        "alertmanager" => {
            alertmanager_like(&state, Format::Alertmanager, &id, &headers, body).await
        }
        "grafana" => alertmanager_like(&state, Format::Grafana, &id, &headers, body).await,
        "generic" => generic_alert(&state, &id, &headers, body).await,
        _ => {
            return Err(AppError::NotFound(
                "No such webhook: post to /hooks/alertmanager/{id}, /hooks/grafana/{id} or /hooks/generic/{id}.".into(),
            ));
        }
    };
    if let Err(AppError::Unauthorized(_)) = &answer {
        audit_unauthorized(&state, &sender, &format!("integration {id}")).await;
    }
    answer
}

async fn generic_alert(
    state: &HookState,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let bytes = body_of(body)?;
    let integration_id = integration_id(id)?;
    let header_text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let credential = match header_text("webhook-signature") {
        Some(signature) => Credential::Signed {
            integration_id,
            msg_id: header_text("webhook-id").unwrap_or_default(),
            timestamp: header_text("webhook-timestamp").unwrap_or_default(),
            signature,
            // A body that is not UTF-8 cannot match a signature over text; the payload check
            // below explains it to a sender whose key is right.
            body: String::from_utf8_lossy(&bytes).into_owned(),
        },
        None => Credential::Bearer {
            integration_id,
            key: bearer(headers).ok_or_else(|| {
                AppError::Unauthorized(
                    "send the integration key as Authorization: Bearer <key>, or sign the request (webhook-id, webhook-timestamp, webhook-signature)".into(),
                )
            })?,
        },
    };
    // A signed message without a dedup key gets one from its webhook-id, so a replay of it
    // answers the key the first delivery did.
    let fresh = match &credential {
        Credential::Signed { msg_id, .. } => format!("webhook-{}", msg_id.trim()),
        _ => Uuid::new_v4().to_string(),
    };
    let parsed = json_of(&bytes)
        .map_err(|e| vec![e])
        .and_then(|value| domain::parse_generic(&value, &fresh));
    let event = match parsed {
        Ok(event) => event,
        Err(reasons) => return Err(unreadable(state, Format::Generic, &credential, reasons).await),
    };
    let dedup_key = event.dedup_key.clone();
    store(
        state,
        Submission {
            format: Format::Generic,
            credential,
            payload: Payload::Alerts(vec![event]),
        },
    )
    .await?;
    Ok(accepted(
        json!({ "status": "accepted", "dedup_key": dedup_key }),
    ))
}

/// A refusal in PagerDuty's own shape, which PagerDuty clients read.
pub struct PagerDutyRefusal {
    status: StatusCode,
    label: &'static str,
    message: String,
    errors: Vec<String>,
}

impl PagerDutyRefusal {
    fn invalid(message: &str, errors: Vec<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            label: "invalid event",
            message: message.to_owned(),
            errors,
        }
    }
}

impl From<Refused> for PagerDutyRefusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Unauthorized(why) => Self {
                status: StatusCode::UNAUTHORIZED,
                label: "unauthorized",
                message: why,
                errors: vec![],
            },
            Refused::Unstorable(why) => Self::invalid(&why, vec![why.clone()]),
            Refused::Unavailable => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                label: "unavailable",
                message: "Quell is busy storing other events; retry shortly".into(),
                errors: vec![],
            },
        }
    }
}

impl From<AppError> for PagerDutyRefusal {
    fn from(err: AppError) -> Self {
        if err.status().is_server_error() {
            tracing::error!(error = %err, "webhook failed");
        }
        Self {
            status: err.status(),
            label: "error",
            message: err.public_message(),
            errors: vec![],
        }
    }
}

impl IntoResponse for PagerDutyRefusal {
    fn into_response(self) -> Response {
        let body = json!({ "status": self.label, "message": self.message, "errors": self.errors });
        let mut res = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE
            && let Ok(v) = HeaderValue::from_str(&RETRY_AFTER_SECS.to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}

fn pagerduty_body(body: Result<Bytes, BytesRejection>) -> Result<Value, PagerDutyRefusal> {
    let bytes = body_of(body).map_err(|e| match e {
        AppError::TooLarge { .. } => PagerDutyRefusal {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..PagerDutyRefusal::invalid("Request body is larger than 1 MiB", vec![])
        },
        other => PagerDutyRefusal::invalid(&other.public_message(), vec![]),
    })?;
    json_of(&bytes).map_err(|e| PagerDutyRefusal::invalid("Event object is invalid", vec![e]))
}

/// Reads a PagerDuty event: the routing key first, then — its faults told only to a sender
/// whose key is right — the event itself. A wrong key is tallied in the audit log.
async fn pagerduty_event<T>(
    state: &HookState,
    sender: &Sender,
    value: &Value,
    parse: impl FnOnce(&Value) -> Result<(String, T), Reasons>,
) -> Result<(String, T), PagerDutyRefusal> {
    let key = domain::routing_key_of(value)
        .map_err(|errors| PagerDutyRefusal::invalid("Event object is invalid", errors))?;
    match parse(value) {
        Ok(parsed) => Ok(parsed),
        Err(errors) => {
            let credential = Credential::RoutingKey { key };
            match check_sender(&state.app.pool, Format::PagerDuty, &credential).await {
                Ok(Ok(())) => Err(PagerDutyRefusal::invalid("Event object is invalid", errors)),
                Ok(Err(refused)) => Err(pagerduty_refused(state, sender, refused).await),
                Err(err) => Err(PagerDutyRefusal::from(err)),
            }
        }
    }
}

/// A refusal from storing, in PagerDuty's shape; a wrong key is tallied in the audit log.
async fn pagerduty_refused(
    state: &HookState,
    sender: &Sender,
    refused: Refused,
) -> PagerDutyRefusal {
    if let Refused::Unauthorized(_) = refused {
        audit_unauthorized(state, sender, "routing key").await;
    }
    refused.into()
}

/// PagerDuty Events API v2: trigger, acknowledge, resolve.
pub async fn pagerduty_enqueue(
    State(state): State<HookState>,
    sender: Sender,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, PagerDutyRefusal> {
    let value = pagerduty_body(body)?;
    let fresh = Uuid::new_v4().simple().to_string();
    let (key, event) = pagerduty_event(&state, &sender, &value, |v| {
        domain::parse_pagerduty(v, &fresh)
    })
    .await?;
    let dedup_key = event.dedup_key.clone();
    let submitted = state
        .ingest
        .submit(Submission {
            format: Format::PagerDuty,
            credential: Credential::RoutingKey { key },
            payload: Payload::Alerts(vec![event]),
        })
        .await;
    if let Err(refused) = submitted {
        return Err(pagerduty_refused(&state, &sender, refused).await);
    }
    Ok(accepted(json!({
        "status": "success", "message": "Event processed", "dedup_key": dedup_key,
    })))
}

/// PagerDuty change events: deploys and configuration changes.
pub async fn pagerduty_change(
    State(state): State<HookState>,
    sender: Sender,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, PagerDutyRefusal> {
    let value = pagerduty_body(body)?;
    let (key, change) = pagerduty_event(&state, &sender, &value, domain::parse_change).await?;
    let submitted = state
        .ingest
        .submit(Submission {
            format: Format::PagerDuty,
            credential: Credential::RoutingKey { key },
            payload: Payload::Change(change),
        })
        .await;
    if let Err(refused) = submitted {
        return Err(pagerduty_refused(&state, &sender, refused).await);
    }
    Ok(accepted(
        json!({ "status": "success", "message": "Change event processed" }),
    ))
}

/// The key after `scheme` in the Authorization header.
pub(super) fn key_of(headers: &HeaderMap, scheme: &str) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (given, key) = value.trim().split_once(' ')?;
    given
        .eq_ignore_ascii_case(scheme)
        .then(|| key.trim().to_owned())
        .filter(|k| !k.is_empty())
}

/// Records a ping and resolves a down monitor's alert, in one transaction (tried again when
/// PostgreSQL breaks it off: a merge moving the monitor's alert meanwhile is a serialization
/// failure, not the sender's); a wrong name, id or key is refused (and tallied) alike.
async fn ping(
    state: &HookState,
    sender: &Sender,
    named: crate::heartbeats::actions::Named<'_>,
    key: Option<String>,
) -> Result<crate::heartbeats::db::Pinged, AppError> {
    let Some(key) = key else {
        return Err(AppError::Unauthorized(
            "send the monitor's key as Authorization: Bearer <key> (or GenieKey <key>)".into(),
        ));
    };
    let key = key.as_str();
    let done = crate::transaction::write(&state.app.pool, |tx, _| {
        Box::pin(async move {
            let pinged = crate::heartbeats::actions::ping(&mut *tx, named, key).await?;
            let now = crate::clock::now(&mut *tx).await?;
            crate::alerts::heartbeats::pinged(&mut *tx, &pinged, now).await?;
            Ok(pinged)
        })
    })
    .await;
    if let Err(AppError::Unauthorized(_)) = &done {
        audit_unauthorized(state, sender, "heartbeat").await;
    }
    done
}

#[derive(serde::Deserialize)]
pub struct PingQuery {
    key: Option<String>,
}

/// `GET` or `POST /hooks/heartbeat/{id}`: a job's ping, with the monitor's key as
/// `Authorization: Bearer <key>` or `?key=<key>` (for a bare `curl` from cron).
pub async fn heartbeat(
    State(state): State<HookState>,
    sender: Sender,
    Path(id): Path<String>,
    axum::extract::Query(q): axum::extract::Query<PingQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let key = key_of(&headers, "bearer").or(q.key);
    let named = crate::heartbeats::actions::Named::Id(&id);
    let p = ping(&state, &sender, named, key).await?;
    Ok(accepted(
        json!({ "status": "pong", "heartbeat": p.name, "was_down": p.was_down }),
    ))
}

/// `GET` or `POST /v2/heartbeats/{name}/ping`: Opsgenie's ping (`Authorization: GenieKey
/// <key>`, the monitor's key), answered in Opsgenie's shapes.
pub async fn opsgenie_heartbeat(
    State(state): State<HookState>,
    sender: Sender,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let started = std::time::Instant::now();
    let key = key_of(&headers, "geniekey").or_else(|| bearer(&headers));
    let named = crate::heartbeats::actions::Named::Name(&name);
    let answer = ping(&state, &sender, named, key).await;
    let took = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let request_id = Uuid::new_v4().to_string();
    match answer {
        Ok(_) => accepted(json!({ "result": "PONG - Heartbeat received", "took": took,
                                  "requestId": request_id })),
        Err(e) => {
            let status = e.status();
            let message = match &e {
                AppError::Unauthorized(m) => m.clone(),
                _ => {
                    tracing::warn!(error = %e, "could not record an Opsgenie heartbeat ping");
                    "The ping could not be recorded; try again.".to_owned()
                }
            };
            let body = json!({ "message": message, "took": took, "requestId": request_id });
            (status, Json(body)).into_response()
        }
    }
}
