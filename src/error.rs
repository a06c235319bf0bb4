//! The one error type of Quell. API handlers return it as JSON
//! `{"error": {"code", "message", "details"}}`; page handlers wrap it in the web kit's
//! `http::page::PageError`, which renders the same facts as an HTML page. Only server
//! faults (5xx) are logged, and their internal text never reaches the client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use crate::domain::DomainError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("{}: {}", .0[0].field, .0[0].message)]
    Validation(Vec<FieldError>),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// It existed and is no more: a used or expired link.
    #[error("{0}")]
    Gone(String),
    /// The address exists but does not take this method; the `Allow` header lists those it
    /// does.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// The client's copy is older than the stored one (a stale `If-Match` or form version).
    #[error(
        "it changed since you loaded it (now version {current_version}); load it again and redo your change"
    )]
    Stale { current_version: i32 },
    #[error("sign in first: send Authorization: Bearer <token>")]
    Unauthenticated,
    /// A webhook's key or signature is wrong; the sentence says which.
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("too many failed sign-ins; try again in {0} s")]
    Throttled(i64),
    /// A per-person limit reached; the sentence says which and what to do.
    #[error("{0}")]
    LimitReached(String),
    #[error("this request needs an If-Match header with the ETag from your last GET")]
    PreconditionRequired,
    #[error("the Idempotency-Key was already used for a different request body")]
    IdempotencyKeyReused,
    /// The body is over the route's limit, in MiB.
    #[error("the body is larger than {limit_mib} MiB")]
    TooLarge { limit_mib: usize },
    /// Too much at once: safe to retry after `retry_after` seconds. `doing` finishes the
    /// sentence "Quell is busy …".
    #[error("Quell is busy {doing}; retry in {retry_after} s")]
    Overloaded {
        doing: &'static str,
        retry_after: i64,
    },
    /// The database is not answering (the sessions' store said so); safe to retry.
    #[error("the database is not answering")]
    Unavailable,
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("internal error: {0}")]
    Internal(String),
}

/// How long a client is asked to wait when the database is not answering.
pub const UNAVAILABLE_RETRY_SECS: i64 = 2;

/// Whether a database error means "not now" rather than "not this": PostgreSQL unreachable,
/// restarting or refusing connections, no connection free in time, or a statement stopped by
/// its timeout. Such a request changed nothing and may be retried.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exceptions; 57P01-03: shutting down, cannot connect now; 57014:
            // statement timeout; 25P03: idle-in-transaction timeout; 53300: too many connections.
            code.starts_with("08")
                || matches!(
                    &*code,
                    "57P01" | "57P02" | "57P03" | "57014" | "25P03" | "53300"
                )
        }),
        _ => false,
    }
}

/// Whether PostgreSQL broke a transaction off to end a deadlock or a serialization failure:
/// nothing it did was kept, and running it again will most likely succeed.
pub fn is_contention(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.code().is_some_and(|c| c == "40P01" || c == "40001"))
}

/// What a client is asked to wait after a change was broken off (see [`is_contention`]).
pub const CONTENTION_RETRY_SECS: i64 = 1;

impl AppError {
    /// The version a change is written at, given the one sent (`None`: `If-Match: *`) and the
    /// one read when the change was checked: they must be the same (else 412), and none sent
    /// means the one read — so what was checked is what is written.
    pub fn checked_version(sent: Option<i32>, read: i32) -> AppResult<Option<i32>> {
        match sent {
            Some(v) if v != read => Err(Self::Stale {
                current_version: read,
            }),
            _ => Ok(Some(read)),
        }
    }

    /// The one row a query narrowed to `id` found, or 404 naming what was asked for ("There is
    /// no schedule 7.").
    pub fn the_one<T>(mut rows: Vec<T>, what: &str, id: impl std::fmt::Display) -> AppResult<T> {
        rows.pop()
            .ok_or_else(|| Self::NotFound(format!("There is no {what} {id}.")))
    }

    /// 413 for a body over the usual limit (`http::BODY_LIMIT`, 1 MiB).
    pub fn too_large() -> Self {
        Self::TooLarge { limit_mib: 1 }
    }

