//! The frame of every page and the page shown when something goes wrong. [`Chrome`] is what
//! every page shows around its content: who is signed in, and the CSRF token its forms carry.
//! [`PageError`] wraps the one [`AppError`] and renders the same facts as the API's JSON; it is
//! first rendered with a signed-out header (a handler's error knows nothing of the request), and
//! the pages router's [`with_signed_in_header`] layer renders it again with the person's own
//! header when the request belongs to a signed-in session, so an error never looks like being
//! signed out.

use askama::Template;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use tower_sessions::Session;

use crate::auth::domain::UserRole;
use crate::auth::{CurrentUser, session};
use crate::error::{AppError, FieldError};
use crate::state::AppState;

#[derive(Debug, Clone, Default)]
pub struct Chrome {
    pub user: Option<CurrentUser>,
    pub csrf: String,
}

impl Chrome {
    /// Whether the signed-in person holds at least `role` (to show or hide controls; the
    /// handlers check again).
    pub fn can(&self, role: &str) -> bool {
        let needed = UserRole::parse("role", role).unwrap_or(UserRole::Admin);
        self.user.as_ref().is_some_and(|u| u.role.allows(needed))
    }
}

impl FromRequestParts<AppState> for Chrome {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = parts.extensions.get::<CurrentUser>().cloned();
        // Only a signed-in session has forms to protect (the sign-in form brings its own
        // token): an anonymous page view must not create a session row.
        let csrf = match &user {
            Some(_) => {
                let session = Session::from_request_parts(parts, state)
                    .await
                    .map_err(|(_, msg)| PageError(AppError::Internal(msg.to_owned())))?;
                session::csrf_token(&session).await?
            }
            None => String::new(),
        };
        Ok(Self { user, csrf })
    }
}

/// An [`AppError`] answered as an HTML page.
#[derive(Debug)]
pub struct PageError(pub AppError);

impl<E: Into<AppError>> From<E> for PageError {
    fn from(err: E) -> Self {
        Self(err.into())
    }
}

pub type PageResult<T> = Result<T, PageError>;

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    chrome: Chrome,
    title: &'a str,
    message: &'a str,
    fields: &'a [FieldError],
}

/// What an error page says, kept on its response so it can be rendered again with the
/// request's own header.
#[derive(Debug, Clone)]
struct Said {
    message: String,
    fields: Vec<FieldError>,
}

fn render(status: StatusCode, said: &Said, chrome: Chrome) -> Option<String> {
    ErrorPage {
        chrome,
        title: status.canonical_reason().unwrap_or("Error"),
        message: &said.message,
        fields: &said.fields,
    }
    .render()
    .ok()
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let err = self.0;
        err.log_if_server_fault();
        // A stale form is a conflict to a person; If-Match's 412 is for programs.
        let status = match err.status() {
            StatusCode::PRECONDITION_FAILED => StatusCode::CONFLICT,
            other => other,
        };
        let said = Said {
            message: err.public_message(),
            fields: match err {
                AppError::Validation(fields) => fields,
                _ => vec![],
            },
        };
        let mut res = match render(status, &said, Chrome::default()) {
            Some(html) => (status, Html(html)).into_response(),
            None => (status, said.message.clone()).into_response(),
        };
        res.extensions_mut().insert(said);
        res
    }
}

/// Renders error pages again with the signed-in person's header (name, navigation, sign-out).
pub async fn with_signed_in_header(
    State(state): State<AppState>,
    session: Session,
    req: Request,
    next: Next,
) -> Response {
    let res = next.run(req).await;
    let Some(said) = res.extensions().get::<Said>().cloned() else {
        return res;
    };
    let user = match session::current_user(&state, &session).await {
        Ok(Some(user)) => CurrentUser::from(user),
        _ => return res,
    };
    let Ok(csrf) = session::csrf_token(&session).await else {
        return res;
    };
    let chrome = Chrome {
        user: Some(user),
        csrf,
    };
    let Some(html) = render(res.status(), &said, chrome) else {
        return res;
    };
    let (mut parts, _) = res.into_parts();
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    Response::from_parts(parts, Body::from(html))
}
