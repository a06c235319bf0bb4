//! Reading a vendor's REST API with an admin's key: a request the API turns away for its rate
//! limit (429) or a passing fault (5xx) is tried again after the wait it asks for
//! (`Retry-After`, or `ratelimit-reset`), or a doubling one; no redirect is followed; an import
//! started from a page reads only public addresses, pinned to those it checked.

use std::time::Duration;

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{AppError, AppResult};

/// Tries of one request before giving up.
const TRIES: u32 = 6;
/// The longest wait between tries.
const LONGEST_WAIT: Duration = Duration::from_secs(60);

pub(crate) fn refused(message: String) -> AppError {
    AppError::BadRequest {
        code: "vendor_refused",
        message,
    }
}

/// Refuses an API address inside this network unless an admin listed it
/// (`QUELL_WEBHOOK_ALLOW`), or not https (the key would travel in clear) unless it is such a
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

/// An id the vendor gave, checked fit to stand as one segment of a path (their ids are letters,
/// digits and dashes), so no id can change which request is made.
pub fn segment(id: &str) -> AppResult<&str> {
    let fits = !id.is_empty()
        && id.len() <= 100
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(id)
    } else {
        Err(refused(format!(
            "the API gave an id {id:?}, which is not one it documents"
        )))
    }
}

/// One vendor's API at one address, with one key.
pub struct Client {
    http: reqwest::Client,
    base: String,
    /// The vendor's name, for what a person reads
    vendor: &'static str,
    /// The `Authorization` header's value
    authorization: String,
    accept: &'static str,
    /// How many requests were turned away for the rate limit and tried again
    pub waits: std::sync::atomic::AtomicU32,
}

impl Client {
    /// A reader of `vendor`'s API at `base`, sending `authorization` (which must not be empty
    /// after `scheme`) and accepting `accept`; with `pinned`, requests go only to those
    /// addresses (checked by [`check_reachable`]), whatever the name resolves to later.
    pub fn new(
        vendor: &'static str,
        base: &str,
        (scheme, key): (&str, &str),
        accept: &'static str,
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
            // A redirect could lead anywhere; the vendors' APIs answer where they are asked.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("quell-import/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| AppError::Internal(format!("an HTTP client: {e}")))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(AppError::invalid(
                "token",
                format!("give {vendor}'s API key"),
            ));
        }
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            vendor,
            authorization: format!("{scheme}{key}"),
            accept,
            waits: Default::default(),
        })
    }

    /// How many requests the rate limit turned away.
    pub fn rate_limited(&self) -> u32 {
        self.waits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// One request, tried again while the API asks to wait.
    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> AppResult<Value> {
        let vendor = self.vendor;
        let url = format!("{}{path}", self.base);
        let mut wait = Duration::from_secs(1);
        for attempt in 1..=TRIES {
            let sent = self
                .http
                .get(&url)
                .query(query)
                .header("Authorization", &self.authorization)
                .header("Accept", self.accept)
                .send()
                .await;
            let res = match sent {
                Ok(res) => res,
                Err(e) if attempt < TRIES => {
                    tracing::warn!(error = %e, url, vendor, "the vendor did not answer; trying again");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(LONGEST_WAIT);
                    continue;
                }
                Err(e) => return Err(refused(format!("{vendor} did not answer {url}: {e}"))),
            };
            let status = res.status();
            if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                if attempt == TRIES {
                    return Err(refused(format!(
                        "{vendor} answered {status} to {path} {TRIES} times; try again later"
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
                // PagerDuty says why in `error.message`, Opsgenie in `message`.
                let why = serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|v| {
                        v["error"]["message"]
                            .as_str()
                            .or(v["message"].as_str())
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                let hint = match status {
                    StatusCode::UNAUTHORIZED => " (the key is wrong or revoked)",
                    StatusCode::FORBIDDEN => {
                        " (the key may not read this: PagerDuty needs an admin's key, Opsgenie one with Configuration access)"
                    }
                    _ => "",
                };
                return Err(refused(format!(
                    "{vendor} answered {status} to {path}{hint}: {why}"
                )));
            }
            return serde_json::from_str(&body)
                .map_err(|e| refused(format!("{vendor}'s answer to {path} is not JSON: {e}")));
        }
        Err(refused(format!("{vendor} did not answer {path}")))
    }

    /// Reads `v` (part of the answer to `path`) as `T`.
    pub fn read<T: DeserializeOwned>(&self, path: &str, v: Value) -> AppResult<T> {
        serde_json::from_value(v).map_err(|e| {
            refused(format!(
                "{}'s answer to {path} is not as its API reference documents: {e}",
                self.vendor
            ))
        })
    }
}
