//! PagerDuty's REST API read with an admin's token: every page of a list (`limit`/`offset`
//! until `more` is false), and a request the API turns away for its rate limit (429) or a
//! passing fault (5xx) tried again after the wait it asks for (`Retry-After`, or
//! `ratelimit-reset`), or a doubling one.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::domain::{
    Entry, Integration, PdOverride, Policy, Schedule, Service, Team, TeamMember, User,
};
use crate::error::{AppError, AppResult};

/// PagerDuty's API address unless another is given.
pub const PAGERDUTY_API: &str = "https://api.pagerduty.com";
/// Tries of one request before giving up.
const TRIES: u32 = 6;
/// The longest wait between tries.
const LONGEST_WAIT: Duration = Duration::from_secs(60);

pub struct PagerDuty {
    http: reqwest::Client,
    base: String,
    token: String,
    /// How many requests were turned away for the rate limit and tried again
    pub waits: std::sync::atomic::AtomicU32,
}

fn refused(message: String) -> AppError {
    AppError::BadRequest {
        code: "vendor_refused",
        message,
    }
}

/// Refuses an API address inside this network unless an admin listed it
/// (`QUELL_WEBHOOK_ALLOW`), or not https (the token would travel in clear) unless it is such a
/// listed place: an import started from a page must not make Quell read its own network. The
/// addresses the host resolves to now, which the requests are then pinned to.
pub async fn check_reachable(
    base: &str,
    allow: &crate::egress::Allow,
) -> AppResult<Vec<std::net::SocketAddr>> {
    let refuse = |why: String| AppError::invalid("api_url", why);
    if let Some(why) = crate::egress::refusal(base, allow) {
        return Err(refuse(why));
    }
    let url = url::Url::parse(base).map_err(|e| refuse(format!("not a URL ({e})")))?;
    let listed = match url.host() {
        Some(url::Host::Domain(d)) => allow.allows_host(d),
        Some(url::Host::Ipv4(ip)) => allow.allows_ip(ip.into()),
        Some(url::Host::Ipv6(ip)) => allow.allows_ip(ip.into()),
        None => false,
    };
    if url.scheme() != "https" && !(url.scheme() == "http" && listed) {
        return Err(refuse(
            "an https:// address (the key must not travel in clear)".into(),
        ));
    }
    let mut pinned = Vec::new();
    if let Some(url::Host::Domain(host)) = url.host() {
        let port = url.port_or_known_default().unwrap_or(443);
        let found: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| refuse(format!("{host} does not resolve ({e})")))?
            .collect();
        if found.is_empty() || found.iter().any(|a| !allow.may_reach(host, a.ip())) {
            return Err(refuse(format!(
                "{host} resolves inside this network; imports read public addresses unless an \
                 admin lists the place in QUELL_WEBHOOK_ALLOW"
            )));
        }
        pinned = found;
    }
    Ok(pinned)
}

