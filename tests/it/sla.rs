//! SLA verdicts from severity policies and timestamps: the reference incident, a backdated
//! incident whose severity rose and fell, and policy changes.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{TestApp, ago};
use serde_json::json;
use sqlx::PgPool;

#[sqlx::test]
async fn inc_1187_shows_the_documents_verdicts(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let i = app.incident_json("INC-1187").await;
    assert_eq!(i["peak_severity"], "Sev1");
    assert_eq!(i["sla"]["basis"], "Sev1");
    assert_eq!(i["sla"]["ack"]["text"], "Met (9 min of 15)");
    assert_eq!(i["sla"]["resolve"]["text"], "Met (3 h 33 min of 4 h)");
    assert_eq!(i["sla"]["ack"]["state"], "met");
    let page = app.get("/incidents/INC-1187").await.text;
    assert!(page.contains("acknowledge: Met (9 min of 15)"));
    assert!(page.contains("resolve: Met (3 h 33 min of 4 h)"));
    assert!(
        page.contains("highest severity the incident reached"),
        "the rule is stated beside the verdict"
    );
    let list = app.get("/incidents").await.text;
    assert!(list.contains("ack Met (9 min of 15), resolve Met (3 h 33 min of 4 h)"));
}

#[sqlx::test]
async fn a_backdated_incident_raised_then_lowered_keeps_the_stricter_targets(pool: PgPool) {
    let app = TestApp::new(pool).await;
    // Opened Sev3 six hours ago, raised to Sev2 after 20 min, acknowledged after 46 min,
    // resolved after 5 h, lowered to Sev4 at the end.
    let t0 = 360;
    let key = app
        .incident(json!({"title": "Checkout latency", "severity": "Sev3", "started_at": ago(t0), "detected_at": ago(t0)}))
        .await;
    let url = |s: &str| format!("/api/v1/incidents/{key}/{s}");
    let r = app
        .post(
            &url("severity"),
            json!({"severity": "Sev2", "reason": "checkout affected", "at": ago(t0 - 20)}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    app.post(&url("acknowledge"), json!({"at": ago(t0 - 46)}))
        .await;
    let i = app
        .post(&url("resolve"), json!({"at": ago(t0 - 300)}))
        .await
        .json();
    assert_eq!(i["sla"]["ack"]["text"], "Breached (46 min of 30)");
    assert_eq!(i["sla"]["resolve"]["text"], "Met (5 h of 8 h)");
    let i = app
        .post(
            &url("severity"),
            json!({"severity": "Sev4", "reason": "minor after all"}),
        )
        .await
        .json();
    assert_eq!(i["severity"], "Sev4");
    assert_eq!(i["peak_severity"], "Sev2");
    assert_eq!(
        i["sla"]["basis"], "Sev2",
        "lowering never relaxes the targets"
    );
    assert_eq!(i["sla"]["ack"]["state"], "breached");
    let page = app.get(&format!("/incidents/{key}")).await.text;
    assert!(
        page.contains("acknowledge: Breached (46 min of 30)") && page.contains("(Sev2 targets)")
    );
}

#[sqlx::test]
async fn running_clocks_show_what_is_due(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let late = app.incident(json!({"title": "Late", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    let fresh = app
        .incident(json!({"title": "Fresh", "severity": "Sev1"}))
        .await;
    let i = app.incident_json(&late).await;
    assert_eq!(i["sla"]["ack"]["state"], "overdue");
    assert!(
        i["sla"]["ack"]["text"]
            .as_str()
            .unwrap()
            .starts_with("overdue by 5 min"),
        "{}",
        i["sla"]["ack"]
    );
    let i = app.incident_json(&fresh).await;
    assert_eq!(i["sla"]["ack"]["state"], "running");
    assert!(
        i["sla"]["ack"]["text"]
            .as_str()
            .unwrap()
            .starts_with("due in 1"),
        "{}",
        i["sla"]["ack"]
    );
    let list = app.get("/incidents").await.text;
    assert!(list.contains(r#"class="sla sla-overdue">ack overdue by"#));
    assert!(list.contains(r#"class="sla sla-running">ack due in"#));
}

#[sqlx::test]
async fn policies_are_read_by_all_and_changed_by_admins(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let p = app.get("/api/v1/severity-policies").await.json();
    let sev1 = p["items"][0].clone();
    assert_eq!(
        sev1,
        json!({"severity": "Sev1", "ack_target_minutes": 15, "resolve_target_minutes": 240, "update_cadence_minutes": 30})
    );
    assert_eq!(
        p["items"][3],
        json!({"severity": "Sev4", "ack_target_minutes": 1440, "resolve_target_minutes": 20160, "update_cadence_minutes": null})
    );

    let key = app.incident(json!({"title": "x", "severity": "Sev2", "started_at": ago(100), "detected_at": ago(100)})).await;
    app.post(
        &format!("/api/v1/incidents/{key}/acknowledge"),
        json!({"at": ago(55)}),
    )
    .await;
    assert_eq!(
        app.incident_json(&key).await["sla"]["ack"]["text"],
        "Breached (45 min of 30)"
    );

    let body = json!({"items": [{"severity": "Sev2", "ack_target_minutes": 60, "resolve_target_minutes": 480, "update_cadence_minutes": 60}]});
    let r = app
        .call(
            Method::PUT,
            "/api/v1/severity-policies",
            &[],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["items"][1]["ack_target_minutes"], 60);
    assert_eq!(
        app.incident_json(&key).await["sla"]["ack"]["text"],
        "Met (45 min of 1 h)"
    );

    for (bad, field) in [
        (
            json!({"items": [{"severity": "Sev2", "ack_target_minutes": 90, "resolve_target_minutes": 60}]}),
            "Sev2.resolve_target_minutes",
        ),
        (
            json!({"items": [{"severity": "Sev9", "ack_target_minutes": 5, "resolve_target_minutes": 60}]}),
            "severity",
        ),
        (
            json!({"items": [{"severity": "Sev1", "ack_target_minutes": 5, "resolve_target_minutes": 60, "update_cadence_minutes": 1}]}),
            "Sev1.update_cadence_minutes",
        ),
        (
            json!({"items": [{"severity": "Sev1", "ack_target_minutes": 0, "resolve_target_minutes": 60}]}),
            "Sev1.ack_target_minutes",
        ),
    ] {
        let r = app
            .call(
                Method::PUT,
                "/api/v1/severity-policies",
                &[],
                Some(&bad.to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(r.field(), field, "{bad}: {}", r.text);
    }
    assert_eq!(
        app.get("/api/v1/severity-policies").await.json()["items"][1]["ack_target_minutes"],
        60,
        "refusals change nothing"
    );
    let audit = app.get("/api/v1/audit?action=severity_policy").await.json();
    assert_eq!(audit["items"].as_array().unwrap().len(), 1);
    assert_eq!(audit["items"][0]["before"]["ack_target_minutes"], 30);
}

#[sqlx::test]
async fn the_policies_page_saves_and_names_bad_fields(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let page = app.get("/admin/policies").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text
            .contains(r#"name="Sev1_ack" inputmode="numeric" required value="15""#)
    );
    let mut fields = vec![];
    for (s, a, r, c) in [
        ("Sev1", "10", "240", "30"),
        ("Sev2", "30", "480", "60"),
        ("Sev3", "120", "4320", ""),
        ("Sev4", "1440", "20160", ""),
    ] {
        fields.push((format!("{s}_ack"), a.to_owned()));
        fields.push((format!("{s}_resolve"), r.to_owned()));
        fields.push((format!("{s}_cadence"), c.to_owned()));
    }
    let as_refs: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = app.form("/admin/policies", &as_refs).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        app.get("/api/v1/severity-policies").await.json()["items"][0]["ack_target_minutes"],
        10
    );
    let mut broken = as_refs.clone();
    broken[0] = ("Sev1_ack", "soon");
    let r = app.form("/admin/policies", &broken).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("Sev1_ack") && r.text.contains("not a whole number"));
}

#[sqlx::test]
async fn stakeholder_updates_keep_the_cadence(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app
        .incident(json!({"title": "Checkout down", "severity": "Sev1", "started_at": ago(100), "detected_at": ago(100)}))
        .await;
    let url = format!("/api/v1/incidents/{key}/updates");
    let r = app.post(&url, json!({"audience": "executives", "body": "Checkout failing; rollback under way", "at": ago(80)})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    for (bad, field) in [
        (json!({"audience": "press", "body": "x"}), "audience"),
        (json!({"audience": "internal", "body": " "}), "body"),
        (
            json!({"audience": "internal", "body": "x", "at": ago(-5)}),
            "at",
        ),
    ] {
        let r = app.post(&url, bad.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(r.field(), field);
    }
    // Sev1 asks every 30 min: due at -70 (met by -80), then -50 (missed), -20 (missed); the update
    // owed since -50 is overdue.
    let list = app.get(&url).await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["cadence"]["text"], "1 of 3 updates on time");
    assert!(
        list["cadence"]["next_text"]
            .as_str()
            .unwrap()
            .starts_with("next update overdue by 50 min"),
        "{}",
        list["cadence"]
    );
    let i = app.incident_json(&key).await;
    assert_eq!(i["updates"]["text"], "1 of 3 updates on time");
    let page = app.get(&format!("/incidents/{key}")).await.text;
    assert!(
        page.contains("1 of 3 updates on time")
            && page.contains("Checkout failing; rollback under way")
    );
    assert!(page.contains("Stakeholder update to executives"));
    let r = app
        .form(
            &format!("/incidents/{key}/updates"),
            &[
                ("audience", "customers"),
                ("body", "We are recovering"),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        app.get(&url).await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[sqlx::test]
async fn inc_1187_sent_its_updates_on_the_30_minute_cadence(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let i = app.incident_json("INC-1187").await;
    assert_eq!(i["updates"]["text"], "1 of 1 updates on time");
    assert!(
        i["updates"]["next_due_at"].is_null(),
        "no more due once mitigated"
    );
}
