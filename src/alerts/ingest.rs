//! The alert write path. A webhook handler parses its payload and hands it to a lane; each lane
//! is a task that takes every request waiting for it and writes them in one transaction:
//! authenticate the senders (one query), route the alerts, open groups (and their incidents),
//! store the alerts (one statement), then acknowledge and resolve. Each request is answered only
//! after that transaction commits, so a 2xx means stored. A request goes to the lane of its first
//! alert's dedup key: the trigger and the resolve of one alert are written in the order they
//! came, while a storm of distinct alerts in one group spreads over every lane (lanes only
//! share-lock the group, so they do not wait on each other). Several replicas stay correct
//! through the database's unique indexes and row locks, not through anything in this process.
//!
//! A full lane, or a batch that cannot commit in time, answers 503 with `Retry-After`: safe to
//! retry, because every retry is deduplicated by its keys.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::domain::{AlertEvent, ChangeEvent, OpsgenieCall};
use crate::alert_store::db;
use crate::auth::domain::{constant_time_eq, token_hash};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::integrations::db::{Credentials, credentials};
use crate::integrations::domain::{Format, verify_signature};

/// Lanes per replica unless configured (`QUELL_ALERT_LANES`), and so the most ingest
/// transactions one replica runs at once. Two, because a lane's batch grows with the requests
/// waiting for it: on two cores shared with PostgreSQL, two lanes stored a one-group storm at
/// 5,200 alerts/s (p99 19-27 ms) and opened 2,200 incidents/s where four managed 4,100 and
/// 1,470 (p99 30 and 83 ms) — more transactions at once only queued for the same cores.
pub const LANES: usize = 2;
/// Requests that may wait per lane before new ones are turned away with 503.
const LANE_DEPTH: usize = 1024;
/// At most this many alerts in one transaction.
const MAX_BATCH_ALERTS: usize = 2000;
/// A sender waits at most this long for its answer (Alertmanager's default timeout is 10 s).
const ANSWER_WITHIN: Duration = Duration::from_secs(8);
/// What 503 answers ask senders to wait, in seconds.
pub const RETRY_AFTER_SECS: i64 = 2;

/// How a request proves which integration it comes from.
#[derive(Debug, Clone)]
pub enum Credential {
    /// `Authorization: Bearer <key>` on `/hooks/{format}/{id}`.
    Bearer { integration_id: Uuid, key: String },
    /// PagerDuty's `routing_key` in the body.
    RoutingKey { key: String },
    /// Standard Webhooks headers on `/hooks/generic/{id}`.
    Signed {
        integration_id: Uuid,
        msg_id: String,
        timestamp: String,
        signature: String,
        body: String,
    },
}

#[derive(Debug)]
pub enum Payload {
    Alerts(Vec<AlertEvent>),
    Change(ChangeEvent),
    /// One call of Opsgenie's Alert API: its event, and the request id it is answered with,
    /// whose outcome is recorded in the same transaction for its client to read back.
    Opsgenie {
        event: AlertEvent,
        request_id: Uuid,
        call: OpsgenieCall,
    },
}

/// One request, parsed.
#[derive(Debug)]
pub struct Submission {
    /// The format of the endpoint it was posted to; the integration must speak it.
    pub format: Format,
    pub credential: Credential,
    pub payload: Payload,
}

impl Submission {
    fn weight(&self) -> usize {
        match &self.payload {
            Payload::Alerts(a) => a.len().max(1),
            Payload::Change(_) | Payload::Opsgenie { .. } => 1,
        }
    }

    fn lane(&self, lanes: usize) -> usize {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match &self.credential {
            Credential::Bearer { integration_id, .. }
            | Credential::Signed { integration_id, .. } => integration_id.hash(&mut h),
            Credential::RoutingKey { key } => key.hash(&mut h),
        }
        let first = match &self.payload {
            Payload::Alerts(a) => a.first(),
            Payload::Opsgenie { event, .. } => Some(event),
            Payload::Change(_) => None,
        };
        if let Some(first) = first {
            first.dedup_key.hash(&mut h);
        }
        (h.finish() % lanes as u64) as usize
    }
}

