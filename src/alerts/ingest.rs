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

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::{PgConnection, PgPool};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::db::{self, NewAlerts};
use super::domain::{Action, AlertEvent, ChangeEvent};
use crate::audit::Actor;
use crate::auth::domain::{constant_time_eq, token_hash};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::incidents::{actions, domain::Status, domain::Transition};
use crate::integrations::db::{Credentials, credentials};
use crate::integrations::domain::{Format, verify_signature};
use crate::routing::domain::{Decision, Rule, Subject, route};
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// Lanes per replica, and so the most ingest transactions one replica runs at once.
pub const LANES: usize = 4;
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
            Payload::Change(_) => 1,
        }
    }

    fn lane(&self) -> usize {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match &self.credential {
            Credential::Bearer { integration_id, .. }
            | Credential::Signed { integration_id, .. } => integration_id.hash(&mut h),
            Credential::RoutingKey { key } => key.hash(&mut h),
        }
        if let Payload::Alerts(a) = &self.payload
            && let Some(first) = a.first()
        {
            first.dedup_key.hash(&mut h);
        }
        (h.finish() % LANES as u64) as usize
    }
}

/// Why a request was not stored.
#[derive(Debug)]
pub enum Refused {
    /// A wrong key, a bad signature, a disabled integration: the sentence says which.
    Unauthorized(String),
    /// Overloaded or failing: safe to retry after a while.
    Unavailable,
}

type Answer = Result<(), Refused>;

struct Job {
    submission: Submission,
    answer: oneshot::Sender<Answer>,
}

/// The lanes of this replica.
#[derive(Clone)]
pub struct Ingestor {
    lanes: Vec<mpsc::Sender<Job>>,
}

impl Ingestor {
    /// Starts the lanes on `pool` (best a pool of its own, so a storm cannot take the
    /// connections pages need).
    pub fn start(pool: PgPool) -> Self {
        let lanes = (0..LANES)
            .map(|_| {
                let (tx, rx) = mpsc::channel(LANE_DEPTH);
                tokio::spawn(run_lane(pool.clone(), rx));
                tx
            })
            .collect();
        Self { lanes }
    }

    /// Stores a request's alerts, answering once they are committed.
    pub async fn submit(&self, submission: Submission) -> Answer {
        let (answer, answered) = oneshot::channel();
        let lane = &self.lanes[submission.lane()];
        lane.try_send(Job { submission, answer })
            .map_err(|_| Refused::Unavailable)?;
        match tokio::time::timeout(ANSWER_WITHIN, answered).await {
            Ok(Ok(answer)) => answer,
            _ => Err(Refused::Unavailable),
        }
    }
}

async fn run_lane(pool: PgPool, mut rx: mpsc::Receiver<Job>) {
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
        let answers = write_with_retries(&pool, &jobs).await;
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

/// Writes a batch; a deadlock or serialisation failure is retried. A batch that still fails is
/// split, so one request that cannot be stored fails alone.
async fn write_with_retries(pool: &PgPool, jobs: &[Job]) -> Vec<Answer> {
    let subs: Vec<&Submission> = jobs.iter().map(|j| &j.submission).collect();
    match write_retrying(pool, &subs).await {
        Ok(answers) => answers,
        Err(_) if subs.len() > 1 => {
            let mut answers = Vec::with_capacity(subs.len());
            for s in subs {
                answers.push(match write_retrying(pool, &[s]).await {
                    Ok(mut a) => a.pop().unwrap_or(Err(Refused::Unavailable)),
                    Err(_) => Err(Refused::Unavailable),
                });
            }
            answers
        }
        Err(_) => vec![Err(Refused::Unavailable)],
    }
}

async fn write_retrying(pool: &PgPool, subs: &[&Submission]) -> AppResult<Vec<Answer>> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match write(pool, subs).await {
            Err(e) if attempt < 3 && is_transient(&e) => {
                tokio::time::sleep(Duration::from_millis(10 * attempt)).await;
            }
            Err(e) => {
                tracing::error!(error = %e, requests = subs.len(), "could not store alerts");
                return Err(e);
            }
            ok => return ok,
        }
    }
}

