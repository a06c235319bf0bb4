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
    /// The admin every request acts as unless told otherwise.
    pub admin: Creds,
    /// This app's own folder for files (its git root among them), removed with the app.
    pub files: TempDir,
}

/// How a request authenticates: a bearer token for the API, a session cookie and its CSRF
/// token for pages. `Creds::default()` is nobody.
#[derive(Debug, Clone, Default)]
pub struct Creds {
    pub email: String,
    pub password: String,
    pub token: Option<String>,
    pub cookie: Option<String>,
    pub csrf: Option<String>,
}

pub const ADMIN_EMAIL: &str = "admin@quell.test";
pub const PASSWORD: &str = "correct horse battery";

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

    /// The session cookie this answer sets, if any (`name=value`).
    pub fn session_cookie(&self) -> Option<String> {
        self.cookie("quell")
    }

    /// The cookie named `name` this answer sets, if any (`name=value`).
    pub fn cookie(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}=");
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.starts_with(&prefix))
            .map(|c| c.split(';').next().unwrap_or_default().to_owned())
    }

    /// The CSRF token the page's forms carry.
    pub fn csrf(&self) -> Option<String> {
        let at = self.text.find(r#"name="csrf" value=""#)? + r#"name="csrf" value=""#.len();
        Some(self.text[at..].split('"').next()?.to_owned())
    }
}

impl TestApp {
    pub async fn new(pool: PgPool) -> Self {
        Self::with_oidc(pool, None).await
    }

    /// An app offering single sign-on with `oidc`.
    pub async fn with_oidc(pool: PgPool, oidc: Option<quell::state::OidcSettings>) -> Self {
        Self::with(pool, |c| c.oidc = oidc).await
    }

    /// An app whose configuration `change` alters from the tests' usual one.
    pub async fn with(pool: PgPool, change: impl FnOnce(&mut AppConfig)) -> Self {
        let files = TempDir::new("app");
        let git_root = files.path().join("git");
        std::fs::create_dir_all(&git_root).unwrap();
        let mut config = AppConfig {
            base_url: "http://quell.test".into(),
            trust_forwarded_for: true,
            oidc: None,
            git_roots: vec![git_root],
            webhook_allow: loopback_allowed(),
            live: Default::default(),
            request_timeout: std::time::Duration::from_secs(30),
            bodies: Default::default(),
            uploads: Default::default(),
            metrics_token: None,
        };
        change(&mut config);
        let state = AppState::new(pool.clone(), config);
        let mut app = Self {
            router: quell::app(state),
            pool,
            admin: Creds::default(),
            files,
        };
        app.admin = app.account(ADMIN_EMAIL, "admin").await;
        app
    }

    /// An account with `role`, its API token and a signed-in browser session.
    pub async fn account(&self, email: &str, role: &str) -> Creds {
        let role = quell::auth::domain::UserRole::parse("role", role).unwrap();
        let user = quell::accounts::bootstrap::ensure_account(
            &self.pool,
            &quell::accounts::bootstrap::Account {
                email,
                name: None,
                role,
                password: Some(PASSWORD),
            },
            &quell::audit::Actor::system("test"),
        )
        .await
        .unwrap();
        let token = format!("quell_test_token_for_{}_{}", user.handle, user.id);
        quell::accounts::bootstrap::set_bootstrap_token(&self.pool, &user, &token)
            .await
            .unwrap();
        let mut creds = self.sign_in(email, PASSWORD).await;
        creds.token = Some(token);
        creds
    }

    /// A browser that has opened the sign-in page: the sign-in form's cookie and token, no
    /// session, nobody signed in.
    pub async fn signed_out_browser(&self) -> Creds {
        let page = self
            .call_as(&Creds::default(), Method::GET, "/login", &[], None)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert_eq!(page.session_cookie(), None, "no session before sign-in");
        Creds {
            cookie: page.cookie("quell_login"),
            csrf: page.csrf(),
            ..Default::default()
        }
    }