/// Why a request was not stored.
#[derive(Debug, Clone)]
pub enum Refused {
    /// A wrong key, a bad signature, a disabled integration: the sentence says which.
    Unauthorized(String),
    /// PostgreSQL refused the data itself (a value it cannot hold, a broken constraint): the
    /// same payload can never be stored, so senders must not retry it (a 400, not a 503).
    Unstorable(String),
    /// Overloaded or failing: safe to retry after a while.
    Unavailable,
}

/// What a failed write means for the sender: data PostgreSQL refuses (SQLSTATE classes 22, data
/// exception, 23, integrity constraint, and 54, a value past a limit such as an index row's
/// size) is permanent; anything else — a lost connection, a
/// full pool, a restart — is worth retrying.
fn refusal_for(err: &AppError) -> Refused {
    if let AppError::Database(sqlx::Error::Database(db)) = err
        && let Some(code) = db.code()
        && (code.starts_with("22") || code.starts_with("23") || code.starts_with("54"))
    {
        return Refused::Unstorable(format!(
            "the payload holds a value the database cannot store (SQLSTATE {code}); it will \
             not be stored however often it is sent"
        ));
    }
    Refused::Unavailable
}

type Answer = Result<(), Refused>;

struct Job {
    submission: Submission,
    answer: oneshot::Sender<Answer>,
}

/// How a webhook's submission ended, as `/metrics` counts it.
const OUTCOMES: [&str; 4] = ["accepted", "unauthorized", "unstorable", "unavailable"];

/// The lanes of this replica.
#[derive(Clone)]
pub struct Ingestor {
    lanes: Vec<mpsc::Sender<Job>>,
    answer_within: Duration,
}

impl Ingestor {
    /// Starts the lanes on `pool` (best a pool of its own, so a storm cannot take the
    /// connections pages need).
    pub fn start(pool: PgPool) -> Self {
        Self::with_lanes(pool, LANES)
    }

    /// Starts `lanes` lanes (one connection each).
    pub fn with_lanes(pool: PgPool, lanes: usize) -> Self {
        Self::with_limits(pool, lanes, LANE_DEPTH, ANSWER_WITHIN)
    }

    /// Lanes with other limits than the defaults (tests use small ones to provoke overload).
    pub fn with_limits(pool: PgPool, lanes: usize, depth: usize, answer_within: Duration) -> Self {
        // Every format's outcomes counted from 0, so a first refusal is an increase.
        let m = crate::metrics::get();
        for format in crate::integrations::domain::Format::ALL {
            for outcome in OUTCOMES {
                let labels = crate::metrics::IntakeLabels {
                    format: format.as_str().to_owned(),
                    outcome: outcome.to_owned(),
                };
                let _ = m.webhooks.get_or_create(&labels);
                let _ = m.alerts.get_or_create(&labels);
            }
        }
        let writer = std::sync::Arc::new(Writer {
            pool,
            rules: Default::default(),
            silences: Default::default(),
            windows: Default::default(),
        });
        let lanes = (0..lanes.max(1))
            .map(|_| {
                let (tx, rx) = mpsc::channel(depth.max(1));
                tokio::spawn(run_lane(writer.clone(), rx));
                tx
            })
            .collect();
        Self {
            lanes,
            answer_within,
        }
    }

    /// Stores a request's alerts, answering once they are committed; counted for `/metrics`
    /// by format and outcome.
    pub async fn submit(&self, submission: Submission) -> Answer {
        let start = std::time::Instant::now();
        let (format, weight) = (submission.format.as_str(), submission.weight() as u64);
        let answer = self.submit_uncounted(submission).await;
        let outcome = match &answer {
            Ok(()) => "accepted",
            Err(Refused::Unauthorized(_)) => "unauthorized",
            Err(Refused::Unstorable(_)) => "unstorable",
            Err(Refused::Unavailable) => "unavailable",
        };
        let m = crate::metrics::get();
        let labels = crate::metrics::IntakeLabels {
            format: format.to_owned(),
            outcome: outcome.to_owned(),
        };
        m.webhooks.get_or_create(&labels).inc();
        m.alerts.get_or_create(&labels).inc_by(weight);
        m.webhook_answer
            .get_or_create(&labels)
            .observe(crate::metrics::since(start));
        answer
    }

    async fn submit_uncounted(&self, submission: Submission) -> Answer {
        let (answer, answered) = oneshot::channel();
        let lane = &self.lanes[submission.lane(self.lanes.len())];
        lane.try_send(Job { submission, answer })
            .map_err(|_| Refused::Unavailable)?;
        match tokio::time::timeout(self.answer_within, answered).await {
            Ok(Ok(answer)) => answer,
            _ => Err(Refused::Unavailable),
        }
    }
}

