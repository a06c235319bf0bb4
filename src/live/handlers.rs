//! The event streams: `GET /incidents/{key}/events` (one incident) and `GET /incidents/events`
//! (every incident, for the list and the dashboard). Signed-in sessions only, like the pages
//! they feed; each counts against the person's limit until it closes.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::time::Duration;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sqlx::PgPool;
use tokio::sync::broadcast::{self, error::RecvError};
use tower_sessions::Session;

use super::db;
use super::domain::{PING_SECONDS, REPLAY_LIMIT, Wire, resume_from};
use super::hub::{Hub, Message, Slot};
use crate::error::AppError;
use crate::http::access::{Auth, Viewer};
use crate::http::extract::ApiQuery;
use crate::http::page::PageResult;
use crate::incident_ref::domain::SeenBy;
use crate::state::AppState;

#[derive(Debug, Default, Deserialize)]
pub struct After {
    /// The newest timeline entry the page was rendered with; `Last-Event-ID` overrides it.
    pub after: Option<String>,
}

/// `GET /incidents/{key}/events`
pub async fn incident(
    State(state): State<AppState>,
    Extension(hub): Extension<Hub>,
    auth: Auth<Viewer>,
    session: Session,
    Path(key): Path<String>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<After>,
) -> PageResult<Response> {
    let incident = crate::incidents::db::get_named(&state.pool, &key).await?;
    stream(
        &state,
        hub,
        &auth,
        &session,
        Some(incident.id),
        &headers,
        &q,
    )
    .await
}

/// `GET /incidents/events`
pub async fn all(
    State(state): State<AppState>,
    Extension(hub): Extension<Hub>,
    auth: Auth<Viewer>,
    session: Session,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<After>,
) -> PageResult<Response> {
    stream(&state, hub, &auth, &session, None, &headers, &q).await
}

async fn stream(
    state: &AppState,
    hub: Hub,
    auth: &Auth<Viewer>,
    session: &Session,
    incident: Option<i64>,
    headers: &HeaderMap,
    q: &After,
) -> PageResult<Response> {
    let session_id = session
        .id()
        .map(|id| id.to_string())
        .ok_or(AppError::Unauthenticated)?;
    // Listen before reading what was missed, so nothing falls between the two.
    let rx = hub.subscribe().await;
    // The slot first: however the request ends from here, dropping it removes the row.
    let slot = hub.hold();
    let limit = state.config.live.streams_per_person;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let opened = db::open(
        &mut tx,
        slot.id,
        auth.user.id,
        &session_id,
        hub.replica(),
        limit,
    )
    .await?;
    tx.commit().await?;
    if !opened {
        return Err(AppError::LimitReached(format!(
            "you already have {limit} live pages open (each open incident page or list holds \
             one); close some, or reload this one later"
        ))
        .into());
    }
    let last_event_id = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    let mut live = Live {
        rx,
        pool: state.pool.clone(),
        incident,
        sees: SeenBy::of(&auth.user),
        seen: HashMap::new(),
        last: 0,
        replayed: HashSet::new(),
        queue: VecDeque::new(),
        done: false,
        slot,
        ping: tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(PING_SECONDS),
            Duration::from_secs(PING_SECONDS),
        ),
    };
    match resume_from(last_event_id, q.after.as_deref()) {
        Some(after) => {
            live.last = after;
            live.replay().await;
        }
        None => live.last = crate::timeline::db::newest_id(&state.pool, incident).await?,
    }
    let events = futures_util::stream::unfold(live, |mut live| async move {
        let wire = live.next().await?;
        Some((Ok::<_, Infallible>(sse_event(&wire)), live))
    });
    let mut res = Sse::new(events).into_response();
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Proxies that buffer (nginx) would hold the events back.
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(res)
}

fn sse_event(w: &Wire) -> SseEvent {
    let e = SseEvent::default().event(w.name()).data(w.data());
    match w.id() {
        Some(id) => e.id(id.to_string()),
        None => e,
    }
}

