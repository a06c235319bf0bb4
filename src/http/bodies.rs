//! Room for request bodies before they are read (`crate::room`): a body up to [`SMALL`] passes
//! freely; a larger one first takes room in proportion to the size it declares, waits its turn
//! for at most the room's `wait` and is otherwise answered 503 with `Retry-After`, and keeps its
//! room until its answer is ready. A body that holds room must arrive within
//! [`Budget::read_within`], so a client that declares a large body and never sends it cannot
//! hold the room for long. Every request carries its [`Share`] of the room, which a handler
//! whose work takes more than its body — unpacking and parsing an export — grows
//! ([`Work`]), small body or not.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::UPLOAD_LIMIT;
use crate::error::{AppError, AppResult};
use crate::http::page::PageError;
use crate::room::{Room, Share};

/// Bodies up to this size take no room: forms, API calls and ordinary alert posts.
pub const SMALL: usize = 64 * 1024;

/// What a client is asked to wait before sending again.
const RETRY_AFTER_SECS: i64 = 2;

/// Tells the requests that upload an export (the router knows which).
pub type IsUpload = fn(&Request) -> bool;

/// Uploads' own room. An upload takes, as it arrives, room for all the work it may do — its
/// bytes, and beside them the larger of its bytes again (a file read into records) and
/// `extra` (what unpacking a zip may hold) — so it never holds part and waits for more.
#[derive(Clone)]
pub struct Uploads {
    room: Room,
    is_upload: IsUpload,
    extra: usize,
}

/// The room bodies share, and how long one that holds room has to arrive. Uploads (which the
/// router tells apart) have a room of their own, so a responder's export being unpacked never
/// keeps a large alert post waiting.
#[derive(Clone)]
pub struct Budget {
    pub room: Room,
    /// The uploads' room, and which requests are uploads.
    pub uploads: Option<Uploads>,
    /// How long a body that holds room has to arrive.
    pub read_within: Duration,
}

impl Budget {
    /// Room for `bytes` of large bodies at once (at least one body of the largest size).
    pub fn new(bytes: usize, wait: Duration, read_within: Duration) -> Self {
        Self {
            room: Room::new(bytes, wait),
            uploads: None,
            read_within,
        }
    }

    /// Uploads, as `is_upload` tells them, take room from a room of `bytes` of their own, for
    /// their bytes and the work on them (see [`Uploads`]).
    pub fn with_uploads(mut self, bytes: usize, is_upload: IsUpload, extra: usize) -> Self {
        self.uploads = Some(Uploads {
            room: Room::new(bytes, self.room.wait),
            is_upload,
            extra,
        });
        self
    }

    /// The room a request takes from, and the bytes it takes room for.
    fn room_for(&self, req: &Request) -> (&Room, usize) {
        match &self.uploads {
            Some(u) if (u.is_upload)(req) => {
                let body = Self::declared(req);
                (&u.room, body + body.max(u.extra))
            }
            _ => {
                let body = Self::declared(req);
                (&self.room, if body <= SMALL { 0 } else { body })
            }
        }
    }

    /// The size a request's body declares: its length, nothing when there is none, and the
    /// largest any route takes (an upload's) when its length is not known (chunked).
    fn declared(req: &Request) -> usize {
        let headers = req.headers();
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // Without a length header, a body that knows its size (one built in this process, as
        // in tests) says so; one arriving chunked may be as large as any route takes.
        match declared {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None if headers.contains_key(header::TRANSFER_ENCODING) => UPLOAD_LIMIT,
            None => req
                .body()
                .size_hint()
                .exact()
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }
}

fn overloaded(path: &str, doing: &'static str) -> Response {
    let err = AppError::Overloaded {
        doing,
        retry_after: RETRY_AFTER_SECS,
    };
    if super::guard::answers_json(path) {
        err.into_response()
    } else {
        PageError(err).into_response()
    }
}

/// The middleware: room for the body first, then the request.
pub async fn admit(State(budget): State<Budget>, mut req: Request, next: Next) -> Response {
    let (room, bytes) = budget.room_for(&req);
    let share = room.share();
    req.extensions_mut().insert(share.clone());
    if bytes == 0 {
        return next.run(req).await;
    }
    if share.grow_to(bytes).await.is_err() {
        // The body was not read, so nothing was changed.
        return overloaded(req.uri().path(), "reading other large request bodies");
    }
    let req = req.map(|body| {
        Body::new(Deadline {
            inner: body,
            until: Box::pin(tokio::time::sleep(budget.read_within)),
            read_within: budget.read_within,
        })
    });
    let response = next.run(req).await;
    drop(share);
    response
}

/// The request's share of the room, for a handler whose work needs more than its body.
pub struct Work(Share);

impl Work {
    /// Holds room for `bytes` of work in all, or answers 503 with `Retry-After`.
    pub async fn need(&self, bytes: usize) -> AppResult<()> {
        self.0
            .grow_to(bytes)
            .await
            .map_err(|_| AppError::Overloaded {
                doing: "unpacking and reading other uploads",
                retry_after: RETRY_AFTER_SECS,
            })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Work {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Share>()
            .cloned()
            .map(Work)
            .ok_or_else(|| AppError::Internal("the room for bodies is not in place".into()))
    }
}

/// A body that fails if it has not arrived in full by a deadline.
struct Deadline {
    inner: Body,
    until: Pin<Box<tokio::time::Sleep>>,
    read_within: Duration,
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if self.until.as_mut().poll(cx).is_ready() {
            let secs = self.read_within.as_secs_f64();
            return Poll::Ready(Some(Err(axum::Error::new(format!(
                "the body did not arrive within {secs} s"
            )))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut b = axum::http::Request::builder()
            .method("POST")
            .uri("/hooks/x");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    }

    #[test]
    fn only_large_bodies_take_room_and_uploads_take_it_for_their_work() {
        let budget = Budget::new(4 << 20, Duration::ZERO, Duration::ZERO).with_uploads(
            64 << 20,
            |r| r.uri().path() == "/up",
            10 << 20,
        );
        let bytes = |headers: &[(&str, &str)]| budget.room_for(&request(headers)).1;
        assert_eq!(bytes(&[]), 0, "no body");
        assert_eq!(bytes(&[("content-length", "65536")]), 0);
        assert_eq!(bytes(&[("content-length", "65537")]), 65537);
        assert_eq!(
            bytes(&[("transfer-encoding", "chunked")]),
            UPLOAD_LIMIT,
            "an undeclared length counts as the largest body"
        );
        let mut upload = request(&[("content-length", "1000")]);
        *upload.uri_mut() = "/up".parse().unwrap();
        assert_eq!(
            budget.room_for(&upload).1,
            1000 + (10 << 20),
            "a small upload still takes room for unpacking"
        );
        let mut upload = request(&[("content-length", "20000000")]);
        *upload.uri_mut() = "/up".parse().unwrap();
        assert_eq!(
            budget.room_for(&upload).1,
            40_000_000,
            "and a large one twice itself"
        );
        let room = Room::new(4 * 1024 * 1024, Duration::ZERO);
        assert_eq!(room.units_for(1_048_576), 1024);
        assert_eq!(
            room.units_for(26_000_000),
            4096,
            "an upload larger than the room takes all of it, and so still gets in alone"
        );
    }
}
