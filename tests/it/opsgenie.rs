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

/// Reads `path` back as an Opsgenie client does, with `key`.
async fn read(app: &TestApp, key: &str, path: &str) -> Res {
    let auth = format!("GenieKey {key}");
    let headers = [("authorization", auth.as_str())];
    app.call_as(
        &Default::default(),
        axum::http::Method::GET,
        path,
        &headers,
        None,
    )
    .await
}

/// What became of the request an answer names, as its client reads it back.
async fn outcome(app: &TestApp, key: &str, answered: &Res) -> Value {
    assert_eq!(answered.status, StatusCode::ACCEPTED, "{}", answered.text);
    let id = answered.json()["requestId"].as_str().unwrap().to_owned();
    let r = read(app, key, &format!("/v2/alerts/requests/{id}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()["data"].clone()
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
    let by_name = genie(
        &app,
        &og.key,
        "/v2/alerts/x/close?identifierType=name",
        &json!({}),
    )
    .await;
    assert!(refused(&by_name, StatusCode::UNPROCESSABLE_ENTITY).contains("identifierType"));
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
    assert_eq!(
        refused(&snooze, StatusCode::UNPROCESSABLE_ENTITY),
        "endTime can not be empty."
    );
    let note = genie(
        &app,
        &og.key,
        "/v2/alerts/x/notes?identifierType=alias",
        &json!({}),
    )
    .await;
    assert_eq!(
        refused(&note, StatusCode::UNPROCESSABLE_ENTITY),
        "Note can not be empty."
    );
    // An action Quell does not take is told only to a sender whose key is right.
    let escalate = "/v2/alerts/x/escalate?identifierType=alias";
    let wrong = genie(&app, "not-a-key", escalate, &json!({})).await;
    refused(&wrong, StatusCode::UNAUTHORIZED);
    let right = genie(&app, &og.key, escalate, &json!({})).await;
    assert!(
        refused(&right, StatusCode::NOT_FOUND).contains("acknowledge, close, notes and snooze")
    );
    // So is what is wrong with a body that cannot be read.
    let unreadable = app
        .hook(
            "/v2/alerts",
            &[("authorization", "GenieKey not-a-key")],
            "{",
        )
        .await;
    assert!(!refused(&unreadable, StatusCode::UNAUTHORIZED).contains("JSON"));
    let unreadable = app
        .hook(
            "/v2/alerts",
            &[("authorization", &format!("GenieKey {}", og.key))],
            "{",
        )
        .await;
    assert!(refused(&unreadable, StatusCode::UNPROCESSABLE_ENTITY).contains("JSON"));
    // Reading back names what is not there, in Opsgenie's words.
    let none = read(&app, &og.key, "/v2/alerts/abc-123").await;
    assert_eq!(
        refused(&none, StatusCode::NOT_FOUND),
        "Alert does not exist"
    );
    let none = read(&app, &og.key, "/v2/alerts/requests/9c1f5c0e").await;
    assert_eq!(
        refused(&none, StatusCode::NOT_FOUND),
        "Request does not exist"
    );
    // Other methods and paths answer in Opsgenie's shape too, which its SDK reads.
    let auth = format!("GenieKey {}", og.key);
    for (method, path) in [
        (axum::http::Method::DELETE, "/v2/alerts/abc-123"),
        (axum::http::Method::POST, "/v2/alerts/requests/9c1f5c0e"),
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
    // Without the right key even those are only told that the key is wrong.
    let wrong = app
        .call_as(
            &Default::default(),
            axum::http::Method::DELETE,
            "/v2/alerts/abc-123",
            &[("authorization", "GenieKey not-a-key")],
            None,
        )
        .await;
    assert!(!refused(&wrong, StatusCode::UNAUTHORIZED).contains("POST /v2/alerts"));
    // A control character in an identifier is refused (a NUL never reaches the handlers).
    let nul = read(&app, &og.key, "/v2/alerts/a%01b?identifierType=alias").await;
    assert!(refused(&nul, StatusCode::UNPROCESSABLE_ENTITY).contains("control"));
    let nul = genie(
        &app,
        &og.key,
        "/v2/alerts/a%01b/close?identifierType=alias",
        &json!({}),
    )
    .await;
    assert!(refused(&nul, StatusCode::UNPROCESSABLE_ENTITY).contains("control"));
    assert!(app.incident_keys().await.is_empty());
    assert_eq!(app.stored_alerts().await, 0);
}

#[sqlx::test]
async fn opsgenie_alerts_are_named_by_id_tiny_id_or_alias_and_read_back_with_their_requests(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;
    let other = app.integration("another team's opsgenie", "opsgenie").await;

    let created = genie(&app, &og.key, "/v2/alerts", &example()).await;
    let done = outcome(&app, &og.key, &created).await;
    assert_eq!(
        (
            &done["action"],
            &done["status"],
            &done["isSuccess"],
            &done["success"]
        ),
        (
            &json!("Create"),
            &json!("Created alert"),
            &json!(true),
            &json!(true)
        ),
        "{done}"
    );
    assert_eq!(done["alias"], "Life is too short for no alias");
    let id = done["alertId"].as_str().unwrap().to_owned();
    assert!(
        done["processedAt"].is_string() && done["integrationId"] == json!(og.id),
        "{done}"
    );
    // Another integration's key reads neither the request nor the alert.
    let rid = created.json()["requestId"].as_str().unwrap().to_owned();
    let theirs = read(&app, &other.key, &format!("/v2/alerts/requests/{rid}")).await;
    assert_eq!(
        refused(&theirs, StatusCode::NOT_FOUND),
        "Request does not exist"
    );
    let theirs = read(&app, &other.key, &format!("/v2/alerts/{id}")).await;
    assert_eq!(
        refused(&theirs, StatusCode::NOT_FOUND),
        "Alert does not exist"
    );
    let wrong = read(&app, "not-a-key", &format!("/v2/alerts/{id}")).await;
    refused(&wrong, StatusCode::UNAUTHORIZED);

    // Sent again: the same alert, counted twice. By id (the default), tiny id or alias alike.
    genie(&app, &og.key, "/v2/alerts", &example()).await;
    let alias = "Life%20is%20too%20short%20for%20no%20alias";
    for path in [
        format!("/v2/alerts/{id}"),
        format!("/v2/alerts/{id}?identifierType=tiny"),
        format!("/v2/alerts/{alias}?identifierType=alias"),
    ] {
        let r = read(&app, &og.key, &path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        let a = &r.json()["data"];
        assert_eq!((&a["id"], &a["tinyId"]), (&json!(id), &json!(id)), "{a}");
        assert_eq!(a["message"], "An example alert message");
        assert_eq!(
            (&a["status"], &a["acknowledged"]),
            (&json!("open"), &json!(false))
        );
        assert_eq!(a["count"], 2, "{a}");
        assert_eq!(a["priority"], "P1");
        assert_eq!(a["tags"], json!(["OverwriteQuietHours", "Critical"]));
        assert_eq!(a["actions"], json!(["Restart", "AnExampleAction"]));
        assert_eq!(a["details"], json!({"key1": "value1", "key2": "value2"}));
        assert_eq!(a["entity"], "An example entity");
        assert_eq!(a["description"], "Every alert needs a description");
        assert_eq!(a["integration"]["name"], "legacy opsgenie");
        assert_eq!(a["snoozed"], false);
    }
    let key = app.incident_keys().await[0].clone();

    // Acknowledged by id, a note by tiny id, snoozed by alias.
    let ack = genie(
        &app,
        &og.key,
        &format!("/v2/alerts/{id}/acknowledge"),
        &json!({}),
    )
    .await;
    let done = outcome(&app, &og.key, &ack).await;
    assert_eq!(
        (&done["status"], &done["alertId"]),
        (&json!("Acknowledged alert"), &json!(id))
    );
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
    let note =
        json!({"user": "Monitoring Script", "source": "AWS Lambda", "note": "restarted gw-2"});
    let noted = genie(
        &app,
        &og.key,
        &format!("/v2/alerts/{id}/notes?identifierType=tiny"),
        &note,
    )
    .await;
    assert_eq!(outcome(&app, &og.key, &noted).await["status"], "Added note");
    let lines: Vec<String> = app
        .timeline(&key)
        .await
        .iter()
        .map(|e| e["body"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l == "Monitoring Script (AWS Lambda): restarted gw-2"),
        "{lines:?}"
    );
    let end = (chrono::Utc::now() + chrono::Duration::minutes(30)).to_rfc3339();
    let snoozed = genie(
        &app,
        &og.key,
        &format!("/v2/alerts/{alias}/snooze?identifierType=alias"),
        &json!({"endTime": end, "user": "ana", "note": "deploy rolling back"}),
    )
    .await;
    assert_eq!(
        outcome(&app, &og.key, &snoozed).await["status"],
        "Snoozed alert"
    );
    let incident = app.incident_json(&key).await;
    assert!(incident["snoozed_until"].is_string(), "{incident}");
    let a = read(&app, &og.key, &format!("/v2/alerts/{id}"))
        .await
        .json();
    assert_eq!(
        (&a["data"]["snoozed"], &a["data"]["acknowledged"]),
        (&json!(true), &json!(true)),
        "{a}"
    );
    assert!(a["data"]["snoozedUntil"].is_string(), "{a}");

    // Closed by id; then closing it again is done already, acknowledging it fails.
    let closed = genie(&app, &og.key, &format!("/v2/alerts/{id}/close"), &json!({})).await;
    assert_eq!(
        outcome(&app, &og.key, &closed).await["status"],
        "Closed alert"
    );
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");
    let a = read(&app, &og.key, &format!("/v2/alerts/{id}"))
        .await
        .json();
    assert_eq!(a["data"]["status"], "closed", "{a}");
    assert!(a["data"]["report"]["closeTime"].is_number(), "{a}");
    let again = genie(&app, &og.key, &format!("/v2/alerts/{id}/close"), &json!({})).await;
    assert!(
        outcome(&app, &og.key, &again).await["isSuccess"]
            .as_bool()
            .unwrap()
    );
    let late = genie(
        &app,
        &og.key,
        &format!("/v2/alerts/{id}/acknowledge"),
        &json!({}),
    )
    .await;
    let done = outcome(&app, &og.key, &late).await;
    assert_eq!(
        (&done["isSuccess"], &done["status"]),
        (&json!(false), &json!("Alert is already closed"))
    );
    // An Opsgenie id from before the move names nothing; the request says so.
    let theirs = "/v2/alerts/70413a06-38d6-4c85-92b8-5ebc900d42e2/acknowledge";
    let done = outcome(
        &app,
        &og.key,
        &genie(&app, &og.key, theirs, &json!({})).await,
    )
    .await;
    assert_eq!(
        (&done["isSuccess"], &done["status"]),
        (&json!(false), &json!("Alert does not exist"))
    );
    let lines = app.timeline(&key).await.len();
    // Opsgenie's own tiny id from before the move (a bare number) names nothing either.
    let old = genie(
        &app,
        &og.key,
        "/v2/alerts/1/close?identifierType=tiny",
        &json!({}),
    )
    .await;
    assert_eq!(
        outcome(&app, &og.key, &old).await["status"],
        "Alert does not exist"
    );
    // The other integration cannot act on this one's alert by its number.
    let by_them = genie(&app, &other.key, &format!("/v2/alerts/{id}/notes"), &note).await;
    assert_eq!(
        outcome(&app, &other.key, &by_them).await["status"],
        "Alert does not exist"
    );
    assert_eq!(app.incident_keys().await.len(), 1);
    assert_eq!(app.timeline(&key).await.len(), lines);
}

#[sqlx::test]
async fn an_opsgenie_snooze_acknowledges_first_and_another_key_cannot_touch_the_alert(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;
    let other = app.integration("another team's opsgenie", "opsgenie").await;
    let created = genie(&app, &og.key, "/v2/alerts", &example()).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text);
    let key = app.incident_keys().await[0].clone();
    let alias = "Life%20is%20too%20short%20for%20no%20alias";
    let end = (chrono::Utc::now() + chrono::Duration::minutes(30)).to_rfc3339();
    let snooze = json!({"endTime": end, "user": "ana"});

    // Another integration's key names no alert of this one, by alias either.
    for (action, body) in [
        ("acknowledge", json!({})),
        ("close", json!({})),
        ("snooze", snooze.clone()),
    ] {
        let path = format!("/v2/alerts/{alias}/{action}?identifierType=alias");
        let r = genie(&app, &other.key, &path, &body).await;
        let done = outcome(&app, &other.key, &r).await;
        assert_eq!(done["status"], "Alert does not exist", "{action}: {done}");
    }
    let theirs = read(
        &app,
        &other.key,
        &format!("/v2/alerts/{alias}?identifierType=alias"),
    )
    .await;
    assert_eq!(
        refused(&theirs, StatusCode::NOT_FOUND),
        "Alert does not exist"
    );
    assert_eq!(app.incident_json(&key).await["status"], "triggered");

    // Snoozing an alert nobody acknowledged acknowledges its incident first, and says so.
    let path = format!("/v2/alerts/{alias}/snooze?identifierType=alias");
    let r = genie(&app, &og.key, &path, &snooze).await;
    assert_eq!(outcome(&app, &og.key, &r).await["status"], "Snoozed alert");
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["status"], "acknowledged", "{incident}");
    assert!(incident["snoozed_until"].is_string(), "{incident}");
    let lines = app.timeline(&key).await;
    assert!(
        lines.iter().any(|e| e["body"]
            .as_str()
            .unwrap_or_default()
            .contains("to snooze it")),
        "{lines:?}"
    );
    // Closed, its alert cannot be snoozed again.
    let r = genie(
        &app,
        &og.key,
        &format!("/v2/alerts/{alias}/close?identifierType=alias"),
        &json!({}),
    )
    .await;
    assert_eq!(outcome(&app, &og.key, &r).await["status"], "Closed alert");
    let r = genie(&app, &og.key, &path, &snooze).await;
    let done = outcome(&app, &og.key, &r).await;
    assert_eq!(
        (&done["isSuccess"], &done["status"]),
        (&json!(false), &json!("Alert is already closed"))
    );
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
    elif step == "snooze":
        import datetime
        end = datetime.datetime.utcnow() + datetime.timedelta(minutes=45)
        r = api.snooze_alert(identifier="checkout/latency eu", identifier_type="alias",
            snooze_alert_payload=opsgenie_sdk.SnoozeAlertPayload(end_time=end, user="ana"))
    elif step == "note":
        r = api.add_note(identifier="checkout/latency eu", identifier_type="alias",
            add_note_to_alert_payload=opsgenie_sdk.AddNoteToAlertPayload(
                user="ana", source="runbook bot", note="canary rolled back"))
    elif step == "close":
        r = api.close_alert(identifier="checkout/latency eu", identifier_type="alias",
            close_alert_payload=opsgenie_sdk.CloseAlertPayload(user="ana", note="rolled back"))
    elif step.startswith("status "):
        d = api.get_request_status(request_id=step.split()[1]).data
        print("status", d.action, d.is_success, d.alert_id, d.status)
        sys.exit(0)
    elif step.startswith("get "):
        a = api.get_alert(identifier=step.split()[1], identifier_type="tiny").data
        print("alert", a.tiny_id, a.status, a.acknowledged, a.count, a.priority, a.alias,
              a.details["region"], a.integration.name, "|" + a.message)
        sys.exit(0)
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
    crate::common::printed(out)
}

#[sqlx::test]
async fn opsgenies_own_sdk_works_with_only_its_host_changed(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let og = app.integration("legacy opsgenie", "opsgenie").await;
    let base = crate::browser::serve(pool).await;
    let run_owned = |step: String, key: String| {
        let base = base.clone();
        tokio::task::spawn_blocking(move || sdk(&base, &key, &step))
    };
    let run = |step: &'static str, key: String| run_owned(step.to_owned(), key);

    let out = run("create", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok Request will be processed "), "{out}");
    let first = out.split_whitespace().last().unwrap().to_owned();
    let out = run("create", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    // The SDK reads the request back, and the alert it made.
    let out = run_owned(format!("status {first}"), og.key.clone())
        .await
        .unwrap();
    let alert_id = match out.split_whitespace().collect::<Vec<_>>()[..] {
        ["status", "Create", "True", id, "Created", "alert"] => id.to_owned(),
        _ => panic!("{out}"),
    };
    let out = run_owned(format!("get {alert_id}"), og.key.clone())
        .await
        .unwrap();
    assert_eq!(
        out.trim(),
        format!(
            "alert {alert_id} open False 2 P2 checkout/latency eu eu-west-1 legacy opsgenie |Checkout latency over SLO"
        )
    );
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
    // A snooze with a time as Python writes it (no offset: UTC).
    let out = run("snooze", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    assert!(app.incident_json(&key).await["snoozed_until"].is_string());
    let out = run("note", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    let timeline = app.timeline(&key).await;
    assert!(
        timeline
            .iter()
            .any(|e| e["body"] == "ana (runbook bot): canary rolled back"),
        "{timeline:?}"
    );
    let out = run("close", og.key.clone()).await.unwrap();
    assert!(out.starts_with("ok "), "{out}");
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");
    // A wrong key: the SDK reads Quell's 401 as Opsgenie's.
    let out = run("create", "wrong-key".into()).await.unwrap();
    assert!(out.starts_with("refused 401 "), "{out}");
    assert!(out.contains("\"requestId\""), "{out}");
}