    /// A change PostgreSQL broke off (see [`is_contention`]): safe to run again.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Database(e) if is_contention(e))
    }

    /// The database is not answering (see [`is_unavailable`]).
    pub fn unavailable(&self) -> bool {
        match self {
            Self::Unavailable => true,
            Self::Database(e) => is_unavailable(e),
            _ => false,
        }
    }

    /// Seconds to put in `Retry-After`, when the client should come back later.
    pub fn retry_after(&self) -> Option<i64> {
        match self {
            Self::Throttled(secs)
            | Self::Overloaded {
                retry_after: secs, ..
            } => Some(*secs),
            _ if self.unavailable() => Some(UNAVAILABLE_RETRY_SECS),
            _ if self.is_retryable() => Some(CONTENTION_RETRY_SECS),
            _ => None,
        }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError {
            field: field.to_owned(),
            message: message.into(),
        }])
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::Validation(_) | Self::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Unauthenticated | Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Overloaded { .. } => StatusCode::SERVICE_UNAVAILABLE,
            _ if self.unavailable() || self.is_retryable() => StatusCode::SERVICE_UNAVAILABLE,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Throttled(_) | Self::LimitReached(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::Stale { .. } => StatusCode::PRECONDITION_FAILED,
            Self::PreconditionRequired => StatusCode::PRECONDITION_REQUIRED,
            Self::Database(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest { code, .. } => code,
            Self::Validation(_) => "invalid_field",
            Self::NotFound(_) => "not_found",
            Self::Unauthenticated => "unauthenticated",
            Self::Unauthorized(_) => "unauthorized",
            Self::Overloaded { .. } => "overloaded",
            _ if self.unavailable() => "unavailable",
            _ if self.is_retryable() => "busy",
            Self::Forbidden(_) => "forbidden",
            Self::Throttled(_) => "throttled",
            Self::LimitReached(_) => "limit_reached",
            Self::TooLarge { .. } => "payload_too_large",
            Self::Conflict(_) => "conflict",
            Self::Gone(_) => "gone",
            Self::MethodNotAllowed(_) => "method_not_allowed",
            Self::Stale { .. } => "stale_version",
            Self::PreconditionRequired => "precondition_required",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::Database(_) | Self::Internal(_) => "internal",
            Self::Unavailable => "unavailable",
        }
    }

    /// The sentence shown to the client: never internal detail.
    pub fn public_message(&self) -> String {
        match self {
            _ if self.unavailable() => format!(
                "The database is not answering right now; nothing was changed. Try again in {UNAVAILABLE_RETRY_SECS} s."
            ),
            _ if self.is_retryable() => format!(
                "Another change to the same thing was being made at that moment; nothing was changed. Try again in {CONTENTION_RETRY_SECS} s."
            ),
            Self::Database(_) | Self::Internal(_) => {
                "Something went wrong on our side; nothing was changed. Try again.".into()
            }
            other => other.to_string(),
        }
    }

    fn details(&self) -> Value {
        match self {
            Self::Validation(fields) => json!({ "fields": fields }),
            Self::Stale { current_version } => json!({ "current_version": current_version }),
            _ => Value::Null,
        }
    }

    pub fn log_if_server_fault(&self) {
        // An overload answer is expected under a storm; the ingest path logs its own failures.
        if self.status().is_server_error() && !matches!(self, Self::Overloaded { .. }) {
            tracing::error!(error = %self, "request failed");
        }
    }

    /// Turns a unique-constraint violation on `constraint` into a 409 with `message`.
    pub fn on_unique(
        constraint: &str,
        message: impl Into<String>,
    ) -> impl FnOnce(sqlx::Error) -> AppError {
        let constraint = constraint.to_owned();
        let message = message.into();
        move |err| match &err {
            sqlx::Error::Database(db) if db.constraint() == Some(constraint.as_str()) => {
                AppError::Conflict(message)
            }
            _ => AppError::Database(err),
        }
    }
}

impl From<DomainError> for AppError {
    fn from(err: DomainError) -> Self {
        match err {
            DomainError::Invalid { field, message } => {
                Self::Validation(vec![FieldError { field, message }])
            }
            DomainError::Conflict(message) => Self::Conflict(message),
        }
    }
}

/// Every API error: `{"error": {"code", "message", "details"}}`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `malformed_json`, `invalid_field`, `not_found`,
    /// `method_not_allowed`, `conflict`, `stale_version`, `precondition_required`,
    /// `idempotency_key_reused`, `internal`
    pub code: &'static str,
    /// A sentence for people
    pub message: String,
    /// `{"fields": [{"field", "message"}]}` for `invalid_field`, `{"current_version"}` for
    /// `stale_version`, otherwise null
    #[schema(value_type = Option<Object>)]
    pub details: Value,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        self.log_if_server_fault();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.public_message(),
                details: self.details(),
            },
        };
        let mut res = (self.status(), axum::Json(body)).into_response();
        match self {
            Self::Unauthenticated => {
                res.headers_mut().insert(
                    axum::http::header::WWW_AUTHENTICATE,
                    axum::http::HeaderValue::from_static("Bearer realm=\"quell\""),
                );
            }
            Self::Unauthorized(_) => {
                res.headers_mut().insert(
                    axum::http::header::WWW_AUTHENTICATE,
                    axum::http::HeaderValue::from_static("Bearer realm=\"quell-hooks\""),
                );
            }
            _ => {}
        }
        if let Some(secs) = self.retry_after()
            && let Ok(v) = axum::http::HeaderValue::from_str(&secs.to_string())
        {
            res.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
        }
        res
    }
}

pub type AppResult<T> = Result<T, AppError>;
