//! Heartbeats: monitors with an interval and grace, owned by a service; pings by Quell's
//! address and Opsgenie's; a missed ping opening one incident through routing on the monitor's
//! service however many engines race, the next ping resolving its alert; the API's refusals and
//! If-Match; the page.

use crate::common;
use crate::silences::{count, paged_service};

use axum::http::{Method, StatusCode};
use common::{Creds, TestApp};
use serde_json::{Value, json};
use sqlx::PgPool;

async fn monitor(app: &TestApp, body: Value) -> common::Res {
    app.post("/api/v1/heartbeats", body).await
}

async fn ping(app: &TestApp, method: Method, path: &str, auth: Option<&str>) -> common::Res {
    let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
    app.call_as(&Creds::default(), method, path, &headers, None)
        .await
}

/// As if the monitor's interval and grace had gone by without a ping.
async fn time_passes(pool: &PgPool) {
    sqlx::query("update heartbeat_monitors set due_at = now() - interval '1 second'")
        .execute(pool)
        .await
        .unwrap();
}

#[sqlx::test]
async fn a_missed_heartbeat_opens_one_incident_on_its_service_and_the_next_ping_resolves_it(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    paged_service(&app).await;
    let r = monitor(
        &app,
        json!({"name": "nightly backup", "service": "payments-gateway", "interval_minutes": 5,
               "grace_minutes": 1, "description": "pg_dump of the ledger"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let made = r.json();
    let (id, key) = (
        made["id"].as_str().unwrap().to_owned(),
        made["key"].as_str().unwrap().to_owned(),
    );
    assert_eq!(made["health"], "waiting");
    assert!(
        made["ping_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/hooks/heartbeat/{id}"))
    );
    let path = format!("/hooks/heartbeat/{id}");

    // Wrong keys and unknown monitors are refused alike.
    let bearer = format!("Bearer {key}");
    let r = ping(&app, Method::POST, &path, Some("Bearer wrong")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    let other = format!("/hooks/heartbeat/{}", uuid::Uuid::new_v4());
    let r = ping(&app, Method::POST, &other, Some(&bearer)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    let r = ping(&app, Method::POST, &path, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);

    // A POST with the key, and a bare GET with it in the query, as cron's curl sends it.
    let r = ping(&app, Method::POST, &path, Some(&bearer)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let r = ping(&app, Method::GET, &format!("{path}?key={key}"), None).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let seen = app.get(&format!("/api/v1/heartbeats/{id}")).await.json();
    assert_eq!(seen["health"], "up");
    assert_eq!(seen["pings"], 2);
    assert!(seen["last_ping_at"].is_string());

    // Nothing is missed before its time; once it passes, three engines racing open one
    // incident, on the monitor's service (the default rule names none), paging once.
    quell::alerts::heartbeats::missed_due(&pool).await.unwrap();
    assert!(app.incident_keys().await.is_empty());
    time_passes(&pool).await;
    let (a, b, c) = tokio::join!(
        quell::alerts::heartbeats::missed_due(&pool),
        quell::alerts::heartbeats::missed_due(&pool),
        quell::alerts::heartbeats::missed_due(&pool)
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    quell::alerts::heartbeats::missed_due(&pool).await.unwrap();
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "one incident, not one per replica");
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(incident["service"], "payments-gateway", "{incident}");
    assert_eq!(incident["status"], "triggered");
    assert!(
        incident["title"]
            .as_str()
            .unwrap()
            .contains("Heartbeat \"nightly backup\" missed"),
        "{incident}"
    );
    assert_eq!(count(&pool, "select count(*) from escalations").await, 1);
    assert_eq!(count(&pool, "select count(*) from alerts").await, 1);
    let seen = app.get(&format!("/api/v1/heartbeats/{id}")).await.json();
    assert_eq!(seen["health"], "down");
    assert!(seen["down_since"].is_string());

    // Opsgenie's ping, by name: a wrong key in Opsgenie's error shape, then the right one
    // answers as Opsgenie does and resolves the alert (the incident mitigates).
    let og = "/v2/heartbeats/nightly%20backup/ping";
    let r = ping(&app, Method::POST, og, Some("GenieKey nope")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    assert!(r.json()["message"].is_string() && r.json()["requestId"].is_string());
    let r = ping(&app, Method::GET, og, Some(&format!("GenieKey {key}"))).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(r.json()["result"], "PONG - Heartbeat received");
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(incident["status"], "mitigated", "{incident}");
    let seen = app.get(&format!("/api/v1/heartbeats/{id}")).await.json();
    assert_eq!(seen["health"], "up");

    // Missed again later: the incident is still open (mitigated), so the alert rejoins it.
    time_passes(&pool).await;
    quell::alerts::heartbeats::missed_due(&pool).await.unwrap();
    assert_eq!(app.incident_keys().await.len(), 1);
    assert_eq!(count(&pool, "select count(*) from alerts").await, 2);

    // The page lists it with its health and last ping.
    let page = app.get("/heartbeats").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("nightly backup"));
    assert!(page.text.contains("health-down"), "{}", page.text);
}

#[sqlx::test]
async fn monitors_refuse_bad_input_keep_if_match_and_are_made_from_the_page(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.service("search").await;
    let good = json!({"name": "reindex", "service": "search", "interval_minutes": 60});
    for (body, field) in [
        (
            json!({"name": "reindex", "service": "nope", "interval_minutes": 60}),
            "service",
        ),
        (
            json!({"name": "reindex", "service": "search", "interval_minutes": 0}),
            "interval_minutes",
        ),
        (
            json!({"name": "re/index", "service": "search", "interval_minutes": 5}),
            "name",
        ),
        (
            json!({"name": "reindex", "service": "search", "interval_minutes": 5,
                   "severity": "sev1"}),
            "severity",
        ),
    ] {
        let r = monitor(&app, body).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains(field), "{field}: {}", r.text);
    }
    assert_eq!(
        count(&pool, "select count(*) from heartbeat_monitors").await,
        0
    );
    let r = monitor(&app, good.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_str().unwrap().to_owned();
    let r = monitor(&app, good.clone()).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    // A change from an older copy is refused; from the current one it applies.
    let path = format!("/api/v1/heartbeats/{id}");
    let changed = json!({"name": "reindex", "service": "search", "interval_minutes": 30,
                         "grace_minutes": 10});
    let put = |tag: &'static str| {
        let (app, path, body) = (&app, path.clone(), changed.to_string());
        async move {
            app.call(Method::PUT, &path, &[("if-match", tag)], Some(&body))
                .await
        }
    };
    let r = put("\"v7\"").await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let r = put("\"v1\"").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["interval_minutes"], 30);
    assert_eq!(r.json()["version"], 2);

    // A viewer reads but cannot make one; a responder makes one from the page and sees its
    // key once.
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            "/api/v1/heartbeats",
            &[],
            Some(&good.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let responder = app.account("oncall@example.com", "responder").await;
    let r = app
        .form_as(
            &responder,
            "/heartbeats",
            &[
                ("name", "queue consumer"),
                ("service", "search"),
                ("interval_minutes", "abc"),
                ("grace_minutes", "0"),
                ("severity", "warning"),
                ("description", ""),
                ("enabled", "on"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("whole number of minutes"));
    let r = app
        .form_as(
            &responder,
            "/heartbeats",
            &[
                ("name", "queue consumer"),
                ("service", "search"),
                ("interval_minutes", "10"),
                ("grace_minutes", "0"),
                ("severity", "warning"),
                ("description", "<script>x</script>"),
                ("enabled", "on"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(r.text.contains("shown this once"));
    assert!(!r.text.contains("<script>x</script>"));
    let list = app.get("/api/v1/heartbeats").await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 2);

    // Removed with If-Match.
    let r = app
        .call(Method::DELETE, &path, &[("if-match", "\"v1\"")], None)
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let r = app
        .call(Method::DELETE, &path, &[("if-match", "\"v2\"")], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
}

#[sqlx::test]
async fn a_held_missed_heartbeat_keeps_its_service_and_a_paused_monitor_resolves_its_alert(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    paged_service(&app).await;
    let body = json!({"name": "ledger export", "service": "payments-gateway",
                      "interval_minutes": 5});
    let r = monitor(&app, body.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_str().unwrap().to_owned();

    // Switching Quell's heartbeat integration off does not lose missed pings; a silence holds
    // the alert, and handed back at its end it still opens the incident on the monitor's
    // service (the default rule names none).
    let list = app.get("/api/v1/integrations").await.json();
    let source = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "Quell heartbeats")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/integrations/{source}"),
            &[],
            Some(&json!({"enabled": false}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .post(
            "/api/v1/silences",
            json!({"matchers": ["alertname=HeartbeatMissed"], "duration": "1h",
                   "comment": "export moved"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let silence = r.json()["id"].as_i64().unwrap();
    time_passes(&pool).await;
    quell::alerts::heartbeats::missed_due(&pool).await.unwrap();
    assert!(app.incident_keys().await.is_empty(), "held by the silence");
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/silences/{silence}/expire"),
            &[("if-match", "*")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    quell::alerts::unsilence::hand_back(&pool).await.unwrap();
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1);
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(incident["service"], "payments-gateway", "{incident}");
    assert_eq!(count(&pool, "select count(*) from escalations").await, 1);

    // Paused while down: nothing will ping it, so its alert resolves; on again, it waits for
    // a first ping.
    let path = format!("/api/v1/heartbeats/{id}");
    let mut paused = body.clone();
    paused["enabled"] = json!(false);
    let r = app
        .call(
            Method::PUT,
            &path,
            &[("if-match", "*")],
            Some(&paused.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["health"], "paused");
    quell::alerts::heartbeats::missed_due(&pool).await.unwrap();
    assert_eq!(
        count(
            &pool,
            "select count(*) from alerts where status <> 'resolved'"
        )
        .await,
        0
    );
    assert_eq!(app.incident_json(&keys[0]).await["status"], "mitigated");
    let r = app
        .call(
            Method::PUT,
            &path,
            &[("if-match", "*")],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["health"], "waiting");
}
