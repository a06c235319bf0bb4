//! How much memory request bodies may take at once. A body is read whole before it is parsed,
//! and parsing multiplies it (a 1 MiB alert post becomes several MiB of JSON values, alerts and
//! rows before it is stored), so two hundred clients each sending a large body at once would
//! take gigabytes. Small bodies (up to [`SMALL`]) pass freely; a larger one first takes room
//! from a budget in proportion to the size it declares, waits its turn (first come, first
//! served) for at most [`Budget::wait`] and is otherwise answered 503 with `Retry-After`, and
//! keeps its room until its answer is ready. A body that holds room must arrive within
//! [`Budget::read_within`], so a client that declares a large body and never sends it cannot
//! hold the budget for long. The budget is this process's own: it bounds this replica's
//! memory, which is all it is for.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use super::BODY_LIMIT;
use crate::error::AppError;
use crate::http::page::PageError;

/// Bodies up to this size take no room: forms, API calls and ordinary alert posts.
pub const SMALL: usize = 64 * 1024;

/// Room is counted in KiB.
const UNIT: usize = 1024;

/// What a client is asked to wait before sending again.
const RETRY_AFTER_SECS: i64 = 2;

/// The room large bodies share in this process.
#[derive(Clone)]
pub struct Budget {
    room: Arc<Semaphore>,
    units: usize,
    /// How long a large body waits for room before it is turned away.
    pub wait: Duration,
    /// How long a body that holds room has to arrive.
    pub read_within: Duration,
}

impl Budget {
    /// Room for `bytes` of large bodies at once (at least one body of the largest size).
    pub fn new(bytes: usize, wait: Duration, read_within: Duration) -> Self {
        let units = bytes.div_ceil(UNIT).max(1);
        Self {
            room: Arc::new(Semaphore::new(units)),
            units,
            wait,
            read_within,
        }
    }

    /// The room a request's body takes, by what its headers declare: nothing for a small or
    /// absent body, its length for a large one (at most the whole budget, so a body larger
    /// than the budget still gets in alone), and the usual limit for one whose length is not
    /// declared (chunked).
    fn units_for(&self, req: &Request) -> usize {
        let headers = req.headers();
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let bytes = match declared {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None if headers.contains_key(header::TRANSFER_ENCODING) => BODY_LIMIT,
            None => 0,
        };
        if bytes <= SMALL {
            return 0;
        }
        bytes.div_ceil(UNIT).min(self.units)
    }
}

/// The middleware: room for the body first, then the request.
pub async fn admit(State(budget): State<Budget>, req: Request, next: Next) -> Response {
    let units = budget.units_for(&req);
    if units == 0 {
        return next.run(req).await;
    }
    let room = budget.room.clone();
    let wanted = u32::try_from(units).unwrap_or(u32::MAX);
    let permit = match tokio::time::timeout(budget.wait, room.acquire_many_owned(wanted)).await {
        Ok(Ok(permit)) => permit,
        // Timed out (or, never, closed): the body was not read, so nothing was changed.
        _ => {
            let err = AppError::Overloaded {
                doing: "reading other large request bodies",
                retry_after: RETRY_AFTER_SECS,
            };
            return if super::guard::answers_json(req.uri().path()) {
                err.into_response()
            } else {
                PageError(err).into_response()
            };
        }
    };
    let req = req.map(|body| {
        Body::new(Deadline {
            inner: body,
            until: Box::pin(tokio::time::sleep(budget.read_within)),
            read_within: budget.read_within,
        })
    });
    let response = next.run(req).await;
    drop(permit);
    response
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
    fn only_large_bodies_take_room_and_never_more_than_all_of_it() {
        let budget = Budget::new(4 * 1024 * 1024, Duration::ZERO, Duration::ZERO);
        assert_eq!(budget.units_for(&request(&[])), 0, "no body");
        assert_eq!(
            budget.units_for(&request(&[("content-length", "65536")])),
            0
        );
        assert_eq!(
            budget.units_for(&request(&[("content-length", "65537")])),
            65
        );
        assert_eq!(
            budget.units_for(&request(&[("content-length", "1048576")])),
            1024
        );
        assert_eq!(
            budget.units_for(&request(&[("content-length", "26000000")])),
            4096,
            "an upload larger than the budget takes all of it, and so still gets in alone"
        );
        assert_eq!(
            budget.units_for(&request(&[("transfer-encoding", "chunked")])),
            1024,
            "an undeclared length counts as the usual limit"
        );
    }
}
