//! Extractors shared by every capability: a JSON body that fails in our error format and names
//! the field, `If-Match` and `Idempotency-Key` headers, and a form body for pages.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::IF_MATCH;
use axum::http::request::Parts;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use tower_sessions::Session;

use super::access;
use crate::auth::{self, session};
use crate::domain::{UNSTORABLE_MESSAGE, storable, unstorable_at};
use crate::error::{AppError, AppResult, FieldError};
use crate::http::page::PageError;
use crate::idempotency;
use crate::state::AppState;

/// A numeric id from a path; anything else names nothing, so 404.
pub fn parse_id(raw: &str, what: &str) -> AppResult<i64> {
    raw.parse()
        .map_err(|_| AppError::NotFound(format!("There is no {what} {raw:?}.")))
}

/// The incident key in a path (`INC-1187`); anything else names no incident, so 404.
pub fn incident_key(raw: &str) -> AppResult<crate::domain::IncidentKey> {
    crate::domain::IncidentKey::parse(raw)
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {raw:?}.")))
}

/// A JSON body. Malformed JSON → 400 `malformed_json`; well-formed JSON of the wrong shape → 422
/// naming the field. The raw value is kept for idempotency comparisons. The Content-Type is not
/// insisted on (`curl -d` sends a form type): the body is JSON or it is refused as malformed.
pub struct ApiJson<T> {
    pub value: T,
    pub raw: serde_json::Value,
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, state).await?;
        parse_json(&bytes)
    }
}

/// The whole body; one over the size limit answers 413.
async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, AppError> {
    Bytes::from_request(req, state)
        .await
        .map_err(|e| unreadable(e.status(), e.body_text(), AppError::too_large()))
}

/// A body its reader could not read (it answered `status`, saying `message`): `too_large`
/// when that was 413, else 400 `unreadable_body` with the reader's words. Every body Quell
/// reads — JSON, webhooks, uploads — is refused this way.
pub fn unreadable(
    status: axum::http::StatusCode,
    message: String,
    too_large: AppError,
) -> AppError {
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        too_large
    } else {
        AppError::BadRequest {
            code: "unreadable_body",
            message,
        }
    }
}

/// A body or query of the wrong shape → 422 naming the field.
fn field_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> AppError {
    let path = e.path().to_string();
    let inner = e.into_inner().to_string();
    // serde names a missing or unknown field in its message, not in the path.
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|p| inner.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    let field = match named {
        Some(name) if path == "." => name.to_owned(),
        Some(name) if path != name && !path.ends_with(&format!(".{name}")) => {
            format!("{path}.{name}")
        }
        None if path == "." => "body".to_owned(),
        _ => path,
    };
    AppError::Validation(vec![FieldError {
        field,
        message: inner,
    }])
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<ApiJson<T>, AppError> {
    let raw: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| AppError::BadRequest {
            code: "malformed_json",
            message: format!("the body is not valid JSON: {e}"),
        })?;
    if let Some(field) = unstorable_at(&raw) {
        return Err(AppError::invalid(&field, UNSTORABLE_MESSAGE));
    }
    // Every body of the API is an object; serde would also read a struct from a list of its
    // fields' values, so `[]` could clear whatever an object with no fields leaves unset.
    if !raw.is_object() {
        return Err(AppError::invalid(
            "body",
            "expected a JSON object ({…}) with the fields this request takes",
        ));
    }
    let value = serde_path_to_error::deserialize(&raw).map_err(field_error)?;
    Ok(ApiJson { value, raw })
}

/// The version a client claims to hold, from `If-Match: "v<version>"`. `None` for `*`.
#[derive(Debug, Clone, Copy)]
pub struct IfMatch(pub Option<i32>);

/// The ETag of a versioned resource.
pub fn etag(version: i32) -> String {
    format!("\"v{version}\"")
}

/// A versioned resource as JSON with its ETag.
pub fn with_etag<T: serde::Serialize>(
    status: axum::http::StatusCode,
    version: i32,
    body: &T,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        status,
        [(axum::http::header::ETAG, etag(version))],
        axum::Json(body),
    )
        .into_response()
}

