//! Test harness: the real router over a fresh database (one per test, from `#[sqlx::test]`),
//! driven in-process with `oneshot`.
#![allow(dead_code)]

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::{DateTime, Duration, SubsecRound, Utc};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sqlx::PgPool;
use tower::ServiceExt;

use quell::state::{AppConfig, AppState};

pub struct TestApp {
    pub router: Router,
    pub pool: PgPool,
}

#[derive(Debug)]
pub struct Res {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Res {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The error code of a JSON error answer.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The field named by a 422.
    pub fn field(&self) -> String {
        self.json()["error"]["details"]["fields"][0]["field"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

impl TestApp {
    pub fn new(pool: PgPool) -> Self {
        let state = AppState::new(
            pool.clone(),
            AppConfig {
                base_url: "http://quell.test".into(),
            },
        );
        Self {
            router: quell::app(state),
            pool,
        }
    }

    pub async fn send(&self, req: Request<Body>) -> Res {
        let res = self
            .router
            .clone()
            .oneshot(req)
            .await
            .expect("router answers");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        Res {
            status,
            headers,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn call(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Res {
        let mut req = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let body = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Body::from(b.to_owned())
            }
            None => Body::empty(),
        };
        self.send(req.body(body).unwrap()).await
    }

    pub async fn get(&self, uri: &str) -> Res {
        self.call(Method::GET, uri, &[], None).await
    }

    pub async fn post(&self, uri: &str, body: Value) -> Res {
        self.call(Method::POST, uri, &[], Some(&body.to_string()))
            .await
    }

    pub async fn post_empty(&self, uri: &str) -> Res {
        self.call(Method::POST, uri, &[], None).await
    }

    pub async fn form(&self, uri: &str, fields: &[(&str, &str)]) -> Res {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let req = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap();
        self.send(req).await
    }

    /// Creates a service the tests can attach incidents to.
    pub async fn service(&self, name: &str) {
        let r = self
            .post(
                "/api/v1/services",
                json!({"name": name, "tier": 1, "slo_target_percent": 99.9, "avg_requests_per_second": 60}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }

    pub async fn person(&self, name: &str, handle: &str) {
        let r = self
            .post(
                "/api/v1/people",
                json!({"name": name, "email": format!("{handle}@example.com"), "handle": handle}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }

    /// Opens an incident and returns its key.
    pub async fn incident(&self, body: Value) -> String {
        let r = self.post("/api/v1/incidents", body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r.json()["key"].as_str().unwrap().to_owned()
    }

    /// An incident that started `minutes_ago` and was detected then too.
    pub async fn past_incident(&self, minutes_ago: i64) -> String {
        let t = ago(minutes_ago);
        self.incident(
            json!({"title": "Past", "severity": "Sev2", "started_at": t, "detected_at": t}),
        )
        .await
    }

    pub async fn incident_json(&self, key: &str) -> Value {
        let r = self.get(&format!("/api/v1/incidents/{key}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.json()
    }

    pub async fn timeline(&self, key: &str) -> Vec<Value> {
        let r = self.get(&format!("/api/v1/incidents/{key}/timeline")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.json()["items"].as_array().unwrap().clone()
    }
}

/// A time `minutes` before now (whole seconds), as RFC 3339.
pub fn ago(minutes: i64) -> String {
    (Utc::now().trunc_subsecs(0) - Duration::minutes(minutes)).to_rfc3339()
}

pub fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}
