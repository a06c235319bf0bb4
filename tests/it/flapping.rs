//! Flapping: an alert that fires more than its integration's threshold within the window is
//! marked flapping; its incident is paged once, stays open while it flaps (a mitigation its
//! alerts made is taken back, a responder's is not), shows the count, and mitigates only after
//! the alert has stayed resolved for the settle time — settled by the engine once, however
//! many replicas run it.

use crate::common;
use crate::silences::{count, fire, paged_service};

use axum::http::{Method, StatusCode};
use common::{Hook, TestApp, alertmanager_payload};
use serde_json::{Value, json};
use sqlx::PgPool;

fn resolve(group: &str, fps: &[&str], service: &str) -> Value {
    let alerts: Vec<(&str, &str)> = fps.iter().map(|f| (*f, "resolved")).collect();
    alertmanager_payload(
        group,
        &alerts,
        json!({"service": service, "severity": "critical"}),
    )
}

async fn send(app: &TestApp, am: &Hook, body: &Value) {
    app.alertmanager(am, body).await;
}

async fn status(app: &TestApp, key: &str) -> String {
    app.incident_json(key).await["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn flapping(
    app: &TestApp,
    am: &Hook,
    threshold: i32,
    window: i32,
    settle: i32,
) -> common::Res {
    let body = json!({"flapping": {"threshold": threshold, "window_minutes": window,
                                   "settle_minutes": settle}});
    let path = format!("/api/v1/integrations/{}", am.id);
    app.call(Method::PATCH, &path, &[], Some(&body.to_string()))
        .await
}

/// Moves every settling key's due time into the past, as if the settle time had gone by.
async fn settle_time_passes(pool: &PgPool) {
    sqlx::query(
        "update alert_flapping set settle_due_at = now() - interval '1 second'
         where settle_due_at is not null and settled_at is null",
    )
    .execute(pool)
    .await
    .unwrap();
}

#[sqlx::test]
async fn a_flapping_alert_pages_once_keeps_its_incident_open_and_mitigates_once_settled(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let (up, down) = (
        fire("Http5xxHigh", &["f1"], "payments-gateway"),
        resolve("Http5xxHigh", &["f1"], "payments-gateway"),
    );
    send(&app, &am, &up).await;
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1);
    let key = keys[0].clone();
    let escalations = || count(&pool, "select count(*) from escalations");
    assert_eq!(escalations().await, 1);
    send(&app, &am, &down).await;
    // Not flapping yet: its alerts mitigate it as usual.
    assert_eq!(status(&app, &key).await, "mitigated");

    // Fires two and three rejoin the mitigated incident; the fourth within 30 minutes (more
    // than the default three) finds it flapping.
    for _ in 0..2 {
        send(&app, &am, &up).await;
        send(&app, &am, &down).await;
    }
    assert!(
        app.incident_json(&key).await["flapping"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    send(&app, &am, &up).await;
    let view = app.incident_json(&key).await;
    assert_eq!(
        view["status"], "acknowledged",
        "the alerts' mitigation is taken back"
    );
    assert!(view["mitigated_at"].is_null());
    let flapping = view["flapping"].as_array().unwrap();
    assert_eq!(flapping.len(), 1, "{view}");
    assert_eq!(flapping[0]["fires"], 4);
    assert!(flapping[0]["settled_at"].is_null());
    let timeline = app.timeline(&key).await;
    let said = |text: &str| {
        timeline
            .iter()
            .filter(|e| e["body"].as_str().unwrap_or("").contains(text))
            .count()
    };
    assert_eq!(said("is flapping: it fired 4 times within 30 min"), 1);
    assert_eq!(said("one of them is flapping"), 1);
    // Paged once: one incident, one escalation, whatever the flaps.
    assert_eq!(app.incident_keys().await.len(), 1);
    assert_eq!(escalations().await, 1);

    // Resolving while it flaps leaves it open, settling; a fire stops the settling.
    send(&app, &am, &down).await;
    assert_eq!(status(&app, &key).await, "acknowledged");
    let f = &app.incident_json(&key).await["flapping"][0];
    assert!(f["settle_due_at"].is_string(), "{f}");
    send(&app, &am, &up).await;
    let f = app.incident_json(&key).await["flapping"][0].clone();
    assert!(f["settle_due_at"].is_null(), "{f}");
    assert_eq!(f["fires"], 5);
    send(&app, &am, &down).await;

    // Before its time nothing settles; once it has passed, one of three engines settles it and
    // the incident mitigates, once.
    quell::alerts::settle::settle_due(&pool).await.unwrap();
    assert_eq!(status(&app, &key).await, "acknowledged");
    settle_time_passes(&pool).await;
    let (a, b, c) = tokio::join!(
        quell::alerts::settle::settle_due(&pool),
        quell::alerts::settle::settle_due(&pool),
        quell::alerts::settle::settle_due(&pool)
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    let view = app.incident_json(&key).await;
    assert_eq!(view["status"], "mitigated", "{view}");
    assert!(view["flapping"][0]["settled_at"].is_string());
    let timeline = app.timeline(&key).await;
    let settled = timeline
        .iter()
        .filter(|e| {
            e["body"]
                .as_str()
                .unwrap_or("")
                .contains("stopped flapping: it has stayed resolved for 10 min (5 fires")
        })
        .count();
    assert_eq!(settled, 1);
    let mitigations = timeline.iter().filter(|e| e["kind"] == "mitigated").count();
    assert_eq!(
        mitigations, 2,
        "the first by its alerts, the last once settled"
    );
    assert_eq!(escalations().await, 1);

    // The page shows the flapping alert and its count.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("5 fires since"), "{}", page.text);
    assert!(page.text.contains("settled at"));
}

#[sqlx::test]
async fn a_responders_mitigation_stands_and_the_thresholds_are_the_integrations(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    // Refused settings name the field and change nothing.
    let path = format!("/api/v1/integrations/{}", am.id);
    let r = flapping(&app, &am, 2, 0, 5).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("flapping.window_minutes"), "{}", r.text);
    assert_eq!(app.get(&path).await.json()["flapping"]["threshold"], 3);
    let r = flapping(&app, &am, 1, 60, 0).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    let (up, down) = (
        fire("DiskFull", &["d1"], "payments-gateway"),
        resolve("DiskFull", &["d1"], "payments-gateway"),
    );
    send(&app, &am, &up).await;
    let key = app.incident_keys().await[0].clone();
    // A responder mitigates; the alert resolves and fires again: flapping (more than one fire),
    // but the responder's mitigation stands.
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/mitigate"),
            json!({"note": "failed over"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    send(&app, &am, &down).await;
    send(&app, &am, &up).await;
    let view = app.incident_json(&key).await;
    assert_eq!(view["status"], "mitigated");
    assert_eq!(view["flapping"][0]["fires"], 2);
    // Settle time 0: settled at the next round after it resolves.
    send(&app, &am, &down).await;
    quell::alerts::settle::settle_due(&pool).await.unwrap();
    let view = app.incident_json(&key).await;
    assert!(view["flapping"][0]["settled_at"].is_string(), "{view}");

    // Threshold 0 watches nothing.
    let r = flapping(&app, &am, 0, 60, 0).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let (up, down) = (
        fire("QueueDeep", &["q1"], "payments-gateway"),
        resolve("QueueDeep", &["q1"], "payments-gateway"),
    );
    for _ in 0..4 {
        send(&app, &am, &up).await;
        send(&app, &am, &down).await;
    }
    let flapping = count(
        &pool,
        "select count(*) from alert_flapping where dedup_key <> 'd1'",
    )
    .await;
    assert_eq!(flapping, 0);
    // Resolving the incident ends what flapped in it.
    let r = app
        .post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let open = count(
        &pool,
        "select count(*) from alert_flapping where settled_at is null",
    )
    .await;
    assert_eq!(open, 0);
}