/// Which integration a request comes from, or why it is refused.
fn authenticate<'c>(
    s: &Submission,
    known: &'c [Credentials],
    now: DateTime<Utc>,
) -> Result<&'c Credentials, String> {
    const WRONG: &str = "the integration key is wrong";
    let cred = match &s.credential {
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
                .ok_or("the routing key matches no integration")?
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
    if cred.format != s.format {
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

/// Who alert-driven changes are attributed to on timelines and in the audit log.
fn actor_of(c: &Credentials) -> Actor {
    Actor::system(&format!("{} (alerts)", c.name))
}

async fn write(pool: &PgPool, subs: &[&Submission]) -> AppResult<Vec<Answer>> {
    let mut tx = pool.begin().await?;
    let now = clock::now(&mut *tx).await?;
    let mut ids = Vec::new();
    let mut hashes = Vec::new();
    for s in subs {
        match &s.credential {
            Credential::Bearer { integration_id, .. }
            | Credential::Signed { integration_id, .. } => ids.push(*integration_id),
            Credential::RoutingKey { key } => hashes.push(token_hash(key)),
        }
    }
    let known = credentials(&mut *tx, &ids, &hashes).await?;
    let verdicts: Vec<Result<&Credentials, String>> =
        subs.iter().map(|s| authenticate(s, &known, now)).collect();

    let mut events: Vec<(&Credentials, &AlertEvent)> = Vec::new();
    for (s, v) in subs.iter().zip(&verdicts) {
        let Ok(cred) = v else { continue };
        match &s.payload {
            Payload::Alerts(alerts) => events.extend(alerts.iter().map(|a| (*cred, a))),
            Payload::Change(c) => {
                db::insert_change(
                    &mut tx,
                    &db::NewChange {
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
        let rules = crate::routing::db::compile_all(&crate::routing::db::list(&mut *tx).await?);
        for run in runs(&events) {
            apply(&mut tx, &run, &rules, now).await?;
        }
    }
    tx.commit().await?;
    Ok(verdicts
        .into_iter()
        .map(|v| v.map(|_| ()).map_err(Refused::Unauthorized))
        .collect())
}

type Entry<'a> = (&'a Credentials, &'a AlertEvent);

/// Splits events where a key fires again after being acknowledged or resolved earlier in the
/// batch, so each run can apply its triggers, then acknowledgements, then resolutions, and the
/// last word for every key stays the sender's last word.
fn runs<'a>(events: &[Entry<'a>]) -> Vec<Vec<Entry<'a>>> {
    let mut runs = vec![Vec::new()];
    let mut settled: HashSet<(Uuid, &str)> = HashSet::new();
    for &(c, e) in events {
        let key = (c.id, e.dedup_key.as_str());
        if e.action == Action::Trigger {
            if settled.contains(&key) {
                runs.push(Vec::new());
                settled.clear();
            }
        } else {
            settled.insert(key);
        }
        if let Some(run) = runs.last_mut() {
            run.push((c, e));
        }
    }
    runs
}

async fn apply(
    conn: &mut PgConnection,
    run: &[Entry<'_>],
    rules: &[Rule],
    now: DateTime<Utc>,
) -> AppResult<()> {
    let of = |a: Action| run.iter().filter(move |(_, e)| e.action == a).copied();
    let triggers: Vec<Entry> = of(Action::Trigger).collect();
    if !triggers.is_empty() {
        fire(conn, &triggers, rules, now).await?;
    }
    let acks: Vec<Entry> = of(Action::Acknowledge).collect();
    if !acks.is_empty() {
        acknowledge(conn, &acks).await?;
    }
    let resolves: Vec<Entry> = of(Action::Resolve).collect();
    if !resolves.is_empty() {
        resolve(conn, &resolves).await?;
    }
    Ok(())
}

fn subject<'a>(c: &'a Credentials, e: &'a AlertEvent) -> Subject<'a> {
    Subject {
        labels: &e.labels,
        details: &e.details,
        summary: &e.summary,
        source: &e.source,
        severity: &e.severity,
        status: "firing",
        integration: &c.name,
        format: c.format.as_str(),
        dedup_key: &e.dedup_key,
        group_key: &e.group_key,
    }
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}

/// Opens the incident of a new group, as routing decided for its first alert.
async fn open_incident(
    conn: &mut PgConnection,
    c: &Credentials,
    e: &AlertEvent,
    d: &Decision,
    now: DateTime<Utc>,
) -> AppResult<i64> {
    let service = match &d.service {
        Some(name) => crate::services::db::find_by_name(&mut *conn, name)
            .await?
            .map(|s| s.name),
        None => None,
    };
    // The sender's start time stands for the first customer impact, when it is believable.
    let started_at = e
        .starts_at
        .filter(|t| *t <= now && *t > now - chrono::Duration::days(30));
    let summary = e
        .details
        .get("description")
        .and_then(Value::as_str)
        .map(|d| short(d, 5000))
        .unwrap_or_default();
    let note = format!(
        "Opened by alert \"{}\" from {} (routing rule \"{}\")",
        short(&e.summary, 300),
        c.name,
        d.rule
    );
    let incident = actions::open(
        conn,
        &actions::Opening {
            number: None,
            title: &d.title,
            severity: d.severity.as_str(),
            service: service.as_deref(),
            summary: &summary,
            impact: "",
            started_at,
            detected_at: None,
            note: &note,
        },
        &actor_of(c),
    )
    .await?;
    Ok(incident.id)
}

/// Firing alerts: find or open their groups, store them, raise severities.
async fn fire(
    conn: &mut PgConnection,
    triggers: &[Entry<'_>],
    rules: &[Rule],
    now: DateTime<Utc>,
) -> AppResult<()> {
    // One row per dedup key: repeats within the batch count as deliveries of the first.
    let mut order: Vec<(Entry, Decision, i32)> = Vec::new();
    let mut index: HashMap<(Uuid, &str), usize> = HashMap::new();
    for &(c, e) in triggers {
        match index.get(&(c.id, e.dedup_key.as_str())) {
            Some(&i) => order[i].2 += 1,
            None => {
                index.insert((c.id, e.dedup_key.as_str()), order.len());
                order.push(((c, e), route(rules, &subject(c, e)), 1));
            }
        }
    }
    let mut wanted: Vec<(Uuid, &str)> = Vec::new();
    for ((c, e), _, _) in &order {
        let k = (c.id, e.group_key.as_str());
        if !wanted.contains(&k) {
            wanted.push(k);
        }
    }
    let (gi, gk): (Vec<Uuid>, Vec<String>) =
        wanted.iter().map(|(i, k)| (*i, (*k).to_owned())).unzip();
    let mut groups: HashMap<(Uuid, String), (i64, i64)> = db::lock_open_groups(conn, &gi, &gk)
        .await?
        .into_iter()
        .map(|g| ((g.integration_id, g.group_key), (g.id, g.incident_id)))
        .collect();
    // New groups are opened in one order by every lane and replica, so two batches opening
    // the same groups wait for each other instead of deadlocking.
    let mut missing: Vec<(Uuid, &str)> = wanted
        .iter()
        .filter(|(i, k)| !groups.contains_key(&(*i, (*k).to_owned())))
        .copied()
        .collect();
    missing.sort_unstable();
    for (integration, key) in &missing {
        let Some(((c, e), d, _)) = order
            .iter()
            .find(|((c, e), _, _)| c.id == *integration && e.group_key == *key)
        else {
            continue;
        };
        let found = match db::insert_group(conn, *integration, key).await? {
            Some(group_id) => {
                let incident_id = open_incident(conn, c, e, d, now).await?;
                db::attach_group(conn, group_id, incident_id).await?;
                (group_id, incident_id)
            }
            None => {
                let g = db::lock_open_groups(conn, &[*integration], &[(*key).to_owned()])
                    .await?
                    .pop()
                    .ok_or_else(|| AppError::Internal("an alert group vanished".into()))?;
                (g.id, g.incident_id)
            }
        };
        groups.insert((*integration, (*key).to_owned()), found);
    }

    let mut rows = NewAlerts::default();
    for ((c, e), d, n) in &order {
        let (group_id, incident_id) = groups[&(c.id, e.group_key.clone())];
        rows.integration_id.push(c.id);
        rows.group_id.push(group_id);
        rows.incident_id.push(incident_id);
        rows.dedup_key.push(e.dedup_key.clone());
        rows.summary.push(e.summary.clone());
        rows.source.push(e.source.clone());
        rows.severity.push(e.severity.clone());
        rows.labels.push(e.labels.clone());
        rows.details.push(e.details.clone());
        rows.source_url.push(e.source_url.clone());
        rows.starts_at.push(e.starts_at);
        rows.deliveries.push(*n);
        rows.rule_id.push(d.rule_id);
        rows.routed.push(json!(d));
        rows.raw.push(e.raw.clone());
    }
    let stored = db::upsert(conn, &rows).await?;

    // The most severe new alert per incident; a more severe one than the incident raises it.
    let mut worst: HashMap<i64, (&Decision, &AlertEvent, &Credentials)> = HashMap::new();
    for s in stored.iter().filter(|s| s.inserted) {
        let Some(&i) = index.get(&(s.integration_id, s.dedup_key.as_str())) else {
            continue;
        };
        let ((c, e), d, _) = &order[i];
        let slot = worst.entry(s.incident_id).or_insert((d, e, c));
        if d.severity.is_more_severe_than(slot.0.severity) {
            *slot = (d, e, c);
        }
    }
    if worst.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = worst.keys().copied().collect();
    for state in db::incident_states(conn, &ids).await? {
        let (d, e, c) = worst[&state.id];
        if state.status == Status::Resolved || !d.severity.is_more_severe_than(state.severity) {
            continue;
        }
        let reason = format!(
            "Alert \"{}\" is {} by routing rule \"{}\"",
            short(&e.summary, 200),
            d.severity,
            d.rule
        );
        actions::change_severity(
            conn,
            state.key,
            None,
            d.severity.as_str(),
            &reason,
            None,
            &actor_of(c),
        )
        .await?;
    }
    Ok(())
}

fn keys(entries: &[Entry<'_>]) -> (Vec<Uuid>, Vec<String>) {
    entries
        .iter()
        .map(|(c, e)| (c.id, e.dedup_key.clone()))
        .unzip()
}

/// Acknowledgements (PagerDuty, generic): the alert, and its incident if nobody has yet.
async fn acknowledge(conn: &mut PgConnection, acks: &[Entry<'_>]) -> AppResult<()> {
    let (ids, ks) = keys(acks);
    let mut incidents = db::acknowledge(conn, &ids, &ks).await?;
    incidents.sort_unstable();
    incidents.dedup();
    if incidents.is_empty() {
        return Ok(());
    }
    let actor = actor_of(acks[0].0);
    for state in db::incident_states(conn, &incidents).await? {
        if state.status == Status::Triggered {
            actions::transition(
                conn,
                state.key,
                Transition::Acknowledge,
                None,
                None,
                "Acknowledged by the alert's sender",
                &actor,
            )
            .await?;
        }
    }
    Ok(())
}

/// Resolutions: the alerts, a timeline line per incident, and, when an incident has no open
/// alert left, what its integration asks for (mitigate, resolve, or nothing).
async fn resolve(conn: &mut PgConnection, resolves: &[Entry<'_>]) -> AppResult<()> {
    let (ids, ks) = keys(resolves);
    let incidents = db::incidents_of_open(conn, &ids, &ks).await?;
    if incidents.is_empty() {
        return Ok(());
    }
    db::lock_incidents(conn, &incidents).await?;
    let resolved = db::resolve(conn, &ids, &ks).await?;
    let cred = resolves[0].0;
    let mut by_incident: HashMap<i64, Vec<String>> = HashMap::new();
    for r in resolved {
        by_incident
            .entry(r.incident_id)
            .or_default()
            .push(r.summary);
    }
    let now = clock::now(&mut *conn).await?;
    for (incident_id, names) in &by_incident {
        let mut listed: Vec<&str> = names.iter().map(String::as_str).take(10).collect();
        listed.dedup();
        let body = if names.len() > 1 {
            let more = names.len().saturating_sub(10);
            let mut b = listed.join("\n");
            if more > 0 {
                b.push_str(&format!("\n… and {more} more"));
            }
            b
        } else {
            String::new()
        };
        timeline::db::append(
            &mut *conn,
            NewEvent {
                incident_id: *incident_id,
                occurred_at: now,
                kind: Kind::AlertsResolved,
                author: &actor_of(cred).name,
                body: &body,
                details: json!({ "count": names.len(), "alerts": listed, "integration": cred.name }),
                incident_version: None,
            },
        )
        .await?;
    }
    let touched: Vec<i64> = by_incident.keys().copied().collect();
    let still_open: HashSet<i64> = db::open_counts(conn, &touched)
        .await?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let quiet: Vec<i64> = touched
        .into_iter()
        .filter(|id| !still_open.contains(id))
        .collect();
    if quiet.is_empty() {
        return Ok(());
    }
    use crate::integrations::domain::OnAllResolved;
    let to = match cred.on_all_resolved {
        OnAllResolved::Mitigate => Transition::Mitigate,
        OnAllResolved::Resolve => Transition::Resolve,
        OnAllResolved::Nothing => return Ok(()),
    };
    for state in db::incident_states(conn, &quiet).await? {
        let due = match to {
            Transition::Mitigate => {
                matches!(state.status, Status::Triggered | Status::Acknowledged)
            }
            _ => state.status != Status::Resolved,
        };
        if due {
            actions::transition(
                conn,
                state.key,
                to,
                None,
                None,
                "Every alert of this incident has resolved",
                &actor_of(cred),
            )
            .await?;
        }
    }
    Ok(())
}