impl<S: Send + Sync> FromRequestParts<S> for IfMatch {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let value = parts
            .headers
            .get(IF_MATCH)
            .ok_or(AppError::PreconditionRequired)?;
        let value = value.to_str().unwrap_or_default().trim();
        if value == "*" {
            return Ok(Self(None));
        }
        parse_if_match(value).map(|v| Self(Some(v))).ok_or_else(|| {
            AppError::invalid(
                "If-Match",
                format!("{value:?} is not an ETag of this API; use the ETag header of a GET"),
            )
        })
    }
}

/// Like [`IfMatch`] but optional: transitions check it when it is sent.
#[derive(Debug, Clone, Copy)]
pub struct OptionalIfMatch(pub Option<i32>);

impl<S: Send + Sync> FromRequestParts<S> for OptionalIfMatch {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if parts.headers.contains_key(IF_MATCH) {
            Ok(Self(IfMatch::from_request_parts(parts, state).await?.0))
        } else {
            Ok(Self(None))
        }
    }
}

fn parse_if_match(value: &str) -> Option<i32> {
    let v = value.strip_prefix("W/").unwrap_or(value);
    v.strip_prefix("\"v")?.strip_suffix('"')?.parse().ok()
}

/// The `Idempotency-Key` header of a create, if any (1–255 visible ASCII characters), with the
/// signed-in person who sent it.
#[derive(Debug, Clone)]
pub struct IdempotencyKey(pub Option<idempotency::Key>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let Some(value) = parts.headers.get("idempotency-key") else {
            return Ok(Self(None));
        };
        let value = value.to_str().unwrap_or_default().trim();
        if value.is_empty() || value.len() > 255 || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AppError::invalid(
                "Idempotency-Key",
                "use 1 to 255 visible ASCII characters, e.g. a UUID",
            ));
        }
        let person = parts
            .extensions
            .get::<auth::CurrentUser>()
            .ok_or(AppError::Unauthenticated)?;
        Ok(Self(Some(idempotency::Key {
            person_id: person.id,
            key: value.to_owned(),
        })))
    }
}

/// An HTML form body, checked against the session's CSRF token (the hidden `csrf` field every
/// form carries); a malformed one answers with an error page naming the field.
pub struct PageForm<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for PageForm<T> {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let session = req.extensions().get::<Session>().cloned();
        let guard = async |given: &str| match &session {
            Some(s) => session::csrf_matches(s, given).await,
            None => Ok(false),
        };
        read_form(req, state, guard).await.map(PageForm)
    }
}

/// An HTML form anyone may send, with no session and so no CSRF token: for forms whose path
/// is their own credential, or that ask for nothing a stranger could not (the status page's
/// subscription, which only sends a confirmation link). Read and checked as [`PageForm`] is.
pub struct OpenForm<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for OpenForm<T> {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        read_form(req, state, async |_: &str| Ok(true))
            .await
            .map(OpenForm)
    }
}

/// An HTML form sent as `multipart/form-data` (a file upload), checked against the session's CSRF
/// token like [`PageForm`]: its text fields and its files (name and bytes), in order. The route
/// sets how large a body it takes (`DefaultBodyLimit`); past it, 413.
pub struct PageUpload {
    pub fields: Vec<(String, String)>,
    /// (field, file name, bytes) of every file chosen
    pub files: Vec<(String, String, Vec<u8>)>,
}

