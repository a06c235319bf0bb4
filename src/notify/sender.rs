//! Delivers the outbox: every replica runs it; leases keep two senders off one message, and a
//! message is retried with growing, jittered delays until it is delivered or given up. A sender
//! sleeps until the next message is due or a transaction that queued one wakes it
//! (`LISTEN quell_outbox`). Webhooks go over HTTP; email over SMTP (`QUELL_SMTP_URL`).

use argon2::password_hash::rand_core::{OsRng, RngCore};
use chrono::Utc;
use lettre::message::Mailbox;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use serde_json::json;
use sqlx::PgPool;
use std::time::Duration;
use tokio::time::Instant;

use super::db::{self, Claimed};
use super::domain::{MAX_ATTEMPTS, backoff_secs, sign};
use crate::engine::{Waker, wait_for};
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub batch: i64,
    /// How long a claimed message is reserved for the sender that took it.
    pub lease_secs: f64,
    pub base_delay_secs: f64,
    pub max_delay_secs: f64,
    pub max_attempts: i32,
    pub timeout: Duration,
    /// Where links in messages point (`QUELL_BASE_URL`).
    pub base_url: String,
    /// The SMTP server email goes through, e.g. `smtp://mail.example.com:587?tls=required`
    /// (lettre's URL form); none means email cannot be sent.
    pub smtp_url: Option<String>,
    /// The sender of email.
    pub mail_from: String,
    /// Messages sent at once.
    pub concurrency: usize,
    /// Internal places webhooks may reach (`QUELL_WEBHOOK_ALLOW`); others inside the network
    /// are refused.
    pub allow: crate::egress::Allow,
}

impl Default for SenderConfig {
    fn default() -> Self {
        Self {
            batch: 50,
            lease_secs: 60.0,
            base_delay_secs: 2.0,
            max_delay_secs: 600.0,
            max_attempts: MAX_ATTEMPTS,
            timeout: Duration::from_secs(10),
            base_url: "http://127.0.0.1:3000".to_owned(),
            smtp_url: None,
            mail_from: "Quell <quell@localhost>".to_owned(),
            concurrency: 16,
            allow: Default::default(),
        }
    }
}

/// The HTTP client webhooks go through: no redirects (a redirect could point anywhere), no
/// proxy, and
/// host names resolved through [`Guarded`], so a name that resolves inside the network is
/// refused at the moment of sending, and the connection goes to an address that was checked.
pub fn http_client(timeout: Duration, allow: &crate::egress::Allow) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        // Straight to the target, never through HTTP(S)_PROXY: a proxy would resolve the name
        // itself, past the check below.
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(Guarded {
            allow: allow.clone(),
        }))
        .build()
        .expect("an HTTP client")
}

/// Resolves a webhook's host and keeps only the addresses it may reach.
struct Guarded {
    allow: crate::egress::Allow,
}

/// A host that resolved only to addresses inside the network.
#[derive(Debug)]
struct Inside;

impl std::fmt::Display for Inside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the host resolves inside this network")
    }
}

impl std::error::Error for Inside {}