/// What every lane of a replica writes with: its pool, and the routing rules, silences and
/// maintenance windows as last compiled.
struct Writer {
    pool: PgPool,
    rules: std::sync::Mutex<crate::routing::db::Compiled>,
    silences: crate::silences::actions::Compiled,
    windows: crate::maintenance::actions::Compiled,
}

/// How often a lane's connection plans its statements again. Each statement is planned once
/// per connection, and a lane keeps its connection: a plan made while a table was small (a new
/// installation's incidents, groups and timers; the foreign-key checks on them) read it whole,
/// and went on doing so while a burst of new incidents grew it a thousandfold. Planned again
/// every few seconds, from the tables as they are then, a plan is never long out of date; the
/// few statements of a batch cost well under a millisecond to plan.
const PLAN_AGAIN_EVERY: Duration = Duration::from_secs(5);

/// Drops the connection's plans: each statement is planned again when next run.
async fn plan_again(conn: &mut sqlx::PgConnection) -> AppResult<()> {
    sqlx::query!("discard plans").execute(conn).await?;
    Ok(())
}

/// A lane's own connection, kept from batch to batch (returning it after each batch cost a
/// round trip: the pool checks a connection given back), and when its plans were made.
#[derive(Default)]
struct Lane {
    conn: Option<sqlx::pool::PoolConnection<sqlx::Postgres>>,
    planned_at: Option<std::time::Instant>,
}

async fn run_lane(writer: std::sync::Arc<Writer>, mut rx: mpsc::Receiver<Job>) {
    let mut lane = Lane::default();
    while let Some(first) = rx.recv().await {
        let mut weight = first.submission.weight();
        let mut jobs = vec![first];
        while weight < MAX_BATCH_ALERTS {
            match rx.try_recv() {
                Ok(job) => {
                    weight += job.submission.weight();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        // A sender that stopped waiting was answered 503 and will retry.
        jobs.retain(|j| !j.answer.is_closed());
        if jobs.is_empty() {
            continue;
        }
        let start = std::time::Instant::now();
        let answers = writer.write_with_retries(&mut lane, &jobs).await;
        let m = crate::metrics::get();
        m.lane_write.observe(crate::metrics::since(start));
        let alerts: usize = jobs.iter().map(|j| j.submission.weight()).sum();
        m.lane_batch_alerts.observe(alerts as f64);
        for (job, answer) in jobs.into_iter().zip(answers) {
            let _ = job.answer.send(answer);
        }
    }
}

fn is_transient(err: &AppError) -> bool {
    match err {
        AppError::Database(sqlx::Error::Database(db)) => {
            matches!(db.code().as_deref(), Some("40001" | "40P01" | "55P03"))
        }
        AppError::Database(
            sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed,
        ) => true,
        _ => false,
    }
}

impl Writer {
    /// Writes a batch; a deadlock or serialisation failure is retried. A batch that still fails is
    /// split, so one request that cannot be stored fails alone, and is told whether retrying can help.
    async fn write_with_retries(&self, lane: &mut Lane, jobs: &[Job]) -> Vec<Answer> {
        let subs: Vec<&Submission> = jobs.iter().map(|j| &j.submission).collect();
        match self.write_retrying(lane, &subs).await {
            Ok(answers) => answers,
            Err(_) if subs.len() > 1 => {
                let mut answers = Vec::with_capacity(subs.len());
                for s in subs {
                    answers.push(match self.write_retrying(lane, &[s]).await {
                        Ok(mut a) => a.pop().unwrap_or(Err(Refused::Unavailable)),
                        Err(e) => Err(refusal_for(&e)),
                    });
                }
                answers
            }
            Err(e) => vec![Err(refusal_for(&e))],
        }
    }

    async fn write_retrying(
        &self,
        lane: &mut Lane,
        subs: &[&Submission],
    ) -> AppResult<Vec<Answer>> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.write(lane, subs).await {
                Err(e) if attempt < 3 && is_transient(&e) => {
                    tokio::time::sleep(Duration::from_millis(10 * attempt)).await;
                }
                Err(e) => {
                    if let Refused::Unstorable(_) = refusal_for(&e) {
                        tracing::warn!(error = %e, requests = subs.len(), "alerts refused by the database");
                    } else {
                        tracing::error!(error = %e, requests = subs.len(), "could not store alerts");
                    }
                    return Err(e);
                }
                ok => return ok,
            }
        }
    }
}

/// Which integration a request comes from, or why it is refused.
fn authenticate<'c>(
    format: Format,
    credential: &Credential,
    known: &'c [Credentials],
    now: DateTime<Utc>,
) -> Result<&'c Credentials, String> {
    const WRONG: &str = "the integration key is wrong";
    let cred = match credential {
        Credential::Bearer {
            integration_id,
            key,
        } => {
            let c = known
                .iter()
                .find(|c| c.id == *integration_id)
                .ok_or(WRONG)?;
            if !constant_time_eq(&token_hash(key), &c.key_hash) {
                return Err(WRONG.into());
            }
            c
        }
        Credential::RoutingKey { key } => {
            let hash = token_hash(key);
            known
                .iter()
                .find(|c| constant_time_eq(&hash, &c.key_hash))
                .ok_or("the key matches no integration")?
        }
        Credential::Signed {
            integration_id,
            msg_id,
            timestamp,
            signature,
            body,
        } => {
            let c = known
                .iter()
                .find(|c| c.id == *integration_id)
                .ok_or("unknown integration")?;
            let secret = c.signing_secret.as_deref().ok_or(
                "this integration does not take signatures; send its key as a bearer token",
            )?;
            verify_signature(secret, msg_id, timestamp, signature, body, now.timestamp())?;
            c
        }
    };
    if cred.format != format {
        return Err(format!(
            "this integration speaks {}; post to {}",
            cred.format.as_str(),
            cred.format.endpoint(&cred.id.to_string())
        ));
    }
    if !cred.enabled {
        return Err("this integration is disabled".into());
    }
    Ok(cred)
}

