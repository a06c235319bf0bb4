//! On-call load over a seeded month: hours on call from the schedules (an instant on two
//! schedules once), pages received (one per paging, delivered, in the window), those outside
//! 08:00–20:00 and the nights (22:00–06:00) they broke in each person's own zone, incidents
//! acknowledged first and their mean time to acknowledge — per person and per team, in the
//! API, the page and the CSV.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp};
use crate::paging::method;

/// An instant `days` days before today's UTC midnight, at `hm` ("23:30").
fn ago(days: i64, hm: &str) -> String {
    format!("date_trunc('day', now()) - interval '{days} days' + time '{hm}'")
}

/// A page to `handle` at `at` (SQL), by each of `methods`, each delivered (or in `state`).
async fn page(app: &TestApp, handle: &str, incident: &str, at: &str, state: &str) {
    let sql = format!(
        "insert into notifications (contact_method_id, person_id, incident_id, event, payload,
                                    state, created_at, delivered_at, next_attempt_at)
         select m.id, p.id, i.id, 'incident.paged', '{{}}', '{state}', {at} - interval '5 seconds',
                case when '{state}' = 'delivered' then {at} + make_interval(secs => m.id % 3) end, {at}
         from people p join contact_methods m on m.person_id = p.id, incidents i
         where p.handle = '{handle}' and i.number = {}",
        incident.trim_start_matches("INC-")
    );
    sqlx::query(&sql).execute(&app.pool).await.unwrap();
}

/// Incident `key` detected at `detected`, acknowledged by `handle` at `at` (its first
/// acknowledgement becomes the incident's), the audit log recording it at `recorded`.
async fn acked(
    app: &TestApp,
    key: &str,
    detected: &str,
    handle: &str,
    (at, recorded): (&str, &str),
) {
    let n = key.trim_start_matches("INC-");
    sqlx::query(&format!(
        "update incidents set started_at = {detected}, detected_at = {detected}, status = 'acknowledged',
                acknowledged_at = coalesce(acknowledged_at, {at})
         where number = {n}"
    ))
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query(&format!(
        "insert into audit_log (at, actor_id, actor, action, target, outcome)
         select {recorded}, id, handle, 'incident.acknowledge', '{key}', 'ok' from people where handle = '{handle}'"
    ))
    .execute(&app.pool)
    .await
    .unwrap();
}

async fn load(app: &TestApp, days: i64) -> Value {
    let r = app.get(&format!("/api/v1/oncall/load?days={days}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()
}

fn person<'a>(load: &'a Value, handle: &str) -> &'a Value {
    load["people"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["handle"] == handle)
        .unwrap_or_else(|| panic!("{handle} in {load}"))
}

fn figures(v: &Value) -> Value {
    json!([
        v["hours_on_call"],
        v["pages"],
        v["pages_off_hours"],
        v["nights_interrupted"],
        v["incidents_acknowledged"],
        v["mtta_seconds"]
    ])
}