    /// Signs in through the login form, as a browser does.
    pub async fn sign_in(&self, email: &str, password: &str) -> Creds {
        let mut creds = Creds {
            email: email.into(),
            password: password.into(),
            ..self.signed_out_browser().await
        };
        let r = self
            .form_as(
                &creds,
                "/login",
                &[
                    ("email", email),
                    ("password", password),
                    ("next", "/account"),
                ],
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::SEE_OTHER,
            "sign-in of {email} failed: {}",
            r.text
        );
        creds.cookie = r.session_cookie().or(creds.cookie);
        let account = self
            .call_as(&creds, Method::GET, "/account", &[], None)
            .await;
        assert_eq!(account.status, StatusCode::OK, "{}", account.text);
        creds.csrf = account.csrf();
        creds
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

    pub async fn call_as(
        &self,
        creds: &Creds,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Res {
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "quell.test");
        let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        if let Some(t) = &creds.token
            && !has("authorization")
        {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(c) = &creds.cookie {
            req = req.header("cookie", c);
        }
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

    pub async fn call(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Res {
        self.call_as(&self.admin, method, uri, headers, body).await
    }

    pub async fn get(&self, uri: &str) -> Res {
        self.call(Method::GET, uri, &[], None).await
    }

    pub async fn post(&self, uri: &str, body: Value) -> Res {
        self.call(Method::POST, uri, &[], Some(&body.to_string()))
            .await
    }

    /// Posts `body` as JSON with `creds`' token.
    pub async fn post_as(&self, creds: &Creds, uri: &str, body: Value) -> Res {
        self.call_as(creds, Method::POST, uri, &[], Some(&body.to_string()))
            .await
    }

    pub async fn post_empty(&self, uri: &str) -> Res {
        self.call(Method::POST, uri, &[], None).await
    }

    /// Posts a form as `creds`' browser would, with the session's CSRF token.
    pub async fn form_as(&self, creds: &Creds, uri: &str, fields: &[(&str, &str)]) -> Res {
        let mut ser = form_urlencoded::Serializer::new(String::new());
        if let Some(csrf) = &creds.csrf {
            ser.append_pair("csrf", csrf);
        }
        let body = ser.extend_pairs(fields).finish();
        self.form_raw(creds, uri, body, &[]).await
    }

    /// A form post with exactly this body and extra headers (for CSRF tests).
    pub async fn form_raw(
        &self,
        creds: &Creds,
        uri: &str,
        body: String,
        headers: &[(&str, &str)],
    ) -> Res {
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("host", "quell.test")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(c) = &creds.cookie {
            req = req.header("cookie", c);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        self.send(req.body(Body::from(body)).unwrap()).await
    }

    pub async fn form(&self, uri: &str, fields: &[(&str, &str)]) -> Res {
        self.form_as(&self.admin, uri, fields).await
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

    /// A responder named `name` whose handle is `handle` (the email's local part).
    pub async fn person(&self, name: &str, handle: &str) {
        let r = self
            .post(
                "/api/v1/users",
                json!({"name": name, "email": format!("{handle}@example.com"), "role": "responder"}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }

    /// Makes escalation policy `policy` (its JSON, named in it) and points service `service`
    /// at it.
    pub async fn policy(&self, service: &str, policy: Value) {
        let r = self
            .post("/api/v1/escalation-policies", policy.clone())
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let r = self
            .call(
                Method::PUT,
                &format!("/api/v1/services/{service}/escalation-policy"),
                &[],
                Some(&json!({"escalation_policy": policy["name"]}).to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
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

    /// Opens `n` incidents of `severity` detected `minutes_ago`, in one transaction.
    pub async fn open_many(&self, n: usize, severity: &str, minutes_ago: i64) {
        let detected = at(&ago(minutes_ago));
        let severity = quell::domain::Severity::parse("severity", severity).unwrap();
        let mut tx = self.pool.begin().await.unwrap();
        let now = quell::clock::now(&mut *tx).await.unwrap();
        for i in 0..n {
            quell::incidents::actions::open(
                &mut tx,
                &quell::incidents::actions::Opening {
                    number: None,
                    title: &format!("storm {i}"),
                    severity,
                    service: quell::incidents::actions::ServiceChoice::None,
                    summary: "",
                    impact: "",
                    started_at: Some(detected),
                    detected_at: Some(detected),
                    note: "",
                    now,
                    restricted_to: None,
                    quiet: false,
                },
                &quell::audit::Actor::system("test"),
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }

    pub async fn incident_json(&self, key: &str) -> Value {
        let r = self.get(&format!("/api/v1/incidents/{key}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.json()
    }

    /// Drafts a challenge from the incident's published postmortem: its id and its source.
    pub async fn generated_challenge(&self, key: &str) -> (i64, Value) {
        let r = self
            .post(
                "/api/v1/challenges/generate",
                serde_json::json!({ "incident": key }),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let id = r.json()["id"].as_i64().unwrap();
        let src = self.get(&format!("/api/v1/challenges/{id}/source")).await;
        assert_eq!(src.status, StatusCode::OK, "{}", src.text);
        (id, src.json())
    }

    pub async fn timeline(&self, key: &str) -> Vec<Value> {
        let r = self.get(&format!("/api/v1/incidents/{key}/timeline")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.json()["items"].as_array().unwrap().clone()
    }
}

/// What the tests let webhooks reach: this machine, where their listeners run.
pub fn loopback_allowed() -> quell::egress::Allow {
    quell::egress::Allow::parse("127.0.0.1,::1,localhost").unwrap()
}

/// A time `minutes` before now (whole seconds), as RFC 3339.
pub fn ago(minutes: i64) -> String {
    (Utc::now().trunc_subsecs(0) - Duration::minutes(minutes)).to_rfc3339()
}

pub fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

/// An integration as created: its id, key and (generic only) signing secret.
#[derive(Debug, Clone)]
pub struct Hook {
    pub id: String,
    pub key: String,
    pub secret: Option<String>,
}

impl TestApp {
    /// Creates an integration of `format`.
    pub async fn integration(&self, name: &str, format: &str) -> Hook {
        let r = self
            .post(
                "/api/v1/integrations",
                json!({"name": name, "format": format}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let j = r.json();
        Hook {
            id: j["id"].as_str().unwrap().to_owned(),
            key: j["key"].as_str().unwrap().to_owned(),
            secret: j["signing_secret"].as_str().map(str::to_owned),
        }
    }

    /// Posts `body` to a webhook path as a sender would: no session, the given headers.
    pub async fn hook(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Res {
        self.call_as(&Creds::default(), Method::POST, path, headers, Some(body))
            .await
    }

    /// Posts to `/hooks/{format}/{id}` with the hook's key as a bearer token.
    pub async fn alert(&self, format: &str, hook: &Hook, body: &Value) -> Res {
        let auth = format!("Bearer {}", hook.key);
        self.hook(
            &format!("/hooks/{format}/{}", hook.id),
            &[("authorization", &auth)],
            &body.to_string(),
        )
        .await
    }

    /// Posts an Alertmanager notification to `hook` and checks it was taken (202).
    pub async fn alertmanager(&self, hook: &Hook, body: &Value) {
        let r = self.alert("alertmanager", hook, body).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }

    /// How many alerts are stored, whatever their incident.
    pub async fn stored_alerts(&self) -> i64 {
        sqlx::query_scalar::<_, i64>("select count(*) from alerts")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// The stored alerts: how many, and that every incident's alert lines (kept by the ingest
    /// statements, never recounted on read) say exactly what counting its alerts says.
    pub async fn stored_alerts_agreeing_with_lines(&self) -> i64 {
        let drift: Vec<(i64, String, i64, i64, i64, i64)> = sqlx::query_as(
            "with counted as (
                 select incident_id, summary, rule_id, count(*) as total,
                        count(*) filter (where status <> 'resolved') as open,
                        min(received_at) as first_at, max(last_received_at) as last_at,
                        max(severity) as severity
                 from alerts group by incident_id, summary, rule_id),
             lines as (
                 select incident_id, summary, rule_id, sum(total)::int8 as total,
                        sum(open)::int8 as open, min(first_received_at) as first_received_at,
                        max(last_received_at) as last_received_at, max(severity) as severity
                 from alert_lines group by incident_id, summary, rule_id)
             select coalesce(c.incident_id, l.incident_id), coalesce(c.summary, l.summary),
                    coalesce(c.total, 0), coalesce(l.total, 0), coalesce(c.open, 0),
                    coalesce(l.open, 0)
             from counted c
             full join lines l on l.incident_id = c.incident_id and l.summary = c.summary
                  and l.rule_id is not distinct from c.rule_id
             where (c.total, c.open, c.first_at, c.last_at, c.severity)
                   is distinct from (l.total, l.open, l.first_received_at, l.last_received_at, l.severity)",
        )
        .fetch_all(&self.pool)
        .await
        .unwrap();
        assert!(
            drift.is_empty(),
            "alert lines disagree with the alerts (incident, summary, counted total, line total, counted open, line open): {drift:?}"
        );
        self.stored_alerts().await
    }

    /// Keys of the incidents opened so far, oldest first.
    pub async fn incident_keys(&self) -> Vec<String> {
        sqlx::query_scalar::<_, i64>("select number from incidents order by number")
            .fetch_all(&self.pool)
            .await
            .unwrap()
            .into_iter()
            .map(|n| format!("INC-{n}"))
            .collect()
    }
}

/// Standard Webhooks headers signing `body` with `secret` as message `id` at Unix time `ts`.
pub fn signed_headers(secret: &str, id: &str, ts: i64, body: &str) -> Vec<(String, String)> {
    let sig = quell::notify::domain::sign(secret, id, ts, body).unwrap();
    vec![
        ("webhook-id".into(), id.into()),
        ("webhook-timestamp".into(), ts.to_string()),
        ("webhook-signature".into(), sig),
    ]
}

/// An Alertmanager webhook (v4) notification for `group`, one alert per `(fingerprint, status)`,
/// shaped as Alertmanager's documentation shows it.
pub fn alertmanager_payload(group: &str, alerts: &[(&str, &str)], labels: Value) -> Value {
    let items: Vec<Value> = alerts
        .iter()
        .map(|(fp, status)| {
            let mut l = labels.clone();
            l["alertname"] = json!(group);
            l["instance"] = json!(format!("{fp}:9100"));
            json!({
                "status": status,
                "labels": l,
                "annotations": {"summary": format!("{group} on {fp}"), "runbook_url": "https://runbooks/x"},
                "startsAt": ago(3),
                "endsAt": if *status == "resolved" { json!(ago(0)) } else { json!("0001-01-01T00:00:00Z") },
                "generatorURL": "http://prometheus:9090/graph?g0.expr=up",
                "fingerprint": fp,
            })
        })
        .collect();
    let status = if alerts.iter().any(|(_, s)| *s == "firing") {
        "firing"
    } else {
        "resolved"
    };
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"{group}\"}}"),
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "quell",
        "groupLabels": {"alertname": group},
        "commonLabels": {"alertname": group},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": items,
    })
}

/// A folder of one test's own under the system's temp directory, named so that no other test,
/// process or account can hold it (a fixed name made the suite fail for the next account with
/// "Permission denied"), and removed when dropped.
#[derive(Debug)]
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    pub fn new(what: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "quell-it-{what}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir(&dir).expect("a fresh folder");
        Self(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl TestApp {
    /// The folder this app may read git repositories from (`QUELL_GIT_ROOTS`).
    pub fn git_root(&self) -> std::path::PathBuf {
        self.files.path().join("git")
    }
}

impl TestApp {
    /// Posts `body` as the raw request body (an uploaded file), as the admin's API token.
    pub async fn upload(&self, uri: &str, body: Vec<u8>) -> Res {
        let req = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("host", "quell.test")
            .header("content-type", "application/octet-stream")
            .header(
                "authorization",
                format!("Bearer {}", self.admin.token.as_deref().unwrap()),
            );
        self.send(req.body(Body::from(body)).unwrap()).await
    }

    /// Posts a `multipart/form-data` form as `creds`' browser would (CSRF token first), with
    /// text fields and files (field, file name, bytes).
    pub async fn multipart_as(
        &self,
        creds: &Creds,
        uri: &str,
        fields: &[(&str, &str)],
        files: &[(&str, &str, &[u8])],
    ) -> Res {
        let boundary = "quell-test-boundary-7d1f";
        let mut body: Vec<u8> = Vec::new();
        let mut text = |name: &str, value: &str| {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                )
                .as_bytes(),
            );
        };
        if let Some(csrf) = &creds.csrf {
            text("csrf", csrf);
        }
        for (k, v) in fields {
            text(k, v);
        }
        for (field, name, bytes) in files {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\ncontent-disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\ncontent-type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("host", "quell.test")
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            );
        if let Some(c) = &creds.cookie {
            req = req.header("cookie", c);
        }
        self.send(req.body(Body::from(body)).unwrap()).await
    }
}

/// One Server-Sent Event as read off a stream.
#[derive(Debug, Clone, Default)]
pub struct Sse {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

impl Sse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

/// An open event stream, read event by event.
pub struct EventStream {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: Body,
    buffer: String,
}

impl EventStream {
    pub fn header_value(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The next event, skipping `ping`s, or `None` when the stream ended or `wait` passed.
    pub async fn next_event(&mut self, wait: std::time::Duration) -> Option<Sse> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(at) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..at + 2).collect();
                let mut e = Sse::default();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        e.event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("id:") {
                        e.id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        e.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if e.event == "ping" || (e.event.is_empty() && e.data.is_empty()) {
                    continue;
                }
                return Some(e);
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .ok()??;
            if let Ok(data) = frame.ok()?.into_data() {
                self.buffer.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// Waits for the first event `pick` accepts; panics naming `what` after `wait`.
    pub async fn wait_for(
        &mut self,
        what: &str,
        wait: std::time::Duration,
        pick: impl Fn(&Sse) -> bool,
    ) -> Sse {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next_event(left).await {
                Some(e) if pick(&e) => return e,
                Some(_) => continue,
                None => panic!("no {what} within {wait:?}"),
            }
        }
    }
}

/// Opens `uri` as an event stream on `router` (one replica) with `creds`' session.
pub async fn open_stream(
    router: &Router,
    creds: &Creds,
    uri: &str,
    headers: &[(&str, &str)],
) -> EventStream {
    let mut req = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .header("host", "quell.test")
        .header("accept", "text/event-stream");
    if let Some(c) = &creds.cookie {
        req = req.header("cookie", c);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = router
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .expect("router answers");
    let (parts, body) = res.into_parts();
    EventStream {
        status: parts.status,
        headers: parts.headers,
        body,
        buffer: String::new(),
    }
}

impl TestApp {
    /// Another replica: its own router and hub over the same database.
    pub fn replica(&self) -> Router {
        self.replica_with(Default::default())
    }

    pub fn replica_with(&self, live: quell::state::LiveSettings) -> Router {
        quell::app(AppState::new(
            self.pool.clone(),
            AppConfig {
                base_url: "http://quell.test".into(),
                trust_forwarded_for: true,
                oidc: None,
                git_roots: vec![],
                webhook_allow: loopback_allowed(),
                live,
                request_timeout: std::time::Duration::from_secs(30),
                bodies: Default::default(),
                uploads: Default::default(),
                metrics_token: None,
            },
        ))
    }
}

/// The test binary's allocator: the system's, counting what each thread holds, so a test can
/// measure the memory a piece of work on its own thread takes (`held_peak`), undisturbed by the
/// tests running beside it.
pub struct Counting;

thread_local! {
    static HELD: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
    static PEAK: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

fn count(delta: isize) {
    // During thread teardown the counters may be gone; nothing is counted then.
    let _ = HELD.try_with(|h| {
        let now = h.get() + delta;
        h.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now)
            }
        });
    });
}

unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        count(-(layout.size() as isize));
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        count(new as isize - layout.size() as isize);
        unsafe { std::alloc::System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `work` on this thread and returns its result with the most memory it held at once
/// beyond what the thread held before, in bytes.
pub fn held_peak<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let base = HELD.with(|h| h.get());
    PEAK.with(|p| p.set(base));
    let out = work();
    let peak = PEAK.with(|p| p.get());
    (out, (peak - base).max(0) as usize)
}

/// The database's now: the clock Quell trusts.
pub async fn db_now(pool: &PgPool) -> DateTime<Utc> {
    sqlx::query_scalar("select now()")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// What a finished command printed, once it is checked to have succeeded (what it printed to
/// either stream shown if not).
pub fn printed(out: std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Who schedule `id` names from `from` to `to`, as its API writes them: (handle, from, to).
pub async fn on_call_spans(
    app: &TestApp,
    id: i64,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<(String, String, String)> {
    let iso = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let r = app
        .get(&format!(
            "/api/v1/schedules/{id}/on-call?from={}&to={}",
            iso(from),
            iso(to)
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["person"].as_str().unwrap().to_owned(),
                s["from"].as_str().unwrap().to_owned(),
                s["to"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The address of database `name` on the tests' server.
pub fn url_of(name: &str) -> String {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL (scripts/test sets it)");
    let mut url = url::Url::parse(&base).unwrap();
    url.set_path(&format!("/{name}"));
    url.to_string()
}

pub async fn name_of(pool: &PgPool) -> String {
    sqlx::query_scalar("select current_database()")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// `quell <args>` against database `url`: (success, standard output then standard error).
pub fn quell(url: &str, args: &[&str]) -> (bool, String) {
    quell_with(url, args, &[])
}

/// [`quell`] with these environment variables set besides.
pub fn quell_with(url: &str, args: &[&str], vars: &[(&str, &str)]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quell"))
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.success(), format!("{stdout}{stderr}"))
}
