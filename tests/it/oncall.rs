//! On-call schedules through the API: who is on call is computed from the layers and overrides,
//! across a daylight-saving change; bad schedules are refused naming the field and change nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::TestApp;

fn berlin(people: &[&str]) -> Value {
    json!({"length": {"every": "week"}, "start": "2026-01-05T09:00:00",
           "time_zone": "Europe/Berlin", "people": people})
}

#[sqlx::test]
async fn a_berlin_rotation_hands_off_at_the_right_utc_instant_across_october(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (name, handle) in [
        ("Ana Ribeiro", "ana"),
        ("Dev Shah", "dev"),
        ("Priya Nair", "priya"),
        ("Lena Lead", "lena"),
    ] {
        app.person(name, handle).await;
    }
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": "payments", "layers": [berlin(&["ana", "dev", "priya"])],
                   "overrides": [{"from": "2026-10-22T12:00:00Z", "to": "2026-10-22T18:00:00Z", "replaces": "priya", "with": "lena"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let etag = r.header("etag").unwrap().to_owned();
    let r = app
        .get(&format!(
            "/api/v1/schedules/{id}/on-call?from=2026-10-19T06:00:00Z&to=2026-10-27T00:00:00Z"
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let body = r.json();
    assert_eq!(body["at_from"], "dev");
    let spans: Vec<(String, String, String)> = body["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["person"].as_str().unwrap().to_owned(),
                s["from"].as_str().unwrap().to_owned(),
                s["to"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expect = |p: &str, f: &str, t: &str| (p.to_owned(), f.to_owned(), t.to_owned());
    assert_eq!(
        spans,
        [
            expect("dev", "2026-10-19T06:00:00Z", "2026-10-19T07:00:00Z"),
            // Summer: the Monday 09:00 handoff is 07:00 UTC …
            expect("priya", "2026-10-19T07:00:00Z", "2026-10-22T12:00:00Z"),
            expect("lena", "2026-10-22T12:00:00Z", "2026-10-22T18:00:00Z"),
            // … and after the 25 October change, 08:00 UTC.
            expect("priya", "2026-10-22T18:00:00Z", "2026-10-26T08:00:00Z"),
            expect("ana", "2026-10-26T08:00:00Z", "2026-10-27T00:00:00Z"),
        ]
    );
    let list = app.get("/api/v1/schedules").await.json();
    assert_eq!(list["items"][0]["name"], "payments");
    assert!(list["items"][0]["on_call_now"].is_string());

    // Replacing needs the version; a stale one is refused.
    let body = json!({"name": "payments", "layers": [berlin(&["dev", "ana"])]}).to_string();
    let uri = format!("/api/v1/schedules/{id}");
    let r = app
        .call(Method::PUT, &uri, &[("if-match", "\"v9\"")], Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    let r = app
        .call(Method::PUT, &uri, &[("if-match", &etag)], Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["layers"][0]["people"], json!(["dev", "ana"]));
}

#[sqlx::test]
async fn bad_schedules_are_refused_naming_the_field(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.person("Ana Ribeiro", "ana").await;
    let o = |from: &str, to: &str| json!({"from": from, "to": to, "with": "ana"});
    for (body, field) in [
        (
            json!({"name": "x", "layers": [{"length": {"every": "week"}, "start": "2026-01-05T09:00:00", "time_zone": "Europe/Lisbn", "people": ["ana"]}]}),
            "layers[0].time_zone",
        ),
        (
            json!({"name": "x", "layers": [berlin(&[])]}),
            "layers[0].people",
        ),
        (
            json!({"name": "x", "layers": [berlin(&["ana", "nobody"])]}),
            "layers[0].people[1]",
        ),
        (
            json!({"name": "x", "layers": [{"length": {"every": "hours", "hours": 0}, "start": "2026-01-05T09:00:00", "time_zone": "UTC", "people": ["ana"]}]}),
            "layers[0].length.hours",
        ),
        (
            json!({"name": "x", "overrides": [o("2026-10-22T12:00:00Z", "2026-10-22T18:00:00Z"), o("2026-10-22T17:00:00Z", "2026-10-22T19:00:00Z")]}),
            "overrides[1]",
        ),
        (json!({"name": " ", "layers": []}), "name"),
    ] {
        let r = app.post("/api/v1/schedules", body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
    }
    let stored: i64 = sqlx::query_scalar("select count(*) from schedules")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored, 0);
    let r = app.get("/api/v1/schedules/999/on-call").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// Berlin repeats 02:00-03:00 on 25 October 2026. A daily rotation handing off at 02:30 hands
/// off once, at the first 02:30 (00:30 UTC): asked instant by instant through the day of the
/// change, who is on call (what the escalation engine pages) is who the day's spans name.
#[sqlx::test]
async fn who_is_on_call_at_each_instant_of_a_repeated_hour_is_who_the_spans_name(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (name, handle) in [("Ana Ribeiro", "ana"), ("Dev Shah", "dev")] {
        app.person(name, handle).await;
    }
    let layer = json!({"length": {"every": "day"}, "start": "2026-10-20T02:30:00",
                       "time_zone": "Europe/Berlin", "people": ["ana", "dev"]});
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": "nights", "layers": [layer]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let day = app
        .get(&format!(
            "/api/v1/schedules/{id}/on-call?from=2026-10-24T22:00:00Z&to=2026-10-26T02:00:00Z"
        ))
        .await
        .json();
    let spans: Vec<(
        String,
        chrono::DateTime<chrono::Utc>,
        chrono::DateTime<chrono::Utc>,
    )> = day["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let t = |k: &str| crate::common::at(s[k].as_str().unwrap());
            (s["person"].as_str().unwrap().to_owned(), t("from"), t("to"))
        })
        .collect();
    // One handoff on the day of the change, at the first 02:30 (00:30 UTC).
    assert_eq!(
        spans
            .iter()
            .map(|(p, f, _)| (p.as_str(), f.to_rfc3339()))
            .collect::<Vec<_>>(),
        [
            ("ana", "2026-10-24T22:00:00+00:00".to_owned()),
            ("dev", "2026-10-25T00:30:00+00:00".to_owned()),
            ("ana", "2026-10-26T01:30:00+00:00".to_owned()),
        ]
    );
    let mut t = crate::common::at("2026-10-24T22:00:00Z");
    while t < crate::common::at("2026-10-26T02:00:00Z") {
        let r = app
            .get(&format!(
                "/api/v1/schedules/{id}/on-call?from={}&to={}",
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                (t + chrono::Duration::minutes(1))
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let named = spans
            .iter()
            .find(|(_, f, to)| *f <= t && t < *to)
            .map(|(p, ..)| p.as_str());
        assert_eq!(r.json()["at_from"].as_str(), named, "at {t}");
        t += chrono::Duration::minutes(10);
    }
}