/// One open stream.
struct Live {
    rx: broadcast::Receiver<Message>,
    pool: PgPool,
    /// The incident watched; `None` watches all.
    incident: Option<i64>,
    /// Who watches, and whether they may see each incident met so far (asked again when its
    /// access changes)
    sees: SeenBy,
    seen: HashMap<i64, bool>,
    /// The newest entry sent (or the page's), which a replay starts after.
    last: i64,
    /// Entries the last replay sent, not to be sent again when the hub brings them too.
    replayed: HashSet<i64>,
    queue: VecDeque<Wire>,
    done: bool,
    /// Its place in the hub; dropped with the stream, it removes the row.
    slot: Slot,
    ping: tokio::time::Interval,
}

impl Live {
    fn watches(&self, incident_id: i64) -> bool {
        self.incident.is_none_or(|i| i == incident_id)
    }

    /// Whether the person may see the incident now: an admin always; anyone else, as the
    /// database last said for it — asked at the first message of it, and again after an entry
    /// that changed its access. An incident they no longer see ends a stream watching it.
    async fn may_see(&mut self, incident_id: i64, access_changed: bool) -> bool {
        if self.sees == SeenBy::ALL {
            return true;
        }
        if access_changed {
            self.seen.remove(&incident_id);
        }
        if let Some(seen) = self.seen.get(&incident_id) {
            return *seen;
        }
        let seen = match crate::incident_ref::db::visible(&self.pool, incident_id, self.sees).await
        {
            Ok(seen) => seen,
            Err(e) => {
                tracing::warn!(error = %e, "could not tell whether a stream may send an entry");
                false
            }
        };
        self.seen.insert(incident_id, seen);
        if !seen && self.incident == Some(incident_id) {
            self.queue.push_back(Wire::Ended);
            self.done = true;
        }
        seen
    }

    /// Queues what the timeline holds after `last`; a stream too far behind is told to reload,
    /// and one the database cannot serve now ends (the browser reconnects and replays).
    async fn replay(&mut self) {
        match db::entries_after(
            &self.pool,
            self.incident,
            self.sees,
            self.last,
            REPLAY_LIMIT + 1,
        )
        .await
        {
            Ok(entries) if entries.len() as i64 > REPLAY_LIMIT => {
                self.queue.push_back(Wire::Reload);
                self.done = true;
            }
            Ok(entries) => {
                self.replayed = entries.iter().map(|e| e.id).collect();
                for e in entries {
                    self.last = self.last.max(e.id);
                    self.queue.push_back(Wire::Entry(e));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not replay a live stream");
                self.done = true;
            }
        }
    }

    async fn next(&mut self) -> Option<Wire> {
        loop {
            if let Some(w) = self.queue.pop_front() {
                return Some(w);
            }
            if self.done {
                return None;
            }
            let received = tokio::select! {
                r = self.rx.recv() => r,
                _ = self.ping.tick() => return Some(Wire::Ping),
            };
            match received {
                Ok(Message::Entry(e)) => {
                    let access = e.kind == crate::timeline::domain::Kind::Access.as_str();
                    if self.watches(e.incident_id)
                        && !self.replayed.contains(&e.id)
                        && (!e.restricted && !access || self.may_see(e.incident_id, access).await)
                    {
                        self.last = self.last.max(e.id);
                        self.queue.push_back(Wire::Entry((*e).clone()));
                    }
                }
                Ok(Message::Changed { incident_id }) => {
                    if self.watches(incident_id) && self.may_see(incident_id, false).await {
                        self.queue.push_back(Wire::Changed { incident_id });
                    }
                }
                Ok(Message::Ended(ids)) => {
                    if ids.contains(&self.slot.id) {
                        self.queue.push_back(Wire::Ended);
                        self.done = true;
                    }
                }
                Ok(Message::Resync) | Err(RecvError::Lagged(_)) => {
                    // What was missed may have changed who sees what: ask again.
                    self.seen.clear();
                    match db::is_open(&self.pool, self.slot.id).await {
                        Ok(true) => {
                            self.replay().await;
                            // What changed without an entry (alerts) is not in the timeline:
                            // the page reads itself again to be sure.
                            let incident_id = self.incident.unwrap_or(0);
                            self.queue.push_back(Wire::Changed { incident_id });
                        }
                        Ok(false) => {
                            self.queue.push_back(Wire::Ended);
                            self.done = true;
                        }
                        Err(_) => self.done = true,
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
