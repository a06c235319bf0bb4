//! Opsgenie's Alert API, spoken natively so Opsgenie's clients work with only their base URL
//! changed: `POST /v2/alerts` creates (through the lanes), acknowledge, close, notes and snooze
//! act on an alert named by number (`id`, `tiny`) or alias, and an alert or a request is read
//! back. Every call is authenticated by an `opsgenie` integration's key (`Authorization:
//! GenieKey <key>`), sees only that integration's alerts and requests, and is answered in
//! Opsgenie's shapes: 202 `{result, took, requestId}` (the request's outcome then readable),
//! 200 `{data, took, requestId}`, and refusals `{message, took, requestId}`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::time::Instant;
use uuid::Uuid;

use super::intake::{
    HookState, Sender, answer, audit_unauthorized, body_of, invalid, json_of, key_of, store,
};
use crate::alert_store::db::{self, NamedAlert, NewRequest};
use crate::alerts::domain::{self, Action, Identified, OpsgenieCall};
use crate::alerts::ingest::{
    Credential, Payload, RETRY_AFTER_SECS, Refused, Submission, check_sender, sender_of,
};
use crate::alerts::opsgenie::{self as calls, OnAlert};
use crate::error::AppError;
use crate::integrations::db::Credentials;
use crate::integrations::domain::Format;

/// How a call names its alert: `identifierType` is `id` (when absent), `tiny` or `alias`.
#[derive(serde::Deserialize, Default)]
pub struct OpsgenieIdentifier {
    #[serde(default, rename = "identifierType")]
    identifier_type: Option<String>,
}

/// The `identifierType` a query asks for; a query that cannot be read asks for one no alert
/// has, which is refused (after the key is checked) as any wrong type is.
fn kind_of(query: Result<Query<OpsgenieIdentifier>, QueryRejection>) -> Option<String> {
    match query {
        Ok(Query(q)) => q.identifier_type,
        Err(e) => Some(format!("(unreadable: {})", e.body_text())),
    }
}

/// When a call began, and the id it is answered with.
type Request = (Instant, Uuid);

fn begin() -> Request {
    (Instant::now(), Uuid::new_v4())
}

