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

/// A manager makes a rota in chromium on a phone and on a laptop: a wrong zone is named on
/// the form with what was typed kept, the preview draws four weeks before anything is saved,
/// a working-hours layer over it is on call only on weekdays 09:00–17:00, saving makes the
/// schedule; then an edit made from a copy someone else changed meanwhile is refused.
#[sqlx::test]
async fn a_manager_makes_and_edits_a_rota_in_chromium_at_360_and_1280(pool: PgPool) {
    use crate::browser::{account, chromedriver, click, serve, sign_in_at, text_when, type_into};
    use crate::seen::in_chromium;
    use quell::auth::domain::UserRole;
    const MANAGER: &str = "mia@example.com";
    account(&pool, MANAGER, "Mia Manager", UserRole::Manager).await;
    for (email, name) in [
        ("ana@example.com", "Ana Ribeiro"),
        ("ben@example.com", "Ben Okafor"),
        ("lena@example.com", "Lena Hart"),
    ] {
        account(&pool, email, name, UserRole::Responder).await;
    }
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let count = |name: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("select count(*) from schedules where name = $1")
                .bind(name)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let set = |c: &fantoccini::Client, field: &str, value: &str| {
        let js = format!(
            "document.querySelector('[name={field}]').value = {}",
            serde_json::to_string(value).unwrap()
        );
        let c = c.clone();
        async move {
            c.execute(&js, vec![]).await.unwrap();
        }
    };
    for (width, name) in [(360u32, "Phone rota"), (1280, "Desk rota")] {
        in_chromium(&driver_url, width, 120, "the rota was made", async |c| {
            sign_in_at(c, &format!("{base}/schedules/new"), MANAGER).await;
            type_into(c, "input[name=name]", name).await;
            type_into(c, "textarea[name=l0_people]", "ana\nben").await;
            set(c, "l0_zone", "Mars/Olympus").await;
            click(c, "button[value=preview]").await;
            let said = text_when(c, "[role=alert]", |t| t.contains("time zone")).await;
            assert!(said.contains("Layer 1, time zone"), "{said}");
            let kept = c
                .execute(
                    "return document.querySelector('[name=l0_people]').value",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(kept, json!("ana\nben"), "what was typed is kept");

            set(c, "l0_zone", "Europe/Lisbon").await;
            click(c, "button[value=preview]").await;
            text_when(c, "#preview table.shifts", |t| t.contains("ana")).await;
            assert_eq!(count(name).await, 0, "a preview saves nothing");
            // A working-hours layer over it: Lena, weekdays 09:00–17:00 (the form's default).
            type_into(c, "textarea[name=l1_people]", "lena").await;
            set(c, "l1_zone", "Europe/Lisbon").await;
            click(c, "#layer-1 summary").await;
            click(c, "input[name=l1_restrict]").await;
            click(c, "button[value=preview]").await;
            text_when(c, "#preview table.shifts", |t| t.contains("lena")).await;
            let lena = c
                .execute(
                    r#"return [...document.querySelectorAll('#preview tr[data-person="lena"]')]
                         .map(r => [r.dataset.from, r.dataset.to])"#,
                    vec![],
                )
                .await
                .unwrap();
            let shifts = lena.as_array().unwrap();
            assert!(
                shifts.len() >= 15,
                "about twenty weekdays in four weeks: {lena}"
            );
            for s in shifts {
                let from = chrono::DateTime::parse_from_rfc3339(s[0].as_str().unwrap()).unwrap();
                let to = chrono::DateTime::parse_from_rfc3339(s[1].as_str().unwrap()).unwrap();
                let local = from.with_timezone(&chrono_tz::Europe::Lisbon);
                use chrono::{Datelike, Timelike};
                assert!(local.weekday().num_days_from_monday() < 5, "{local}");
                assert!((9..17).contains(&local.hour()), "{local}");
                assert!(to - from <= chrono::Duration::hours(8), "{from} {to}");
            }
            click(c, "button[value=save]").await;
            let head = text_when(c, "h1", |t| t == name).await;
            assert_eq!(head, name);
            let layers = text_when(c, "main", |t| t.contains("on call only")).await;
            assert!(
                layers.contains("on call only Mon, Tue, Wed, Thu, Fri 09:00–17:00"),
                "{layers}"
            );
            assert_eq!(count(name).await, 1);
        })
        .await;
    }

    // An edit from a copy someone changed meanwhile is refused, and nothing is lost silently.
    let id: i64 = sqlx::query_scalar("select id from schedules where name = 'Desk rota'")
        .fetch_one(&pool)
        .await
        .unwrap();
    in_chromium(
        &driver_url,
        1280,
        90,
        "the stale edit was refused",
        async |c| {
            sign_in_at(c, &format!("{base}/schedules/{id}/edit"), MANAGER).await;
            text_when(c, "textarea[name=l0_people]", |_| true).await;
            let actor = crate::browser::acting_as(&pool, MANAGER).await;
            let mut tx = pool.begin().await.unwrap();
            let mut draft = quell::oncall::db::get(&mut *tx, id).await.unwrap().draft();
            draft.layers[0].people.reverse();
            quell::oncall::actions::update(&mut tx, &actor, id, None, &draft)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            c.execute(
                "document.querySelector('[name=l0_people]').value = 'ben'",
                vec![],
            )
            .await
            .unwrap();
            click(c, "button[value=save]").await;
            let said = text_when(c, "main", |t| {
                t.contains("changed") || t.contains("version")
            })
            .await;
            assert!(said.to_lowercase().contains("changed"), "{said}");
        },
    )
    .await;
    let people: Value =
        sqlx::query_scalar("select layers -> 0 -> 'people' from schedules where id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(people, json!(["ben", "ana"]), "the other change stands");
}

/// The editor saves what its form holds and keeps what it does not show (overrides), names a
/// layer's fault by its place on the form even when a layer above is removed, needs the version
/// it was read at, and is only for the schedule's owners.
#[sqlx::test]
async fn the_editor_keeps_overrides_names_fields_as_shown_and_is_only_for_owners(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (name, handle) in [("Ana Ribeiro", "ana"), ("Ben Okafor", "ben")] {
        app.person(name, handle).await;
    }
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": "Office", "layers": [berlin(&["ana", "ben"])],
                   "overrides": [{"from": "2027-01-04T08:00:00Z", "to": "2027-01-04T12:00:00Z", "with": "ben"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let rita = app.account("rita@example.com", "responder").await;
    let r = app
        .call_as(
            &rita,
            Method::GET,
            &format!("/schedules/{id}/edit"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "not hers to change");
    let list = app
        .call_as(&rita, Method::GET, "/schedules", &[], None)
        .await;
    assert!(
        !list.text.contains("/schedules/new"),
        "not offered to a responder who leads no team"
    );
    // Made a team's lead, she is offered it, with her team chosen for her.
    for team in ["Ledger", "Payments"] {
        let r = app.post("/api/v1/teams", json!({"name": team})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let r = app
        .call(
            Method::PUT,
            "/api/v1/teams/payments/members/rita",
            &[],
            Some(&json!({"role": "lead"}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let new = app
        .call_as(&rita, Method::GET, "/schedules/new", &[], None)
        .await;
    assert!(
        new.text
            .contains("<option value=\"payments\" selected>Payments</option>")
            && !new.text.contains("<option value=\"\" selected>"),
        "{}",
        new.text
    );
    let list = app.get("/schedules").await;
    assert!(
        list.text.contains("href=\"/schedules/new\""),
        "offered to an admin"
    );
    let page = app.get(&format!("/schedules/{id}/edit")).await;
    assert!(
        page.text.contains("name=\"version\" value=\"1\""),
        "{}",
        page.text
    );
    let edit = format!("/schedules/{id}/edit");
    let layer = [
        ("l0_people", "ana\nben"),
        ("l0_length", "week"),
        ("l0_start", "2026-01-05T09:00"),
        ("l0_zone", "Europe/Berlin"),
        ("l0_restrict", "on"),
        ("l0_days", "mon"),
        ("l0_days", "tue"),
        ("l0_from", "09:00"),
        ("l0_to", "17:00"),
    ];
    let mut fields = vec![("name", "Office"), ("intent", "save")];
    fields.extend(layer);
    // Without the version it was read at: refused, nothing saved.
    let r = app.form(&edit, &fields).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("<strong>Version</strong>"), "{}", r.text);
    fields.push(("version", "1"));
    let r = app.form(&edit, &fields).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let s = app.get(&format!("/api/v1/schedules/{id}")).await.json();
    assert_eq!(s["version"], 2);
    assert_eq!(
        s["layers"][0]["restriction"],
        json!({"days": ["Mon", "Tue"], "from": "09:00:00", "to": "17:00:00"})
    );
    assert_eq!(s["overrides"].as_array().unwrap().len(), 1, "kept");
    // The first layer removed and the second naming nobody: the second is named as shown.
    let mut fields = vec![("name", "Office"), ("intent", "preview"), ("version", "2")];
    fields.extend(layer);
    fields.extend([
        ("l0_remove", "on"),
        ("l1_people", "bne"),
        ("l1_length", "day"),
        ("l1_start", "2026-01-05T09:00"),
        ("l1_zone", "UTC"),
    ]);
    let r = app.form(&edit, &fields).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("<strong>Layer 2, people</strong>"),
        "{}",
        r.text
    );
    // A form from before another change: 409 on the form, nothing saved.
    let mut stale = vec![
        ("name", "Office renamed"),
        ("intent", "save"),
        ("version", "1"),
    ];
    stale.extend(layer);
    let r = app.form(&edit, &stale).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(
        r.text.contains("someone changed this schedule"),
        "{}",
        r.text
    );
    assert_eq!(
        app.get(&format!("/api/v1/schedules/{id}")).await.json()["name"],
        "Office"
    );
}
