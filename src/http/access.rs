//! Access guards every capability's handlers use: [`Auth<R>`] states the role a handler needs
//! in its signature and yields the [`Actor`] to attribute changes to; refusals answer 401/403 in
//! the format of the part of the site asked (JSON under `/api`, a page elsewhere) and are
//! tallied in the audit log. Also who and where a request comes from: its client address, its
//! route template, the actor it acts as.

use std::marker::PhantomData;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::audit::{self, Actor};
use crate::auth::CurrentUser;
use crate::auth::domain::UserRole;
use crate::error::AppError;
use crate::http::page::PageError;
use crate::state::AppState;

/// A role a handler needs, as a type: `Auth<Responder>`.
pub trait MinRole: Send + Sync {
    const ROLE: UserRole;
}
pub struct Viewer;
pub struct Responder;
pub struct Manager;
pub struct Admin;
impl MinRole for Viewer {
    const ROLE: UserRole = UserRole::Viewer;
}
impl MinRole for Responder {
    const ROLE: UserRole = UserRole::Responder;
}
impl MinRole for Manager {
    const ROLE: UserRole = UserRole::Manager;
}
impl MinRole for Admin {
    const ROLE: UserRole = UserRole::Admin;
}

/// The signed-in user, checked to hold at least role `R`. Refusals answer 403 (JSON under
/// `/api`, a page elsewhere) and are tallied in the audit log.
pub struct Auth<R: MinRole> {
    pub user: CurrentUser,
    pub actor: Actor,
    /// The request as a refusal finer than the role would tally it (see [`Auth::refused`])
    request: RefusedRequest,
    _role: PhantomData<R>,
}

impl<R: MinRole> Auth<R> {
    /// A refusal by a rule finer than the role (a team's configuration, changed by someone who
    /// is not its lead): tallied in the audit log as `access.denied`, like a role refusal, and
    /// handed back to answer 403.
    pub async fn refused(&self, state: &AppState, error: AppError) -> AppError {
        if matches!(error, AppError::Forbidden(_)) {
            self.request.tally(state, "access.denied").await;
        }
        error
    }
}

/// 401 or 403, in the format of the part of the site that was asked.
pub struct Refused {
    api: bool,
    error: AppError,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        if self.api {
            self.error.into_response()
        } else {
            PageError(self.error).into_response()
        }
    }
}

impl<R: MinRole> FromRequestParts<AppState> for Auth<R> {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Refused> {
        let api = parts.uri.path().starts_with("/api/");
        let actor = actor_of(parts, state);
        let Some(user) = parts.extensions.get::<CurrentUser>().cloned() else {
            return Err(Refused {
                api,
                error: AppError::Unauthenticated,
            });
        };
        if !user.role.allows(R::ROLE) {
            RefusedRequest::of(parts, state)
                .tally(state, "access.denied")
                .await;
            return Err(Refused {
                api,
                error: AppError::Forbidden(format!(
                    "This needs the {} role; you are {}.",
                    R::ROLE.as_str(),
                    user.role.as_str()
                )),
            });
        }
        Ok(Self {
            user,
            actor,
            request: RefusedRequest::of(parts, state),
            _role: PhantomData,
        })
    }
}

/// The client's address: the connection's peer, or the first `X-Forwarded-For` hop when
/// `QUELL_TRUST_FORWARDED_FOR` says a proxy in front sets it.
pub fn client_addr(parts: &Parts, state: &AppState) -> Option<String> {
    if state.config.trust_forwarded_for
        && let Some(first) = parts
            .headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
    {
        return Some(first.trim().to_owned());
    }
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ci| ci.0.ip().to_string())
}

/// The request's method and route template (`POST /incidents/{key}/notes`), for refusal
/// tallies: chosen by Quell, never by the requester. A path no route matches is `(no route)`,
/// and a method Quell does not serve is `OTHER`.
pub fn route_of(parts: &Parts) -> String {
    use axum::http::Method;
    let template = parts
        .extensions
        .get::<axum::extract::MatchedPath>()
        .map_or("(no route)", |m| m.as_str());
    let method = match parts.method {
        Method::GET
        | Method::HEAD
        | Method::POST
        | Method::PUT
        | Method::PATCH
        | Method::DELETE => parts.method.as_str(),
        _ => "OTHER",
    };
    format!("{method} {template}")
}

/// What a refused request tried, for its audit row: the method and the path as sent (the row
/// keeps the first 200 characters).
pub fn attempt_of(parts: &Parts) -> String {
    format!("{} {}", parts.method, parts.uri.path())
}

/// The actor of a request: the signed-in user if any, with the request id and address.
pub fn actor_of(parts: &Parts, state: &AppState) -> Actor {
    let user = parts.extensions.get::<CurrentUser>();
    Actor {
        person_id: user.map(|u| u.id),
        name: user.map_or_else(|| "anonymous".to_owned(), |u| u.name.clone()),
        request_id: parts
            .headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        client_addr: client_addr(parts, state),
    }
}

/// A refused request as the audit log tallies it: who, on which route, trying what. Taken from
/// the request's head before its body is read.
pub struct RefusedRequest {
    actor: Actor,
    route: String,
    attempt: String,
}

impl RefusedRequest {
    pub fn of(parts: &Parts, state: &AppState) -> Self {
        Self {
            actor: actor_of(parts, state),
            route: route_of(parts),
            attempt: attempt_of(parts),
        }
    }

    /// Tallies it under `action`; a failure to record is logged, and the refusal still answered.
    pub async fn tally(&self, state: &AppState, action: &str) {
        let refusal = audit::db::Refusal {
            action,
            route: &self.route,
            target: &self.attempt,
        };
        if let Err(err) = audit::db::refusal(&state.pool, &self.actor, refusal).await {
            tracing::error!(error = %err, "could not record a refusal");
        }
    }
}

/// The actor of any request, signed in or not (for the sign-in page itself).
pub struct RequestActor(pub Actor);

impl FromRequestParts<AppState> for RequestActor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(actor_of(parts, state)))
    }
}