/// The integrations these credentials may name, read in one query.
async fn known_senders<'a>(
    e: impl sqlx::PgExecutor<'_>,
    credentials_sent: impl Iterator<Item = &'a Credential>,
) -> AppResult<Vec<Credentials>> {
    let mut ids = Vec::new();
    let mut hashes = Vec::new();
    for c in credentials_sent {
        match c {
            Credential::Bearer { integration_id, .. }
            | Credential::Signed { integration_id, .. } => ids.push(*integration_id),
            Credential::RoutingKey { key } => hashes.push(token_hash(key)),
        }
    }
    credentials(e, &ids, &hashes).await
}

/// Checks a sender's credential outside the write path: a webhook whose payload cannot be read
/// calls this before saying why, so only a sender with the right key learns what was wrong.
pub async fn check_sender(
    pool: &PgPool,
    format: Format,
    credential: &Credential,
) -> AppResult<Result<(), Refused>> {
    Ok(sender_of(pool, format, credential).await?.map(|_| ()))
}

/// The integration a credential names, outside the write path (a call that reads alerts, or
/// acts on one without the lanes), or why it is refused.
pub async fn sender_of(
    pool: &PgPool,
    format: Format,
    credential: &Credential,
) -> AppResult<Result<Credentials, Refused>> {
    let known = known_senders(pool, std::iter::once(credential)).await?;
    let now = clock::now(pool).await?;
    Ok(authenticate(format, credential, &known, now)
        .cloned()
        .map_err(Refused::Unauthorized))
}

/// A batch of at least this many alerts leaves its connection's buffers as large as its
/// statements were (megabytes for a few large posts): they are given back after it.
const SHRINK_AFTER_ALERTS: usize = 500;

impl Writer {
    async fn write(&self, lane: &mut Lane, subs: &[&Submission]) -> AppResult<Vec<Answer>> {
        let written = self.write_in(lane, subs).await;
        // A connection that failed other than by the database refusing a statement (lost,
        // timed out) is given back, and the next batch takes another.
        if let Err(e) = &written
            && !matches!(e, AppError::Database(sqlx::Error::Database(_)))
        {
            lane.conn = None;
        }
        written
    }

