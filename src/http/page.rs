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

/// What a form's page answers when its change fails: a refusal naming fields shows the form
/// again (`again`, given the errors) with 422; any other error is the error page.
pub async fn form_again<P: IntoResponse>(
    error: AppError,
    again: impl AsyncFnOnce(Vec<FieldError>) -> PageResult<P>,
) -> PageResult<Response> {
    match error {
        AppError::Validation(errors) => {
            Ok((StatusCode::UNPROCESSABLE_ENTITY, again(errors).await?).into_response())
        }
        other => Err(PageError(other)),
    }
}

/// What a page form answers once its change was tried (in `transaction::write`, so run again
/// if PostgreSQL broke it off): saved, the person is sent to the address `to` makes of what it
/// stored; refused for its fields, the form comes again (`form_again`).
pub async fn submitted<T, P: IntoResponse>(
    tried: Result<T, AppError>,
    to: impl FnOnce(T) -> String,
    again: impl AsyncFnOnce(Vec<FieldError>) -> PageResult<P>,
) -> PageResult<Response> {
    match tried {
        Ok(saved) => Ok(axum::response::Redirect::to(&to(saved)).into_response()),
        Err(e) => form_again(e, again).await,
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    chrome: Chrome,
    title: String,
    message: &'a str,
    /// Each wrong field in words, with what is wrong with it
    fields: Vec<(String, &'a str)>,
    /// Whether the request tried to change something (then "nothing was changed" is true)
    attempted: bool,
    /// Where the person came from, on this site
    back: String,
    /// The incident the failed request was about (a page under `/incidents/{key}/…`), to
    /// offer the way to it
    incident: Option<String>,
}

/// What an error page says, kept on its response so it can be rendered again with the
/// request's own header.
#[derive(Debug, Clone)]
struct Said {
    message: String,
    fields: Vec<FieldError>,
}

/// Where a request came from, for the error page's way back and its wording.
#[derive(Debug, Clone, Default)]
pub struct Whence {
    pub attempted: bool,
    pub back: Option<String>,
    /// The incident whose sub-page was asked for (`/incidents/INC-12/ack/…` → `INC-12`)
    pub incident: Option<String>,
}

/// The incident a path below an incident's page is about: `/incidents/INC-12/ack/…` →
/// `INC-12`; `None` for the incident page itself and for other paths.
pub fn incident_of(path: &str) -> Option<String> {
    let mut parts = path.trim_start_matches('/').split('/');
    if parts.next() != Some("incidents") {
        return None;
    }
    let key = crate::domain::IncidentKey::parse(parts.next()?)?;
    parts.next().filter(|p| !p.is_empty())?;
    Some(key.to_string())
}

/// A form field's name as people read it: `detected_at` → "Detected", `evidence[2].source.path`
/// → "Path".
pub fn field_words(field: &str) -> String {
    let last = field
        .rsplit(['.', '['])
        .next()
        .unwrap_or(field)
        .trim_end_matches(']');
    let known = match last {
        "at" | "occurred_at" => Some("When"),
        "started_at" => Some("Impact started"),
        "detected_at" => Some("Detected"),
        "csrf" => Some("The form"),
        "body" => Some("Text"),
        "q" => Some("Search"),
        "url" => Some("Address"),
        _ => None,
    };
    if let Some(k) = known {
        return k.to_owned();
    }
    let words = last.replace(['_', '-'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(c) if !c.is_ascii_digit() => c.to_uppercase().chain(chars).collect(),
        _ => field.to_owned(),
    }
}

/// The page's title: what went wrong, in words.
fn title_for(status: StatusCode, said: &Said) -> String {
    match (status.as_u16(), said.fields.as_slice()) {
        (422, [one]) if one.message.contains("in the future") => {
            "That time is in the future".into()
        }
        (422, [one]) if one.message.contains(" is before ") => "That time is too early".into(),
        (422, [one]) => format!("Check {}", field_words(&one.field).to_lowercase()),
        (422, _) => "Some fields need fixing".into(),
        (400, _) => "That could not be read".into(),
        (401, _) => "Sign in first".into(),
        (403, _) => "You can't do that".into(),
        (404, _) => "Not found".into(),
        (405, _) => "That method is not allowed here".into(),
        (409, _) => "That clashes with what is there now".into(),
        (410, _) => "No longer possible".into(),
        (413, _) => "That is too large".into(),
        (429, _) => "Too many tries; wait a moment".into(),
        (s, _) if s >= 500 => "Something went wrong on our side".into(),
        _ => status.canonical_reason().unwrap_or("Error").into(),
    }
}

fn render(status: StatusCode, said: &Said, chrome: Chrome, whence: &Whence) -> Option<String> {
    ErrorPage {
        chrome,
        title: title_for(status, said),
        message: &said.message,
        fields: said
            .fields
            .iter()
            .map(|f| (field_words(&f.field), f.message.as_str()))
            .collect(),
        attempted: whence.attempted,
        back: whence.back.clone().unwrap_or_else(|| "/incidents".into()),
        // Not when the way back leads there already.
        incident: whence
            .incident
            .clone()
            .filter(|k| whence.back.as_deref() != Some(format!("/incidents/{k}").as_str())),
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
        let retry_after = err.retry_after();
        let said = Said {
            message: err.public_message(),
            fields: match err {
                AppError::Validation(fields) => fields,
                _ => vec![],
            },
        };
        let mut res = match render(status, &said, Chrome::default(), &Whence::default()) {
            Some(html) => (status, Html(html)).into_response(),
            None => (status, said.message.clone()).into_response(),
        };
        if let Some(secs) = retry_after
            && let Ok(v) = axum::http::HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
        }
        res.extensions_mut().insert(said);
        res
    }
}

/// The page the request came from, when it is one of ours (same host): its path and query.
fn same_site_referer(req: &Request) -> Option<String> {
    let referer = req
        .headers()
        .get(axum::http::header::REFERER)?
        .to_str()
        .ok()?;
    let host = req.headers().get(axum::http::header::HOST)?.to_str().ok()?;
    let url = url::Url::parse(referer).ok()?;
    let origin = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str()?),
        None => url.host_str()?.to_owned(),
    };
    if origin != host || url.path() == req.uri().path() && req.method() == axum::http::Method::GET {
        return None;
    }
    Some(match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    })
}

