//! Runbooks: a link and a checklist per service or routing rule, shown on each incident as soon
//! as it exists; checking a step records who and when on the timeline, per incident; bad input
//! changes nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{TestApp, alertmanager_payload};

async fn runbook(app: &TestApp, body: Value) -> Value {
    let r = app.post("/api/v1/runbooks", body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

async fn checklist(app: &TestApp, key: &str) -> Vec<Value> {
    let r = app.get(&format!("/api/v1/incidents/{key}/checklist")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()["items"].as_array().unwrap().clone()
}

fn checklist_entries(timeline: &[Value]) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e["kind"] == "checklist")
        .map(|e| e["headline"].as_str().unwrap().to_owned())
        .collect()
}

#[sqlx::test]
async fn a_services_and_a_rules_runbooks_show_on_the_incident_and_checks_are_per_incident(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let rule = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "Payments 5xx", "conditions": ["labels.alertname =~ .*5xx.*"],
                   "service": "payments-gateway", "severity": "Sev2"}),
        )
        .await;
    assert_eq!(rule.status, StatusCode::CREATED, "{}", rule.text);
    let rule_id = rule.json()["id"].as_i64().unwrap();
    let service_book = runbook(
        &app,
        json!({"name": "High error rate", "service": "payments-gateway",
               "link": "https://runbooks.example.com/pg/errors",
               "steps": ["Check the processor's status", "Check configuration changes of the last 24 h", "Roll back the latest change"]}),
    )
    .await;
    let rule_book = runbook(
        &app,
        json!({"name": "5xx alert triage", "rule_id": rule_id, "steps": ["Open the 5xx dashboard"]}),
    )
    .await;
    assert_eq!(rule_book["rule_name"], "Payments 5xx");
    // An incident opened by an alert the rule routed shows both, the service's first.
    let am = app.integration("am", "alertmanager").await;
    let r = app
        .alert(
            "alertmanager",
            &am,
            &alertmanager_payload("Http5xx", &[("p1", "firing")], json!({})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let alerted = app.incident_keys().await.remove(0);
    let names: Vec<Value> = checklist(&app, &alerted)
        .await
        .iter()
        .map(|c| c["runbook"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("High error rate"), json!("5xx alert triage")]);
    // One opened by hand on the service shows the service's, unchecked.
    let by_hand = app
        .incident(json!({"title": "Declines", "severity": "Sev3", "service": "payments-gateway"}))
        .await;
    let list = checklist(&app, &by_hand).await;
    assert_eq!(list.len(), 1);
    assert!(
        list[0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["checked_at"].is_null())
    );
    // Checking a step records who and when, on the timeline, for that incident only.
    let id = service_book["id"].as_i64().unwrap();
    let tick = |key: &str, position: i64, checked: bool| {
        let path = format!("/api/v1/incidents/{key}/checklist");
        let body = json!({"runbook_id": id, "position": position, "checked": checked});
        let app = &app;
        async move { app.post(&path, body).await }
    };
    let r = tick(&alerted, 1, true).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let item = &r.json()["items"][1];
    assert_eq!(item["step"], "Check configuration changes of the last 24 h");
    assert!(
        item["checked_by"].is_string() && item["checked_at"].is_string(),
        "{item}"
    );
    assert_eq!(
        checklist_entries(&app.timeline(&alerted).await),
        ["Runbook step checked: Check configuration changes of the last 24 h (High error rate)"]
    );
    assert!(
        checklist(&app, &by_hand).await[0]["items"][1]["checked_at"].is_null(),
        "per incident"
    );
    // Checking it again changes nothing; unchecking is recorded too.
    assert_eq!(tick(&alerted, 1, true).await.status, StatusCode::OK);
    assert_eq!(checklist_entries(&app.timeline(&alerted).await).len(), 1);
    assert_eq!(tick(&alerted, 1, false).await.status, StatusCode::OK);
    assert_eq!(
        checklist_entries(&app.timeline(&alerted).await)[1],
        "Runbook step unchecked: Check configuration changes of the last 24 h (High error rate)"
    );
    // One click on the page.
    let page = app.get(&format!("/incidents/{by_hand}")).await;
    assert!(
        page.text.contains("Runbooks")
            && page
                .text
                .contains("Check configuration changes of the last 24 h")
    );
    let r = app
        .form(
            &format!("/incidents/{by_hand}/checklist"),
            &[
                ("runbook_id", &id.to_string()),
                ("position", "0"),
                ("checked", "true"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get(&format!("/incidents/{by_hand}")).await;
    assert!(page.text.contains("1 of 3 done"), "{}", page.text);
    // Bad ticks change nothing.
    let before = app.timeline(&by_hand).await.len();
    let r = tick(&by_hand, 3, true).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("position"));
    let rule_tick = app
        .post(
            &format!("/api/v1/incidents/{by_hand}/checklist"),
            json!({"runbook_id": rule_book["id"], "position": 0}),
        )
        .await;
    assert_eq!(
        rule_tick.status,
        StatusCode::NOT_FOUND,
        "not this incident's runbook"
    );
    assert_eq!(app.timeline(&by_hand).await.len(), before);
    // Editing the runbook keeps the checks of the positions that remain.
    let etag = app
        .get(&format!("/api/v1/runbooks/{id}"))
        .await
        .header("etag")
        .unwrap()
        .to_owned();
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/runbooks/{id}"),
            &[("if-match", &etag)],
            Some(&json!({"name": "High error rate", "service": "payments-gateway",
                          "steps": ["Check the processor's status page", "Check configuration changes of the last 24 h"]}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let list = checklist(&app, &by_hand).await;
    assert_eq!(list[0]["items"].as_array().unwrap().len(), 2);
    assert!(list[0]["items"][0]["checked_at"].is_string());
    // A stale copy is refused.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/runbooks/{id}"),
            &[("if-match", &etag)],
            Some(&json!({"name": "x", "service": "payments-gateway"}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    // Deleting it takes it off the incidents.
    let r = app
        .call(Method::DELETE, &format!("/api/v1/runbooks/{id}"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert!(checklist(&app, &by_hand).await.is_empty());
}

#[sqlx::test]
async fn bad_runbooks_are_refused_naming_the_field_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("api").await;
    for (body, field) in [
        (
            json!({"name": "x", "service": "api", "rule_id": 1}),
            "service",
        ),
        (json!({"name": "x"}), "service"),
        (json!({"name": "x", "service": "nope"}), "service"),
        (json!({"name": "x", "rule_id": 999}), "rule_id"),
        (json!({"name": "", "service": "api"}), "name"),
        (
            json!({"name": "x", "service": "api", "link": "javascript:alert(1)"}),
            "link",
        ),
        (
            json!({"name": "x", "service": "api", "steps": ["x".repeat(301)]}),
            "steps[0]",
        ),
        (
            json!({"name": "x", "service": "api", "owner": "api"}),
            "owner",
        ),
    ] {
        let r = app.post("/api/v1/runbooks", body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert!(r.text.contains(field), "{body}: {}", r.text);
    }
    let listed = app.get("/api/v1/runbooks").await.json();
    assert!(
        listed["items"].as_array().unwrap().is_empty(),
        "nothing stored"
    );
    // The form names the field too, and keeps what was typed.
    let r = app
        .form(
            "/runbooks",
            &[
                ("name", "Pool exhaustion"),
                ("owner", ""),
                ("steps", "Check pool metrics"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("Pool exhaustion") && r.text.contains("service"));
    let r = app
        .form(
            "/runbooks",
            &[
                ("name", "Pool exhaustion"),
                ("owner", "service:api"),
                (
                    "steps",
                    "Check pool metrics\nRaise the pool from Little's law",
                ),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get("/runbooks?service=api").await;
    assert!(
        page.text.contains("Raise the pool from Little&#39;s law")
            || page.text.contains("Raise the pool from Little&#x27;s law"),
        "{}",
        page.text
    );
}