impl PageUpload {
    /// The text field `name`, or empty.
    pub fn field(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

impl FromRequest<AppState> for PageUpload {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let session = req.extensions().get::<Session>().cloned();
        let (parts, body) = req.into_parts();
        let refused = access::RefusedRequest::of(&parts, state);
        let req = Request::from_parts(parts, body);
        // Uploads are the one kind of page form with files; their limit is the uploads' own.
        let upload_mib = crate::http::UPLOAD_LIMIT.div_ceil(1024 * 1024);
        let refuse = |status, message| {
            let too_large = AppError::TooLarge {
                limit_mib: upload_mib,
            };
            PageError(unreadable(status, message, too_large))
        };
        let mut multipart = axum::extract::Multipart::from_request(req, state)
            .await
            .map_err(|e| refuse(e.status(), e.body_text()))?;
        let mut upload = PageUpload {
            fields: vec![],
            files: vec![],
        };
        loop {
            let field = match multipart.next_field().await {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => return Err(refuse(e.status(), e.body_text())),
            };
            let name = field.name().unwrap_or("").to_owned();
            let file_name = field.file_name().map(str::to_owned);
            let bytes = field
                .bytes()
                .await
                .map_err(|e| refuse(e.status(), e.body_text()))?;
            match file_name {
                // A file input left empty still sends a part, with no name and no bytes.
                Some(f) if !f.is_empty() || !bytes.is_empty() => {
                    upload.files.push((name, f, bytes.to_vec()))
                }
                Some(_) => {}
                None => {
                    let value = String::from_utf8(bytes.to_vec())
                        .map_err(|_| PageError(AppError::invalid(&name, "not UTF-8 text")))?;
                    upload.fields.push((name, value));
                }
            }
        }
        let ok = match &session {
            Some(s) => session::csrf_matches(s, upload.field("csrf")).await?,
            None => false,
        };
        refuse_bad_token(ok, &refused, state).await?;
        if let Some((k, _)) = upload
            .fields
            .iter()
            .find(|(k, v)| !storable(k) || !storable(v))
        {
            return Err(PageError(AppError::invalid(
                &k.replace(crate::domain::UNSTORABLE, ""),
                UNSTORABLE_MESSAGE,
            )));
        }
        Ok(upload)
    }
}

/// The sign-in form's body, checked against the sign-in page's signed double-submit cookie
/// instead of a session (an anonymous visitor has none).
pub struct SignInForm<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for SignInForm<T> {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let headers = req.headers().clone();
        let guard = async |given: &str| auth::login_token::matches(state, &headers, given).await;
        read_form(req, state, guard).await.map(SignInForm)
    }
}

/// A form whose CSRF token did not match: tallied in the audit log and answered 403.
async fn refuse_bad_token(
    ok: bool,
    refused: &access::RefusedRequest,
    state: &AppState,
) -> Result<(), PageError> {
    if ok {
        return Ok(());
    }
    refused.tally(state, "csrf.bad_token").await;
    Err(PageError(AppError::Forbidden(
        "This form has expired or did not come from Quell. Reload the page and try again.".into(),
    )))
}

/// Reads a form whose `csrf` field `guard` accepts; a refused token is tallied in the audit log
/// and answered 403, a field PostgreSQL cannot store 422 naming it.
async fn read_form<T: DeserializeOwned>(
    req: Request,
    state: &AppState,
    guard: impl AsyncFnOnce(&str) -> Result<bool, AppError>,
) -> Result<T, PageError> {
    // Who and what, for the audit log should the token be wrong; the body consumes the request.
    let (parts, body) = req.into_parts();
    let refused = access::RefusedRequest::of(&parts, state);
    let bytes = read_body(Request::from_parts(parts, body), state).await?;
    let given = form_urlencoded::parse(&bytes)
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    refuse_bad_token(guard(&given).await?, &refused, state).await?;
    if let Some(field) = unstorable_pair(form_urlencoded::parse(&bytes)) {
        return Err(PageError(AppError::invalid(&field, UNSTORABLE_MESSAGE)));
    }
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(&bytes));
    serde_path_to_error::deserialize(de).map_err(|e| PageError(field_error(e)))
}

/// The name of the first form or query field whose name or value PostgreSQL cannot store.
pub fn unstorable_pair<'a>(
    pairs: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
) -> Option<String> {
    pairs
        .into_iter()
        .find(|(k, v)| !storable(k) || !storable(v))
        .map(|(k, _)| k.replace(crate::domain::UNSTORABLE, ""))
}

/// A JSON body that may be left out entirely (`curl -X POST` with no data): then `T::default()`.
pub struct OptionalJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = read_body(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        Ok(Self(parse_json(&bytes)?.value))
    }
}

/// Query-string parameters; a bad one answers 422 naming it.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(field_error)
    }
}

