//! Response-metric reports: mean and median from the incidents' timestamps, grouped three ways.

use crate::common;

use axum::http::StatusCode;
use common::TestApp;
use serde_json::json;
use sqlx::PgPool;

async fn two_incidents(app: &TestApp) {
    app.service("payments-gateway").await;
    app.service("checkout-api").await;
    // INC-1187's times (payments-gateway, Sev1, September): acknowledged after 9 min, mitigated
    // after 45 min, resolved after 3 h 33 min.
    let key = app
        .incident(json!({"title": "Authorization timeouts", "severity": "Sev1", "service": "payments-gateway",
                         "started_at": "2026-09-17T16:02:00Z", "detected_at": "2026-09-17T16:07:00Z"}))
        .await;
    for (step, at) in [
        ("acknowledge", "2026-09-17T16:16:00Z"),
        ("mitigate", "2026-09-17T16:52:00Z"),
        ("resolve", "2026-09-17T19:40:00Z"),
    ] {
        let r = app
            .post(
                &format!("/api/v1/incidents/{key}/{step}"),
                json!({"at": at}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{step}: {}", r.text);
    }
    // A Sev2 on checkout-api in September acknowledged after 21 min, still unresolved.
    let key = app
        .incident(json!({"title": "Checkout slow", "severity": "Sev2", "service": "checkout-api",
                         "started_at": "2026-09-20T10:00:00Z", "detected_at": "2026-09-20T10:00:00Z"}))
        .await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/acknowledge"),
            json!({"at": "2026-09-20T10:21:00Z"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // An October Sev3 without a service, acknowledged after 3 min.
    let key = app
        .incident(json!({"title": "Batch late", "severity": "Sev3",
                         "started_at": "2026-10-02T08:00:00Z", "detected_at": "2026-10-02T08:00:00Z"}))
        .await;
    app.post(
        &format!("/api/v1/incidents/{key}/acknowledge"),
        json!({"at": "2026-10-02T08:03:00Z"}),
    )
    .await;
}

#[sqlx::test]
async fn mtta_by_month_service_and_severity(pool: PgPool) {
    let app = TestApp::new(pool).await;
    two_incidents(&app).await;
    // The figures are kept: until they are computed again they are those of an empty history,
    // and say when they were computed.
    let stale = app.get("/api/v1/reports/mtta?group_by=month").await.json();
    assert_eq!(stale["items"], json!([]));
    assert!(stale["as_of"].is_string());
    assert!(
        quell::reports::db::refresh(&app.pool, false).await.unwrap(),
        "the refresher sees the incidents changed"
    );
    assert!(
        !quell::reports::db::refresh(&app.pool, false).await.unwrap(),
        "and nothing more to do until they change again"
    );
    let r = app.get("/api/v1/reports/mtta?group_by=month").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let report = r.json();
    assert!(
        report["definition"]
            .as_str()
            .unwrap()
            .contains("From detection")
    );
    assert_eq!(
        report["items"],
        json!([
            {"group": "2026-09", "incidents": 2, "mean_secs": 900.0, "median_secs": 900.0},
            {"group": "2026-10", "incidents": 1, "mean_secs": 180.0, "median_secs": 180.0},
        ])
    );
    let by_service = app
        .get("/api/v1/reports/mtta?group_by=service")
        .await
        .json();
    let groups: Vec<_> = by_service["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        groups,
        vec!["(no service)", "checkout-api", "payments-gateway"]
    );
    let by_severity = app
        .get("/api/v1/reports/mtta?group_by=severity")
        .await
        .json();
    assert_eq!(by_severity["items"][0]["group"], "Sev1");
    assert_eq!(by_severity["items"][0]["mean_secs"], 540.0);
    // Only incidents that got that far count.
    let mttr = app.get("/api/v1/reports/mttr").await.json();
    assert_eq!(mttr["group_by"], "month");
    assert_eq!(
        mttr["items"],
        json!([{"group": "2026-09", "incidents": 1, "mean_secs": 12780.0, "median_secs": 12780.0}])
    );
    let mttm = app
        .get("/api/v1/reports/mttm?group_by=severity")
        .await
        .json();
    assert_eq!(mttm["items"][0]["mean_secs"], 2700.0);

    for (uri, field) in [
        ("/api/v1/reports/mtbf", "metric"),
        ("/api/v1/reports/mtta?group_by=team", "group_by"),
        ("/api/v1/reports/mtta?by=month", "by"),
    ] {
        let r = app.get(uri).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{uri}");
        assert_eq!(r.field(), field, "{uri}");
    }
}

#[sqlx::test]
async fn the_reports_page_draws_charts_and_writes_the_definitions(pool: PgPool) {
    let app = TestApp::new(pool).await;
    assert!(
        app.get("/reports")
            .await
            .text
            .contains("No incident has reached this point yet.")
    );
    two_incidents(&app).await;
    quell::reports::db::refresh(&app.pool, false).await.unwrap();
    let page = app.get("/reports").await;
    assert_eq!(page.status, StatusCode::OK);
    for needle in [
        "Time to acknowledge",
        "Time to mitigate",
        "Time to resolve",
        "<svg class=\"chart\"",
        "2026-09: mean 15 min",
        "payments-gateway",
        "From detection to resolution",
        "3 h 33 min",
    ] {
        assert!(page.text.contains(needle), "{needle:?}");
    }
}

/// Changes confirmed as a trigger ÷ changes: three changes of `a` (one confirmed by two
/// incidents, counted once), one of `b`, none confirmed there.
#[sqlx::test]
async fn the_change_failure_rate_per_service_month_and_overall(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("a").await;
    app.service("b").await;
    let mut ids = vec![];
    for (service, at) in [
        ("a", "2026-09-17T14:05:00Z"),
        ("a", "2026-09-18T09:00:00Z"),
        ("a", "2026-10-01T09:00:00Z"),
        ("b", "2026-10-02T09:00:00Z"),
    ] {
        let r = app
            .post(
                "/api/v1/changes",
                json!({"service": service, "summary": format!("deploy {at}"), "occurred_at": at}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        ids.push(r.json()["id"].as_i64().unwrap());
    }
    for started in ["2026-09-17T16:02:00Z", "2026-09-17T17:00:00Z"] {
        let key = app
            .incident(
                json!({"title": "a down", "severity": "Sev2", "service": "a",
                             "started_at": started, "detected_at": started}),
            )
            .await;
        let r = app
            .post(
                &format!("/api/v1/incidents/{key}/suspect-changes/{}", ids[0]),
                json!({"verdict": "confirmed_trigger"}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let rows = |j: &serde_json::Value| -> Vec<(String, i64, i64)> {
        j["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["group"].as_str().unwrap().to_owned(),
                    r["changes"].as_i64().unwrap(),
                    r["failed"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let by_service = app
        .get("/api/v1/reports/change-failure-rate?group_by=service")
        .await;
    assert_eq!(by_service.status, StatusCode::OK, "{}", by_service.text);
    let j = by_service.json();
    assert_eq!(rows(&j), [("a".into(), 3, 1), ("b".into(), 1, 0)]);
    assert_eq!(j["overall"]["changes"], 4);
    assert_eq!(j["overall"]["failed"], 1);
    assert_eq!(j["overall"]["rate"], 0.25);
    let by_month = app
        .get("/api/v1/reports/change-failure-rate?group_by=month")
        .await
        .json();
    assert_eq!(
        rows(&by_month),
        [("2026-09".into(), 2, 1), ("2026-10".into(), 2, 0)]
    );
    let october = app
        .get("/api/v1/reports/change-failure-rate?group_by=service&from=2026-10-01&to=2026-10-31")
        .await
        .json();
    assert_eq!(rows(&october), [("a".into(), 1, 0), ("b".into(), 1, 0)]);
    // Bad groupings and periods are named; viewers are refused.
    for (q, field) in [
        ("group_by=severity", "group_by"),
        ("from=2026-13-01", "from"),
        ("from=2026-10-02&to=2026-10-01", "to"),
    ] {
        let r = app
            .get(&format!("/api/v1/reports/change-failure-rate?{q}"))
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{q}");
        assert!(r.text.contains(field), "{q}: {}", r.text);
    }
    let viewer = app.account("v@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            axum::http::Method::GET,
            "/api/v1/reports/change-failure-rate",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    // The reports page beside MTTx, and the service page.
    let page = app.get("/reports").await;
    assert!(
        page.text.contains("Change-failure rate") && page.text.contains("1 of 4 changes (25%)")
    );
    let page = app.get("/services/a").await;
    assert!(
        page.text.contains("1 of 3 changes (33%) all time"),
        "{}",
        page.text
    );
}