    async fn write_in(&self, lane: &mut Lane, subs: &[&Submission]) -> AppResult<Vec<Answer>> {
        let conn = match &mut lane.conn {
            Some(conn) => conn,
            None => {
                lane.planned_at = Some(std::time::Instant::now());
                lane.conn.insert(self.pool.acquire().await?)
            }
        };
        if lane
            .planned_at
            .is_none_or(|at| at.elapsed() >= PLAN_AGAIN_EVERY)
        {
            plan_again(conn).await?;
            lane.planned_at = Some(std::time::Instant::now());
        }
        let answers = self.write_on(conn, subs).await?;
        if subs.iter().map(|s| s.weight()).sum::<usize>() >= SHRINK_AFTER_ALERTS {
            sqlx::Connection::shrink_buffers(&mut **conn);
        }
        Ok(answers)
    }

    async fn write_on(
        &self,
        conn: &mut sqlx::PgConnection,
        subs: &[&Submission],
    ) -> AppResult<Vec<Answer>> {
        let mut tx = sqlx::Connection::begin(conn).await?;
        let now = clock::now(&mut *tx).await?;
        let known = known_senders(&mut *tx, subs.iter().map(|s| &s.credential)).await?;
        let verdicts: Vec<Result<&Credentials, String>> = subs
            .iter()
            .map(|s| authenticate(s.format, &s.credential, &known, now))
            .collect();

        let mut events: Vec<(&Credentials, &AlertEvent)> = Vec::new();
        let mut requests: Vec<(db::NewRequest<'_>, OpsgenieCall)> = Vec::new();
        for (s, v) in subs.iter().zip(&verdicts) {
            let Ok(cred) = v else { continue };
            // A signed message seen before (a sender's retry, or a replay within the signature's
            // window) was stored the first time: answer it again, store nothing.
            if let Credential::Signed { msg_id, .. } = &s.credential
                && !db::first_delivery(&mut *tx, cred.id, msg_id).await?
            {
                continue;
            }
            match &s.payload {
                Payload::Alerts(alerts) => events.extend(alerts.iter().map(|a| (*cred, a))),
                Payload::Opsgenie {
                    event,
                    request_id,
                    call,
                } => {
                    events.push((*cred, event));
                    let request = db::NewRequest {
                        request_id: *request_id,
                        integration_id: cred.id,
                        action: call.as_str(),
                        alias: &event.dedup_key,
                    };
                    requests.push((request, *call));
                }
                Payload::Change(c) => {
                    crate::changes::actions::record_sent(
                        &mut tx,
                        &crate::changes::actions::SentChange {
                            integration_id: cred.id,
                            summary: &c.summary,
                            source: &c.source,
                            occurred_at: c.occurred_at.filter(|t| *t <= now).unwrap_or(now),
                            details: &c.details,
                            links: &c.links,
                            raw: &c.raw,
                        },
                    )
                    .await?;
                }
            }
        }
        if !events.is_empty() {
            let records = crate::routing::db::list(&mut *tx).await?;
            let rules = self
                .rules
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .of(records);
            let silences = self.silences.current(&mut tx).await?;
            let windows = self.windows.active(&mut tx, now).await?;
            let judges = super::effects::Judges {
                rules: &rules,
                silences: &silences,
                windows: &windows,
            };
            for run in super::effects::runs(&events) {
                super::effects::apply(&mut tx, &run, judges, now).await?;
            }
        }
        if !requests.is_empty() {
            record_outcomes(&mut tx, requests).await?;
        }
        tx.commit().await?;
        Ok(verdicts
            .into_iter()
            .map(|v| v.map(|_| ()).map_err(Refused::Unauthorized))
            .collect())
    }
}

/// Records what became of Opsgenie's requests, from their alerts as the batch left them.
async fn record_outcomes(
    conn: &mut sqlx::PgConnection,
    requests: Vec<(db::NewRequest<'_>, OpsgenieCall)>,
) -> AppResult<()> {
    let (requests, calls): (Vec<_>, Vec<_>) = requests.into_iter().unzip();
    let found = db::alerts_by_alias(&mut *conn, &requests).await?;
    let done: Vec<_> = requests
        .into_iter()
        .zip(calls)
        .zip(found)
        .map(|((request, call), alert)| {
            let alert = alert.filter(|(_, status)| call.names(status));
            let (success, status) = call.outcome(alert.as_ref().map(|(_, s)| s.as_str()));
            (request, alert.map(|(id, _)| id), success, status)
        })
        .collect();
    db::record_requests(conn, &done).await
}
