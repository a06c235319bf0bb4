//! Grouping beyond a key: a routing rule groups the alerts it takes that share chosen fields
//! into one incident within a window from the group's first alert, whatever their group keys,
//! and the incident says how ("grouped by service = … within 10 min").

use crate::common;

use axum::http::StatusCode;
use common::{TestApp, alertmanager_payload};
use serde_json::json;
use sqlx::PgPool;

fn alert(group: &str, fp: &str, cluster: &str) -> serde_json::Value {
    alertmanager_payload(
        group,
        &[(fp, "firing")],
        json!({"service": "payments-gateway", "cluster": cluster, "severity": "warning"}),
    )
}

#[sqlx::test]
async fn alerts_sharing_a_rules_fields_join_one_incident_within_its_window(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.service("payments-gateway").await;
    let am = app.integration("prod-alertmanager", "alertmanager").await;

    // Refusals name the field and store nothing.
    for (body, field) in [
        (
            json!({"name": "g", "conditions": ["labels.service exists"],
                   "group_by": ["labels service"]}),
            "group_by",
        ),
        (
            json!({"name": "g", "conditions": ["labels.service exists"],
                   "group_by": ["labels.service"], "group_window_minutes": 0}),
            "group_window_minutes",
        ),
    ] {
        let r = app.post("/api/v1/routing-rules", body).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains(field), "{field}: {}", r.text);
    }
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "One incident per service and cluster",
                   "conditions": ["labels.service exists"], "service": "{labels.service}",
                   "group_by": ["labels.service", "labels.cluster"], "group_window_minutes": 10}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        r.json()["group_by"],
        json!(["labels.service", "labels.cluster"])
    );

    // Five alerts of five Alertmanager groups about one service and cluster, posted at once
    // (several lanes): one incident.
    let posts: Vec<_> = (0..5)
        .map(|n| {
            let (app, am) = (&app, &am);
            async move {
                let body = alert(&format!("Alert{n}"), &format!("fp{n}"), "eu-1");
                app.alert("alertmanager", am, &body).await
            }
        })
        .collect();
    for r in futures_util::future::join_all(posts).await {
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(incident["alert_count"], 5);
    assert_eq!(incident["service"], "payments-gateway");
    let words = "service = payments-gateway, cluster = eu-1 within 10 min";
    assert_eq!(incident["grouped_by"], json!([words]), "{incident}");
    let page = app.get(&format!("/incidents/{}", keys[0])).await;
    assert!(
        page.text.contains(&format!("Grouped by {words}")),
        "{}",
        page.text
    );

    // Another cluster is another incident.
    let r = app
        .alert("alertmanager", &am, &alert("Alert0", "us1", "us-east-1"))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_keys().await.len(), 2);

    // Past the window, the next alert sharing the values opens a new incident; the first keeps
    // its alerts.
    sqlx::query("update alert_groups set opened_at = opened_at - interval '11 minutes'")
        .execute(&pool)
        .await
        .unwrap();
    // A resend of an alert still open (Alertmanager repeats its group) stays in its incident.
    let r = app
        .alert("alertmanager", &am, &alert("Alert0", "fp0", "eu-1"))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(
        app.incident_keys().await.len(),
        2,
        "no empty incident for a repeat"
    );
    let r = app
        .alert("alertmanager", &am, &alert("Alert9", "late", "eu-1"))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_keys().await.len(), 3);
    assert_eq!(app.incident_json(&keys[0]).await["alert_count"], 5);

    // A rule without fields leaves grouping to the alerts' own keys.
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "Search", "conditions": ["labels.team = search"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["group_by"], json!([]));
}