#[sqlx::test]
async fn load_figures_for_a_seeded_month(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let mut who: Vec<(&str, Creds)> = vec![];
    for (handle, zone) in [
        ("ana", "Atlantic/Reykjavik"),
        ("ben", "Asia/Tokyo"),
        ("cy", "UTC"),
    ] {
        let creds = app
            .account(&format!("{handle}@example.com"), "responder")
            .await;
        let r = app
            .call_as(
                &creds,
                Method::PATCH,
                "/api/v1/me/preferences",
                &[],
                Some(&json!({"time_zone": zone}).to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        who.push((handle, creds));
    }
    let r = app.post("/api/v1/teams", json!({"name": "Payments"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    for handle in ["ana", "ben"] {
        let r = app
            .call(
                Method::PUT,
                &format!("/api/v1/teams/payments/members/{handle}"),
                &[],
                Some(&json!({"role": "member"}).to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    // Ana is on call all the time on two schedules — counted once — and Ben took 50 hours of
    // the first ten days ago (she is still on call on the second then).
    let start: String = sqlx::query_scalar(
        "select to_char(now() - interval '100 days', 'YYYY-MM-DD\"T\"HH24:MI:SS')",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    for name in ["Payments primary", "Payments shadow"] {
        let r = app
            .post(
                "/api/v1/schedules",
                json!({"name": name, "layers": [{"length": {"every": "week"},
                  "start": start, "time_zone": "UTC", "people": ["ana"]}]}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    sqlx::query(
        "update schedules set overrides = jsonb_build_array(jsonb_build_object(
             'from', to_char((date_trunc('day', now()) - interval '10 days') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
             'to', to_char((date_trunc('day', now()) - interval '10 days' + interval '50 hours') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
             'with', 'ben'))
         where name = 'Payments primary'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let sched = app.get("/api/v1/schedules").await.json();
    assert!(
        sched.to_string().contains("\"with\":\"ben\""),
        "the override reads back: {sched}"
    );

    for handle in ["ana", "ben"] {
        method(
            &app,
            handle,
            "email",
            &format!("{handle}@pager.example.com"),
        )
        .await;
        method(&app, handle, "slack", "https://hooks.slack.example.com/x").await;
    }
    let mut keys = vec![];
    for title in ["Card failures", "Ledger lag", "Refund errors", "Old one"] {
        keys.push(
            app.incident(json!({"title": title, "severity": "Sev2"}))
                .await,
        );
    }
    // Ana (Reykjavik keeps UTC all year): a day page to both her methods (one page), a night
    // broken twice, another night, an evening page; one called off before it was sent, and one
    // forty days ago.
    page(&app, "ana", &keys[0], &ago(5, "10:00"), "delivered").await;
    page(&app, "ana", &keys[0], &ago(5, "23:30"), "delivered").await;
    page(&app, "ana", &keys[0], &ago(4, "02:00"), "delivered").await;
    page(&app, "ana", &keys[1], &ago(10, "03:00"), "delivered").await;
    page(&app, "ana", &keys[1], &ago(10, "21:00"), "delivered").await;
    page(&app, "ana", &keys[1], &ago(8, "04:00"), "cancelled").await;
    page(&app, "ana", &keys[3], &ago(40, "12:00"), "delivered").await;
    // Ben (Tokyo, UTC+9): 15:00 UTC is midnight there, 01:00 UTC mid-morning.
    page(&app, "ben", &keys[2], &ago(6, "15:00"), "delivered").await;
    page(&app, "ben", &keys[2], &ago(6, "01:00"), "delivered").await;
    let at = ago(5, "10:04");
    acked(&app, &keys[0], &ago(5, "10:00"), "ana", (&at, &at)).await;
    let at = ago(10, "03:10");
    acked(&app, &keys[1], &ago(10, "03:00"), "ana", (&at, &at)).await;
    // Ben acknowledged Ledger lag again later: the first acknowledgement is Ana's.
    let at = ago(9, "08:00");
    acked(&app, &keys[1], &ago(10, "03:00"), "ben", (&at, &at)).await;
    // Ben's of Refund errors was entered afterwards (a scribe, the audit row written now):
    // the incident's own time counts.
    let at = ago(6, "15:01");
    acked(&app, &keys[2], &ago(6, "15:00"), "ben", (&at, "now()")).await;
    let at = ago(40, "12:20");
    acked(&app, &keys[3], &ago(40, "12:00"), "ana", (&at, &at)).await;

    let month = load(&app, 30).await;
    assert_eq!(month["days"], 30);
    // hours, pages, off hours, nights, acknowledged, mean seconds
    assert_eq!(
        figures(person(&month, "ana")),
        json!([720.0, 5, 4, 2, 2, 420]),
        "{month}"
    );
    assert_eq!(
        figures(person(&month, "ben")),
        json!([50.0, 2, 1, 1, 1, 60]),
        "{month}"
    );
    assert_eq!(person(&month, "ben")["time_zone"], "Asia/Tokyo");
    assert!(
        !month["people"].to_string().contains("\"cy\""),
        "nobody on call, paged or acknowledging is left out: {month}"
    );
    assert_eq!(month["people"][0]["handle"], "ana", "most hours first");
    let team = &month["teams"][0];
    assert_eq!(team["slug"], "payments");
    assert_eq!(team["members"], 2);
    assert_eq!(figures(team), json!([770.0, 7, 5, 3, 3, 300]), "{month}");

    let quarter = load(&app, 90).await;
    assert_eq!(
        figures(person(&quarter, "ana")),
        json!([2160.0, 6, 4, 2, 3, 680]),
        "{quarter}"
    );

    // Managers only; a wrong period names the field.
    let ben = &who[1].1;
    let r = app
        .call_as(ben, Method::GET, "/api/v1/oncall/load", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app.get("/api/v1/oncall/load?days=0").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "days");

    // The page draws both charts and the tables; the CSV has the same figures.
    let page = app.get("/oncall/load?days=30").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert_eq!(
        page.text.matches("<svg class=\"chart\"").count(),
        2,
        "{}",
        page.text
    );
    assert!(
        page.text.contains("<title>ana: 5 (4 off hours)</title>"),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("<title>ben: 50 h</title>"),
        "{}",
        page.text
    );
    let csv = app.get("/oncall/load.csv?days=30").await;
    assert_eq!(csv.status, StatusCode::OK, "{}", csv.text);
    assert_eq!(csv.header("content-type"), Some("text/csv; charset=utf-8"));
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(
        lines[0],
        "kind,handle or team,name,time zone,hours on call,pages,pages outside 08:00-20:00,nights interrupted,incidents acknowledged,mean time to acknowledge (s)"
    );
    assert_eq!(
        lines[1],
        "person,ana,ana,Atlantic/Reykjavik,720,5,4,2,2,420"
    );
    assert_eq!(lines[2], "person,ben,ben,Asia/Tokyo,50,2,1,1,1,60");
    assert_eq!(lines[3], "team,payments,Payments,,770,7,5,3,3,300");
    let r = app
        .call_as(&who[0].1, Method::GET, "/oncall/load.csv", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Ben resolves a false alarm straight from triggered, through the API: that acknowledges
    // it too, and it is his (detected and acknowledged within the second).
    let alarm = app
        .incident(json!({"title": "False alarm", "severity": "Sev3"}))
        .await;
    let r = app
        .call_as(
            ben,
            Method::POST,
            &format!("/api/v1/incidents/{alarm}/resolve"),
            &[],
            Some(&json!({}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let after = load(&app, 30).await;
    let ben = person(&after, "ben");
    assert_eq!(ben["incidents_acknowledged"], 2, "{after}");
    let mean = ben["mtta_seconds"].as_i64().unwrap();
    assert!(
        (30..=31).contains(&mean),
        "(60 s + under a second) / 2: {after}"
    );
}