/// Renders error pages again with the signed-in person's header (name, navigation, sign-out).
pub async fn with_signed_in_header(
    State(state): State<AppState>,
    session: Session,
    req: Request,
    next: Next,
) -> Response {
    let whence = Whence {
        attempted: !matches!(
            *req.method(),
            axum::http::Method::GET | axum::http::Method::HEAD
        ),
        back: same_site_referer(&req),
        incident: incident_of(req.uri().path()),
    };
    let res = next.run(req).await;
    let Some(said) = res.extensions().get::<Said>().cloned() else {
        return res;
    };
    let chrome = match session::current_user(&state, &session).await {
        Ok(Some(user)) => match session::csrf_token(&session).await {
            Ok(csrf) => Chrome {
                user: Some(CurrentUser::from(user)),
                csrf,
            },
            Err(_) => Chrome::default(),
        },
        _ => Chrome::default(),
    };
    let Some(html) = render(res.status(), &said, chrome, &whence) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_speak_in_words() {
        assert_eq!(field_words("at"), "When");
        assert_eq!(field_words("detected_at"), "Detected");
        assert_eq!(field_words("evidence[2].source.path"), "Path");
        assert_eq!(field_words("answer.cause"), "Cause");
        let said = |field: &str, message: &str| Said {
            message: String::new(),
            fields: vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        };
        let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
        assert_eq!(
            title_for(
                unprocessable,
                &said("at", "2026-12-01 10:00 UTC is in the future: …")
            ),
            "That time is in the future"
        );
        assert_eq!(
            title_for(unprocessable, &said("title", "write 1 to 200 characters")),
            "Check title"
        );
        assert_eq!(
            title_for(StatusCode::NOT_FOUND, &said("x", "y")),
            "Not found"
        );
    }

    #[test]
    fn errors_below_an_incident_page_know_the_incident() {
        assert_eq!(
            incident_of("/incidents/INC-12/ack/abc").as_deref(),
            Some("INC-12")
        );
        assert_eq!(
            incident_of("/incidents/inc-7/evidence").as_deref(),
            Some("INC-7")
        );
        assert_eq!(incident_of("/incidents/INC-12"), None);
        assert_eq!(incident_of("/incidents/INC-12/"), None);
        assert_eq!(incident_of("/incidents/new"), None);
        assert_eq!(incident_of("/incidents/events"), None);
        assert_eq!(incident_of("/services/INC-12/x"), None);
    }
}

/// A list page's filters as a query string: those set and not blank, in the order given.
pub fn filters_query<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        if let Some(v) = v.filter(|v| !v.trim().is_empty()) {
            q.append_pair(k, v);
        }
    }
    q.finish()
}

/// The address of the page after this one of the list at `path`: its filters and `cursor`.
pub fn next_page(path: &str, filters: &str, cursor: &str) -> String {
    let mut q = form_urlencoded::Serializer::new(filters.to_owned());
    q.append_pair("cursor", cursor);
    format!("{path}?{}", q.finish())
}

#[cfg(test)]
mod list_link_tests {
    use super::*;

    #[test]
    fn filters_keep_their_order_drop_blanks_and_the_next_page_adds_the_cursor() {
        let f = filters_query([
            ("status", Some("open")),
            ("q", Some(" ")),
            ("type", None),
            ("owner", Some("a&b")),
        ]);
        assert_eq!(f, "status=open&owner=a%26b");
        assert_eq!(
            next_page("/x", &f, "1.2"),
            "/x?status=open&owner=a%26b&cursor=1.2"
        );
        assert_eq!(next_page("/x", "", "1.2"), "/x?cursor=1.2");
    }
}
