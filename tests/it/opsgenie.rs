//! Opsgenie's Alert API spoken natively: an Opsgenie client with only its base URL changed
//! creates, deduplicates (by alias), acknowledges and closes alerts in Quell, authenticated by a
//! Quell integration's key as `GenieKey`, and reads refusals in Opsgenie's error shape.

use axum::http::StatusCode;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Res, TestApp};

/// Opsgenie's own example of a create-alert request (its Alert API reference).
fn example() -> Value {
    json!({
        "message": "An example alert message",
        "alias": "Life is too short for no alias",
        "description": "Every alert needs a description",
        "responders": [
            {"id": "4513b7ea-3b91-438f-b7e4-e3e54af9147c", "type": "team"},
            {"name": "NOC", "type": "team"},
            {"id": "bb4d9938-c3c2-455d-aaab-727aa701c0d8", "type": "user"},
            {"username": "trinity@opsgenie.com", "type": "user"}
        ],
        "visibleTo": [{"id": "4513b7ea-3b91-438f-b7e4-e3e54af9147c", "type": "team"}],
        "actions": ["Restart", "AnExampleAction"],
        "tags": ["OverwriteQuietHours", "Critical"],
        "details": {"key1": "value1", "key2": "value2"},
        "entity": "An example entity",
        "priority": "P1"
    })
}

async fn genie(app: &TestApp, key: &str, path: &str, body: &Value) -> Res {
    let auth = format!("GenieKey {key}");
    app.hook(path, &[("authorization", &auth)], &body.to_string())
        .await
}

/// Opsgenie's error shape: a message, how long it took, a request id.
fn refused(r: &Res, status: StatusCode) -> String {
    assert_eq!(r.status, status, "{}", r.text);
    let j = r.json();
    assert!(j["took"].is_number() && j["requestId"].is_string(), "{j}");
    j["message"].as_str().unwrap().to_owned()
}