impl reqwest::dns::Resolve for Guarded {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<std::net::SocketAddr> = found
                .into_iter()
                .filter(|a| allow.may_reach(&host, a.ip()))
                .collect();
            if kept.is_empty() {
                return Err(Box::new(Inside) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// What went wrong with a webhook, for everyone who reads the delivery: the kind of failure,
/// never the address (a Slack webhook's URL is its secret).
fn failure(e: &reqwest::Error) -> String {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<Inside>() {
            return INSIDE.into();
        }
        source = s.source();
    }
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "could not connect (no such host, or the connection was refused)".into()
    } else {
        "the request failed before an answer came".into()
    }
}

const INSIDE: &str =
    "refused: the address is inside this network (an admin can allow it with QUELL_WEBHOOK_ALLOW)";

/// The message as sent: links made absolute, the acknowledge link spelled out.
fn finished(cfg: &SenderConfig, n: &Claimed) -> (serde_json::Value, String) {
    let base = cfg.base_url.trim_end_matches('/');
    let mut payload = n.payload.clone();
    let mut text = payload["message"]
        .as_str()
        .unwrap_or("Quell notification")
        .to_owned();
    if let Some(obj) = payload.as_object_mut() {
        // A message of several lines (a hand-off notice's open incidents) carries them here.
        for line in obj
            .get("lines")
            .and_then(|l| l.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(line) = line.as_str() {
                text.push('\n');
                text.push_str(line);
            }
        }
        if let Some(path) = obj.get("path").and_then(|p| p.as_str()).map(str::to_owned) {
            obj.insert("url".into(), json!(format!("{base}{path}")));
            text.push_str(&format!("\n{base}{path}"));
        }
        if let Some(path) = obj
            .get("ack_path")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        {
            obj.insert("ack_url".into(), json!(format!("{base}{path}")));
            text.push_str(&format!("\nAcknowledge: {base}{path}"));
        }
        // A responder asked for by hand accepts (helps) with their link; it acknowledges nothing.
        if let Some(path) = obj
            .get("accept_path")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        {
            obj.insert("accept_url".into(), json!(format!("{base}{path}")));
            text.push_str(&format!(
                "\nAccept (you will help; it stays with whoever has it): {base}{path}"
            ));
        }
        if let Some(line) = obj.get("bridge_line").and_then(|l| l.as_str()) {
            text.push_str(&format!("\n{line}"));
        }
        // A status page subscriber's own links: which components, and leaving.
        if let Some(path) = obj
            .get("manage_path")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        {
            text.push_str(&format!("\n\nChoose what you hear about: {base}{path}"));
        }
        if let Some(path) = obj
            .get("unsubscribe_path")
            .and_then(|p| p.as_str())
            .map(str::to_owned)
        {
            obj.insert("unsubscribe_url".into(), json!(format!("{base}{path}")));
            text.push_str(&format!("\nUnsubscribe: {base}{path}"));
        }
    }
    (payload, text)
}

/// Text as Slack shows it literally: `&`, `<` and `>` escaped as its API asks.
fn slack_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

async fn send_email(
    cfg: &SenderConfig,
    to: &str,
    subject: &str,
    (text, unsubscribe): (String, Option<&str>),
) -> Result<(), String> {
    let Some(url) = cfg.smtp_url.as_deref() else {
        return Err("no SMTP server is configured (QUELL_SMTP_URL)".into());
    };
    let from: Mailbox = cfg
        .mail_from
        .parse()
        .map_err(|e| format!("QUELL_SMTP_FROM is not an address: {e}"))?;
    let to: Mailbox = to.parse().map_err(|e| format!("not an address: {e}"))?;
    let mut email = lettre::Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .header(ContentType::TEXT_PLAIN);
    // A list's message: mail clients offer unsubscribing in one click, by a POST to the link
    // (RFC 8058).
    if let Some(url) = unsubscribe {
        email = email
            .raw_header(HeaderValue::new(
                HeaderName::new_from_ascii_str("List-Unsubscribe"),
                format!("<{url}>"),
            ))
            .raw_header(HeaderValue::new(
                HeaderName::new_from_ascii_str("List-Unsubscribe-Post"),
                "List-Unsubscribe=One-Click".into(),
            ));
    }
    let email = email
        .body(text)
        .map_err(|e| format!("cannot build the message: {e}"))?;
    let mailer = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
        .map_err(|e| format!("QUELL_SMTP_URL: {e}"))?
        .timeout(Some(cfg.timeout))
        .build();
    mailer
        .send(email)
        .await
        .map(|_| ())
        .map_err(|e| format!("SMTP: {e}"))
}

async fn attempt(http: &reqwest::Client, cfg: &SenderConfig, n: &Claimed) -> Result<(), String> {
    let (payload, text) = finished(cfg, n);
    let request = match n.kind.as_str() {
        "email" => {
            let to = n.url.strip_prefix("mailto:").unwrap_or(&n.url);
            let subject = payload["message"]
                .as_str()
                .unwrap_or("Quell notification")
                .chars()
                .take(150)
                .collect::<String>();
            let unsubscribe = payload["unsubscribe_url"].as_str();
            return send_email(cfg, to, &subject, (text, unsubscribe)).await;
        }
        _ if crate::egress::refusal(&n.url, &cfg.allow).is_some() => return Err(INSIDE.into()),
        // Slack reads `<…>` as links and mentions: what people typed is shown as typed.
        "slack" => http
            .post(&n.url)
            .json(&json!({ "text": slack_text(&text) })),
        _ => {
            let body = payload.to_string();
            let msg_id = format!("msg_quell_{}", n.id);
            let ts = Utc::now().timestamp();
            let mut r = http
                .post(&n.url)
                .header("content-type", "application/json")
                .header("webhook-id", &msg_id)
                .header("webhook-timestamp", ts.to_string());
            if let Some(sig) = n
                .secret
                .as_deref()
                .and_then(|s| sign(s, &msg_id, ts, &body))
            {
                r = r.header("webhook-signature", sig);
            }
            r.body(body)
        }
    };
    match request.send().await {
        Ok(res) if res.status().is_success() => Ok(()),
        Ok(res) => Err(format!("HTTP {}", res.status().as_u16())),
        Err(e) => Err(failure(&e)),
    }
}

/// What became of one claimed message.
enum Outcome {
    Recorded,
    /// Our lease ran out before the send could start: left untouched for the next sender.
    NotStarted,
    /// Sent (or tried), but the claim had passed to another sender: the result was refused.
    Refused,
}

/// How much of the lease must be left to start a send: the send's own time limit, so that
/// its result is normally recorded while the claim is still ours (half the lease at most).
fn send_margin(cfg: &SenderConfig) -> Duration {
    cfg.timeout
        .min(Duration::from_secs_f64(cfg.lease_secs.max(0.0) / 2.0))
}

async fn deliver_one(
    pool: &PgPool,
    http: &reqwest::Client,
    cfg: &SenderConfig,
    n: &Claimed,
    lease_ends: Instant,
) -> AppResult<Outcome> {
    // Fenced twice. Before sending, by our own monotonic clock, which runs on while the
    // process is stopped: past the lease another sender may hold the message. After sending,
    // by the claim's attempt number: the database refuses a stale claim's result.
    if Instant::now() + send_margin(cfg) >= lease_ends {
        tracing::warn!(
            notification = n.id,
            "lease ran out before sending; left to the next sender"
        );
        return Ok(Outcome::NotStarted);
    }
    let sending = Instant::now();
    let m = crate::metrics::get();
    let counted = |outcome: &str| crate::metrics::AttemptLabels {
        kind: n.kind.clone(),
        outcome: outcome.to_owned(),
    };
    let recorded = match attempt(http, cfg, n).await {
        Ok(()) => {
            m.attempts.get_or_create(&counted("delivered")).inc();
            m.delivery
                .get_or_create(&crate::metrics::KindLabels {
                    kind: n.kind.clone(),
                })
                .observe(n.queued_secs + sending.elapsed().as_secs_f64());
            db::delivered(pool, n.id, n.attempts).await?
        }
        Err(error) => {
            let outcome = if n.attempts < cfg.max_attempts {
                "retried"
            } else {
                "failed"
            };
            m.attempts.get_or_create(&counted(outcome)).inc();
            let retry = (n.attempts < cfg.max_attempts).then(|| {
                let jitter = (OsRng.next_u32() as f64) / (u32::MAX as f64 + 1.0);
                backoff_secs(n.attempts, cfg.base_delay_secs, cfg.max_delay_secs, jitter)
            });
            tracing::warn!(notification = n.id, attempts = n.attempts, %error, "notification not delivered");
            db::failed(pool, n.id, n.attempts, &error, retry).await?
        }
    };
    if recorded {
        Ok(Outcome::Recorded)
    } else {
        tracing::warn!(
            notification = n.id,
            attempt = n.attempts,
            "result refused: the claim had passed to another sender"
        );
        Ok(Outcome::Refused)
    }
}

/// Delivers one batch; returns how many messages it claimed.
pub async fn deliver_once(
    pool: &PgPool,
    http: &reqwest::Client,
    cfg: &SenderConfig,
) -> AppResult<usize> {
    // The lease is counted from before the claim was asked for, so ours ends no later than
    // the database's.
    let lease_ends = Instant::now() + Duration::from_secs_f64(cfg.lease_secs.max(0.0));
    let batch = db::claim(pool, cfg.batch, cfg.lease_secs).await?;
    // Sent side by side, a few at a time, each on its own task with its own copies.
    let shared = std::sync::Arc::new(cfg.clone());
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(cfg.concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    let tried = batch.len();
    for n in batch {
        let (pool, http, cfg, gate) = (pool.clone(), http.clone(), shared.clone(), gate.clone());
        tasks.spawn(async move {
            let _permit = gate.acquire_owned().await;
            deliver_one(&pool, &http, &cfg, &n, lease_ends).await
        });
    }
    let mut results = Vec::with_capacity(tried);
    while let Some(r) = tasks.join_next().await {
        results.push(r.map_err(|e| AppError::Internal(format!("sender task: {e}")))?);
    }
    let outcomes = results.into_iter().collect::<AppResult<Vec<Outcome>>>()?;
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Refused))
        .count();
    let unsent = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::NotStarted))
        .count();
    if refused + unsent > 0 {
        tracing::warn!(
            claimed = tried,
            refused,
            unsent,
            "this sender stalled past its lease: results refused, messages left to others"
        );
    }
    Ok(tried)
}

