//! The router layer that keeps restricted incidents out of sight behind every address that
//! names one: a page or API route under `/incidents/{key}` or `/api/v1/incidents/{key}`
//! answers 404 — the very answer an incident that does not exist gets — to a person the
//! incident is not open to, before its handler runs; and an opening of a restricted
//! incident's page or record by someone who may see it is written to the audit log.

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
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

/// The incident key a route template and its path name, if they name one.
fn key_of(template: &str, path: &str) -> Option<IncidentKey> {
    let prefix = KEYED
        .iter()
        .find(|k| template == **k || template.starts_with(&format!("{k}/")))?;
    let segment = path
        .strip_prefix(prefix.trim_end_matches("{key}"))?
        .split('/')
        .next()?;
    IncidentKey::parse(segment)
}

/// The layer (inside the session and token gates: it reads who is asking).
pub async fn hide(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let template = req.extensions().get::<MatchedPath>().map(|m| m.as_str());
    let key = template.and_then(|t| key_of(t, req.uri().path()));
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
    let opened = req.method() == Method::GET
        && template.is_some_and(|t| KEYED.contains(&t))
        && sight.restricted;
    let (parts, body) = req.into_parts();
    let actor = crate::http::access::actor_of(&parts, &state);
    let req = Request::from_parts(parts, body);
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
    fn keys_are_read_from_incident_routes_only() {
        let k = |t: &str, p: &str| key_of(t, p).map(|k| k.0);
        assert_eq!(k("/incidents/{key}", "/incidents/INC-12"), Some(12));
        assert_eq!(
            k("/incidents/{key}/postmortem", "/incidents/inc-3/postmortem"),
            Some(3)
        );
        assert_eq!(
            k(
                "/api/v1/incidents/{key}/timeline",
                "/api/v1/incidents/INC-9/timeline"
            ),
            Some(9)
        );
        assert_eq!(k("/incidents/events", "/incidents/events"), None);
        assert_eq!(k("/incidents/{key}", "/incidents/nonsense"), None);
        assert_eq!(k("/incidents/{keyword}", "/incidents/INC-1"), None);
        assert_eq!(k("/teams/{slug}", "/teams/INC-1"), None);
    }
}