/// Opsgenie's answer: `body` with how long it took and the request id, or its error shape
/// `{"message", "took", "requestId"}` (a payload it cannot use is 422, as Opsgenie says).
fn reply((started, request_id): Request, done: Result<(StatusCode, Value), AppError>) -> Response {
    let took = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let request_id = request_id.to_string();
    match done {
        Ok((status, mut body)) => {
            body["took"] = json!(took);
            body["requestId"] = json!(request_id);
            (status, Json(body)).into_response()
        }
        Err(e) => {
            let status = match &e {
                AppError::BadRequest { .. } => StatusCode::UNPROCESSABLE_ENTITY,
                other => other.status(),
            };
            if status.is_server_error() {
                tracing::warn!(error = %e, "an Opsgenie call failed");
            }
            let message = match &e {
                AppError::Unauthorized(m) | AppError::BadRequest { message: m, .. } => m.clone(),
                other => other.public_message(),
            };
            let body = json!({ "message": message, "took": took, "requestId": request_id });
            let mut res = (status, Json(body)).into_response();
            if status == StatusCode::SERVICE_UNAVAILABLE
                && let Ok(v) = HeaderValue::from_str(&RETRY_AFTER_SECS.to_string())
            {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
            res
        }
    }
}

/// 202: the request is done, and its outcome readable by its id.
fn processed(request: Request, done: Result<(), AppError>) -> Response {
    let body = json!({ "result": "Request will be processed" });
    reply(request, done.map(|()| (StatusCode::ACCEPTED, body)))
}

/// The key an Opsgenie client sends, `Authorization: GenieKey <key>`; none is tallied in the
/// audit log as a wrong one is.
async fn genie_key(
    state: &HookState,
    sender: &Sender,
    headers: &HeaderMap,
) -> Result<Credential, AppError> {
    match key_of(headers, "geniekey") {
        Some(key) => Ok(Credential::RoutingKey { key }),
        None => {
            audit_unauthorized(state, sender, "GenieKey").await;
            Err(AppError::Unauthorized(
                "Send the integration's key as Authorization: GenieKey <key>.".into(),
            ))
        }
    }
}

/// A refusal, as a sender told why: only one whose key is right hears `err`; anyone else hears
/// that the key is wrong (tallied), and learns nothing of what Quell expects.
async fn refuse(
    state: &HookState,
    sender: &Sender,
    credential: &Credential,
    err: AppError,
) -> AppError {
    match check_sender(&state.app.pool, Format::Opsgenie, credential).await {
        Ok(Ok(())) => err,
        Ok(Err(refused)) => refused_by(state, sender, refused).await,
        Err(e) => e,
    }
}

async fn refused_by(state: &HookState, sender: &Sender, refused: Refused) -> AppError {
    if let Refused::Unauthorized(_) = &refused {
        audit_unauthorized(state, sender, "GenieKey").await;
    }
    answer(refused)
}

/// The integration whose key the call carries, checked before anything else is read.
async fn integration(
    state: &HookState,
    sender: &Sender,
    headers: &HeaderMap,
) -> Result<Credentials, AppError> {
    let credential = genie_key(state, sender, headers).await?;
    match sender_of(&state.app.pool, Format::Opsgenie, &credential).await? {
        Ok(c) => Ok(c),
        Err(refused) => Err(refused_by(state, sender, refused).await),
    }
}

/// Hands one call to the lanes, which record its outcome with the alert.
async fn to_lane(
    state: &HookState,
    sender: &Sender,
    credential: Credential,
    (event, request_id, call): (domain::AlertEvent, Uuid, OpsgenieCall),
) -> Result<(), AppError> {
    let submission = Submission {
        format: Format::Opsgenie,
        credential,
        payload: Payload::Opsgenie {
            event,
            request_id,
            call,
        },
    };
    let stored = store(state, submission).await;
    if let Err(AppError::Unauthorized(_)) = &stored {
        audit_unauthorized(state, sender, "GenieKey").await;
    }
    stored
}

/// `POST /v2/alerts`: creates an alert (the same alias while it is open: the same alert).
pub async fn create(
    State(state): State<HookState>,
    sender: Sender,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // One id for the request and, without an alias, for the alert it makes.
    let request = begin();
    let done = async {
        let credential = genie_key(&state, &sender, &headers).await?;
        let parsed = match body_of(body) {
            Ok(bytes) => json_of(&bytes).map_err(|e| vec![e]).and_then(|value| {
                domain::parse_opsgenie(&value, &format!("opsgenie-{}", request.1))
            }),
            Err(unreadable) => return Err(refuse(&state, &sender, &credential, unreadable).await),
        };
        match parsed {
            Ok(event) => {
                let call = (event, request.1, OpsgenieCall::Create);
                to_lane(&state, &sender, credential, call).await
            }
            Err(reasons) => Err(refuse(&state, &sender, &credential, invalid(reasons)).await),
        }
    }
    .await;
    processed(request, done)
}

/// `POST /v2/alerts/{identifier}/{action}`: `acknowledge`, `close`, `notes` or `snooze`; any
/// other action is a 404 in Opsgenie's shape, told only to a sender whose key is right.
pub async fn action(
    State(state): State<HookState>,
    sender: Sender,
    Path((identifier, action)): Path<(String, String)>,
    query: Result<Query<OpsgenieIdentifier>, QueryRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let request = begin();
    let named = (identifier, kind_of(query));
    let done = async {
        let call = match action.as_str() {
            "acknowledge" => OpsgenieCall::Acknowledge,
            "close" => OpsgenieCall::Close,
            "notes" => OpsgenieCall::AddNote,
            "snooze" => OpsgenieCall::Snooze,
            other => {
                integration(&state, &sender, &headers).await?;
                return Err(AppError::NotFound(format!(
                    "Quell takes acknowledge, close, notes and snooze of an Opsgenie alert; not {other:?}."
                )));
            }
        };
        let sent = (headers, body);
        match call {
            OpsgenieCall::AddNote | OpsgenieCall::Snooze => {
                on_alert(&state, &sender, (named, request.1, call), sent).await
            }
            _ => update(&state, &sender, (named, request.1, call), sent).await,
        }
    }
    .await;
    processed(request, done)
}

/// Acknowledge or close: by alias through the lanes, as PagerDuty's acknowledge and resolve
/// go; by number, the alert's alias while it is open (one already closed is not touched: its
/// alias may name a newer alert).
async fn update(
    state: &HookState,
    sender: &Sender,
    ((identifier, kind), request_id, call): ((String, Option<String>), Uuid, OpsgenieCall),
    (headers, body): (HeaderMap, Result<Bytes, BytesRejection>),
) -> Result<(), AppError> {
    let credential = genie_key(state, sender, &headers).await?;
    let named = match domain::opsgenie_identifier(&identifier, kind.as_deref()) {
        Ok(named) => named,
        Err(why) => return Err(refuse(state, sender, &credential, invalid(vec![why])).await),
    };
    let alias = match named {
        Identified::Alias(alias) => alias,
        Identified::Number(_) | Identified::Nothing => {
            let from = match sender_of(&state.app.pool, Format::Opsgenie, &credential).await? {
                Ok(c) => c,
                Err(refused) => return Err(refused_by(state, sender, refused).await),
            };
            let found = match named {
                Identified::Number(n) => {
                    let mut conn = state.app.pool.acquire().await?;
                    db::opsgenie_alert(&mut conn, from.id, NamedAlert::Number(n)).await?
                }
                _ => None,
            };
            match found {
                Some(a) if a.status != "resolved" => a.dedup_key,
                other => {
                    let request = NewRequest {
                        request_id,
                        integration_id: from.id,
                        action: call.as_str(),
                        alias: other.as_ref().map_or("", |a| a.dedup_key.as_str()),
                    };
                    let alert = other.as_ref().map(|a| (a.id, a.status.as_str()));
                    return calls::record(&state.app.pool, request, call, alert).await;
                }
            }
        }
    };
    // Who did it and their note (`user`, `note`, `source`) are kept with the event.
    let mut raw = body_of(body)
        .ok()
        .and_then(|b| json_of(&b).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    raw["alias"] = json!(alias);
    let action = match call {
        OpsgenieCall::Acknowledge => Action::Acknowledge,
        _ => Action::Resolve,
    };
    let event = domain::opsgenie_update(&alias, action, &raw);
    to_lane(state, sender, credential, (event, request_id, call)).await
}

/// A note (`{note, user, source}`) or a snooze (`{endTime, user, source, note}`) on an alert:
/// its incident's timeline, or its incident snoozed.
async fn on_alert(
    state: &HookState,
    sender: &Sender,
    ((identifier, kind), request_id, call): ((String, Option<String>), Uuid, OpsgenieCall),
    (headers, body): (HeaderMap, Result<Bytes, BytesRejection>),
) -> Result<(), AppError> {
    let from = integration(state, sender, &headers).await?;
    let body = json_of(&body_of(body)?)
        .map_err(|e| invalid(vec![e]))?
        .as_object()
        .cloned()
        .map(Value::Object)
        .ok_or_else(|| invalid(vec!["The request body must be a JSON object.".into()]))?;
    let named = domain::opsgenie_identifier(&identifier, kind.as_deref())
        .map_err(|why| invalid(vec![why]))?;
    let pool = &state.app.pool;
    let on = |named| OnAlert {
        sender: &from,
        request_id,
        named,
    };
    let named = match &named {
        Identified::Number(n) => Some(NamedAlert::Number(*n)),
        Identified::Alias(a) => Some(NamedAlert::Alias(a)),
        Identified::Nothing => None,
    };
    match call {
        OpsgenieCall::AddNote => {
            let note = domain::opsgenie_note(&body)
                .ok_or_else(|| invalid(vec!["Note can not be empty.".into()]))?;
            match named {
                Some(named) => calls::add_note(pool, on(named), &note).await,
                None => not_found(pool, &from, request_id, call).await,
            }
        }
        _ => {
            let now = crate::clock::now(pool).await?;
            let minutes = domain::opsgenie_snooze(&body, now).map_err(|why| invalid(vec![why]))?;
            let note = domain::opsgenie_note(&body)
                .map(|n| crate::domain::shorten(&n, 2_000))
                .unwrap_or_default();
            match named {
                Some(named) => calls::snooze(pool, on(named), minutes, &note).await,
                None => not_found(pool, &from, request_id, call).await,
            }
        }
    }
}

/// Records that a call named no alert Quell has (an Opsgenie id from before the move).
async fn not_found(
    pool: &sqlx::PgPool,
    from: &Credentials,
    request_id: Uuid,
    call: OpsgenieCall,
) -> Result<(), AppError> {
    let request = NewRequest {
        request_id,
        integration_id: from.id,
        action: call.as_str(),
        alias: "",
    };
    calls::record(pool, request, call, None).await
}

/// `GET /v2/alerts/{identifier}`: the alert, as Opsgenie shows one.
pub async fn get_alert(
    State(state): State<HookState>,
    sender: Sender,
    Path(identifier): Path<String>,
    query: Result<Query<OpsgenieIdentifier>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let request = begin();
    let found = async {
        let from = integration(&state, &sender, &headers).await?;
        let named = domain::opsgenie_identifier(&identifier, kind_of(query).as_deref())
            .map_err(|why| invalid(vec![why]))?;
        let named = match &named {
            Identified::Number(n) => NamedAlert::Number(*n),
            Identified::Alias(a) => NamedAlert::Alias(a),
            Identified::Nothing => return Err(no_alert()),
        };
        let mut conn = state.app.pool.acquire().await?;
        let alert = db::opsgenie_alert(&mut conn, from.id, named).await?;
        let alert = alert.ok_or_else(no_alert)?;
        Ok((StatusCode::OK, json!({ "data": calls::alert_json(&alert) })))
    }
    .await;
    reply(request, found)
}

fn no_alert() -> AppError {
    AppError::NotFound("Alert does not exist".into())
}

/// `GET /v2/alerts/requests/{requestId}`: what became of a request answered 202.
pub async fn get_request(
    State(state): State<HookState>,
    sender: Sender,
    Path(request_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let request = begin();
    let found = async {
        let from = integration(&state, &sender, &headers).await?;
        let gone = || AppError::NotFound("Request does not exist".into());
        let id = Uuid::parse_str(request_id.trim()).map_err(|_| gone())?;
        let done = db::opsgenie_request(&state.app.pool, from.id, id).await?;
        let done = done.ok_or_else(gone)?;
        Ok((
            StatusCode::OK,
            json!({ "data": calls::request_json(&done) }),
        ))
    }
    .await;
    reply(request, found)
}

/// Any other method or path of Opsgenie's Alert API: a 404 in Opsgenie's shape, which its
/// clients read, saying what Quell takes (to a sender whose key is right).
pub async fn other(
    State(state): State<HookState>,
    sender: Sender,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let request = begin();
    if let Err(refused) = integration(&state, &sender, &headers).await {
        return processed(request, Err(refused));
    }
    let why = format!(
        "Quell does not take {method} {} of Opsgenie's Alert API; it takes POST /v2/alerts, \
         GET /v2/alerts/{{identifier}}, GET /v2/alerts/requests/{{requestId}}, and acknowledge, \
         close, notes and snooze of an alert.",
        uri.path()
    );
    processed(request, Err(AppError::NotFound(why)))
}
