//! Alert ingestion: every format opening, grouping, deduplicating and resolving incidents;
//! refusals that store nothing; storms and concurrent duplicates.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Hook, TestApp, ago, alertmanager_payload, signed_headers};
use serde_json::{Value, json};
use sqlx::PgPool;

async fn alerts_of(app: &TestApp, key: &str) -> Value {
    let r = app
        .get(&format!("/api/v1/incidents/{key}/alerts?limit=500"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()
}

#[sqlx::test]
async fn alertmanager_group_opens_one_incident_and_fingerprints_deduplicate(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("prod-alertmanager", "alertmanager").await;
    let body = alertmanager_payload(
        "Http5xxHigh",
        &[("aa01", "firing"), ("aa02", "firing")],
        json!({"severity": "warning"}),
    );
    let r = app.alert("alertmanager", &am, &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(r.json()["alerts"], 2);

    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "one group, one incident");
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(incident["alert_count"], 2);
    assert_eq!(
        incident["severity"], "Sev3",
        "warning maps to Sev3 under the default rule"
    );
    assert_eq!(incident["title"], "Http5xxHigh on aa01");
    assert_eq!(incident["status"], "triggered");

    // Alertmanager repeats the notification (and its HA twin sends it too): nothing new.
    for _ in 0..2 {
        let r = app.alert("alertmanager", &am, &body).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
    }
    // A third instance fires in the same group: it joins the same incident.
    let more = alertmanager_payload(
        "Http5xxHigh",
        &[("aa01", "firing"), ("aa02", "firing"), ("aa03", "firing")],
        json!({"severity": "warning"}),
    );
    app.alert("alertmanager", &am, &more).await;
    assert_eq!(app.incident_keys().await.len(), 1);
    let listed = alerts_of(&app, &keys[0]).await;
    assert_eq!(listed["total"], 3);
    let first = &listed["items"][0];
    assert_eq!(first["dedup_key"], "aa01");
    assert_eq!(first["deliveries"], 4);
    assert_eq!(
        first["raw"]["fingerprint"], "aa01",
        "the alert is kept as sent"
    );
    assert_eq!(first["labels"]["severity"], "warning");
    assert_eq!(app.stored_alerts().await, 3);
}

#[sqlx::test]
async fn resolved_notifications_write_the_timeline_and_mitigate_when_all_have_resolved(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let fire = alertmanager_payload("DiskFull", &[("d1", "firing"), ("d2", "firing")], json!({}));
    app.alert("alertmanager", &am, &fire).await;
    let key = app.incident_keys().await.remove(0);

    let half = alertmanager_payload(
        "DiskFull",
        &[("d1", "resolved"), ("d2", "firing")],
        json!({}),
    );
    assert_eq!(
        app.alert("alertmanager", &am, &half).await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        app.incident_json(&key).await["status"],
        "triggered",
        "one alert still fires"
    );
    let timeline = app.timeline(&key).await;
    assert!(
        timeline
            .iter()
            .any(|e| e["kind"] == "alerts_resolved"
                && e["headline"] == "Alert resolved: DiskFull on d1"),
        "{timeline:?}"
    );

    let all = alertmanager_payload(
        "DiskFull",
        &[("d1", "resolved"), ("d2", "resolved")],
        json!({}),
    );
    app.alert("alertmanager", &am, &all).await;
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["status"], "mitigated", "{incident}");
    let timeline = app.timeline(&key).await;
    let last = timeline.last().unwrap();
    assert_eq!(last["kind"], "mitigated");
    assert_eq!(last["author"], "am (alerts)");

    // A responder resolves it; the same fingerprint firing again opens a new incident.
    let r = app
        .post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    app.alert("alertmanager", &am, &fire).await;
    let keys = app.incident_keys().await;
    assert_eq!(
        keys.len(),
        2,
        "after resolve the same key opens a new alert and incident"
    );
    assert_eq!(app.incident_json(&keys[1]).await["alert_count"], 2);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 4);
}

#[sqlx::test]
async fn resolving_an_incident_by_hand_resolves_its_alerts(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    app.alert(
        "alertmanager",
        &am,
        &alertmanager_payload("CPU", &[("c1", "firing")], json!({})),
    )
    .await;
    let key = app.incident_keys().await.remove(0);
    app.post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    let listed = alerts_of(&app, &key).await;
    assert_eq!(listed["items"][0]["status"], "resolved");
    assert_eq!(listed["items"][0]["resolved_by"], "incident");
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 1);
}

