//! Router-level middleware: authenticate every API request by bearer token and every page
//! request by session, and refuse cross-site form posts.

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, HOST, ORIGIN};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use super::access::RefusedRequest;
use crate::auth::domain::token_hash;
use crate::auth::{CurrentUser, db, session};
use crate::error::AppError;
use crate::http::page::PageError;
use crate::state::AppState;

/// API: `Authorization: Bearer <token>` or 401. A bad token is tallied in the audit log.
pub async fn api(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(|t| t.trim().to_owned());
    let Some(token) = token else {
        return AppError::Unauthenticated.into_response();
    };
    let user = match token_user(&state, &token).await {
        Ok(user) => user,
        Err(err) => return err.into_response(),
    };
    match user {
        Some(user) => {
            req.extensions_mut().insert(CurrentUser::from(user));
            next.run(req).await
        }
        None => {
            let (parts, _) = req.into_parts();
            RefusedRequest::of(&parts, &state)
                .tally(&state, "token.invalid")
                .await;
            AppError::Unauthenticated.into_response()
        }
    }
}

async fn token_user(state: &AppState, token: &str) -> Result<Option<db::User>, AppError> {
    let Some((token_id, person_id)) = db::token_owner(&state.pool, &token_hash(token)).await?
    else {
        return Ok(None);
    };
    let user = db::find_by_id(&state.pool, person_id).await?;
    match user {
        Some(u) if u.disabled_at.is_none() => {
            db::touch_token(&state.pool, token_id).await?;
            Ok(Some(u))
        }
        _ => Ok(None),
    }
}

/// Pages: a signed-in session, or a redirect to the sign-in page that comes back here.
pub async fn pages(
    State(state): State<AppState>,
    session: Session,
    mut req: Request,
    next: Next,
) -> Response {
    match session::current_user(&state, &session).await {
        Ok(Some(user)) => {
            req.extensions_mut().insert(CurrentUser::from(user));
            next.run(req).await
        }
        Ok(None) => {
            let back = req
                .uri()
                .path_and_query()
                .map(|p| p.as_str().to_owned())
                .unwrap_or_else(|| "/".into());
            let target = form_urlencoded::Serializer::new(String::new())
                .append_pair("next", &back)
                .finish();
            Redirect::to(&format!("/login?{target}")).into_response()
        }
        Err(err) => PageError(err).into_response(),
    }
}

/// Refuses a state-changing request that a browser says came from another site: by
/// `Sec-Fetch-Site`, or by an `Origin` whose host is not the one asked. Requests without either
/// header (old browsers, scripts) still need the form's CSRF token.
pub async fn same_origin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let headers = req.headers();
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let cross_site = matches!(site, "cross-site" | "same-site");
    let host = headers.get(HOST).and_then(|v| v.to_str().ok());
    let origin_host = headers
        .get(ORIGIN)
        .and_then(|v| v.to_str().ok())
        .filter(|o| *o != "null")
        .map(|o| o.split_once("://").map_or(o, |(_, rest)| rest));
    let foreign_origin = match (origin_host, host) {
        (Some(o), Some(h)) => !o.eq_ignore_ascii_case(h),
        (Some(_), None) => true,
        _ => false,
    };
    if cross_site || foreign_origin {
        let (parts, _) = req.into_parts();
        RefusedRequest::of(&parts, &state)
            .tally(&state, "csrf.cross_origin")
            .await;
        let err = AppError::Forbidden(
            "This form was sent from another site, so it was refused. Open Quell and try again."
                .into(),
        );
        let mut res = PageError(err).into_response();
        *res.status_mut() = StatusCode::FORBIDDEN;
        return res;
    }
    next.run(req).await
}