/// The longest a sender sleeps without being woken: a safety net for a missed wake-up.
const POLL: Duration = Duration::from_secs(5);

/// The sender loop of one replica: deliver what is due, then sleep until the next message is
/// due, a transaction queues one (`quell_outbox`), or the poll interval passes.
pub async fn run(pool: PgPool, cfg: SenderConfig) {
    // Every kind's outcomes counted from 0, so a first message given up on is an increase.
    let m = crate::metrics::get();
    for kind in ["webhook", "slack", "email"] {
        for outcome in ["delivered", "retried", "failed"] {
            let _ = m.attempts.get_or_create(&crate::metrics::AttemptLabels {
                kind: kind.to_owned(),
                outcome: outcome.to_owned(),
            });
        }
    }
    let http = http_client(cfg.timeout, &cfg.allow);
    let mut waker = Waker::listen(&pool, db::OUTBOX_CHANNEL).await;
    loop {
        match deliver_once(&pool, &http, &cfg).await {
            Ok(n) if n as i64 == cfg.batch => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "notification sender failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
                continue;
            }
        }
        // A message due now but held by another sender's claim: look again shortly, not at once.
        let wait = wait_for(db::next_due_in(&pool).await.ok().flatten(), POLL)
            .max(Duration::from_millis(10));
        waker.sleep(wait).await;
    }
}