#[sqlx::test]
async fn grafana_payloads_with_their_extra_fields_are_read_leniently(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let g = app.integration("grafana", "grafana").await;
    let body = json!({
        "receiver": "quell", "status": "firing", "orgId": 1,
        "alerts": [{
            "status": "firing",
            "labels": {"alertname": "CheckoutSuccessLow", "grafana_folder": "Payments", "service": "checkout-api"},
            "annotations": {"summary": "Checkout success rate below 90%"},
            "startsAt": ago(2), "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://grafana:3000/alerting/grafana/abc/view",
            "fingerprint": "57c6d9296de2ad39",
            "silenceURL": "http://grafana:3000/alerting/silence/new",
            "dashboardURL": "http://grafana:3000/d/checkout", "panelURL": "http://grafana:3000/d/checkout?viewPanel=1",
            "values": {"B": 87.5, "C": 1}, "valueString": "[ var='B' labels={} value=87.5 ]"
        }],
        "groupLabels": {"alertname": "CheckoutSuccessLow"},
        "commonLabels": {"alertname": "CheckoutSuccessLow"}, "commonAnnotations": {},
        "externalURL": "http://grafana:3000/", "version": "1",
        "groupKey": "{}:{alertname=\"CheckoutSuccessLow\"}", "truncatedAlerts": 0,
        "title": "[FIRING:1] CheckoutSuccessLow Payments", "state": "alerting",
        "message": "**Firing**\n\nValue: B=87.5"
    });
    let r = app.alert("grafana", &g, &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let key = app.incident_keys().await.remove(0);
    let a = &alerts_of(&app, &key).await["items"][0];
    assert_eq!(a["details"]["values"]["B"], 87.5);
    assert_eq!(
        a["details"]["dashboardURL"],
        "http://grafana:3000/d/checkout"
    );
    assert_eq!(a["summary"], "Checkout success rate below 90%");
}

fn pd(key: &str, action: &str, dedup: Option<&str>, severity: &str) -> Value {
    let mut e = json!({
        "routing_key": key,
        "event_action": action,
        "payload": {
            "summary": "Example alert on host1.example.com",
            "timestamp": ago(1),
            "source": "monitoringtool:cloudvendor:central-region-dc-01:852559987:cluster/api-stats-prod-003",
            "severity": severity,
            "component": "postgres",
            "group": "prod-datapipe",
            "class": "deploy",
            "custom_details": {"ping time": "1500ms", "load avg": 0.75}
        },
        "client": "Sample Monitoring Service",
        "client_url": "https://monitoring.example.com",
        "links": [{"href": "http://acme.pagerduty.com/example", "text": "Link text"}],
        "images": []
    });
    if let Some(d) = dedup {
        e["dedup_key"] = json!(d);
    }
    e
}

async fn pd_post(app: &TestApp, path: &str, body: &Value) -> common::Res {
    app.hook(path, &[], &body.to_string()).await
}

#[sqlx::test]
async fn pagerduty_events_trigger_acknowledge_and_resolve_like_pagerduty(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("datadog", "pagerduty-events-v2").await;
    assert_eq!(h.key.len(), 32);

    // Without a dedup_key one is generated and returned.
    let r = pd_post(&app, "/v2/enqueue", &pd(&h.key, "trigger", None, "error")).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let j = r.json();
    assert_eq!(
        (j["status"].as_str(), j["message"].as_str()),
        (Some("success"), Some("Event processed"))
    );
    assert!(j["dedup_key"].as_str().is_some_and(|k| !k.is_empty()));

    // The same dedup_key twice: one alert, one incident.
    for _ in 0..2 {
        let r = pd_post(
            &app,
            "/v2/enqueue",
            &pd(&h.key, "trigger", Some("srv01/HTTP"), "critical"),
        )
        .await;
        assert_eq!(r.json()["dedup_key"], "srv01/HTTP");
    }
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 2);
    let key = keys[1].clone();
    assert_eq!(app.incident_json(&key).await["severity"], "Sev1");
    assert_eq!(app.stored_alerts().await, 2);

    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd(&h.key, "acknowledge", Some("srv01/HTTP"), "critical"),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");

    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd(&h.key, "resolve", Some("srv01/HTTP"), "critical"),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");

    // Acknowledge or resolve with no open alert: accepted, changes nothing.
    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd(&h.key, "resolve", Some("never-seen"), "info"),
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(app.incident_keys().await.len(), 2);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 2);
}

#[sqlx::test]
async fn pagerduty_refusals_use_pagerdutys_shape_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("pd", "pagerduty-events-v2").await;
    let r = pd_post(
        &app,
        "/v2/enqueue",
        &json!({"routing_key": h.key, "event_action": "trigger", "payload": {"summary": "x"}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let j = r.json();
    assert_eq!(j["status"], "invalid event");
    let errors = j["errors"].to_string();
    assert!(
        errors.contains("payload.source") && errors.contains("payload.severity"),
        "{errors}"
    );

    let r = app.hook("/v2/enqueue", &[], "{not json").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.json()["status"], "invalid event");

    let wrong = "ffffffffffffffffffffffffffffffff";
    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd(wrong, "trigger", Some("k"), "info"),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);

    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd("short", "trigger", Some("k"), "info"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("should be 32 characters"));

    // An Alertmanager key is not a routing key.
    let am = app.integration("am", "alertmanager").await;
    let r = pd_post(
        &app,
        "/v2/enqueue",
        &pd(&am.key, "trigger", Some("k"), "info"),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.stored_alerts().await, 0);
    assert!(app.incident_keys().await.is_empty());
}

