//! The incident lifecycle over the API: every legal and illegal transition, stamps for skipped
//! steps, the `at` rules, and severity changes.

use crate::common;

use axum::http::StatusCode;
use common::{TestApp, ago, at};
use serde_json::json;
use sqlx::PgPool;

/// Drives a fresh incident into `status` by the shortest legal path.
async fn incident_in(app: &TestApp, status: &str) -> String {
    let key = app.past_incident(60).await;
    let path: &[&str] = match status {
        "triggered" => &[],
        "acknowledged" => &["acknowledge"],
        "mitigated" => &["acknowledge", "mitigate"],
        "resolved" => &["acknowledge", "mitigate", "resolve"],
        other => panic!("{other}"),
    };
    for step in path {
        let r = app
            .post_empty(&format!("/api/v1/incidents/{key}/{step}"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{step}: {}", r.text);
    }
    key
}

#[sqlx::test]
async fn every_transition_from_every_status_is_allowed_or_refused_with_409(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let table = [
        ("triggered", "acknowledge", Some("acknowledged")),
        ("triggered", "mitigate", Some("mitigated")),
        ("triggered", "resolve", Some("resolved")),
        ("triggered", "reopen", None),
        ("acknowledged", "acknowledge", None),
        ("acknowledged", "mitigate", Some("mitigated")),
        ("acknowledged", "resolve", Some("resolved")),
        ("acknowledged", "reopen", None),
        ("mitigated", "acknowledge", None),
        ("mitigated", "mitigate", None),
        ("mitigated", "resolve", Some("resolved")),
        ("mitigated", "reopen", None),
        ("resolved", "acknowledge", None),
        ("resolved", "mitigate", None),
        ("resolved", "resolve", None),
        ("resolved", "reopen", Some("acknowledged")),
    ];
    for (from, action, to) in table {
        let key = incident_in(&app, from).await;
        let before = app.incident_json(&key).await;
        let r = app
            .post_empty(&format!("/api/v1/incidents/{key}/{action}"))
            .await;
        match to {
            Some(to) => {
                assert_eq!(r.status, StatusCode::OK, "{from} -{action}-> {}", r.text);
                assert_eq!(r.json()["status"], to, "{from} -{action}->");
            }
            None => {
                assert_eq!(
                    r.status,
                    StatusCode::CONFLICT,
                    "{from} -{action}-> {}",
                    r.text
                );
                let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
                assert!(
                    message.starts_with(&format!("Cannot {action}:")),
                    "{message}"
                );
                assert_eq!(
                    app.incident_json(&key).await["version"],
                    before["version"],
                    "refusal changed nothing"
                );
            }
        }
    }
}

#[sqlx::test]
async fn resolving_a_triggered_incident_stamps_and_reports_the_skipped_steps(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/resolve"),
            json!({"note": "false alarm"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let i = r.json();
    assert_eq!(i["acknowledged_at"], i["resolved_at"]);
    assert_eq!(i["mitigated_at"], i["resolved_at"]);
    let last = app.timeline(&key).await.pop().unwrap();
    assert_eq!(last["kind"], "resolved");
    assert_eq!(last["body"], "false alarm");
    let headline = last["headline"].as_str().unwrap();
    assert!(
        headline.contains("acknowledgement and mitigation skipped"),
        "{headline}"
    );
}

#[sqlx::test]
async fn reopen_then_mitigate_again(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = incident_in(&app, "resolved").await;
    let first_ack = app.incident_json(&key).await["acknowledged_at"].clone();
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/reopen"))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let i = r.json();
    assert_eq!(i["status"], "acknowledged");
    assert_eq!(i["acknowledged_at"], first_ack);
    assert!(i["resolved_at"].is_null() && i["mitigated_at"].is_null());
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/mitigate"))
        .await;
    assert_eq!(r.json()["status"], "mitigated");
    let kinds: Vec<_> = app
        .timeline(&key)
        .await
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert!(kinds.contains(&json!("reopened")));
}

#[sqlx::test]
async fn backdated_transitions_follow_the_at_rules(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(120).await;
    let url = format!("/api/v1/incidents/{key}/acknowledge");

    let r = app.post(&url, json!({"at": ago(-10)})).await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "future: {}",
        r.text
    );
    assert_eq!(r.field(), "at");
    assert!(r.text.contains("in the future"));

    let r = app.post(&url, json!({"at": ago(180)})).await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "before start: {}",
        r.text
    );
    assert_eq!(r.field(), "at");
    assert!(r.text.contains("before the incident started"));

    let r = app.post(&url, json!({"at": "yesterday"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "at");

    // Dated from the incident's own detection time: two readings of the
    // clock can straddle a second boundary.
    let detected = at(
        app.get(&format!("/api/v1/incidents/{key}")).await.json()["detected_at"]
            .as_str()
            .unwrap(),
    );
    let when = (detected + chrono::Duration::minutes(20)).to_rfc3339();
    let r = app.post(&url, json!({"at": when})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(at(r.json()["acknowledged_at"].as_str().unwrap()), at(&when));
    assert_eq!(r.json()["metrics"]["time_to_acknowledge_secs"], 20 * 60);

    // Mitigation cannot be dated before the acknowledgement.
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/mitigate"),
            json!({"at": ago(110)}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("acknowledgement"));

    // The event is placed at the time it happened, and recorded now.
    let ack = app
        .timeline(&key)
        .await
        .into_iter()
        .find(|e| e["kind"] == "acknowledged")
        .unwrap();
    assert_eq!(at(ack["occurred_at"].as_str().unwrap()), at(&when));
    assert!(at(ack["recorded_at"].as_str().unwrap()) > at(&when));
}

#[sqlx::test]
async fn severity_changes_need_a_reason_and_are_on_the_timeline(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let url = format!("/api/v1/incidents/{key}/severity");

    let r = app.post(&url, json!({"severity": "Sev1"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "reason");

    let r = app
        .post(&url, json!({"severity": "Sev0", "reason": "x"}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "severity");

    let r = app
        .post(&url, json!({"severity": "Sev2", "reason": "same"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);

    let r = app
        .post(&url, json!({"severity": "Sev1", "reason": "checkout failing for > 25% of requests", "at": ago(20)}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["severity"], "Sev1");
    let r = app
        .post(&url, json!({"severity": "Sev3", "reason": "contained"}))
        .await;
    assert_eq!(r.json()["severity"], "Sev3");

    let changes: Vec<_> = app
        .timeline(&key)
        .await
        .into_iter()
        .filter(|e| e["kind"] == "severity_changed")
        .map(|e| {
            (
                e["headline"].as_str().unwrap().to_owned(),
                e["body"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "Severity raised from Sev2 to Sev1".to_owned(),
                "checkout failing for > 25% of requests".to_owned()
            ),
            (
                "Severity lowered from Sev1 to Sev3".to_owned(),
                "contained".to_owned()
            ),
        ]
    );
}

#[sqlx::test]
async fn roles_are_assigned_replaced_and_unassigned_with_timeline_events(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Ana Ribeiro", "ana").await;
    app.person("Daniel Okafor", "daniel").await;
    let key = app.past_incident(30).await;
    let url = format!("/api/v1/incidents/{key}/roles/incident_commander");
    let put = |body: serde_json::Value| {
        let app = &app;
        let url = url.clone();
        async move {
            app.call(axum::http::Method::PUT, &url, &[], Some(&body.to_string()))
                .await
        }
    };

    let r = put(json!({"person": "ana"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.json()["roles"]["incident_commander"]["name"],
        "Ana Ribeiro"
    );

    let r = put(json!({"person": "daniel@example.com"})).await;
    assert_eq!(
        r.json()["roles"]["incident_commander"]["name"],
        "Daniel Okafor"
    );

    let r = put(json!({"person": "nobody"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "person");

    let r = app
        .call(
            axum::http::Method::PUT,
            &format!("/api/v1/incidents/{key}/roles/captain"),
            &[],
            Some(r#"{"person":"ana"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "role");

    let r = app.call(axum::http::Method::DELETE, &url, &[], None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["roles"]["incident_commander"].is_null());

    let lines: Vec<_> = app
        .timeline(&key)
        .await
        .into_iter()
        .filter(|e| e["kind"].as_str().unwrap().starts_with("role_"))
        .map(|e| e["headline"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        lines,
        vec![
            "Incident commander assigned: Ana Ribeiro",
            "Incident commander assigned: Daniel Okafor",
            "Incident commander unassigned (was Daniel Okafor)",
        ]
    );
}

#[sqlx::test]
async fn a_stale_if_match_on_a_transition_is_refused_with_412(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let r = app
        .call(
            axum::http::Method::POST,
            &format!("/api/v1/incidents/{key}/acknowledge"),
            &[("if-match", "\"v7\"")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["status"], "triggered");
    let r = app
        .call(
            axum::http::Method::POST,
            &format!("/api/v1/incidents/{key}/acknowledge"),
            &[("if-match", "\"v1\"")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}
