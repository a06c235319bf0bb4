//! The incidents REST API: create, read with ETag, list with filters and cursors, PATCH with
//! If-Match, notes, idempotent creates, and the error format.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{TestApp, ago, at};
use serde_json::json;
use sqlx::PgPool;

#[sqlx::test]
async fn create_answers_201_with_a_key_location_and_etag(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let started = at(&ago(12));
    let detected = (started + chrono::Duration::minutes(5)).to_rfc3339();
    let r = app
        .post(
            "/api/v1/incidents",
            json!({"title": "Card authorizations time out", "severity": "sev2", "service": "payments-gateway",
                   "summary": "Timeouts", "started_at": started.to_rfc3339(), "detected_at": detected}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let i = r.json();
    let key = i["key"].as_str().unwrap();
    assert!(key.starts_with("INC-"));
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/incidents/{key}").as_str())
    );
    assert_eq!(r.header("etag"), Some("\"v1\""));
    assert_eq!(i["severity"], "Sev2");
    assert_eq!(i["status"], "triggered");
    assert_eq!(i["service"], "payments-gateway");
    assert_eq!(i["metrics"]["time_to_detect_secs"], 5 * 60);
    let timeline = app.timeline(key).await;
    assert_eq!(timeline.len(), 1);
    assert_eq!(
        timeline[0]["headline"],
        "Incident opened as Sev2 on payments-gateway"
    );
}

#[sqlx::test]
async fn keys_are_sequential(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let a = app
        .incident(json!({"title": "a", "severity": "Sev3"}))
        .await;
    let b = app
        .incident(json!({"title": "b", "severity": "Sev3"}))
        .await;
    let n = |k: &str| k.trim_start_matches("INC-").parse::<i64>().unwrap();
    assert_eq!(n(&b), n(&a) + 1);
}

#[sqlx::test]
async fn bad_create_bodies_get_the_right_error_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let cases: Vec<(&str, StatusCode, &str)> = vec![
        (r#"{"title": "x""#, StatusCode::BAD_REQUEST, ""),
        ("not json", StatusCode::BAD_REQUEST, ""),
        (
            r#"{"severity": "Sev1"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "title",
        ),
        (
            r#"{"title": "x"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "severity",
        ),
        (
            r#"{"title": "  ", "severity": "Sev1"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "title",
        ),
        (
            r#"{"title": 5, "severity": "Sev1"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "title",
        ),
        (
            r#"{"title": "x", "severity": "Sev5"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "severity",
        ),
        (
            r#"{"title": "x", "severity": "Sev1", "service": "nope"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "service",
        ),
        (
            r#"{"title": "x", "severity": "Sev1", "colour": "red"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "colour",
        ),
        (
            r#"{"title": "x", "severity": "Sev1", "detected_at": "2999-01-01T00:00:00Z"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "detected_at",
        ),
        (
            r#"{"title": "x", "severity": "Sev1", "detected_at": "soon"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "detected_at",
        ),
    ];
    for (body, status, field) in &cases {
        let r = app
            .call(Method::POST, "/api/v1/incidents", &[], Some(body))
            .await;
        assert_eq!(r.status, *status, "{body}: {}", r.text);
        let err = &r.json()["error"];
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        if status == &StatusCode::BAD_REQUEST {
            assert_eq!(r.code(), "malformed_json");
        } else {
            assert_eq!(r.code(), "invalid_field");
            assert_eq!(r.field(), *field, "{body}: {}", r.text);
        }
    }
    // Started after detection names started_at.
    let r = app
        .post(
            "/api/v1/incidents",
            json!({"title": "x", "severity": "Sev1", "started_at": ago(1), "detected_at": ago(5)}),
        )
        .await;
    assert_eq!(r.field(), "started_at");
    let list = app.get("/api/v1/incidents").await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 0, "nothing stored");
}

