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

use super::domain::{self, Reasons};
use super::ingest::{Credential, Payload, RETRY_AFTER_SECS, Refused, Submission};
use crate::error::AppError;
use crate::integrations::domain::Format;
use crate::state::AppState;

fn body_of(body: Result<Bytes, BytesRejection>) -> Result<Bytes, AppError> {
    body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::TooLarge
        } else {
            AppError::BadRequest {
                code: "unreadable_body",
                message: e.body_text(),
            }
        }
    })
}

fn json_of(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("the body is not valid JSON: {e}"))
}

fn invalid(reasons: Reasons) -> AppError {
    AppError::BadRequest {
        code: "invalid_payload",
        message: reasons.join("; "),
    }
}

const WRONG_KEY: &str = "the integration key is wrong";

fn integration_id(id: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(id).map_err(|_| AppError::Unauthorized(WRONG_KEY.into()))
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim().to_owned())
        .filter(|k| !k.is_empty())
}

/// Who is refused, for the audit log: the sender's address, as far as it is known.
#[derive(Clone)]
pub struct Sender(Option<String>);

impl axum::extract::FromRequestParts<AppState> for Sender {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(crate::auth::client_addr(parts, state)))
    }
}

/// A wrong key or signature is a refused attempt: tallied in the audit log (one row per minute
/// per subject and address, however many arrive).
async fn audit_refusal(state: &AppState, sender: &Sender, subject: &str, refused: &Refused) {
    if let Refused::Unauthorized(_) = refused {
        audit_unauthorized(state, sender, subject).await;
    }
}

async fn audit_unauthorized(state: &AppState, sender: &Sender, subject: &str) {
    let actor = crate::audit::Actor {
        name: "webhook sender".into(),
        client_addr: sender.0.clone(),
        ..Default::default()
    };
    if let Err(err) =
        crate::audit::db::refusal(&state.pool, &actor, "alerts.unauthorized", subject).await
    {
        tracing::warn!(error = %err, "could not record a refused webhook");
    }
}

fn answer(refused: Refused) -> AppError {
    match refused {
        Refused::Unauthorized(why) => AppError::Unauthorized(why),
        Refused::Unavailable => AppError::Overloaded(RETRY_AFTER_SECS),
    }
}

fn accepted(body: Value) -> Response {
    (StatusCode::ACCEPTED, Json(body)).into_response()
}

/// Runs a webhook; a 401 is also tallied in the audit log.
async fn audited(
    state: &AppState,
    sender: &Sender,
    id: &str,
    answer: Result<Response, AppError>,
) -> Result<Response, AppError> {
    if let Err(AppError::Unauthorized(_)) = &answer {
        audit_unauthorized(state, sender, &format!("integration {id}")).await;
    }
    answer
}

async fn alertmanager_like(
    state: &AppState,
    format: Format,
    id: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let bytes = body_of(body)?;
    let integration_id = integration_id(id)?;
    let key = bearer(headers).ok_or_else(|| {
        AppError::Unauthorized("send the integration key as Authorization: Bearer <key>".into())
    })?;
    let value = json_of(&bytes).map_err(|e| invalid(vec![e]))?;
    let alerts = domain::parse_alertmanager(&value, format == Format::Grafana).map_err(invalid)?;
    let count = alerts.len();
    let submitted = state
        .ingest
        .submit(Submission {
            format,
            credential: Credential::Bearer {
                integration_id,
                key,
            },
            payload: Payload::Alerts(alerts),
        })
        .await;
    submitted.map_err(answer)?;
    Ok(accepted(json!({ "status": "accepted", "alerts": count })))
}

/// `/hooks/{format}/{id}`: Prometheus Alertmanager's webhook (v4), Grafana's webhook contact
/// point (the Alertmanager envelope, read leniently) and Quell's generic JSON format.
pub async fn hook(
    State(state): State<AppState>,
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
    audited(&state, &sender, &id, answer).await
}

async fn generic_alert(
    state: &AppState,
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
            body: String::from_utf8(bytes.to_vec())
                .map_err(|_| invalid(vec!["the body is not UTF-8".into()]))?,
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
    let value = json_of(&bytes).map_err(|e| invalid(vec![e]))?;
    let fresh = Uuid::new_v4().to_string();
    let event = domain::parse_generic(&value, &fresh).map_err(invalid)?;
    let dedup_key = event.dedup_key.clone();
    let submitted = state
        .ingest
        .submit(Submission {
            format: Format::Generic,
            credential,
            payload: Payload::Alerts(vec![event]),
        })
        .await;
    submitted.map_err(answer)?;
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
            Refused::Unavailable => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                label: "unavailable",
                message: "Quell is busy storing other events; retry shortly".into(),
                errors: vec![],
            },
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
        AppError::TooLarge => PagerDutyRefusal {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..PagerDutyRefusal::invalid("Request body is larger than 1 MiB", vec![])
        },
        other => PagerDutyRefusal::invalid(&other.public_message(), vec![]),
    })?;
    json_of(&bytes).map_err(|e| PagerDutyRefusal::invalid("Event object is invalid", vec![e]))
}

/// PagerDuty Events API v2: trigger, acknowledge, resolve.
pub async fn pagerduty_enqueue(
    State(state): State<AppState>,
    sender: Sender,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, PagerDutyRefusal> {
    let value = pagerduty_body(body)?;
    let fresh = Uuid::new_v4().simple().to_string();
    let (key, event) = domain::parse_pagerduty(&value, &fresh)
        .map_err(|errors| PagerDutyRefusal::invalid("Event object is invalid", errors))?;
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
        audit_refusal(&state, &sender, "routing key", &refused).await;
        return Err(refused.into());
    }
    Ok(accepted(json!({
        "status": "success", "message": "Event processed", "dedup_key": dedup_key,
    })))
}

/// PagerDuty change events: deploys and configuration changes.
pub async fn pagerduty_change(
    State(state): State<AppState>,
    sender: Sender,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, PagerDutyRefusal> {
    let value = pagerduty_body(body)?;
    let (key, change) = domain::parse_change(&value)
        .map_err(|errors| PagerDutyRefusal::invalid("Event object is invalid", errors))?;
    let submitted = state
        .ingest
        .submit(Submission {
            format: Format::PagerDuty,
            credential: Credential::RoutingKey { key },
            payload: Payload::Change(change),
        })
        .await;
    if let Err(refused) = submitted {
        audit_refusal(&state, &sender, "routing key", &refused).await;
        return Err(refused.into());
    }
    Ok(accepted(
        json!({ "status": "success", "message": "Change event processed" }),
    ))
}
