//! Snooze: an acknowledged incident put aside for a time returns to triggered and pages again
//! when the snooze ends — once, however many engines race — unless it was mitigated or
//! resolved meanwhile; only an acknowledged incident snoozes, for a minute to a week.

use crate::common;

use axum::http::{Method, StatusCode};
use common::TestApp;
use serde_json::json;
use sqlx::PgPool;

async fn snooze(app: &TestApp, key: &str, body: serde_json::Value) -> common::Res {
    app.post(&format!("/api/v1/incidents/{key}/snooze"), body)
        .await
}

async fn snooze_ends(pool: &PgPool) {
    sqlx::query("update incident_snoozes set until = now() - interval '1 second'")
        .execute(pool)
        .await
        .unwrap();
}

async fn ack_timer(pool: &PgPool) -> String {
    sqlx::query_scalar("select state from sla_timers where kind = 'ack'")
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn escalation_state(pool: &PgPool) -> String {
    sqlx::query_scalar("select state from escalations")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn a_snoozed_incident_pages_again_when_the_snooze_ends(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    crate::paging::payments(&app).await;
    let key = app
        .incident(json!({"title": "Ledger lag", "severity": "Sev2", "service": "payments-gateway"}))
        .await;
    assert_eq!(escalation_state(&pool).await, "pending");
    // Its first step pages.
    assert_eq!(
        quell::paging::escalator::fire_due(&pool, 10).await.unwrap(),
        1
    );

    // Triggered: nothing to put aside yet.
    let r = snooze(&app, &key, json!({"minutes": 60})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let r = app
        .post(&format!("/api/v1/incidents/{key}/acknowledge"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let first_ack = r.json()["acknowledged_at"].clone();
    assert!(first_ack.is_string(), "{}", r.text);
    assert_eq!(escalation_state(&pool).await, "stopped");
    let r = snooze(&app, &key, json!({"minutes": 0})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("minutes"));
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/incidents/{key}/snooze"),
            &[("if-match", "\"v1\"")],
            Some(&json!({"minutes": 60}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let r = snooze(
        &app,
        &key,
        json!({"minutes": 60, "note": "waiting on the vendor"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["snoozed_until"].is_string(), "{}", r.text);
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("class=\"snoozed\""), "{}", page.text);

    // Before its end nothing happens; at its end, three engines racing put it back once.
    quell::incidents::snoozes::wake_due(&pool).await.unwrap();
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
    snooze_ends(&pool).await;
    let (a, b, c) = tokio::join!(
        quell::incidents::snoozes::wake_due(&pool),
        quell::incidents::snoozes::wake_due(&pool),
        quell::incidents::snoozes::wake_due(&pool)
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    let view = app.incident_json(&key).await;
    assert_eq!(view["status"], "triggered", "{view}");
    assert!(view["snoozed_until"].is_null());
    assert_eq!(escalation_state(&pool).await, "pending", "paging again");
    // Its first step pages again (the run before fired it already).
    let fired = quell::paging::escalator::fire_due(&pool, 10).await.unwrap();
    assert_eq!(fired, 1);
    let paged: i64 =
        sqlx::query_scalar("select count(*) from timeline_events where kind = 'paged'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        paged, 2,
        "step 1 paged before the acknowledgement and after the snooze"
    );
    let backs = app
        .timeline(&key)
        .await
        .iter()
        .filter(|e| {
            e["body"]
                .as_str()
                .unwrap_or("")
                .contains("snooze ended and the incident is still acknowledged")
        })
        .count();
    assert_eq!(backs, 1);
    // It keeps its first acknowledgement: the SLA's acknowledge target stays met (no timer
    // re-armed to breach at once), and acknowledging again moves neither it nor MTTA.
    assert_eq!(view["acknowledged_at"], first_ack, "{view}");
    assert_eq!(ack_timer(&pool).await, "stopped");
    let r = app
        .post(&format!("/api/v1/incidents/{key}/acknowledge"), json!({}))
        .await;
    assert_eq!(r.json()["acknowledged_at"], first_ack, "{}", r.text);
    assert_eq!(ack_timer(&pool).await, "stopped");

    // Snoozed again, then mitigated: the snooze ends with it and pages nobody.
    let r = snooze(&app, &key, json!({"minutes": 30})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .post(&format!("/api/v1/incidents/{key}/mitigate"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let view = app.incident_json(&key).await;
    assert!(view["snoozed_until"].is_null(), "{view}");
    snooze_ends(&pool).await;
    quell::incidents::snoozes::wake_due(&pool).await.unwrap();
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");
    assert_eq!(escalation_state(&pool).await, "stopped");
    // Resolved and reopened (acknowledged again), an old snooze never wakes it.
    let r = app
        .post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .post(&format!("/api/v1/incidents/{key}/reopen"), json!({}))
        .await;
    assert_eq!(r.json()["status"], "acknowledged", "{}", r.text);
    snooze_ends(&pool).await;
    quell::incidents::snoozes::wake_due(&pool).await.unwrap();
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(!page.text.contains("class=\"snoozed\""), "{}", page.text);

    // From the page: the form snoozes an acknowledged incident.
    let other = app
        .incident(json!({"title": "Queue deep", "severity": "Sev3"}))
        .await;
    let r = app
        .post(&format!("/api/v1/incidents/{other}/acknowledge"), json!({}))
        .await;
    let version = r.json()["version"].as_i64().unwrap().to_string();
    let r = app
        .form(
            &format!("/incidents/{other}/snooze"),
            &[("version", &version), ("minutes", "240")],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    assert!(app.incident_json(&other).await["snoozed_until"].is_string());
}

#[sqlx::test]
async fn a_snooze_ends_early_by_hand_and_one_with_nobody_to_page_says_so(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = app
        .incident(json!({"title": "Disk filling", "severity": "Sev3"}))
        .await;
    let r = app
        .post(&format!("/api/v1/incidents/{key}/acknowledge"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let end = format!("/api/v1/incidents/{key}/snooze");
    let r = app.call(Method::DELETE, &end, &[], None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "nothing to end: {}", r.text);
    let r = snooze(
        &app,
        &key,
        json!({"minutes": 90, "note": "vendor call at 3"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let version = r.json()["version"].as_i64().unwrap();
    let stale = format!("\"v{}\"", version - 1);
    let r = app
        .call(Method::DELETE, &end, &[("if-match", &stale)], None)
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("End snooze"), "{}", page.text);
    let r = app
        .form(
            &format!("/incidents/{key}/snooze/end"),
            &[("version", &version.to_string())],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let view = app.incident_json(&key).await;
    assert_eq!(view["status"], "acknowledged");
    assert!(view["snoozed_until"].is_null(), "{view}");
    let said = |t: &[serde_json::Value], what: &str| {
        t.iter()
            .filter(|e| e["body"].as_str().unwrap_or("").contains(what))
            .count()
    };
    assert_eq!(said(&app.timeline(&key).await, "Snooze ended early"), 1);
    snooze_ends(&pool).await;
    quell::incidents::snoozes::wake_due(&pool).await.unwrap();
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");

    // No service, so no escalation policy: back to triggered, and the timeline says nobody is
    // paged rather than promising a page.
    let r = snooze(&app, &key, json!({"minutes": 5})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    snooze_ends(&pool).await;
    quell::incidents::snoozes::wake_due(&pool).await.unwrap();
    let t = app.timeline(&key).await;
    assert_eq!(app.incident_json(&key).await["status"], "triggered");
    assert_eq!(
        said(&t, "Nobody is paged: its service has no escalation policy"),
        1
    );
    // Triggered again, a bad minutes value names the field before the state is judged.
    let r = snooze(&app, &key, json!({"minutes": -3})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("minutes"), "{}", r.text);
}