impl PagerDuty {
    /// A reader of the API at `base`; with `pinned`, requests go only to those addresses
    /// (checked by [`check_reachable`]), whatever the name resolves to later.
    pub fn new(
        base: &str,
        token: &str,
        pinned: Option<&[std::net::SocketAddr]>,
    ) -> AppResult<Self> {
        let mut builder = reqwest::Client::builder();
        if let Some(addrs) = pinned
            && let Ok(url) = url::Url::parse(base)
            && let Some(url::Host::Domain(host)) = url.host()
        {
            builder = builder.resolve_to_addrs(host, addrs).no_proxy();
        }
        let http = builder
            .timeout(Duration::from_secs(30))
            // A redirect could lead anywhere; PagerDuty's API answers where it is asked.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("quell-import/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| AppError::Internal(format!("an HTTP client: {e}")))?;
        let token = token.trim();
        if token.is_empty() {
            return Err(AppError::invalid("token", "give PagerDuty's API token"));
        }
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
            waits: Default::default(),
        })
    }

    /// One request, tried again while the API asks to wait.
    async fn get(&self, path: &str, query: &[(&str, String)]) -> AppResult<Value> {
        let url = format!("{}{path}", self.base);
        let mut wait = Duration::from_secs(1);
        for attempt in 1..=TRIES {
            let sent = self
                .http
                .get(&url)
                .query(query)
                .header("Authorization", format!("Token token={}", self.token))
                .header("Accept", "application/vnd.pagerduty+json;version=2")
                .send()
                .await;
            let res = match sent {
                Ok(res) => res,
                Err(e) if attempt < TRIES => {
                    tracing::warn!(error = %e, url, "PagerDuty did not answer; trying again");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(LONGEST_WAIT);
                    continue;
                }
                Err(e) => return Err(refused(format!("PagerDuty did not answer {url}: {e}"))),
            };
            let status = res.status();
            if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                if attempt == TRIES {
                    return Err(refused(format!(
                        "PagerDuty answered {status} to {path} {TRIES} times; try again later"
                    )));
                }
                let asked = ["retry-after", "ratelimit-reset"].iter().find_map(|h| {
                    res.headers()
                        .get(*h)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                });
                let pause = asked.map_or(wait, Duration::from_secs).min(LONGEST_WAIT);
                if status == StatusCode::TOO_MANY_REQUESTS {
                    self.waits
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                tokio::time::sleep(pause).await;
                wait = (wait * 2).min(LONGEST_WAIT);
                continue;
            }
            let body = res.text().await.unwrap_or_default();
            if !status.is_success() {
                let why = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                let hint = match status {
                    StatusCode::UNAUTHORIZED => " (the token is wrong or revoked)",
                    StatusCode::FORBIDDEN => " (the token may not read this; use an admin's)",
                    _ => "",
                };
                return Err(refused(format!(
                    "PagerDuty answered {status} to {path}{hint}: {why}"
                )));
            }
            return serde_json::from_str(&body)
                .map_err(|e| refused(format!("PagerDuty's answer to {path} is not JSON: {e}")));
        }
        Err(refused(format!("PagerDuty did not answer {path}")))
    }

    /// Every page of a list, `key` naming the array in each page.
    async fn list<T: DeserializeOwned>(
        &self,
        path: &str,
        key: &str,
        extra: &[(&str, String)],
    ) -> AppResult<Vec<T>> {
        let mut out = Vec::new();
        let mut offset = 0usize;
        loop {
            let mut query = vec![("limit", "100".to_owned()), ("offset", offset.to_string())];
            query.extend(extra.iter().cloned());
            let page = self.get(path, &query).await?;
            let items = page[key].as_array().cloned().unwrap_or_default();
            let n = items.len();
            for item in items {
                out.push(read(path, item)?);
            }
            if !page["more"].as_bool().unwrap_or(false) || n == 0 {
                return Ok(out);
            }
            offset += n;
            if offset > 100_000 {
                return Err(refused(format!("{path} lists more than 100000 objects")));
            }
        }
    }

    pub async fn users(&self) -> AppResult<Vec<User>> {
        self.list("/users", "users", &[]).await
    }

    pub async fn teams(&self) -> AppResult<Vec<Team>> {
        self.list("/teams", "teams", &[]).await
    }

    pub async fn members(&self, team: &str) -> AppResult<Vec<TeamMember>> {
        self.list(&format!("/teams/{team}/members"), "members", &[])
            .await
    }

    pub async fn schedules(&self) -> AppResult<Vec<Schedule>> {
        // The list leaves out layers; each schedule is read whole.
        let listed: Vec<Value> = self.list("/schedules", "schedules", &[]).await?;
        let mut out = Vec::new();
        for s in listed {
            let id = s["id"].as_str().unwrap_or_default();
            let whole = self.get(&format!("/schedules/{id}"), &[]).await?;
            out.push(read("/schedules/{id}", whole["schedule"].clone())?);
        }
        Ok(out)
    }

    /// The overrides of a schedule between two instants.
    pub async fn overrides(
        &self,
        schedule: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> AppResult<Vec<PdOverride>> {
        let path = format!("/schedules/{schedule}/overrides");
        // Whole overrides, not cut at `since` (one going on keeps its start).
        let query = [
            ("since", since.to_rfc3339()),
            ("until", until.to_rfc3339()),
            ("overflow", "true".to_owned()),
        ];
        let page = self.get(&path, &query).await?;
        let items = page["overrides"].as_array().cloned().unwrap_or_default();
        items.into_iter().map(|o| read(&path, o)).collect()
    }

    /// PagerDuty's own rendering of who is on call between two instants (its final schedule).
    pub async fn rendered(
        &self,
        schedule: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> AppResult<Vec<Entry>> {
        let path = format!("/schedules/{schedule}");
        let query = [
            ("since", since.to_rfc3339()),
            ("until", until.to_rfc3339()),
            ("time_zone", "UTC".to_owned()),
        ];
        let whole = self.get(&path, &query).await?;
        let entries = whole["schedule"]["final_schedule"]["rendered_schedule_entries"].clone();
        read(&path, entries)
    }

    pub async fn policies(&self) -> AppResult<Vec<Policy>> {
        self.list("/escalation_policies", "escalation_policies", &[])
            .await
    }

    pub async fn services(&self) -> AppResult<Vec<Service>> {
        self.list("/services", "services", &[]).await
    }

    /// One integration of a service, with its key.
    pub async fn integration(&self, service: &str, id: &str) -> AppResult<Integration> {
        let path = format!("/services/{service}/integrations/{id}");
        let whole = self.get(&path, &[]).await?;
        read(&path, whole["integration"].clone())
    }
}

fn read<T: DeserializeOwned>(path: &str, v: Value) -> AppResult<T> {
    serde_json::from_value(v).map_err(|e| {
        refused(format!(
            "PagerDuty's answer to {path} is not as its API reference documents: {e}"
        ))
    })
}
