//! Maintenance windows: quiet windows open incidents that page nobody until they end (then
//! the unacknowledged ones page), silence windows hold their services' alerts and hand the
//! firing ones back at the end; starts and ends on the timeline; checks, announcements, pages.

use crate::common;
use crate::silences::{count, fire, paged_service};

use axum::http::{Method, StatusCode};
use common::TestApp;
use serde_json::{Value, json};
use sqlx::PgPool;

/// The database's now as a wall-clock minute in UTC (a window starting then is going on).
async fn this_minute(pool: &PgPool) -> String {
    sqlx::query_scalar::<_, String>(
        "select to_char(now() at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn window(app: &TestApp, body: Value) -> common::Res {
    app.post("/api/v1/maintenance-windows", body).await
}

async fn engine(pool: &PgPool) {
    quell::alerts::windows::fire_due(pool).await.unwrap();
}

fn notes(timeline: &[Value]) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e["kind"] == "note")
        .map(|e| e["body"].as_str().unwrap().to_owned())
        .collect()
}

#[sqlx::test]
async fn a_quiet_window_opens_incidents_that_page_nobody_until_it_ends(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    // Open before the window: its start and end are written on it.
    app.alert(
        "alertmanager",
        &am,
        &fire("Before", &["b1"], "payments-gateway"),
    )
    .await;
    let before = app.incident_keys().await[0].clone();
    let escalations = || count(&pool, "select count(*) from escalations");
    assert_eq!(escalations().await, 1);

    let r = window(
        &app,
        json!({"name": "Ledger upgrade", "services": ["payments-gateway"], "mode": "quiet",
               "starts_at": this_minute(&pool).await, "duration": "2h", "comment": "CHG-2211"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let w = r.json();
    assert_eq!(w["state"], "active");
    assert_eq!(r.header("etag"), Some("\"v1\""));
    let id = w["id"].as_i64().unwrap();
    engine(&pool).await;
    assert!(
        notes(&app.timeline(&before).await)
            .iter()
            .any(|n| n
                .starts_with("Maintenance window \"Ledger upgrade\" started on payments-gateway")),
        "the start is on the open incident"
    );
    engine(&pool).await; // nothing more is due: written once
    let starts = notes(&app.timeline(&before).await)
        .iter()
        .filter(|n| n.contains("started on"))
        .count();
    assert_eq!(starts, 1);

    // During it: an incident opens, nobody is paged; another service pages as usual.
    app.alert(
        "alertmanager",
        &am,
        &fire("DiskFull", &["d1"], "payments-gateway"),
    )
    .await;
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 2);
    let quiet = keys[1].clone();
    assert_eq!(escalations().await, 1, "the quiet incident pages nobody");
    let opened = app
        .timeline(&quiet)
        .await
        .into_iter()
        .find(|e| e["kind"] == "opened")
        .unwrap();
    assert!(
        opened["body"]
            .as_str()
            .unwrap()
            .contains("during maintenance window \"Ledger upgrade\""),
        "{opened}"
    );
    let alerts = app
        .get(&format!("/api/v1/incidents/{quiet}/alerts"))
        .await
        .json();
    assert_eq!(alerts["items"][0]["silence_id"], Value::Null);

    // Ended early: the end is written, and the quiet incident nobody acknowledged pages now.
    let path = format!("/api/v1/maintenance-windows/{id}/cancel");
    let r = app
        .call(Method::POST, &path, &[("if-match", "\"v1\"")], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["state"], "over");
    engine(&pool).await;
    assert_eq!(
        escalations().await,
        2,
        "the quiet incident's escalation starts"
    );
    let quiet_notes = notes(&app.timeline(&quiet).await);
    assert!(
        quiet_notes
            .iter()
            .any(|n| n.contains("ended on payments-gateway")),
        "{quiet_notes:?}"
    );
    assert!(
        quiet_notes.iter().any(|n| n.contains("paging now")),
        "{quiet_notes:?}"
    );
    assert!(
        notes(&app.timeline(&before).await)
            .iter()
            .any(|n| n.contains("ended on"))
    );
    let r = app
        .call(Method::POST, &path, &[("if-match", "*")], None)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    // After it, alerts page as before.
    app.alert(
        "alertmanager",
        &am,
        &fire("After", &["a1"], "payments-gateway"),
    )
    .await;
    assert_eq!(escalations().await, 3);
}

#[sqlx::test]
async fn a_silence_window_holds_its_services_alerts_and_hands_the_firing_ones_back(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let r = window(
        &app,
        json!({"name": "Rack move", "services": ["payments-gateway"], "mode": "silence",
               "starts_at": this_minute(&pool).await, "duration": "1h"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    engine(&pool).await;
    app.alert(
        "alertmanager",
        &am,
        &fire("DiskFull", &["d1", "d2"], "payments-gateway"),
    )
    .await;
    app.alert("alertmanager", &am, &fire("Other", &["o1"], "search"))
        .await;
    assert_eq!(
        app.incident_keys().await.len(),
        1,
        "only search's alert opened one"
    );
    let held = format!(
        "select count(*) from silenced_alerts where window_id = {id} and status = 'firing'"
    );
    assert_eq!(count(&pool, &held).await, 2);
    // d2 resolves during the window.
    let resolved = common::alertmanager_payload(
        "DiskFull",
        &[("d2", "resolved")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alert("alertmanager", &am, &resolved).await;
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/maintenance-windows/{id}/cancel"),
            &[("if-match", "\"v1\"")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    engine(&pool).await;
    let keys = app.incident_keys().await;
    assert_eq!(
        keys.len(),
        2,
        "d1, still firing, opens its incident at the end"
    );
    assert_eq!(app.incident_json(&keys[1]).await["title"], "DiskFull on d1");
    // A lane that judged just before the end and stored just after: the sweep hands it back.
    sqlx::query(
        r#"insert into silenced_alerts (window_id, integration_id, dedup_key, group_key, status,
                                        summary, labels, raw)
           select $1, integration_id, 'late-1', 'late-group', 'firing', 'Late on l1',
                  '{"service": "payments-gateway"}', '{}'
           from silenced_alerts limit 1"#,
    )
    .bind(id)
    .execute(&pool)
    .await
    .unwrap();
    quell::alerts::unsilence::hand_back(&pool).await.unwrap();
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 3);
    assert_eq!(app.incident_json(&keys[2]).await["title"], "Late on l1");
    assert_eq!(
        count(&pool, "select count(*) from escalations").await,
        2,
        "both page payments"
    );
}

#[sqlx::test]
async fn windows_are_checked_repeat_weekly_and_are_announced(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    paged_service(&app).await;
    let ok = json!({"name": "Patch night", "services": ["payments-gateway"], "mode": "quiet",
                    "starts_at": "2030-01-06T02:00", "time_zone": "Europe/Lisbon",
                    "duration": "2h", "weekly": true, "weekdays": ["sun"]});
    for (change, field) in [
        (json!({"name": " "}), "name"),
        (json!({"mode": "loud"}), "mode"),
        (json!({"time_zone": "Mars/Olympus"}), "time_zone"),
        (json!({"starts_at": "soon"}), "starts_at"),
        (
            json!({"starts_at": "2020-01-01T00:00", "weekly": false, "weekdays": []}),
            "starts_at",
        ),
        (json!({"duration": "9d"}), "duration"),
        // Sunday to Sunday: occurrences would touch.
        (json!({"duration": "7d"}), "duration"),
        (
            json!({"weekdays": ["sat", "sun"], "duration": "23h"}),
            "duration",
        ),
        (json!({"weekly": false}), "weekdays"),
        (json!({"weekdays": ["funday"]}), "weekdays"),
        (json!({"services": ["nope"]}), "services"),
        (json!({"services": []}), "services"),
        (json!({"repeat_until": "2029-01-01"}), "repeat_until"),
    ] {
        let mut body = ok.clone();
        for (k, v) in change.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = window(&app, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}: {}", r.text);
    }
    // Holding alerts is a silence: the admin's longest silence bounds it.
    sqlx::query("update silence_policy set max_hours = 1")
        .execute(&pool)
        .await
        .unwrap();
    let mut held = ok.clone();
    held["mode"] = json!("silence");
    let r = window(&app, held).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "duration".into())
    );
    sqlx::query("update silence_policy set max_hours = 336")
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(
        count(&pool, "select count(*) from maintenance_windows").await,
        0
    );
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            "/api/v1/maintenance-windows",
            &[],
            Some(&ok.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let r = window(&app, ok.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let w = r.json();
    assert_eq!(w["state"], "upcoming");
    assert_eq!(w["weekdays"], json!([7]));
    // Sundays 02:00 in Lisbon: UTC+0 in winter, the next ones a week apart.
    assert_eq!(w["current"]["starts_at"], "2030-01-06T02:00:00Z");
    assert_eq!(w["next"][0]["starts_at"], "2030-01-13T02:00:00Z");
    assert_eq!(w["next"].as_array().unwrap().len(), 4);

    // Announced on the service's page and the dashboard when within a week.
    let soon = json!({"name": "Failover drill", "services": ["payments-gateway"], "mode": "silence",
                      "starts_at": "2099-01-01T00:00", "duration": "30m"});
    window(&app, soon).await;
    let now = this_minute(&pool).await;
    let tomorrow = json!({"name": "Cert rotation <b>", "services": ["payments-gateway"], "mode": "quiet",
                          "starts_at": now, "duration": "3h"});
    assert_eq!(window(&app, tomorrow).await.status, StatusCode::CREATED);
    let page = app.get("/services/payments-gateway").await;
    assert!(page.text.contains("Planned maintenance"), "{}", page.text);
    assert!(
        page.text.contains("Cert rotation &#60;b&#62;") && !page.text.contains("Cert rotation <b>")
    );
    assert!(
        !page.text.contains("Failover drill"),
        "years away: not announced"
    );
    let dash = app.get("/").await;
    assert!(
        dash.text
            .contains("Cert rotation &#60;b&#62; on payments-gateway: now until"),
        "{}",
        dash.text
    );
    let list = app.get("/api/v1/maintenance-windows").await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
}

#[sqlx::test]
async fn windows_are_planned_and_ended_from_the_page(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    paged_service(&app).await;
    let oncall = app.account("oncall@example.com", "responder").await;
    let r = app
        .form_as(
            &oncall,
            "/maintenance",
            &[
                ("name", "Ledger upgrade"),
                ("services", "payments-gateway, search"),
                ("mode", "silence"),
                ("starts_at", &this_minute(&pool).await),
                ("time_zone", "UTC"),
                ("duration", "2h"),
                ("weekdays", ""),
                ("repeat_until", ""),
                ("comment", "CHG-2211"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app
        .call_as(&oncall, Method::GET, "/maintenance", &[], None)
        .await;
    assert!(
        page.text.contains("Ledger upgrade") && page.text.contains("End now"),
        "{}",
        page.text
    );
    let r = app
        .form_as(
            &oncall,
            "/maintenance",
            &[
                ("name", "x"),
                ("services", "nope"),
                ("mode", "quiet"),
                ("starts_at", "2030-01-01T00:00"),
                ("duration", "1h"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("there is no service"), "{}", r.text);
    let id: i64 = sqlx::query_scalar("select id from maintenance_windows")
        .fetch_one(&pool)
        .await
        .unwrap();
    let r = app
        .form_as(
            &oncall,
            &format!("/maintenance/{id}/cancel"),
            &[("version", "1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let w = app
        .get(&format!("/api/v1/maintenance-windows/{id}"))
        .await
        .json();
    assert_eq!(w["state"], "over");
    assert_eq!(w["cancelled_by"], "oncall");
}

#[sqlx::test]
async fn three_engines_racing_write_each_start_and_end_once_and_a_weekly_window_goes_on(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alert(
        "alertmanager",
        &am,
        &fire("Before", &["b1"], "payments-gateway"),
    )
    .await;
    let key = app.incident_keys().await[0].clone();
    let r = window(
        &app,
        json!({"name": "Weekly patching", "services": ["payments-gateway"], "mode": "quiet",
               "starts_at": this_minute(&pool).await, "duration": "1h", "weekly": true}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let race = || async {
        let (a, b, c) = tokio::join!(
            quell::alerts::windows::fire_due(&pool),
            quell::alerts::windows::fire_due(&pool),
            quell::alerts::windows::fire_due(&pool)
        );
        a.unwrap();
        b.unwrap();
        c.unwrap();
    };
    race().await;
    race().await;
    let said = |what: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            notes(&app.timeline(&key).await)
                .iter()
                .filter(|n| n.contains(what))
                .count()
        }
    };
    assert_eq!(said("started on").await, 1);
    // An hour on, as if: the week's occurrence is over, its end due; the next is a week on.
    // The weekday moves with the start (an hour back from 00:30 is the day before).
    sqlx::query(
        "update maintenance_windows set local_start = local_start - interval '1 hour',
             weekdays = array[extract(isodow from local_start - interval '1 hour')::int2],
             edge_occurrence = edge_occurrence - interval '1 hour', next_edge_at = now()
         where id = $1 and next_edge = 'end'",
    )
    .bind(id)
    .execute(&pool)
    .await
    .unwrap();
    race().await;
    race().await;
    assert_eq!(said("ended on").await, 1);
    let (edge, days): (String, f64) = sqlx::query_as(
        "select next_edge, (extract(epoch from next_edge_at - now()) / 86400)::float8 from maintenance_windows where id = $1",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(edge, "start");
    assert!(
        (6.9..7.01).contains(&days),
        "next week's start: {days} days away"
    );
}
