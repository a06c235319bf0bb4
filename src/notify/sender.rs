//! Delivers the outbox: every replica runs it; leases keep two senders off one message, and a
//! message is retried with growing, jittered delays until it is delivered or given up.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use std::time::Duration;

use super::db::{self, Claimed};
use super::domain::{MAX_ATTEMPTS, backoff_secs, sign};
use crate::error::AppResult;

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub batch: i64,
    /// How long a claimed message is reserved for the sender that took it.
    pub lease_secs: f64,
    pub base_delay_secs: f64,
    pub max_delay_secs: f64,
    pub max_attempts: i32,
    pub timeout: Duration,
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
        }
    }
}

pub fn http_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

async fn attempt(http: &reqwest::Client, n: &Claimed) -> Result<(), String> {
    let request = match n.kind.as_str() {
        "slack" => {
            let text = n.payload["message"]
                .as_str()
                .unwrap_or("Quell notification")
                .to_owned();
            http.post(&n.url).json(&json!({ "text": text }))
        }
        _ => {
            let body = n.payload.to_string();
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
        Err(e) => Err(if e.is_timeout() {
            "timed out".into()
        } else {
            format!("unreachable: {e}")
        }),
    }
}

/// Delivers one batch; returns how many messages it tried.
pub async fn deliver_once(
    pool: &PgPool,
    http: &reqwest::Client,
    cfg: &SenderConfig,
) -> AppResult<usize> {
    let batch = db::claim(pool, cfg.batch, cfg.lease_secs).await?;
    for n in &batch {
        match attempt(http, n).await {
            Ok(()) => db::delivered(pool, n.id).await?,
            Err(error) => {
                let retry = (n.attempts < cfg.max_attempts).then(|| {
                    let jitter = (OsRng.next_u32() as f64) / (u32::MAX as f64 + 1.0);
                    backoff_secs(n.attempts, cfg.base_delay_secs, cfg.max_delay_secs, jitter)
                });
                tracing::warn!(notification = n.id, attempts = n.attempts, %error, "notification not delivered");
                db::failed(pool, n.id, &error, retry).await?;
            }
        }
    }
    Ok(batch.len())
}

/// The sender loop of one replica.
pub async fn run(pool: PgPool) {
    let cfg = SenderConfig::default();
    let http = http_client(cfg.timeout);
    loop {
        match deliver_once(&pool, &http, &cfg).await {
            Ok(n) if n as i64 == cfg.batch => continue,
            Ok(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            Err(e) => {
                tracing::error!(error = %e, "notification sender failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    }
}
