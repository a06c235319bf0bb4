//! The router layer that keeps restricted incidents out of sight behind every address that
//! names one: a page or API route under `/incidents/{key}` or `/api/v1/incidents/{key}`
//! answers 404 — the very answer an incident that does not exist gets — to a person the
//! incident is not open to, before its handler runs; and an opening of a restricted
//! incident's page or record by someone who may see it is written to the audit log.

use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::Method;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::db;
use super::domain::SeenBy;
use crate::audit::{self, Actor};
use crate::auth::CurrentUser;
use crate::domain::IncidentKey;
use crate::error::AppError;
use crate::state::AppState;

/// The route templates whose `{key}` names an incident.
const KEYED: [&str; 2] = ["/incidents/{key}", "/api/v1/incidents/{key}"];

/// Whether a route template's `{key}` names an incident.
fn keyed(template: &str) -> bool {
    KEYED
        .iter()
        .any(|k| template == *k || template.starts_with(&format!("{k}/")))
}

/// The incident key a request names, as its handler will read it: the `key` of its route's
/// path, percent-decoded (`INC%2D999` is INC-999).
async fn key_of(parts: &mut Parts, state: &AppState) -> Option<IncidentKey> {
    let template = parts.extensions.get::<MatchedPath>()?.as_str().to_owned();
    if !keyed(&template) {
        return None;
    }
    let params = RawPathParams::from_request_parts(parts, state).await.ok()?;
    let raw = params.iter().find(|(name, _)| *name == "key")?.1;
    IncidentKey::parse(raw)
}

/// The layer (inside the session and token gates: it reads who is asking).
pub async fn hide(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let key = key_of(&mut parts, &state).await;
    let opening = parts
        .extensions
        .get::<MatchedPath>()
        .is_some_and(|t| KEYED.contains(&t.as_str()));
    let actor = crate::http::access::actor_of(&parts, &state);
    let req = Request::from_parts(parts, body);
    let (Some(key), Some(user)) = (key, req.extensions().get::<CurrentUser>().cloned()) else {
        return next.run(req).await;
    };
    let api = req.uri().path().starts_with("/api/");
    let missing = || {
        let err = AppError::NotFound(format!("There is no incident {key}."));
        if api {
            err.into_response()
        } else {
            crate::http::page::PageError(err).into_response()
        }
    };
    let sight = match db::sight(&state.pool, key, SeenBy::of(&user)).await {
        Ok(sight) => sight,
        Err(err) => return err.into_response(),
    };
    let Some(sight) = sight.filter(|s| s.visible) else {
        return missing();
    };
    // Opening the incident itself (its page or its record), not each form sent from it.
    let opened = req.method() == Method::GET && opening && sight.restricted;
    let response = next.run(req).await;
    if opened && response.status().is_success() {
        viewed(&state, &actor, key).await;
    }
    response
}

/// Writes the opening of a restricted incident to the audit log; a failure to record is logged
/// (the person has already been answered).
async fn viewed(state: &AppState, actor: &Actor, key: IncidentKey) {
    let target = key.to_string();
    if let Err(err) = audit::db::append(
        &state.pool,
        actor,
        "incident.viewed",
        &target,
        "ok",
        None,
        None,
    )
    .await
    {
        tracing::error!(error = %err, %key, "could not record who opened a restricted incident");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incident_routes_are_those_under_an_incident_key() {
        assert!(keyed("/incidents/{key}"));
        assert!(keyed("/incidents/{key}/postmortem"));
        assert!(keyed("/api/v1/incidents/{key}/timeline"));
        assert!(!keyed("/incidents/events"));
        assert!(!keyed("/incidents/{keyword}"));
        assert!(!keyed("/teams/{slug}"));
    }
}
