//! Quell's own metrics as an operator reads them: a real Prometheus (Debian's package, which
//! scripts/test installs) scrapes a running Quell with its token and evaluates the example
//! alert rules of docs/prometheus against what it scraped; `promtool` checks the rules, and
//! every quell_* series they name is one Quell exposes.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{TempDir, TestApp, alertmanager_payload};

const TOKEN: &str = "scrape-me-with-this-long-random-token";
const RULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/docs/prometheus/quell-alerts.yml"
);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Serves the app on a port of its own; its address.
async fn serve(app: &TestApp) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = app.router.clone();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr.to_string()
}

/// Prometheus, killed when dropped.
struct Prometheus {
    child: std::process::Child,
    url: String,
    _dir: TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Prometheus scraping `target` every second with the metrics token, with Quell's rules.
fn prometheus(target: &str) -> Prometheus {
    let dir = TempDir::new("prometheus");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {RULES}\n\
             scrape_configs:\n  - job_name: quell\n    authorization:\n      credentials: {TOKEN}\n\
             \x20   static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let child = std::process::Command::new("/usr/bin/prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("Debian's prometheus (scripts/test installs it)");
    Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    }
}

/// Asks Prometheus until `ready` accepts its answer (at most 60 s).
async fn ask(p: &Prometheus, path: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let http = reqwest::Client::new();
    let mut last = Value::Null;
    for _ in 0..240 {
        if let Ok(r) = http.get(format!("{}{path}", p.url)).send().await
            && let Ok(v) = r.json::<Value>().await
        {
            if ready(&v) {
                return v;
            }
            last = v;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("Prometheus never answered {path} as expected; last: {last}");
}

/// A query's single value, as a number.
fn value(v: &Value) -> Option<f64> {
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

fn query(q: &str) -> String {
    let mut s = String::from("/api/v1/query?query=");
    for b in q.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => s.push(b as char),
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

#[sqlx::test]
async fn a_real_prometheus_scrapes_quell_and_evaluates_its_alert_rules(pool: PgPool) {
    let app = TestApp::with(pool, |c| c.metrics_token = Some(TOKEN.into())).await;
    let addr = serve(&app).await;
    let http = reqwest::Client::new();
    let url = format!("http://{addr}/metrics");

    // Only with the token.
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().contains_key("www-authenticate"));
    let r = http.get(&url).bearer_auth("not-it").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = http.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );

    // Alerts taken and refused, by format.
    let hook = app.integration("Prometheus", "alertmanager").await;
    let body = alertmanager_payload("metrics-test", &[("DiskFull", "firing")], json!({}));
    app.alertmanager(&hook, &body).await;
    let wrong = app
        .hook(
            &format!("/hooks/alertmanager/{}", hook.id),
            &[("authorization", "Bearer wrong-key")],
            &body.to_string(),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.text);

    let p = prometheus(&addr);
    let up = ask(&p, &query(r#"up{job="quell"}"#), |v| value(v) == Some(1.0)).await;
    assert_eq!(value(&up), Some(1.0), "{up}");
    let taken = ask(
        &p,
        &query(r#"sum(quell_alerts_total{format="alertmanager",outcome="accepted"})"#),
        |v| value(v).is_some_and(|n| n >= 1.0),
    )
    .await;
    assert!(value(&taken).unwrap() >= 1.0, "{taken}");
    ask(
        &p,
        &query(
            r#"sum(quell_webhook_requests_total{format="alertmanager",outcome="unauthorized"})"#,
        ),
        |v| value(v).is_some_and(|n| n >= 1.0),
    )
    .await;
    // Requests by route template, never by the path asked for.
    let routes = ask(
        &p,
        &query(
            r#"count by (route) (quell_http_request_duration_seconds_count{route=~"/hooks/.*"})"#,
        ),
        |v| {
            v["data"]["result"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        },
    )
    .await;
    let names: Vec<&str> = routes["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["metric"]["route"].as_str())
        .collect();
    assert!(names.iter().all(|n| !n.contains(&hook.id)), "{names:?}");
    // The lanes, the pool and the outbox are there too.
    for series in [
        "quell_lane_batch_alerts_count",
        "quell_db_pool_connections",
        "quell_db_begin_seconds_count",
    ] {
        ask(&p, &query(series), |v| value(v).is_some()).await;
    }

    // Prometheus loaded the rules and evaluates every one without error.
    let rules = ask(&p, "/api/v1/rules", |v| {
        let all: Vec<&Value> = v["data"]["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().into_iter().flatten())
            .collect();
        !all.is_empty() && all.iter().all(|r| r["health"] == "ok")
    })
    .await;
    let count = rules["data"]["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(count, 8, "{rules}");
}

#[test]
fn the_example_rules_pass_promtool_and_name_only_series_quell_exposes() {
    let out = std::process::Command::new("/usr/bin/promtool")
        .args(["check", "rules", RULES])
        .output()
        .expect("Debian's promtool (in the prometheus package)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let exposed = quell::metrics::get().names();
    let rules = std::fs::read_to_string(RULES).unwrap();
    let names = regex::Regex::new(r"quell_[a-z_]+").unwrap();
    for name in names.find_iter(&rules).map(|m| m.as_str()) {
        let family = ["_bucket", "_count", "_sum", "_total"]
            .iter()
            .fold(name, |n, s| n.strip_suffix(s).unwrap_or(n));
        assert!(
            exposed.iter().any(|e| e == family),
            "the rules name {name}, which Quell does not expose: {exposed:?}"
        );
    }
}

#[sqlx::test]
async fn metrics_are_off_until_a_token_is_set(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.get("/metrics").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("QUELL_METRICS_TOKEN"), "{}", r.text);
}