/// A query parameter as a filter: trimmed, and `None` when absent or blank (`?owner=` means any).
pub fn query_text(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// A day in a query parameter (`2026-09-17`, UTC); `None` when absent or blank.
pub fn query_day(
    field: &str,
    value: &Option<String>,
) -> Result<Option<chrono::NaiveDate>, AppError> {
    query_text(value)
        .map(|d| {
            chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|_| {
                AppError::invalid(field, format!("{d:?} is not a date such as 2026-09-17"))
            })
        })
        .transpose()
}

/// Two days in query parameters bounding a period, both ends included (`from`, `to`); one
/// ending before it starts is refused naming `to`.
pub fn query_period(
    from: &Option<String>,
    to: &Option<String>,
) -> Result<(Option<chrono::NaiveDate>, Option<chrono::NaiveDate>), AppError> {
    let (from, to) = (query_day("from", from)?, query_day("to", to)?);
    if let (Some(f), Some(t)) = (from, to)
        && t < f
    {
        return Err(AppError::invalid("to", "the period ends before it starts"));
    }
    Ok((from, to))
}

/// A period between two instants, either end open: `[from, until)`.
pub type Bounds = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// The `from` and `to` days as instants: from the start of `from` (inclusive) to the end of `to`
/// (exclusive), UTC.
pub fn query_period_bounds(from: &Option<String>, to: &Option<String>) -> Result<Bounds, AppError> {
    let (from, to) = query_period(from, to)?;
    let start = |d: chrono::NaiveDate| d.and_time(chrono::NaiveTime::MIN).and_utc();
    Ok((
        from.map(start),
        to.and_then(|d| d.checked_add_days(chrono::Days::new(1)))
            .map(start),
    ))
}

/// A page size in the `limit` query parameter: `default` when absent, else 1 to `max`.
pub fn query_limit(value: &Option<String>, default: i64, max: i64) -> Result<i64, AppError> {
    match query_text(value) {
        None => Ok(default),
        Some(l) => l
            .parse::<i64>()
            .ok()
            .filter(|l| (1..=max).contains(l))
            .ok_or_else(|| AppError::invalid("limit", format!("a number from 1 to {max}"))),
    }
}

/// The `cursor` query parameter, read by `decode`: `None` when absent; one that does not decode
/// is refused naming `cursor`.
pub fn query_cursor<T>(
    value: &Option<String>,
    decode: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<T>, AppError> {
    query_text(value)
        .map(|c| {
            decode(&c).ok_or_else(|| {
                AppError::invalid("cursor", "use the next_cursor of a previous page")
            })
        })
        .transpose()
}

/// A yes/no query parameter: `true`, or `false` / absent / blank; anything else is refused.
pub fn query_flag(field: &str, value: &Option<String>) -> Result<bool, AppError> {
    match query_text(value).as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(AppError::invalid(field, "true or false")),
    }
}

/// For PATCH bodies: tells a field sent as `null` (`Some(None)`) from one left out (`None`).
pub fn double_option<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    serde::Deserialize::deserialize(de).map(Some)
}

/// A time typed in a form, read as UTC: `2026-09-17T16:07` (what `datetime-local` sends),
/// `2026-09-17 16:07`, with optional seconds, or RFC 3339. Empty means "not given".
pub fn parse_form_time(
    field: &str,
    value: &str,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, AppError> {
    let v = value.trim();
    if v.is_empty() {
        return Ok(None);
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(v) {
        return Ok(Some(t.to_utc()));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(v, fmt) {
            return Ok(Some(t.and_utc()));
        }
    }
    Err(AppError::invalid(
        field,
        format!("{v:?} is not a time; write it as 2026-09-17 16:07 (UTC)"),
    ))
}

/// The value a time input shows for `t`: `2026-09-17 16:07`, UTC, as people type it.
pub fn form_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_accepts_our_etags_only() {
        assert_eq!(parse_if_match("\"v3\""), Some(3));
        assert_eq!(parse_if_match("W/\"v12\""), Some(12));
        assert_eq!(parse_if_match("3"), None);
        assert_eq!(parse_if_match("\"abc\""), None);
        assert_eq!(etag(7), "\"v7\"");
    }
}
