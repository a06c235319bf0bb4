//! Checks every request passes before it is routed: a path or query string holding text that
//! PostgreSQL can never store (a NUL, written `%00`) is refused here, once, for every route —
//! 400 for a path, 422 naming the query parameter — instead of failing deep inside a query.
//! Bodies are checked by the extractors that read them (`ApiJson`, `PageForm`) and alert
//! payloads are cleaned by the webhooks, which cannot ask an alert rule to retype.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::extract::unstorable_pair;
use crate::domain::UNSTORABLE_MESSAGE;
use crate::error::AppError;
use crate::http::page::PageError;

/// Paths answered in JSON: the API and the webhooks. Everything else is a page.
pub(super) fn answers_json(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/hooks/") || path.starts_with("/v2/")
}

/// Why a request's URI can never be served, if it cannot.
fn unstorable_uri(uri: &axum::http::Uri) -> Option<AppError> {
    // Percent-decoding makes a NUL only out of `%00` (a raw NUL never gets past the HTTP parser).
    if uri.path().contains("%00") {
        return Some(AppError::BadRequest {
            code: "invalid_path",
            message: "The path contains a NUL character (%00); no page or resource has one.".into(),
        });
    }
    let query = uri.query()?;
    let field = unstorable_pair(form_urlencoded::parse(query.as_bytes()))?;
    Some(AppError::invalid(&field, UNSTORABLE_MESSAGE))
}

pub async fn refuse_unstorable_uri(req: Request, next: Next) -> Response {
    match unstorable_uri(req.uri()) {
        None => next.run(req).await,
        Some(err) if answers_json(req.uri().path()) => err.into_response(),
        Some(err) => PageError(err).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(uri: &str) -> Option<(u16, String)> {
        let err = unstorable_uri(&uri.parse().unwrap())?;
        Some((err.status().as_u16(), err.to_string()))
    }

    #[test]
    fn a_nul_in_a_path_or_query_is_refused_naming_the_parameter() {
        assert_eq!(refused("/services/payments"), None);
        assert_eq!(
            refused("/search?q=a%2500b"),
            None,
            "an encoded percent sign is fine"
        );
        assert_eq!(refused("/services/a%00b").unwrap().0, 400);
        let (status, message) = refused("/api/v1/incidents?service=x&q=a%00b").unwrap();
        assert_eq!(status, 422);
        assert!(message.starts_with("q: contains a NUL"), "{message}");
        assert!(
            refused("/audit?act%00or=x")
                .unwrap()
                .1
                .starts_with("actor:")
        );
    }
}