#[sqlx::test]
async fn pagerduty_change_events_are_stored(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("ci", "pagerduty-events-v2").await;
    let body = json!({
        "routing_key": h.key,
        "payload": {"summary": "Build success: Increase snapshot create timeout to 30 seconds",
                    "timestamp": ago(30), "source": "prod-build-agent-i-0b148d1040d565540",
                    "custom_details": {"build_state": "passed", "build_number": "2", "run_time": "1236s"}},
        "links": [{"href": "https://dashboard.com/1234", "text": "View in Dashboard"}]
    });
    let r = pd_post(&app, "/v2/change/enqueue", &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(r.json()["message"], "Change event processed");
    let stored: (String, Value) = sqlx::query_as("select summary, raw from changes")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(stored.0.starts_with("Build success"));
    assert!(
        stored.1.get("routing_key").is_none(),
        "keys are never stored"
    );
    let r = pd_post(
        &app,
        "/v2/change/enqueue",
        &json!({"routing_key": h.key, "payload": {}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

async fn signed(app: &TestApp, h: &Hook, headers: &[(String, String)], body: &str) -> common::Res {
    let hs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    app.hook(&format!("/hooks/generic/{}", h.id), &hs, body)
        .await
}

#[sqlx::test]
async fn generic_alerts_take_a_bearer_key_or_a_fresh_standard_webhooks_signature(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("cron-checks", "generic").await;
    let secret = h
        .secret
        .clone()
        .expect("generic integrations get a signing secret");
    let now = chrono::Utc::now().timestamp();

    let body = json!({"title": "Nightly export failed", "dedup_key": "export-2026-11-30",
                      "description": "exit 3", "metadata": {"attempts": 3}, "source_url": "https://ci/1"})
    .to_string();
    let r = app
        .alert("generic", &h, &serde_json::from_str(&body).unwrap())
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(r.json()["dedup_key"], "export-2026-11-30");

    let other = json!({"title": "Queue depth high", "dedup_key": "queue"}).to_string();
    let r = signed(
        &app,
        &h,
        &signed_headers(&secret, "msg_1", now, &other),
        &other,
    )
    .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.stored_alerts().await, 2);

    let refused = [
        (
            "a signature of another body",
            signed_headers(&secret, "msg_2", now, "{}"),
        ),
        (
            "a stale timestamp",
            signed_headers(&secret, "msg_3", now - 301, &other),
        ),
        (
            "a future timestamp",
            signed_headers(&secret, "msg_3", now + 301, &other),
        ),
        (
            "another secret",
            signed_headers(
                &quell::notify::domain::secret_from_bytes(&[9; 32]),
                "msg_4",
                now,
                &other,
            ),
        ),
        (
            "the empty signature",
            vec![
                ("webhook-id".into(), "msg_5".into()),
                ("webhook-timestamp".into(), now.to_string()),
                ("webhook-signature".into(), "v1,".into()),
            ],
        ),
    ];
    for (what, headers) in refused {
        let r = signed(&app, &h, &headers, &other.replace("queue", "queue-2")).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}: {}", r.text);
        assert_eq!(r.code(), "unauthorized");
    }
    let r = app
        .hook(&format!("/hooks/generic/{}", h.id), &[], &other)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "no key, no signature");
    assert_eq!(app.stored_alerts().await, 2, "nothing refused was stored");

    // Resolve by key.
    let r = app
        .alert(
            "generic",
            &h,
            &json!({"status": "resolved", "dedup_key": "queue"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let keys = app.incident_keys().await;
    assert_eq!(app.incident_json(&keys[1]).await["status"], "mitigated");
}

#[sqlx::test]
async fn wrong_keys_and_disabled_integrations_are_refused_with_nothing_stored(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let body = alertmanager_payload("X", &[("x1", "firing")], json!({}));
    let wrong = Hook {
        key: "0".repeat(32),
        ..am.clone()
    };
    assert_eq!(
        app.alert("alertmanager", &wrong, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
    let unknown = Hook {
        id: uuid::Uuid::new_v4().to_string(),
        ..am.clone()
    };
    assert_eq!(
        app.alert("alertmanager", &unknown, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
    let not_uuid = Hook {
        id: "42".into(),
        ..am.clone()
    };
    assert_eq!(
        app.alert("alertmanager", &not_uuid, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
    let r = app
        .hook(
            &format!("/hooks/alertmanager/{}", am.id),
            &[],
            &body.to_string(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Bearer")
    );
    // The right key on another format's endpoint.
    let r = app.alert("grafana", &am, &body).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.text.contains("/hooks/alertmanager/"), "{}", r.text);

    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/integrations/{}", am.id),
            &[],
            Some(r#"{"enabled": false}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app.alert("alertmanager", &am, &body).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.text.contains("disabled"));
    assert_eq!(app.stored_alerts().await, 0);
    assert!(app.incident_keys().await.is_empty());
    // Every refusal is in the audit log, tallied per minute rather than a row each.
    let audit = app
        .get("/api/v1/audit?outcome=refused&action=alerts.unauthorized&limit=50")
        .await
        .json();
    let subjects: Vec<&str> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["target"].as_str().or(e["subject"].as_str()))
        .collect();
    assert!(subjects.iter().any(|s| s.contains(&am.id)), "{audit}");
}

#[sqlx::test]
async fn rotating_a_key_retires_the_old_one_at_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let listed = app.get("/api/v1/integrations").await;
    assert!(!listed.text.contains(&am.key), "keys are never shown again");
    let r = app
        .post_empty(&format!("/api/v1/integrations/{}/rotate", am.id))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let fresh = Hook {
        key: r.json()["key"].as_str().unwrap().to_owned(),
        ..am.clone()
    };
    let body = alertmanager_payload("X", &[("x1", "firing")], json!({}));
    assert_eq!(
        app.alert("alertmanager", &am, &body).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.alert("alertmanager", &fresh, &body).await.status,
        StatusCode::ACCEPTED
    );
}

#[sqlx::test]
async fn malformed_bodies_of_each_format_are_400_with_the_reason_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let g = app.integration("g", "grafana").await;
    let generic_hook = app.integration("gen", "generic").await;
    let cases: [(&str, &Hook, &str, &str); 7] = [
        ("alertmanager", &am, "{\"groupKey\": ", "not valid JSON"),
        (
            "alertmanager",
            &am,
            r#"{"alerts": [{"status": "firing", "labels": {}}]}"#,
            "groupKey",
        ),
        (
            "alertmanager",
            &am,
            r#"{"groupKey": "g", "alerts": [{"status": "burning", "labels": {}}]}"#,
            "alerts[0].status",
        ),
        (
            "alertmanager",
            &am,
            r#"{"groupKey": "g", "alerts": [{"status": "firing", "labels": {}, "startsAt": "noon"}]}"#,
            "startsAt",
        ),
        (
            "grafana",
            &g,
            r#"{"alerts": "none"}"#,
            "alerts must be an array",
        ),
        (
            "generic",
            &generic_hook,
            r#"{"description": "no title"}"#,
            "title is missing",
        ),
        (
            "generic",
            &generic_hook,
            r#"{"title": "t", "metadata": [1]}"#,
            "metadata must be an object",
        ),
    ];
    for (format, hook, body, reason) in cases {
        let auth = format!("Bearer {}", hook.key);
        let r = app
            .hook(
                &format!("/hooks/{format}/{}", hook.id),
                &[("authorization", &auth)],
                body,
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::BAD_REQUEST,
            "{format} {body}: {}",
            r.text
        );
        assert!(r.text.contains(reason), "{format} {body}: {}", r.text);
    }
    let big = format!("{{\"title\": \"{}\"}}", "x".repeat(1024 * 1024 + 10));
    let auth = format!("Bearer {}", generic_hook.key);
    let r = app
        .hook(
            &format!("/hooks/generic/{}", generic_hook.id),
            &[("authorization", &auth)],
            &big,
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(app.stored_alerts().await, 0);
}

#[sqlx::test]
async fn routing_rules_decide_service_severity_and_title_and_a_worse_alert_raises_severity(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "Payments critical", "conditions": ["labels.service = payments-gateway", "labels.severity = critical"],
                   "service": "{labels.service}", "severity": "Sev1", "title_template": "{labels.alertname} on {labels.service}"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "Payments", "conditions": ["labels.service = payments-gateway"],
                   "service": "payments-gateway", "severity": "Sev2", "title_template": "{summary}"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);

    let am = app.integration("am", "alertmanager").await;
    let warn = alertmanager_payload(
        "Http5xx",
        &[("p1", "firing")],
        json!({"service": "payments-gateway", "severity": "warning"}),
    );
    app.alert("alertmanager", &am, &warn).await;
    let key = app.incident_keys().await.remove(0);
    let i = app.incident_json(&key).await;
    assert_eq!(
        (i["severity"].as_str(), i["service"].as_str()),
        (Some("Sev2"), Some("payments-gateway"))
    );
    assert_eq!(i["title"], "Http5xx on p1");

    let crit = alertmanager_payload(
        "Http5xx",
        &[("p1", "firing"), ("p2", "firing")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alert("alertmanager", &am, &crit).await;
    let i = app.incident_json(&key).await;
    assert_eq!(i["severity"], "Sev1", "{i}");
    assert_eq!(i["peak_severity"], "Sev1");
    let raised = app
        .timeline(&key)
        .await
        .into_iter()
        .find(|e| e["kind"] == "severity_changed")
        .expect("a timeline entry for the rise");
    assert!(
        raised["body"]
            .as_str()
            .unwrap()
            .contains("routing rule \"Payments critical\""),
        "{raised}"
    );
    assert_eq!(raised["headline"], "Severity raised from Sev2 to Sev1");

    // A rule condition that does not parse is refused, naming the condition.
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "bad", "conditions": ["rate < lots"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "conditions[0]");
}

#[sqlx::test]
async fn numeric_conditions_route_on_metadata_and_the_preview_replays_last_weeks_alerts(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let generic_hook = app.integration("synthetics", "generic").await;
    for (k, rate) in [("a", json!(95)), ("b", json!(87.5)), ("c", json!(42))] {
        let r = app
            .alert("generic", &generic_hook, &json!({"title": format!("checkout probe {k}"), "dedup_key": k, "metadata": {"checkout_success_rate": rate}}))
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
    }
    let draft = json!({"name": "Checkout failing", "conditions": ["checkout_success_rate < 90"], "severity": "Sev1",
                       "title_template": "Checkout success {metadata.checkout_success_rate}%"});
    let r = app
        .post("/api/v1/routing-rules/preview", draft.clone())
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let p = r.json();
    assert_eq!(
        (p["considered"].as_i64(), p["matched"].as_i64()),
        (Some(3), Some(2))
    );
    let titles: Vec<&str> = p["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["would"]["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Checkout success 87.5%") && titles.contains(&"Checkout success 42%"),
        "{titles:?}"
    );
    assert_eq!(p["items"][0]["did"]["rule"], "Default");
    assert_eq!(
        app.get("/api/v1/routing-rules").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "a preview saves nothing"
    );

    app.post("/api/v1/routing-rules", draft).await;
    app.alert("generic", &generic_hook, &json!({"title": "checkout probe d", "dedup_key": "d", "metadata": {"checkout_success_rate": 12}})).await;
    let keys = app.incident_keys().await;
    let i = app.incident_json(keys.last().unwrap()).await;
    assert_eq!(
        (i["severity"].as_str(), i["title"].as_str()),
        (Some("Sev1"), Some("Checkout success 12%"))
    );
}

#[sqlx::test]
async fn concurrent_duplicate_posts_store_one_alert(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let body = alertmanager_payload("Dup", &[("same", "firing")], json!({}));
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..30 {
        let (router, id, key, body) = (
            app.router.clone(),
            am.id.clone(),
            am.key.clone(),
            body.to_string(),
        );
        set.spawn(async move {
            use tower::ServiceExt;
            let req = axum::http::Request::post(format!("/hooks/alertmanager/{id}"))
                .header("authorization", format!("Bearer {key}"))
                .header("content-type", "application/json")
                .body(axum::body::Body::from(body))
                .unwrap();
            router.oneshot(req).await.unwrap().status()
        });
    }
    while let Some(status) = set.join_next().await {
        assert_eq!(status.unwrap(), StatusCode::ACCEPTED);
    }
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 1);
    assert_eq!(app.incident_keys().await.len(), 1);
    let key = app.incident_keys().await.remove(0);
    assert_eq!(alerts_of(&app, &key).await["items"][0]["deliveries"], 30);
}

#[sqlx::test]
async fn a_two_thousand_alert_storm_of_one_group_is_one_incident_with_an_exact_count(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let mut set = tokio::task::JoinSet::new();
    // 400 posts of 5 alerts, 50 at a time, as fast as they can go.
    let mut accepted = 0;
    for wave in 0..8 {
        for post in 0..50 {
            let fps: Vec<String> = (0..5).map(|a| format!("storm-{wave}-{post}-{a}")).collect();
            let pairs: Vec<(&str, &str)> = fps.iter().map(|f| (f.as_str(), "firing")).collect();
            let body =
                alertmanager_payload("RetryHerd", &pairs, json!({"service": "payments-gateway"}))
                    .to_string();
            let (router, id, key) = (app.router.clone(), am.id.clone(), am.key.clone());
            set.spawn(async move {
                use tower::ServiceExt;
                let req = axum::http::Request::post(format!("/hooks/alertmanager/{id}"))
                    .header("authorization", format!("Bearer {key}"))
                    .body(axum::body::Body::from(body))
                    .unwrap();
                router.oneshot(req).await.unwrap().status()
            });
        }
        while let Some(status) = set.join_next().await {
            let status = status.unwrap();
            assert!(
                status == StatusCode::ACCEPTED || status == StatusCode::SERVICE_UNAVAILABLE,
                "{status}"
            );
            if status == StatusCode::ACCEPTED {
                accepted += 5;
            }
        }
    }
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1, "one group, one incident");
    let count = app.incident_json(&keys[0]).await["alert_count"]
        .as_i64()
        .unwrap();
    assert_eq!(count, accepted, "every acknowledged alert is counted");
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, accepted);
    assert!(
        accepted >= 1900,
        "a test-sized storm should not overload the lanes: {accepted}"
    );
    // The incident page still answers, with one line per kind of alert, not two thousand.
    let page = app.get(&format!("/incidents/{}", keys[0])).await;
    assert_eq!(page.status, StatusCode::OK);
}

#[sqlx::test]
async fn admins_add_integrations_and_rules_from_the_browser(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .form(
            "/admin/integrations",
            &[
                ("name", "prod-am"),
                ("format", "alertmanager"),
                ("on_all_resolved", "resolve"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(
        r.text.contains("copy it now") && r.text.contains("credentials: "),
        "the key and Alertmanager's configuration are shown once"
    );
    let key = r
        .text
        .split("credentials: ")
        .nth(1)
        .unwrap()
        .split(['<', '\n'])
        .next()
        .unwrap()
        .trim()
        .to_owned();
    let list = app.get("/api/v1/integrations").await.json();
    let id = list["items"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list["items"][0]["on_all_resolved"], "resolve");
    let hook = Hook {
        id: id.clone(),
        key: key.clone(),
        secret: None,
    };
    let body = alertmanager_payload("PageMade", &[("pm1", "firing")], json!({}));
    assert_eq!(
        app.alert("alertmanager", &hook, &body).await.status,
        StatusCode::ACCEPTED
    );
    let page = app.get("/admin/integrations").await;
    assert!(!page.text.contains(&key), "the key is not shown again");
    assert!(
        page.text
            .contains(&format!("http://quell.test/hooks/alertmanager/{id}"))
    );

    let dup = app
        .form(
            "/admin/integrations",
            &[
                ("name", "prod-am"),
                ("format", "grafana"),
                ("on_all_resolved", "mitigate"),
            ],
        )
        .await;
    assert_eq!(dup.status, StatusCode::CONFLICT);

    let bad = app
        .form(
            "/admin/routing",
            &[
                ("name", "Broken"),
                ("conditions", "labels.x =~ ("),
                ("service", ""),
                ("severity", "Sev1"),
                ("title_template", ""),
            ],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.text.contains("conditions[0]") && bad.text.contains("not a regular expression"),
        "{}",
        bad.text
    );

    let preview = app
        .form(
            "/admin/routing/preview",
            &[
                ("name", "Made"),
                ("conditions", "labels.alertname = PageMade"),
                ("service", ""),
                ("severity", "Sev2"),
                ("title_template", ""),
            ],
        )
        .await;
    assert_eq!(preview.status, StatusCode::OK);
    assert!(
        preview
            .text
            .contains("would have matched <strong>1</strong> of the 1 alerts"),
        "{}",
        preview.text
    );

    let ok = app
        .form(
            "/admin/routing",
            &[
                ("name", "Made"),
                ("conditions", "labels.alertname = PageMade"),
                ("service", ""),
                ("severity", "Sev2"),
                ("title_template", ""),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.text);
    let rules = app.get("/api/v1/routing-rules").await.json();
    assert_eq!(rules["items"][0]["name"], "Made");
    assert_eq!(rules["items"][0]["severity"], "Sev2");
    let rule_id = rules["items"][0]["id"].as_i64().unwrap();
    let stale = app
        .form(
            &format!("/admin/routing/{rule_id}"),
            &[
                ("name", "Renamed"),
                ("conditions", ""),
                ("service", ""),
                ("severity", "alert"),
                ("title_template", ""),
                ("version", "7"),
            ],
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.text);
}

#[sqlx::test]
async fn hostile_alert_text_is_rendered_harmless(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("gen", "generic").await;
    let r = app
        .alert("generic", &h, &json!({"title": "<script>alert(1)</script><img src=x onerror=alert(2)>",
                                      "dedup_key": "x", "source_url": "https://ok.example/\"><script>"}))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let am = app.integration("am", "alertmanager").await;
    let mut body = alertmanager_payload("Evil", &[("e1", "firing")], json!({}));
    body["alerts"][0]["generatorURL"] = json!("javascript:alert(3)");
    body["alerts"][0]["annotations"]["summary"] = json!("<b onmouseover=alert(4)>hover</b>");
    app.alert("alertmanager", &am, &body).await;
    for key in app.incident_keys().await {
        let page = app.get(&format!("/incidents/{key}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(!page.text.contains("<script>alert"), "{key}");
        assert!(!page.text.contains("<img src=x"), "{key}");
        assert!(!page.text.contains("<b onmouseover"), "{key}");
        assert!(!page.text.contains("href=\"javascript:"), "{key}");
    }
}

/// The app of one replica whose alert lanes write through `ingest_pool`.
fn replica(pool: &PgPool, ingest: quell::alerts::ingest::Ingestor) -> axum::Router {
    let state = quell::state::AppState::new(
        pool.clone(),
        quell::state::AppConfig {
            base_url: "http://quell.test".into(),
            trust_forwarded_for: true,
            oidc: None,
            git_roots: vec![],
            webhook_allow: Default::default(),
            live: Default::default(),
            request_timeout: std::time::Duration::from_secs(30),
            bodies: Default::default(),
            uploads: Default::default(),
            metrics_token: None,
        },
    );
    quell::app_with(state, ingest)
}

async fn post_to(
    router: &axum::Router,
    hook: &Hook,
    body: String,
) -> (StatusCode, Option<String>, String) {
    use tower::ServiceExt;
    let req = axum::http::Request::post(format!("/hooks/alertmanager/{}", hook.id))
        .header("authorization", format!("Bearer {}", hook.key))
        .body(axum::body::Body::from(body))
        .unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = http_body_util::BodyExt::collect(res.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, retry, String::from_utf8_lossy(&bytes).into_owned())
}

#[sqlx::test]
async fn two_replicas_racing_on_a_new_group_open_one_incident(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = app.integration("am", "alertmanager").await;
    let replicas = [
        replica(&pool, quell::alerts::ingest::Ingestor::start(pool.clone())),
        replica(&pool, quell::alerts::ingest::Ingestor::start(pool.clone())),
    ];
    let mut set = tokio::task::JoinSet::new();
    for n in 0..40 {
        let router = replicas[n % 2].clone();
        let am = am.clone();
        let body =
            alertmanager_payload("Race", &[(&format!("r{n}"), "firing")], json!({})).to_string();
        set.spawn(async move { post_to(&router, &am, body).await.0 });
    }
    while let Some(status) = set.join_next().await {
        assert_eq!(status.unwrap(), StatusCode::ACCEPTED);
    }
    let keys = app.incident_keys().await;
    assert_eq!(
        keys.len(),
        1,
        "one group, one incident, whichever replica came first"
    );
    assert_eq!(app.incident_json(&keys[0]).await["alert_count"], 40);
}

#[sqlx::test]
async fn when_alerts_cannot_be_stored_in_time_senders_get_503_with_retry_after_never_429(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = app.integration("am", "alertmanager").await;
    // A lane whose only connection is taken: nothing can be written until it is given back.
    let starved = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    let held = starved.acquire().await.unwrap();
    let router = replica(
        &pool,
        quell::alerts::ingest::Ingestor::with_limits(
            starved.clone(),
            1,
            1,
            std::time::Duration::from_millis(300),
        ),
    );
    let mut set = tokio::task::JoinSet::new();
    for n in 0..4 {
        let (router, am) = (router.clone(), am.clone());
        let body =
            alertmanager_payload("Jam", &[(&format!("j{n}"), "firing")], json!({})).to_string();
        set.spawn(async move { post_to(&router, &am, body).await });
    }
    while let Some(answer) = set.join_next().await {
        let (status, retry, body) = answer.unwrap();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(retry.as_deref(), Some("2"));
        assert!(body.contains("\"overloaded\""), "{body}");
    }
    drop(held);
    // Retrying is safe: each alert is stored once, whatever the first attempt did meanwhile.
    for n in 0..4 {
        let body =
            alertmanager_payload("Jam", &[(&format!("j{n}"), "firing")], json!({})).to_string();
        let (status, _, body) = post_to(&router, &am, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    }
    assert_eq!(app.stored_alerts().await, 4);
    assert_eq!(app.incident_keys().await.len(), 1);
}

#[sqlx::test]
async fn each_integration_says_what_happens_when_all_its_alerts_resolve(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (choice, expected) in [("resolve", "resolved"), ("nothing", "triggered")] {
        let r = app
            .post(
                "/api/v1/integrations",
                json!({"name": choice, "format": "alertmanager", "on_all_resolved": choice}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let j = r.json();
        let hook = Hook {
            id: j["id"].as_str().unwrap().into(),
            key: j["key"].as_str().unwrap().into(),
            secret: None,
        };
        let group = format!("Quiet-{choice}");
        app.alert(
            "alertmanager",
            &hook,
            &alertmanager_payload(&group, &[("q1", "firing")], json!({})),
        )
        .await;
        app.alert(
            "alertmanager",
            &hook,
            &alertmanager_payload(&group, &[("q1", "resolved")], json!({})),
        )
        .await;
        let key = app.incident_keys().await.pop().unwrap();
        assert_eq!(
            app.incident_json(&key).await["status"],
            expected,
            "{choice}"
        );
    }
    let r = app
        .post(
            "/api/v1/integrations",
            json!({"name": "x", "format": "alertmanager", "on_all_resolved": "close"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "on_all_resolved");
}

#[sqlx::test]
async fn an_alert_firing_on_a_mitigated_incident_says_so_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("am", "alertmanager").await;
    let fire = |fp: &'static str| alertmanager_payload("QueueDepth", &[(fp, "firing")], json!({}));
    app.alert("alertmanager", &am, &fire("q1")).await;
    let key = app.incident_keys().await[0].clone();
    let resolved = alertmanager_payload("QueueDepth", &[("q1", "resolved")], json!({}));
    app.alert("alertmanager", &am, &resolved).await;
    assert_eq!(app.incident_json(&key).await["status"], "mitigated");

    // The group is still open (the incident is not resolved): a new alert joins it.
    for fp in ["q2", "q3"] {
        let r = app.alert("alertmanager", &am, &fire(fp)).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }
    assert_eq!(app.incident_keys().await.len(), 1);
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["status"], "mitigated", "responders decide");
    assert_eq!(incident["alert_count"], 3);
    let notes: Vec<String> = app
        .timeline(&key)
        .await
        .iter()
        .filter(|e| e["kind"] == "note")
        .map(|e| e["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        notes,
        ["Alert \"QueueDepth on q2\" fired after the incident was mitigated"],
        "once: q3 joined an incident that already had an open alert"
    );
}

#[sqlx::test]
async fn a_resolution_waits_for_a_firing_batch_of_the_same_incident(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = app.integration("am", "alertmanager").await;
    let fire = alertmanager_payload("Latency", &[("l1", "firing")], json!({}));
    app.alert("alertmanager", &am, &fire).await;
    let key = app.incident_keys().await[0].clone();

    // A firing batch in flight: it share-locks the group, as every batch does, and adds an
    // alert it has not committed yet (its foreign key holds a key-share lock on the incident,
    // which the resolution's `for update` waits for).
    let mut batch = pool.begin().await.unwrap();
    let (group_id, incident_id): (i64, i64) = sqlx::query_as(
        "select id, incident_id from alert_groups where closed_at is null order by id for share",
    )
    .fetch_one(&mut *batch)
    .await
    .unwrap();
    sqlx::query(
        "insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, raw)
         select integration_id, $1, $2, 'l2', 'firing', 'Latency on l2', '{}' from alert_groups where id = $1",
    )
    .bind(group_id)
    .bind(incident_id)
    .execute(&mut *batch)
    .await
    .unwrap();
    // ... and counts it into the incident's alert lines, as the batch's statement does.
    sqlx::query(
        "insert into alert_lines (incident_id, summary, total, open, first_received_at,
                                  last_received_at, severity)
         values ($1, 'Latency on l2', 1, 1, now(), now(), '')",
    )
    .bind(incident_id)
    .execute(&mut *batch)
    .await
    .unwrap();

    // Meanwhile the sender resolves the incident's only committed alert.
    let resolved = alertmanager_payload("Latency", &[("l1", "resolved")], json!({}));
    let resolving = {
        let app = &app;
        let am = am.clone();
        async move { app.alert("alertmanager", &am, &resolved).await }
    };
    let commit_later = async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        batch.commit().await.unwrap();
    };
    let (r, ()) = tokio::join!(resolving, commit_later);
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let incident = app.incident_json(&key).await;
    assert_eq!(
        incident["status"], "triggered",
        "the resolution counted the batch's alert: one still fires"
    );
}

/// A batch that opens many incidents at once (thirty posts of new groups waiting in one lane)
/// opens each as one post alone would: its own number, title and severity, its opening line on
/// its timeline, its SLA timers and its audit row, and its group's alerts on it.
#[sqlx::test]
async fn a_batch_opening_many_incidents_opens_each_as_alone(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = app.integration("am", "alertmanager").await;
    // The lane's only connection is held until every post waits in it: then one batch
    // takes them all.
    let lane_pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    let held = lane_pool.acquire().await.unwrap();
    let router = replica(
        &pool,
        quell::alerts::ingest::Ingestor::with_limits(
            lane_pool.clone(),
            1,
            1024,
            std::time::Duration::from_secs(20),
        ),
    );
    let mut set = tokio::task::JoinSet::new();
    for n in 0..30 {
        let (router, am) = (router.clone(), am.clone());
        let severity = if n % 3 == 0 { "critical" } else { "warning" };
        let body = alertmanager_payload(
            &format!("Burst{n}"),
            &[(&format!("b{n}"), "firing")],
            json!({ "severity": severity }),
        )
        .to_string();
        set.spawn(async move { post_to(&router, &am, body).await });
    }
    // Time for every post to reach the lane, which waits for its connection meanwhile. What
    // is checked below holds however the posts were batched; that most were batched together
    // is checked too.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    drop(held);
    while let Some(answer) = set.join_next().await {
        let (status, _, body) = answer.unwrap();
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    }
    let rows: Vec<(String, String, String, i64, i64, i64, i64)> = sqlx::query_as(
        r#"select g.group_key, i.title, i.severity,
                  (select count(*) from alerts a where a.incident_id = i.id and a.group_id = g.id),
                  (select count(*) from timeline_events e where e.incident_id = i.id and e.kind = 'opened'
                     and e.body like '%' || split_part(g.group_key, '"', 2) || '%'),
                  (select count(*) from sla_timers t where t.incident_id = i.id and t.state = 'pending'),
                  (select count(*) from audit_log l where l.action = 'incident.open'
                     and l.target = 'INC-' || i.number)
           from alert_groups g join incidents i on i.id = g.incident_id
           order by g.group_key"#,
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 30, "{rows:#?}");
    for (group, title, severity, alerts, opened, timers, audited) in &rows {
        let name = group.split('"').nth(1).unwrap();
        let n: usize = name.trim_start_matches("Burst").parse().unwrap();
        assert!(title.contains(name), "{group}: {title}");
        let expected = if n.is_multiple_of(3) { "Sev1" } else { "Sev3" };
        assert_eq!(severity, expected, "{group}");
        assert_eq!(
            (*alerts, *opened, *audited),
            (1, 1, 1),
            "{group}: alerts, opening lines, audit rows"
        );
        assert!(*timers >= 2, "{group}: {timers} pending timers");
    }
    let numbers: i64 = sqlx::query_scalar("select count(distinct number) from incidents")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(numbers, 30);
    let together: i64 = sqlx::query_scalar(
        "select max(n) from (select count(*) as n from incidents group by xmin::text) t",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(
        together >= 10,
        "the most incidents opened by one batch: {together}"
    );
}