#[sqlx::test]
async fn unknown_incidents_are_404_in_our_format(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for uri in [
        "/api/v1/incidents/INC-999",
        "/api/v1/incidents/banana",
        "/api/v1/incidents/INC-999/timeline",
    ] {
        let r = app.get(uri).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(r.code(), "not_found");
    }
    let r = app
        .post_empty("/api/v1/incidents/INC-999/acknowledge")
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn get_carries_an_etag_that_follows_the_version(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let r = app.get(&format!("/api/v1/incidents/{key}")).await;
    assert_eq!(r.header("etag"), Some("\"v1\""));
    app.post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    let r = app.get(&format!("/api/v1/incidents/{key}")).await;
    assert_eq!(r.header("etag"), Some("\"v2\""));
    assert_eq!(r.json()["version"], 2);
}

#[sqlx::test]
async fn patch_needs_if_match_and_refuses_stale_versions(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout-api").await;
    let key = app.past_incident(10).await;
    let url = format!("/api/v1/incidents/{key}");
    let body = r#"{"title": "Checkout slow", "service": "checkout-api", "impact": "EU customers"}"#;

    let r = app.call(Method::PATCH, &url, &[], Some(body)).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED, "{}", r.text);

    let r = app
        .call(Method::PATCH, &url, &[("if-match", "garbage")], Some(body))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    let r = app
        .call(Method::PATCH, &url, &[("if-match", "\"v1\"")], Some(body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.header("etag"), Some("\"v2\""));
    let i = r.json();
    assert_eq!(
        (
            i["title"].as_str(),
            i["service"].as_str(),
            i["impact"].as_str()
        ),
        (
            Some("Checkout slow"),
            Some("checkout-api"),
            Some("EU customers")
        )
    );

    let r = app
        .call(
            Method::PATCH,
            &url,
            &[("if-match", "\"v1\"")],
            Some(r#"{"title": "Lost update"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(r.json()["error"]["details"]["current_version"], 2);
    assert_eq!(app.incident_json(&key).await["title"], "Checkout slow");

    let r = app
        .call(
            Method::PATCH,
            &url,
            &[("if-match", "\"v2\"")],
            Some(r#"{"service": null}"#),
        )
        .await;
    assert!(r.json()["service"].is_null());

    let r = app
        .call(
            Method::PATCH,
            &url,
            &[("if-match", "\"v3\"")],
            Some(r#"{"title": ""}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "title");

    let edit = app
        .timeline(&key)
        .await
        .into_iter()
        .find(|e| e["kind"] == "edited")
        .unwrap();
    assert_eq!(edit["details"]["changes"]["title"]["from"], "Past");
    assert_eq!(edit["details"]["changes"]["title"]["to"], "Checkout slow");
}

#[sqlx::test]
async fn two_patches_with_the_same_etag_one_wins_one_gets_412(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let url = format!("/api/v1/incidents/{key}");
    let (a, b) = tokio::join!(
        app.call(
            Method::PATCH,
            &url,
            &[("if-match", "\"v1\"")],
            Some(r#"{"title": "From Ana"}"#)
        ),
        app.call(
            Method::PATCH,
            &url,
            &[("if-match", "\"v1\"")],
            Some(r#"{"title": "From Dev"}"#)
        ),
    );
    let mut statuses = [a.status.as_u16(), b.status.as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 412], "{} / {}", a.text, b.text);
    let winner = if a.status == StatusCode::OK {
        a.json()
    } else {
        b.json()
    };
    assert_eq!(app.incident_json(&key).await["title"], winner["title"]);
    assert_eq!(app.incident_json(&key).await["version"], 2);
}

#[sqlx::test]
async fn idempotency_key_replays_the_same_answer_and_refuses_another_body(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let body = r#"{"title": "Checkout down", "severity": "Sev1"}"#;
    let key = [("idempotency-key", "6c1f0a3e-retry-1")];
    let first = app
        .call(Method::POST, "/api/v1/incidents", &key, Some(body))
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    // Same JSON, different spacing: the same request.
    let again = app
        .call(
            Method::POST,
            "/api/v1/incidents",
            &key,
            Some(r#"{ "severity":"Sev1","title":"Checkout down" }"#),
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.json()["key"], first.json()["key"]);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let other = app
        .call(
            Method::POST,
            "/api/v1/incidents",
            &key,
            Some(r#"{"title": "Other", "severity": "Sev1"}"#),
        )
        .await;
    assert_eq!(other.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(other.code(), "idempotency_key_reused");
    let list = app.get("/api/v1/incidents").await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

#[sqlx::test]
async fn concurrent_retries_with_one_idempotency_key_create_one_incident(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let body = r#"{"title": "Checkout down", "severity": "Sev1"}"#;
    let h = [("idempotency-key", "same")];
    let (a, b, c) = tokio::join!(
        app.call(Method::POST, "/api/v1/incidents", &h, Some(body)),
        app.call(Method::POST, "/api/v1/incidents", &h, Some(body)),
        app.call(Method::POST, "/api/v1/incidents", &h, Some(body)),
    );
    for r in [&a, &b, &c] {
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        assert_eq!(r.json()["key"], a.json()["key"]);
    }
    assert_eq!(
        app.get("/api/v1/incidents").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[sqlx::test]
async fn a_failed_create_frees_its_idempotency_key(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = [("idempotency-key", "k1")];
    let r = app
        .call(
            Method::POST,
            "/api/v1/incidents",
            &h,
            Some(r#"{"title": "x", "severity": "bad"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .call(
            Method::POST,
            "/api/v1/incidents",
            &h,
            Some(r#"{"title": "x", "severity": "Sev2"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[sqlx::test]
async fn list_filters_and_orders_open_first_then_by_severity(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout-api").await;
    let sev3 = app.incident(json!({"title": "minor checkout glitch", "severity": "Sev3", "service": "checkout-api"})).await;
    let sev1 = app
        .incident(json!({"title": "everything down", "severity": "Sev1"}))
        .await;
    let resolved = app
        .incident(json!({"title": "old sev1", "severity": "Sev1"}))
        .await;
    app.post_empty(&format!("/api/v1/incidents/{resolved}/resolve"))
        .await;

    let keys = |v: serde_json::Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        keys(app.get("/api/v1/incidents").await.json()),
        vec![sev1.clone(), sev3.clone(), resolved.clone()]
    );
    assert_eq!(
        keys(app.get("/api/v1/incidents?status=open").await.json()),
        vec![sev1.clone(), sev3.clone()]
    );
    assert_eq!(
        keys(app.get("/api/v1/incidents?status=resolved").await.json()),
        vec![resolved.clone()]
    );
    assert_eq!(
        keys(app.get("/api/v1/incidents?severity=Sev3").await.json()),
        vec![sev3.clone()]
    );
    assert_eq!(
        keys(
            app.get("/api/v1/incidents?service=checkout-api")
                .await
                .json()
        ),
        vec![sev3.clone()]
    );
    assert_eq!(
        keys(app.get("/api/v1/incidents?q=GLITCH").await.json()),
        vec![sev3.clone()]
    );
    assert_eq!(
        keys(app.get(&format!("/api/v1/incidents?q={sev1}")).await.json()),
        vec![sev1.clone()]
    );
    let typed = format!("%20{}%20", sev1.replace("INC", "Inc"));
    assert_eq!(
        keys(
            app.get(&format!("/api/v1/incidents?q={typed}"))
                .await
                .json()
        ),
        vec![sev1.clone()],
        "a key typed in any case, with spaces, finds its incident"
    );
    let padded = sev1.replace("INC-", "INC-0");
    assert_eq!(
        keys(
            app.get(&format!("/api/v1/incidents?q={padded}"))
                .await
                .json()
        ),
        Vec::<String>::new(),
        "a key is matched as it is written, not as any number that parses the same"
    );
    assert_eq!(
        keys(app.get("/api/v1/incidents?q=100%25").await.json()),
        Vec::<String>::new()
    );

    for (q, field) in [
        ("status=lost", "status"),
        ("severity=Sev9", "severity"),
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
        ("cursor=zzz", "cursor"),
    ] {
        let r = app.get(&format!("/api/v1/incidents?{q}")).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{q}");
        assert_eq!(r.field(), field, "{q}");
    }
}

#[sqlx::test]
async fn cursor_pagination_walks_every_incident_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let mut created = Vec::new();
    for n in 0..7 {
        let sev = ["Sev1", "Sev2", "Sev3", "Sev4"][n % 4];
        created.push(
            app.incident(json!({"title": format!("i{n}"), "severity": sev}))
                .await,
        );
    }
    app.post_empty(&format!("/api/v1/incidents/{}/resolve", created[0]))
        .await;
    let mut seen = Vec::new();
    let mut url = "/api/v1/incidents?limit=3".to_owned();
    loop {
        let page = app.get(&url).await.json();
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 3);
        seen.extend(items.iter().map(|i| i["key"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(c) => url = format!("/api/v1/incidents?limit=3&cursor={c}"),
            None => break,
        }
    }
    let full: Vec<String> = app.get("/api/v1/incidents?limit=200").await.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["key"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(seen, full);
    assert_eq!(seen.len(), 7);
    assert_eq!(
        seen.last(),
        Some(&created[0]),
        "the resolved one comes last"
    );
}

#[sqlx::test]
async fn notes_follow_the_at_rules_and_sort_by_occurrence(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(60).await;
    let url = format!("/api/v1/incidents/{key}/timeline");

    let r = app
        .post(&url, json!({"body": "rolled back", "at": ago(30)}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(&url, json!({"body": "found the deploy", "at": ago(45)}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED);

    for (body, field) in [
        (json!({"body": ""}), "body"),
        (json!({"body": "x", "at": ago(-30)}), "at"),
        (json!({"body": "x", "at": ago(90)}), "at"),
        (json!({"body": "x", "kind": "resolved"}), "kind"),
        (json!({"text": "x"}), "text"),
    ] {
        let r = app.post(&url, body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field, "{body}: {}", r.text);
    }
    // Background context may predate the incident, but not the future.
    let r = app
        .post(
            &url,
            json!({"body": "deploy went out", "kind": "context", "at": ago(200)}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(&url, json!({"body": "x", "kind": "context", "at": ago(-5)}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    let bodies: Vec<_> = app
        .timeline(&key)
        .await
        .iter()
        .map(|e| e["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        bodies,
        vec!["deploy went out", "", "found the deploy", "rolled back"]
    );
}

#[sqlx::test]
async fn note_creates_honour_idempotency_keys(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(60).await;
    let url = format!("/api/v1/incidents/{key}/timeline");
    let h = [("idempotency-key", "note-1")];
    let a = app
        .call(Method::POST, &url, &h, Some(r#"{"body": "bridge opened"}"#))
        .await;
    let b = app
        .call(Method::POST, &url, &h, Some(r#"{"body": "bridge opened"}"#))
        .await;
    assert_eq!(
        (a.status, b.status),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    assert_eq!(a.json()["id"], b.json()["id"]);
    assert_eq!(app.timeline(&key).await.len(), 2, "opened + one note");
}

#[sqlx::test]
async fn unknown_api_routes_answer_json_404(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.get("/api/v1/nothing-here").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.code(), "not_found");
}

#[sqlx::test]
async fn bodies_over_one_mebibyte_are_refused_with_413(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let big = format!(
        r#"{{"title": "x", "severity": "Sev2", "summary": "{}"}}"#,
        "a".repeat(1024 * 1024 + 10)
    );
    let r = app
        .call(Method::POST, "/api/v1/incidents", &[], Some(&big))
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(r.code(), "payload_too_large");
    assert_eq!(
        app.get("/api/v1/incidents").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[sqlx::test]
async fn idempotency_keys_are_forgotten_after_a_day(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = [("idempotency-key", "old-key")];
    let body = r#"{"title": "x", "severity": "Sev3"}"#;
    let first = app
        .call(Method::POST, "/api/v1/incidents", &h, Some(body))
        .await;
    sqlx::query("update idempotency_keys set created_at = now() - interval '25 hours'")
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        quell::idempotency::db::purge_old(&app.pool).await.unwrap(),
        1
    );
    let again = app
        .call(Method::POST, "/api/v1/incidents", &h, Some(body))
        .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_ne!(
        again.json()["key"],
        first.json()["key"],
        "a day later the same key is a new request"
    );
}
