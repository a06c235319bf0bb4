//! Services and people over the API.

use crate::common;

use axum::http::{Method, StatusCode};
use common::TestApp;
use serde_json::json;
use sqlx::PgPool;

#[sqlx::test]
async fn services_crud(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.post("/api/v1/teams", json!({"name": "Payments"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post("/api/v1/services", json!({"name": "payments-gateway", "tier": 1, "team": "Payments",
              "slo_target_percent": 99.9, "avg_requests_per_second": 60, "runbook_url": "https://runbooks.example/pg"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        r.header("location"),
        Some("/api/v1/services/payments-gateway")
    );

    let r = app.get("/api/v1/services/payments-gateway").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["slo_target_percent"], 99.9);
    assert_eq!(r.header("etag"), Some("\"v1\""));

    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "payments-gateway", "tier": 2}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    let r = app
        .call(
            Method::PATCH,
            "/api/v1/services/payments-gateway",
            &[("if-match", "\"v1\"")],
            Some(r#"{"tier": 2, "runbook_url": null}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["tier"], 2);
    assert!(r.json()["runbook_url"].is_null());
    assert_eq!(r.json()["team"], "Payments", "untouched fields stay");

    let r = app
        .call(
            Method::PATCH,
            "/api/v1/services/payments-gateway",
            &[("if-match", "\"v1\"")],
            Some(r#"{"tier": 3}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    let r = app
        .call(
            Method::PATCH,
            "/api/v1/services/payments-gateway",
            &[],
            Some(r#"{"tier": 3}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED);

    let list = app.get("/api/v1/services").await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    app.incident(json!({"title": "x", "severity": "Sev2", "service": "payments-gateway"}))
        .await;
    let r = app
        .call(
            Method::DELETE,
            "/api/v1/services/payments-gateway",
            &[],
            None,
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::CONFLICT,
        "a service with incidents stays"
    );

    app.service("spare").await;
    let r = app
        .call(Method::DELETE, "/api/v1/services/spare", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get("/api/v1/services/spare").await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn bad_services_name_the_field(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (body, field) in [
        (json!({"name": "Payments Gateway", "tier": 1}), "name"),
        (json!({"name": "pg", "tier": 4}), "tier"),
        (json!({"name": "pg", "tier": "one"}), "tier"),
        (
            json!({"name": "pg", "tier": 1, "slo_target_percent": 100}),
            "slo_target_percent",
        ),
        (
            json!({"name": "pg", "tier": 1, "avg_requests_per_second": -3}),
            "avg_requests_per_second",
        ),
        (
            json!({"name": "pg", "tier": 1, "runbook_url": "javascript:alert(1)"}),
            "runbook_url",
        ),
        (json!({"tier": 1}), "name"),
    ] {
        let r = app.post("/api/v1/services", body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field, "{body}: {}", r.text);
    }
    assert_eq!(
        app.get("/api/v1/services").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[sqlx::test]
async fn people_lists_everyone_who_can_hold_a_role(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Ana Ribeiro", "ana").await;
    let people = app.get("/api/v1/people").await.json();
    let handles: Vec<_> = people["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["handle"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        handles,
        vec!["ana", "admin"],
        "sorted by name: Ana Ribeiro, admin"
    );
}

#[sqlx::test]
async fn health_and_readiness(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    assert_eq!(app.get("/healthz").await.status, StatusCode::OK);
    assert_eq!(app.get("/readyz").await.status, StatusCode::OK);
    pool.close().await;
    assert_eq!(
        app.get("/readyz").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(app.get("/healthz").await.status, StatusCode::OK);
}

#[sqlx::test]
async fn every_response_carries_a_request_id_and_security_headers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.get("/incidents").await;
    assert!(r.header("x-request-id").is_some_and(|v| v.len() >= 32));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert!(
        r.header("content-security-policy")
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    let r = app
        .call(
            Method::GET,
            "/healthz",
            &[("x-request-id", "abc-123")],
            None,
        )
        .await;
    assert_eq!(r.header("x-request-id"), Some("abc-123"));
}

#[sqlx::test]
async fn the_openapi_description_matches_the_routes(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.get("/api/v1/openapi.json").await;
    assert_eq!(r.status, StatusCode::OK);
    let spec = r.json();
    assert!(spec["openapi"].as_str().unwrap().starts_with("3."));
    let paths = spec["paths"].as_object().unwrap();
    assert!(paths.len() >= 12, "{:?}", paths.keys());
    for (path, ops) in paths {
        let uri = path
            .replace("{key}", "INC-999999")
            .replace("{role}", "scribe")
            .replace("{name}", "no-such-service")
            .replace("{id}", "999999")
            .replace("{metric}", "mtta");
        for (method, op) in ops.as_object().unwrap() {
            assert!(
                op["responses"]
                    .as_object()
                    .unwrap()
                    .values()
                    .all(|r| r["description"].is_string()),
                "{method} {path}: every response is described"
            );
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = app
                .call(method.clone(), &uri, &[("if-match", "\"v1\"")], Some("{}"))
                .await;
            // The handler answered (perhaps 404 for the made-up incident, or 422 for the empty
            // body), not the router's fallback or a 405.
            assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert_ne!(
                r.json()["error"]["message"],
                "No such API endpoint.",
                "{method} {path}"
            );
        }
    }
}

/// Two types given the same schema name: the description keeps one, so every operation of the
/// other would be described with the wrong fields.
#[test]
fn every_schema_name_in_the_openapi_description_means_one_type() {
    assert_eq!(
        quell::router::capabilities().clashes(),
        Vec::<String>::new(),
        "give one of each pair its own name with #[schema(as = …)]"
    );
}

#[sqlx::test]
async fn services_depend_on_services_without_cycles(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    app.service("payments-worker").await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "checkout-api", "tier": 1, "depends_on": ["payments-worker", " payments-worker "]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["depends_on"], json!(["payments-worker"]));
    let patch = |name: &str, body: serde_json::Value| {
        let app = &app;
        let path = format!("/api/v1/services/{name}");
        async move {
            let etag = app.get(&path).await.header("etag").unwrap().to_owned();
            app.call(
                Method::PATCH,
                &path,
                &[("if-match", &etag)],
                Some(&body.to_string()),
            )
            .await
        }
    };
    let r = patch(
        "payments-worker",
        json!({"depends_on": ["payments-gateway"]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // payments-gateway → checkout-api would close checkout-api → payments-worker → payments-gateway.
    let r = patch("payments-gateway", json!({"depends_on": ["checkout-api"]})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "depends_on");
    assert!(
        r.text
            .contains("payments-gateway → checkout-api → payments-worker → payments-gateway"),
        "{}",
        r.text
    );
    for (body, says) in [
        (json!({"depends_on": ["payments-gateway"]}), "itself"),
        (json!({"depends_on": ["ledger"]}), "no service named ledger"),
    ] {
        let r = patch("payments-gateway", body).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains(says), "{}", r.text);
    }
    let gw = app.get("/api/v1/services/payments-gateway").await.json();
    assert_eq!(gw["depends_on"], json!([]), "refusals changed nothing");
    assert_eq!(gw["version"], 1);
    // Other edits leave the dependencies alone; an empty list clears them.
    let team = app.post("/api/v1/teams", json!({"name": "Checkout"})).await;
    assert_eq!(team.status, StatusCode::CREATED, "{}", team.text);
    let r = patch("checkout-api", json!({"team": "Checkout"})).await;
    assert_eq!(r.json()["depends_on"], json!(["payments-worker"]));
    let r = patch("checkout-api", json!({"depends_on": []})).await;
    assert_eq!(r.json()["depends_on"], json!([]));
    // And on the page: the edit form takes names separated by commas.
    let checkout = app.get("/api/v1/services/checkout-api").await.json();
    let r = app
        .form(
            "/services/checkout-api/edit",
            &[
                ("name", "checkout-api"),
                ("tier", "1"),
                ("depends_on", "payments-worker, payments-gateway"),
                ("version", &checkout["version"].to_string()),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get("/services/checkout-api").await;
    assert!(
        page.text
            .contains(r#"<a href="/services/payments-gateway">payments-gateway</a>"#)
    );
    assert!(
        page.text
            .contains(r#"<a href="/services/payments-worker">payments-worker</a>"#)
    );
}