#[sqlx::test]
async fn opsgenie_alerts_are_created_deduplicated_acknowledged_and_closed(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;

    let r = genie(&app, &og.key, "/v2/alerts", &example()).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let j = r.json();
    assert_eq!(j["result"], "Request will be processed");
    assert!(j["took"].is_number() && j["requestId"].is_string(), "{j}");
    // The same alias again: the same alert, the same incident.
    let r = genie(&app, &og.key, "/v2/alerts", &example()).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let key = keys[0].clone();
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["severity"], "Sev1", "P1: {incident}");
    assert_eq!(incident["title"], "An example alert message", "{incident}");
    assert_eq!(incident["status"], "triggered");

    let alias = "Life%20is%20too%20short%20for%20no%20alias";
    let ack = format!("/v2/alerts/{alias}/acknowledge?identifierType=alias");
    let r = genie(
        &app,
        &og.key,
        &ack,
        &json!({"user": "Monitoring Script", "note": "on it"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
    let close = format!("/v2/alerts/{alias}/close?identifierType=alias");
    let r = genie(&app, &og.key, &close, &json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");

    // Without an alias every create is a new alert; P5 is the lowest severity.
    let r = genie(
        &app,
        &og.key,
        "/v2/alerts",
        &json!({"message": "Disk 91% on db-7", "priority": "P5"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(app.incident_json(&keys[1]).await["severity"], "Sev4");
}

#[sqlx::test]
async fn opsgenie_refusals_come_in_opsgenies_shape_and_change_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;
    let pd = app.integration("datadog", "pagerduty-events-v2").await;

    let wrong = genie(&app, "not-a-key", "/v2/alerts", &example()).await;
    assert!(refused(&wrong, StatusCode::UNAUTHORIZED).contains("key"));
    let none = app.hook("/v2/alerts", &[], &example().to_string()).await;
    assert!(refused(&none, StatusCode::UNAUTHORIZED).contains("GenieKey"));
    // Another format's key names where it belongs.
    let other = genie(&app, &pd.key, "/v2/alerts", &example()).await;
    assert!(refused(&other, StatusCode::UNAUTHORIZED).contains("/v2/enqueue"));
    // What a right key sends wrong is said, as Opsgenie says it; a wrong key learns nothing.
    let empty = genie(&app, &og.key, "/v2/alerts", &json!({"alias": "x"})).await;
    assert_eq!(
        refused(&empty, StatusCode::UNPROCESSABLE_ENTITY),
        "Message can not be empty."
    );
    let body = json!({"message": "m", "priority": "P9"});
    let p9 = genie(&app, &og.key, "/v2/alerts", &body).await;
    assert_eq!(
        refused(&p9, StatusCode::UNPROCESSABLE_ENTITY),
        "Priority should be one of [P1, P2, P3, P4, P5]."
    );
    let hidden = genie(&app, "not-a-key", "/v2/alerts", &body).await;
    assert!(!refused(&hidden, StatusCode::UNAUTHORIZED).contains("Priority"));
    let tags = genie(
        &app,
        &og.key,
        "/v2/alerts",
        &json!({"message": "m", "tags": "a,b"}),
    )
    .await;
    assert!(refused(&tags, StatusCode::UNPROCESSABLE_ENTITY).contains("tags"));
    let by_id = genie(&app, &og.key, "/v2/alerts/abc-123/close", &json!({})).await;
    assert!(refused(&by_id, StatusCode::UNPROCESSABLE_ENTITY).contains("identifierType=alias"));
    let by_id = genie(
        &app,
        "not-a-key",
        "/v2/alerts/x/close?identifierType=alias",
        &json!({}),
    )
    .await;
    refused(&by_id, StatusCode::UNAUTHORIZED);
    let snooze = genie(
        &app,
        &og.key,
        "/v2/alerts/x/snooze?identifierType=alias",
        &json!({}),
    )
    .await;
    assert!(refused(&snooze, StatusCode::NOT_FOUND).contains("acknowledge and close"));
    // Other methods and paths answer in Opsgenie's shape too, which its SDK reads.
    let auth = format!("GenieKey {}", og.key);
    for (method, path) in [
        (
            axum::http::Method::GET,
            "/v2/alerts/abc-123?identifierType=id",
        ),
        (axum::http::Method::DELETE, "/v2/alerts/abc-123"),
        (axum::http::Method::GET, "/v2/alerts/requests/9c1f5c0e"),
        (
            axum::http::Method::PUT,
            "/v2/alerts/x/message?identifierType=alias",
        ),
        (axum::http::Method::GET, "/v2/alerts"),
    ] {
        let req = axum::http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header("host", "quell.test")
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .body(axum::body::Body::from("{}"))
            .unwrap();
        let r = app.send(req).await;
        let why = refused(&r, StatusCode::NOT_FOUND);
        assert!(
            why.contains(&format!("{method} ")) && why.contains("POST /v2/alerts"),
            "{why}"
        );
    }
    assert!(app.incident_keys().await.is_empty());
    assert_eq!(app.stored_alerts().await, 0);
}

/// Runs Opsgenie's own Python SDK (scripts/test installs it in target/opsgenie-venv) against
/// Quell at `base` with `key`, doing `step`; what it printed.
fn sdk(base: &str, key: &str, step: &str) -> String {
    let python = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/opsgenie-venv/bin/python"
    );
    let script = r#"
import os, sys
import opsgenie_sdk
conf = opsgenie_sdk.configuration.Configuration()
conf.host = os.environ["QUELL"]
conf.api_key["Authorization"] = os.environ["KEY"]
conf.retry_count = 1
api = opsgenie_sdk.AlertApi(opsgenie_sdk.api_client.ApiClient(conf))
step = sys.argv[1]
try:
    if step == "create":
        body = opsgenie_sdk.CreateAlertPayload(
            message="Checkout latency over SLO", alias="checkout/latency eu",
            description="p99 above 800 ms for 10 minutes", priority="P2",
            tags=["checkout", "latency"], details={"region": "eu-west-1"},
            entity="checkout-api", source="prometheus", user="monitoring")
        r = api.create_alert(create_alert_payload=body)
    elif step == "acknowledge":
        r = api.acknowledge_alert(identifier="checkout/latency eu", identifier_type="alias",
            acknowledge_alert_payload=opsgenie_sdk.AcknowledgeAlertPayload(user="ana", note="looking"))
    elif step == "close":
        r = api.close_alert(identifier="checkout/latency eu", identifier_type="alias",
            close_alert_payload=opsgenie_sdk.CloseAlertPayload(user="ana", note="rolled back"))
    print("ok", r.result, r.request_id)
except opsgenie_sdk.exceptions.OpenApiException as e:
    print("refused", getattr(e, "status", None), getattr(e, "body", None))
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script, step])
        .env("QUELL", base)
        .env("KEY", key)
        .output()
        .expect("Opsgenie's SDK (scripts/test installs it in target/opsgenie-venv)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[sqlx::test]
async fn opsgenies_own_sdk_works_with_only_its_host_changed(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;
    let base = crate::browser::serve(pool).await;
    let run = |step: &'static str, key: String| {
        let base = base.clone();
        tokio::task::spawn_blocking(move || sdk(&base, &key, step))
    };

    let out = run("create", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok Request will be processed "), "{out}");
    let out = run("create", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "the same alias: one incident");
    let key = keys[0].clone();
    let incident = app.incident_json(&key).await;
    assert_eq!(
        (incident["severity"].as_str(), incident["title"].as_str()),
        (Some("Sev2"), Some("Checkout latency over SLO")),
        "{incident}"
    );
    let out = run("acknowledge", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
    let out = run("close", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");
    // A wrong key: the SDK reads Quell's 401 as Opsgenie's.
    let out = run("create", "wrong-key".into()).await.unwrap();
    assert!(out.starts_with("refused 401 "), "{out}");
    assert!(out.contains("\"requestId\""), "{out}");
}
