//! Shift swaps end to end: the person on call offers hours of their shift to someone, who takes
//! it — it becomes an override, so the schedule (and both people's calendars, computed from it)
//! name the taker for those hours; an offer that is not wholly the offerer's is refused with the
//! reason, and one that stopped being so by the time it is taken too.

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp, on_call_spans};

fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The database's now, and the hour before it began as a layer's wall-clock start in UTC.
async fn an_hour_ago(app: &TestApp) -> (DateTime<Utc>, String) {
    let now = crate::common::db_now(&app.pool).await;
    let start = (now - Duration::hours(1))
        .format("%Y-%m-%dT%H:00:00")
        .to_string();
    (now, start)
}

#[sqlx::test]
async fn a_swap_offered_and_taken_becomes_an_override_and_gaps_or_overlaps_are_refused(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let cy = app.account("cy@example.com", "responder").await;
    // Ana on call for the next two days, then Ben: daily shifts from a start that makes it so.
    let (_, start) = an_hour_ago(&app).await;
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": "Database", "layers": [{"length": {"every": "hours", "hours": 48},
                   "start": start, "time_zone": "UTC", "people": ["ana", "ben"]}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let hour = |h: i64| {
        DateTime::parse_from_rfc3339(&format!("{start}Z"))
            .unwrap()
            .with_timezone(&Utc)
            + Duration::hours(h)
    };
    let swaps = format!("/api/v1/schedules/{id}/swaps");
    let offer = |body: Value| app.post_as(&ana, &swaps, body);
    // Ana offers hours 10–20 of her shift to Ben.
    let r = offer(json!({"from": iso(hour(10)), "to": iso(hour(20)), "offered_to": "ben", "message": "dentist"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let swap = r.json();
    assert_eq!(
        (swap["state"].as_str(), swap["offered_to"].as_str()),
        (Some("offered"), Some("ben"))
    );
    let sid = swap["id"].as_i64().unwrap();

    // Not wholly hers: Ben's hours in it, or beyond the schedule; an override already there.
    for (body, field, says) in [
        (
            json!({"from": iso(hour(40)), "to": iso(hour(60))}),
            "to",
            "ben is on call",
        ),
        (
            json!({"from": iso(hour(60)), "to": iso(hour(70))}),
            "from",
            "ben is on call",
        ),
        (
            json!({"from": iso(hour(20)), "to": iso(hour(10))}),
            "to",
            "after the start",
        ),
        (
            json!({"from": iso(hour(10)), "to": iso(hour(24 * 40))}),
            "to",
            "at most 31 days",
        ),
        (
            json!({"from": iso(hour(2)), "to": iso(hour(3)), "offered_to": "ana"}),
            "offered_to",
            "someone else",
        ),
    ] {
        let r = offer(body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body} {}", r.text);
        assert!(r.text.contains(says), "{body} {}", r.text);
    }

    // Cy may not take what was offered to Ben; Ana may not take her own; Ben takes it.
    let take = |who: &Creds, sid: i64| {
        let who = who.clone();
        let app = &app;
        async move {
            app.call_as(
                &who,
                Method::POST,
                &format!("/api/v1/schedules/{id}/swaps/{sid}/take"),
                &[],
                None,
            )
            .await
        }
    };
    assert_eq!(take(&cy, sid).await.status, StatusCode::FORBIDDEN);
    assert_eq!(take(&ana, sid).await.status, StatusCode::CONFLICT);
    // The page offers Ben the button.
    let page = app
        .call_as(
            &ben,
            Method::GET,
            &format!("/schedules/{id}/swaps"),
            &[],
            None,
        )
        .await;
    assert!(
        page.text
            .contains(&format!("/schedules/{id}/swaps/{sid}/take")),
        "{}",
        page.text
    );
    let r = app
        .form_as(&ben, &format!("/schedules/{id}/swaps/{sid}/take"), &[])
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let taken = take(&ben, sid).await;
    assert_eq!(
        taken.status,
        StatusCode::CONFLICT,
        "taken already: {}",
        taken.text
    );
    let s = app.get(&format!("/api/v1/schedules/{id}")).await.json();
    assert_eq!(
        s["overrides"],
        json!([{"from": iso(hour(10)), "to": iso(hour(20)), "replaces": "ana", "with": "ben"}])
    );
    let named = on_call_spans(&app, id, hour(5), hour(30)).await;
    let who: Vec<&str> = named.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(who, ["ana", "ben", "ana"], "{named:?}");
    assert_eq!(named[1].1, iso(hour(10)));
    assert_eq!(named[1].2, iso(hour(20)));

    // An offer over the override is refused: one override at a time.
    let r = offer(json!({"from": iso(hour(15)), "to": iso(hour(25))})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("ben is on call") || r.text.contains("one override at a time"),
        "{}",
        r.text
    );

    // An open offer the schedule no longer allows when taken: refused with the reason.
    let r = offer(json!({"from": iso(hour(30)), "to": iso(hour(40))})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let open = r.json()["id"].as_i64().unwrap();
    let current = app.get(&format!("/api/v1/schedules/{id}")).await;
    let version = current.json()["version"].as_i64().unwrap();
    let mut draft = current.json();
    for k in ["id", "version", "updated_at", "on_call_now", "team"] {
        draft.as_object_mut().unwrap().remove(k);
    }
    draft["layers"][0]["people"] = json!(["ben", "ana"]);
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/schedules/{id}"),
            &[("if-match", &format!("\"v{version}\""))],
            Some(&draft.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = take(&cy, open).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("no longer be taken"), "{}", r.text);
    // Only Ana withdraws it.
    let withdraw = |who: &Creds| {
        let who = who.clone();
        let app = &app;
        async move {
            app.call_as(
                &who,
                Method::POST,
                &format!("/api/v1/schedules/{id}/swaps/{open}/withdraw"),
                &[],
                None,
            )
            .await
        }
    };
    assert_eq!(withdraw(&cy).await.status, StatusCode::FORBIDDEN);
    let r = withdraw(&ana).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["state"], "withdrawn");
    let list = app
        .get(&format!("/api/v1/schedules/{id}/swaps"))
        .await
        .json();
    let states: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["withdrawn", "taken"],
        "open first, then the latest hours first"
    );
    let audit: i64 =
        sqlx::query_scalar("select count(*) from audit_log where action like 'shift_swap.%'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(audit, 4, "two offers, a take, a withdrawal");
}

/// An offer taken after its hours began covers from the moment it is taken; the offerer's other
/// open offers of those hours close with it; an override already there refuses an offer even
/// when the hours are the offerer's through it; open offers list first; the page's buttons need
/// the form's token.
#[sqlx::test]
async fn a_swap_taken_late_covers_from_then_and_closes_overlapping_offers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let (now, start) = an_hour_ago(&app).await;
    let start_at = DateTime::parse_from_rfc3339(&format!("{start}Z"))
        .unwrap()
        .with_timezone(&Utc);
    let hour = |h: i64| start_at + Duration::hours(h);
    // Ana has the first 48 hours, Ben the next; an override puts Ana in Ben's hours 50–55.
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": "Database", "layers": [{"length": {"every": "hours", "hours": 48},
                   "start": start, "time_zone": "UTC", "people": ["ana", "ben"]}],
                   "overrides": [{"from": iso(hour(50)), "to": iso(hour(55)), "replaces": "ben", "with": "ana"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let swaps = format!("/api/v1/schedules/{id}/swaps");
    let offer = |body: Value| app.post_as(&ana, &swaps, body);
    let r = offer(json!({"from": iso(hour(50)), "to": iso(hour(55))})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("one override at a time"), "{}", r.text);

    // An offer Ana made half an hour ago for the next three hours, and two more of hers.
    let ana_id: i64 = sqlx::query_scalar("select id from people where handle = 'ana'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let late: i64 = sqlx::query_scalar(
        "insert into shift_swaps (schedule_id, offered_by, starts_at, ends_at)
         values ($1, $2, now() - interval '30 minutes', now() + interval '3 hours') returning id",
    )
    .bind(id)
    .bind(ana_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let inside =
        offer(json!({"from": iso(now + Duration::hours(1)), "to": iso(now + Duration::hours(2))}))
            .await;
    assert_eq!(inside.status, StatusCode::CREATED, "{}", inside.text);
    let later = offer(json!({"from": iso(hour(20)), "to": iso(hour(30))})).await;
    assert_eq!(later.status, StatusCode::CREATED, "{}", later.text);

    // The page's button needs the form's token.
    let take_page = format!("/schedules/{id}/swaps/{late}/take");
    let r = app.form_raw(&ben, &take_page, String::new(), &[]).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app.form_as(&ben, &take_page, &[]).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let s = app.get(&format!("/api/v1/schedules/{id}")).await.json();
    let taken = &s["overrides"][1];
    assert_eq!(
        (taken["with"].as_str(), taken["replaces"].as_str()),
        (Some("ben"), Some("ana"))
    );
    let from = DateTime::parse_from_rfc3339(taken["from"].as_str().unwrap()).unwrap();
    assert!(
        from >= now,
        "covered from when it was taken, not before: {from}"
    );
    let list = app
        .get(&format!("/api/v1/schedules/{id}/swaps"))
        .await
        .json();
    let states: Vec<(i64, &str)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_i64().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    let later = later.json()["id"].as_i64().unwrap();
    let inside = inside.json()["id"].as_i64().unwrap();
    assert_eq!(states[0], (later, "offered"), "open first: {states:?}");
    assert!(
        states.contains(&(inside, "withdrawn")),
        "its hours were handed over: {states:?}"
    );
    assert!(states.contains(&(late, "taken")), "{states:?}");
}
