//! Teams: made through the API as a new user would, who may change which, services that
//! belong to them, and the team's pages.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Creds, TestApp};
use serde_json::{Value, json};
use sqlx::PgPool;

async fn put_as(app: &TestApp, who: &Creds, uri: &str, body: Value) -> common::Res {
    app.call_as(who, Method::PUT, uri, &[], Some(&body.to_string()))
        .await
}

async fn delete_as(app: &TestApp, who: &Creds, uri: &str) -> common::Res {
    app.call_as(who, Method::DELETE, uri, &[], None).await
}

/// `PUT` as the admin.
async fn put(app: &TestApp, uri: &str, body: Value) -> common::Res {
    app.call(Method::PUT, uri, &[], Some(&body.to_string()))
        .await
}

async fn team(app: &TestApp, name: &str) -> Value {
    let r = app.post("/api/v1/teams", json!({"name": name})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

/// How many refusals the audit log holds for `actor`.
async fn refusals_of(app: &TestApp, actor: &str) -> usize {
    app.get("/api/v1/audit?outcome=refused&action=access.denied&limit=500")
        .await
        .json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["actor"] == actor)
        .count()
}

#[sqlx::test]
async fn a_lead_changes_their_own_team_and_not_another_teams(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let dee = app.account("dee@example.com", "responder").await;
    let mo = app.account("mo@example.com", "manager").await;
    let vic = app.account("vic@example.com", "viewer").await;
    app.account("cy@example.com", "responder").await;

    // Managers and admins make teams; a responder or a viewer may not.
    for who in [&ana, &vic] {
        let r = app
            .call_as(
                who,
                Method::POST,
                "/api/v1/teams",
                &[],
                Some(r#"{"name": "Rogue"}"#),
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    }
    let payments = team(&app, "Payments").await;
    assert_eq!(payments["slug"], "payments", "the slug comes from the name");
    assert_eq!(payments["members"], json!([]));
    let r = app
        .call_as(
            &mo,
            Method::POST,
            "/api/v1/teams",
            &[],
            Some(r#"{"name": "Checkout", "description": "The checkout API"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.header("location"), Some("/api/v1/teams/checkout"));

    // The admin names the leads; the lead of Payments names its members.
    for (slug, handle) in [("payments", "ana"), ("checkout", "ben")] {
        let r = put(
            &app,
            &format!("/api/v1/teams/{slug}/members/{handle}"),
            json!({"role": "lead"}),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let r = put_as(
        &app,
        &ana,
        "/api/v1/teams/payments/members/dee",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.json()["members"],
        json!([{"handle": "ana", "name": "ana", "role": "lead"},
               {"handle": "dee", "name": "dee", "role": "member"}]),
        "leads first"
    );

    // Ana leads Payments, not Checkout: refused, named, audited, and nothing changed.
    let before = refusals_of(&app, "ana").await;
    let r = put_as(
        &app,
        &ana,
        "/api/v1/teams/checkout/members/cy",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert!(r.text.contains("Checkout"), "{}", r.text);
    assert_eq!(refusals_of(&app, "ana").await, before + 1);
    let checkout = app.get("/api/v1/teams/checkout").await.json();
    assert_eq!(checkout["members"].as_array().unwrap().len(), 1);
    let r = app
        .call_as(
            &ana,
            Method::PUT,
            "/api/v1/teams/checkout",
            &[("if-match", "*")],
            Some(r#"{"name": "Checkout", "description": "mine now"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &ana, "/api/v1/teams/checkout/members/ben").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);

    // A member changes nothing until the team lets its members.
    let r = put_as(
        &app,
        &dee,
        "/api/v1/teams/payments/members/cy",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let v = app
        .get("/api/v1/teams/payments")
        .await
        .header("etag")
        .unwrap()
        .to_owned();
    let r = app
        .call_as(
            &ana,
            Method::PUT,
            "/api/v1/teams/payments",
            &[("if-match", &v)],
            Some(r#"{"name": "Payments", "members_manage": true}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["members_manage"], true);
    let r = app
        .call_as(
            &ana,
            Method::PUT,
            "/api/v1/teams/payments",
            &[("if-match", &v)],
            Some(r#"{"name": "Payments"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "a stale copy");
    // Let in, a member changes the team's configuration — not its people, nor themselves into
    // a lead, nor its settings.
    let r = send_as(
        &app,
        &dee,
        Method::POST,
        "/api/v1/escalation-policies",
        json!({"name": "Dee's", "team": "payments", "steps": [{"targets": [{"person": "ana"}], "delay_minutes": 5}]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    for (method, uri, body) in [
        (
            Method::PUT,
            "/api/v1/teams/payments/members/dee",
            json!({"role": "lead"}),
        ),
        (
            Method::PUT,
            "/api/v1/teams/payments/members/cy",
            json!({"role": "member"}),
        ),
        (
            Method::PUT,
            "/api/v1/teams/payments",
            json!({"name": "Payments"}),
        ),
    ] {
        let r = send_as(&app, &dee, method, uri, body).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{uri}: {}", r.text);
    }
    let r = put_as(
        &app,
        &ana,
        "/api/v1/teams/payments/members/cy",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    // A global manager changes any team; a viewer none, even one they are in.
    let r = put_as(
        &app,
        &mo,
        "/api/v1/teams/checkout/members/vic",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = put_as(
        &app,
        &vic,
        "/api/v1/teams/checkout/members/cy",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);

    // Ben takes Cy out of Payments? Not his team. Ana may.
    let r = delete_as(&app, &ben, "/api/v1/teams/payments/members/cy").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &ana, "/api/v1/teams/payments/members/cy").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = delete_as(&app, &ana, "/api/v1/teams/payments/members/cy").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

    // Only managers and admins delete a team.
    let r = delete_as(&app, &ana, "/api/v1/teams/payments").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &mo, "/api/v1/teams/checkout").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let names: Vec<Value> = app.get("/api/v1/teams").await.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("Payments")]);
    assert_eq!(
        app.get("/api/v1/teams/checkout").await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn bad_team_input_is_refused_naming_the_field_and_changes_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    app.account("ana@example.com", "responder").await;
    for (body, field) in [
        (json!({"name": "  "}), "name"),
        (json!({"name": "x".repeat(81)}), "name"),
        (json!({"name": "Search", "slug": "Bad Slug"}), "slug"),
        (json!({"name": "!!!"}), "slug"),
        (
            json!({"name": "Search", "description": "d".repeat(2001)}),
            "description",
        ),
    ] {
        let r = app.post("/api/v1/teams", body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
    }
    for body in [
        json!({"name": "payments"}),
        json!({"name": "Other", "slug": "payments"}),
    ] {
        let r = app.post("/api/v1/teams", body.clone()).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{body}: {}", r.text);
    }
    let r = app
        .post("/api/v1/teams", json!({"name": "Search", "colour": "red"}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "boss"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "role");
    let r = put(
        &app,
        "/api/v1/teams/payments/members/nobody",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "handle");
    let r = put(
        &app,
        "/api/v1/teams/nope/members/ana",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let teams = app.get("/api/v1/teams").await.json();
    assert_eq!(teams["items"].as_array().unwrap().len(), 1);
    assert_eq!(teams["items"][0]["members"], json!([]));
    assert_eq!(teams["items"][0]["version"], 1);
}

#[sqlx::test]
async fn a_service_belongs_to_a_team_and_lists_filter_by_it(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "payments-gateway", "tier": 1, "team": "payments"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        r.json()["team"],
        "Payments",
        "named by its slug, shown by its name"
    );
    assert_eq!(r.json()["team_slug"], "payments");
    app.service("search").await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "ledger", "tier": 1, "team": "Ledgers"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "team");
    assert_eq!(
        app.get("/api/v1/services/ledger").await.status,
        StatusCode::NOT_FOUND,
        "nothing was made"
    );
    let owned = app.get("/api/v1/services?team=payments").await.json();
    let names: Vec<&Value> = owned["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["name"])
        .collect();
    assert_eq!(names, [&json!("payments-gateway")]);
    assert_eq!(
        app.get("/api/v1/services").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let page = app.get("/services?team=payments").await.text;
    assert!(
        page.contains("payments-gateway") && !page.contains(">search<"),
        "{page}"
    );
    assert_eq!(
        app.get("/services?team=nope").await.status,
        StatusCode::NOT_FOUND
    );
    // A team deleted: what it owned is the installation's.
    let r = app
        .call(Method::DELETE, "/api/v1/teams/payments", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let s = app.get("/api/v1/services/payments-gateway").await.json();
    assert_eq!(
        (s["team"].clone(), s["team_slug"].clone()),
        (json!(""), Value::Null)
    );
}

#[sqlx::test]
async fn the_team_page_shows_its_services_who_is_on_call_and_its_open_incidents(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    app.person("Ana Ribeiro", "ana").await;
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for (name, team) in [("payments-gateway", "payments"), ("search", "")] {
        let r = app
            .post(
                "/api/v1/services",
                json!({"name": name, "tier": 1, "team": team}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    app.policy("payments-gateway", json!({"name": "Payments", "steps": [{"targets": [{"person": "ana"}], "delay_minutes": 5}]})).await;
    let ours = app
        .incident(
            json!({"title": "Card declines", "severity": "Sev2", "service": "payments-gateway"}),
        )
        .await;
    let theirs = app
        .incident(json!({"title": "Slow search", "severity": "Sev3", "service": "search"}))
        .await;

    let r = app.get("/teams/payments").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let html = r.text;
    assert!(
        html.contains(r#"<a href="/services/payments-gateway">payments-gateway</a>"#),
        "{html}"
    );
    assert!(html.contains("Ana Ribeiro"), "who is paged first: {html}");
    assert!(
        html.contains(&ours) && html.contains("Card declines"),
        "{html}"
    );
    assert!(!html.contains(&theirs), "another team's incident: {html}");
    assert!(html.contains("The last 90 days"), "{html}");
    assert!(
        html.contains("1 in 90 days"),
        "the team's incidents counted: {html}"
    );
    assert_eq!(app.get("/teams/nope").await.status, StatusCode::NOT_FOUND);
    // The service's own page names its team and who it pages first now; one without a policy
    // says it pages nobody.
    let html = app.get("/services/payments-gateway").await.text;
    assert!(
        html.contains(r#"<a href="/teams/payments">Payments</a>"#),
        "{html}"
    );
    assert!(
        html.contains("Ana Ribeiro <span class=\"muted\">(paged first by Payments)</span>"),
        "{html}"
    );
    let html = app.get("/services/search").await.text;
    assert!(html.contains("its alerts page nobody"), "{html}");
    assert_eq!(
        app.get("/services/nope").await.status,
        StatusCode::NOT_FOUND
    );
    // The incident list narrows to a team's the same way, in the API and on the page.
    let listed = app.get("/api/v1/incidents?team=payments").await.json();
    let keys: Vec<&Value> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["key"])
        .collect();
    assert_eq!(keys, [&json!(ours)]);
    let page = app.get("/incidents?team=payments").await.text;
    assert!(page.contains(&ours) && !page.contains(&theirs), "{page}");
    assert!(
        page.contains(r#"<option value="payments" selected>"#),
        "{page}"
    );
    // Action items of the team's incidents: the list narrows to them, the team page shows the
    // overdue ones.
    for (key, action) in [
        (&ours, "Add a card-decline alarm"),
        (&theirs, "Index search"),
    ] {
        let fields = [
            ("action", action),
            ("type", "prevent"),
            ("owner", ""),
            ("due_on", "2020-01-31"),
            ("work_item", ""),
        ];
        let r = app
            .form(
                &format!("/incidents/{key}/postmortem/action-items"),
                &fields,
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    }
    let items = app.get("/api/v1/action-items?team=payments").await.json();
    let actions: Vec<&Value> = items["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["action"])
        .collect();
    assert_eq!(actions, [&json!("Add a card-decline alarm")]);
    let html = app.get("/teams/payments").await.text;
    assert!(
        html.contains("Add a card-decline alarm") && !html.contains("Index search"),
        "{html}"
    );
    let list = app.get("/teams").await.text;
    assert!(
        list.contains(r#"<a href="/teams/payments">Payments</a>"#),
        "{list}"
    );
}

#[sqlx::test]
async fn a_lead_edits_membership_on_the_page_and_an_outsider_is_refused(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    let ana = app.account("ana@example.com", "responder").await;
    let cy = app.account("cy@example.com", "responder").await;
    app.account("dee@example.com", "responder").await;
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    let page = app
        .call_as(&ana, Method::GET, "/teams/payments/members", &[], None)
        .await;
    assert!(page.text.contains("Add a member"), "{}", page.text);
    let outside = app
        .call_as(&cy, Method::GET, "/teams/payments/members", &[], None)
        .await;
    assert!(!outside.text.contains("Add a member"), "{}", outside.text);
    assert!(
        outside.text.contains("Only the team's leads"),
        "{}",
        outside.text
    );

    let r = app
        .form_as(
            &ana,
            "/teams/payments/members",
            &[("handle", "dee"), ("role", "member")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.header("location"), Some("/teams/payments/members"));
    let r = app
        .form_as(
            &ana,
            "/teams/payments/members",
            &[("handle", "nobody"), ("role", "member")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("there is no person"), "{}", r.text);
    let r = app
        .form_as(
            &cy,
            "/teams/payments/members",
            &[("handle", "cy"), ("role", "lead")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app
        .form_as(
            &ana,
            "/teams/payments/members",
            &[("handle", "dee"), ("action", "remove")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let members = &app.get("/api/v1/teams/payments").await.json()["members"];
    assert_eq!(
        members,
        &json!([{"handle": "ana", "name": "ana", "role": "lead"}])
    );

    // A manager makes a team on the list page; a blank name comes back naming the field.
    let r = app.form("/teams", &[("name", "")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let r = app.form("/teams", &[("name", "Data & ML")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.header("location"), Some("/teams/data-ml/members"));
}

/// `method` `uri` with `body` as `who`.
async fn send_as(
    app: &TestApp,
    who: &Creds,
    method: Method,
    uri: &str,
    body: Value,
) -> common::Res {
    app.call_as(
        who,
        method,
        uri,
        &[("if-match", "*")],
        Some(&body.to_string()),
    )
    .await
}

fn schedule_body(name: &str, team: &str) -> Value {
    json!({"name": name, "team": team, "layers": [{"length": {"every": "week"},
           "start": "2026-01-05T09:00:00", "time_zone": "Europe/Lisbon", "people": ["ana"]}]})
}

fn policy_body(name: &str, team: &str) -> Value {
    json!({"name": name, "team": team,
           "steps": [{"targets": [{"person": "ana"}], "delay_minutes": 5}]})
}

/// A team's rule routes to a service of its own: `payments-api` for payments.
fn rule_body(name: &str, team: &str) -> Value {
    let service = format!("{}-api", team.to_lowercase());
    json!({"name": name, "team": team, "conditions": ["labels.team = x"], "service": service})
}

#[sqlx::test]
async fn a_lead_changes_their_teams_schedules_policies_and_rules_and_not_anothers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    team(&app, "Checkout").await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let cy = app.account("cy@example.com", "responder").await;
    let mo = app.account("mo@example.com", "manager").await;
    for (slug, handle) in [("payments", "ana"), ("checkout", "ben")] {
        let uri = format!("/api/v1/teams/{slug}/members/{handle}");
        let r = put(&app, &uri, json!({"role": "lead"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    for (name, team) in [("payments-api", "payments"), ("checkout-api", "checkout")] {
        let body = json!({"name": name, "tier": 2, "team": team});
        assert_eq!(
            app.post("/api/v1/services", body).await.status,
            StatusCode::CREATED
        );
    }
    let kinds = [
        (
            "/api/v1/schedules",
            schedule_body as fn(&str, &str) -> Value,
        ),
        ("/api/v1/escalation-policies", policy_body),
        ("/api/v1/routing-rules", rule_body),
    ];
    for (base, body) in kinds {
        // Each lead makes one for their own team, not for the other's.
        let r = send_as(
            &app,
            &ana,
            Method::POST,
            base,
            body("Payments one", "payments"),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{base}: {}", r.text);
        assert_eq!(r.json()["team"], "payments", "{base}");
        let ours = r.json()["id"].as_i64().unwrap();
        let r = send_as(
            &app,
            &ben,
            Method::POST,
            base,
            body("Checkout one", "Checkout"),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{base}: {}", r.text);
        let theirs = r.json()["id"].as_i64().unwrap();
        let listed = app.get(&format!("{base}?team=checkout")).await.json();
        let names: Vec<&Value> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &i["name"])
            .collect();
        assert_eq!(names, [&json!("Checkout one")], "{base}?team=checkout");
        let r = send_as(&app, &ana, Method::POST, base, body("Sneaky", "checkout")).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{base}: {}", r.text);
        assert!(r.text.contains("Checkout"), "{}", r.text);
        // The installation's take the global role; a team's outsider may not touch it.
        let r = send_as(&app, &cy, Method::POST, base, body("Shared", "")).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{base}: {}", r.text);
        let r = send_as(&app, &ana, Method::POST, base, body("Nobody's", "nope")).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{base}: {}",
            r.text
        );
        assert_eq!(r.field(), "team");

        // Ana edits Payments', not Checkout's, and may not hand hers to Checkout.
        let r = send_as(
            &app,
            &ana,
            Method::PUT,
            &format!("{base}/{ours}"),
            body("Payments one, renamed", "payments"),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        let r = send_as(
            &app,
            &ana,
            Method::PUT,
            &format!("{base}/{theirs}"),
            body("Mine now", "payments"),
        )
        .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{base}: {}", r.text);
        let r = send_as(
            &app,
            &ana,
            Method::PUT,
            &format!("{base}/{ours}"),
            body("Given away", "checkout"),
        )
        .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{base}: {}", r.text);
        let r = app.get(&format!("{base}/{theirs}")).await;
        if r.status == StatusCode::OK {
            assert_eq!(
                r.json()["name"],
                "Checkout one",
                "{base}: refused, nothing changed"
            );
        }
        // The version checked is the version written: one from the future is stale, not a
        // way past the check.
        let r = app
            .call_as(
                &ana,
                Method::PUT,
                &format!("{base}/{ours}"),
                &[("if-match", "\"v99\"")],
                Some(&body("Payments one, renamed", "payments").to_string()),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::PRECONDITION_FAILED,
            "{base}: {}",
            r.text
        );
        // A global manager (or, for rules, an admin) changes any; a team's outsider none.
        let manager = if base.ends_with("routing-rules") {
            &app.admin
        } else {
            &mo
        };
        let r = send_as(
            &app,
            manager,
            Method::PUT,
            &format!("{base}/{theirs}"),
            body("Checkout one", "checkout"),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{base}: {}", r.text);
        let r = send_as(
            &app,
            &cy,
            Method::PUT,
            &format!("{base}/{ours}"),
            body("Cy's", "payments"),
        )
        .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{base}: {}", r.text);
    }
    // A runbook is its service's team's (or its rule's).
    for (name, team) in [("pay-svc", "payments"), ("chk-svc", "checkout")] {
        let body = json!({"name": name, "tier": 2, "team": team});
        let r = app.post("/api/v1/services", body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let runbook =
        |service: &str| json!({"name": "High error rate", "service": service, "steps": ["Look"]});
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        "/api/v1/runbooks",
        runbook("pay-svc"),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["team"], "payments");
    let ours = r.json()["id"].as_i64().unwrap();
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        "/api/v1/runbooks",
        runbook("chk-svc"),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = send_as(
        &app,
        &ana,
        Method::PUT,
        &format!("/api/v1/runbooks/{ours}"),
        runbook("chk-svc"),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "moved to another team's service: {}",
        r.text
    );
    let r = delete_as(&app, &ben, &format!("/api/v1/runbooks/{ours}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let listed = app.get("/api/v1/runbooks?team=payments").await.json();
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    let r = delete_as(&app, &ana, &format!("/api/v1/runbooks/{ours}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);

    // Deleting follows the same rule.
    let policies = app.get("/api/v1/escalation-policies").await.json();
    let id_of = |name: &str| {
        policies["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (ours, theirs) = (id_of("Payments one, renamed"), id_of("Checkout one"));
    let r = delete_as(&app, &ana, &format!("/api/v1/escalation-policies/{theirs}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &ana, &format!("/api/v1/escalation-policies/{ours}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    // Every refusal is in the audit log.
    assert!(refusals_of(&app, "ana").await >= 7);
    // A team deleted leaves what it owned to the installation.
    let r = delete_as(&app, &mo, "/api/v1/teams/checkout").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let p = app
        .get(&format!("/api/v1/escalation-policies/{theirs}"))
        .await
        .json();
    assert!(p["team"].is_null(), "{p}");
}

#[sqlx::test]
async fn a_lead_works_their_teams_rota_and_policy_on_the_pages_and_not_anothers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    team(&app, "Checkout").await;
    let ana = app.account("ana@example.com", "responder").await;
    app.account("ben@example.com", "responder").await;
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut ids = Vec::new();
    for (name, team) in [("Payments", "payments"), ("Checkout", "checkout")] {
        let r = app
            .post("/api/v1/schedules", schedule_body(name, team))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let schedule = r.json()["id"].as_i64().unwrap();
        let r = app
            .post("/api/v1/escalation-policies", policy_body(name, team))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        ids.push((schedule, r.json()["id"].as_i64().unwrap()));
    }
    let [(our_rota, our_policy), (their_rota, their_policy)] = ids[..] else {
        unreachable!()
    };
    let page = |uri: String| {
        let (app, ana) = (&app, &ana);
        async move { app.call_as(ana, Method::GET, &uri, &[], None).await }
    };

    // The rota: the override form on her team's, not on the other's.
    let ours = page(format!("/schedules/{our_rota}")).await;
    assert!(
        ours.text
            .contains(&format!("/schedules/{our_rota}/overrides")),
        "{}",
        ours.text
    );
    let theirs = page(format!("/schedules/{their_rota}")).await;
    assert!(!theirs.text.contains("/overrides\""), "{}", theirs.text);
    let cover = [
        ("with", "ben"),
        ("replaces", "ana"),
        ("from", "2030-01-01T09:00"),
        ("to", "2030-01-01T17:00"),
    ];
    let r = app
        .form_as(&ana, &format!("/schedules/{their_rota}/overrides"), &cover)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app
        .form_as(&ana, &format!("/schedules/{our_rota}/overrides"), &cover)
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let rota = app
        .get(&format!("/api/v1/schedules/{our_rota}"))
        .await
        .json();
    assert_eq!(rota["overrides"].as_array().unwrap().len(), 1);
    assert_eq!(rota["team"], "payments", "the override kept the owner");

    // The policies: edit links and forms on her team's only.
    let oncall = page("/oncall".into()).await.text;
    assert!(
        oncall.contains(&format!("/escalation-policies/{our_policy}\"")),
        "{oncall}"
    );
    assert!(
        !oncall.contains(&format!("/escalation-policies/{their_policy}\"")),
        "{oncall}"
    );
    assert!(
        oncall.contains("/escalation-policies/new"),
        "a lead writes new ones: {oncall}"
    );
    let r = page(format!("/escalation-policies/{their_policy}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let form = page(format!("/escalation-policies/{our_policy}"))
        .await
        .text;
    assert!(
        form.contains(r#"<option value="payments" selected>"#),
        "{form}"
    );
    let steps = [
        ("version", "1"),
        ("name", "Payments"),
        ("steps", "10 | person: ana"),
        ("repeat", "1"),
    ];
    let edit = |team: &'static str| {
        let mut fields = steps.to_vec();
        fields.push(("team", team));
        fields
    };
    let r = app
        .form_as(
            &ana,
            &format!("/escalation-policies/{our_policy}"),
            &edit("checkout"),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "handing it to another team: {}",
        r.text
    );
    let r = app
        .form_as(
            &ana,
            &format!("/escalation-policies/{our_policy}"),
            &edit("payments"),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form_as(
            &ana,
            &format!("/escalation-policies/{their_policy}/delete"),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let p = app
        .get(&format!("/api/v1/escalation-policies/{our_policy}"))
        .await
        .json();
    assert_eq!(
        (p["repeat"].clone(), p["team"].clone()),
        (json!(1), json!("payments"))
    );

    // Runbooks: hers to edit are those of her team's services.
    let mut runbooks = Vec::new();
    for (service, team) in [("pay-svc", "payments"), ("chk-svc", "checkout")] {
        let body = json!({"name": service, "tier": 2, "team": team});
        assert_eq!(
            app.post("/api/v1/services", body).await.status,
            StatusCode::CREATED
        );
        let body = json!({"name": format!("{service} errors"), "service": service});
        let r = app.post("/api/v1/runbooks", body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        runbooks.push(r.json()["id"].as_i64().unwrap());
    }
    let list = page("/runbooks".into()).await.text;
    assert!(
        list.contains(&format!("/runbooks/{}/edit", runbooks[0])),
        "{list}"
    );
    assert!(
        !list.contains(&format!("/runbooks/{}/edit", runbooks[1])),
        "{list}"
    );
    assert!(list.contains("Add a runbook"), "{list}");
    let fields = [
        ("name", "Mine now"),
        ("owner", "service:pay-svc"),
        ("steps", "Look"),
    ];
    let r = app
        .form_as(&ana, &format!("/runbooks/{}/edit", runbooks[1]), &fields)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app
        .form_as(&ana, &format!("/runbooks/{}/edit", runbooks[0]), &fields)
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form_as(
            &ana,
            "/runbooks",
            &[("name", "Theirs"), ("owner", "service:chk-svc")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
}

#[sqlx::test]
async fn a_lead_manages_their_teams_channels_and_sees_no_others(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    team(&app, "Checkout").await;
    let ana = app.account("ana@example.com", "responder").await;
    let cy = app.account("cy@example.com", "responder").await;
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let channel = |name: &str, team: &str| {
        json!({"name": name, "kind": "slack", "team": team,
               "url": format!("https://hooks.slack.com/services/T0/B0/{name}")})
    };
    let base = "/api/v1/notification-channels";
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        base,
        channel("payments-alerts", "payments"),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["team"], "payments");
    let ours = r.json()["id"].as_i64().unwrap();
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        base,
        channel("checkout-alerts", "checkout"),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = send_as(&app, &ana, Method::POST, base, channel("everyone", "")).await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "the installation's are an admin's: {}",
        r.text
    );
    let r = app.post(base, channel("checkout-alerts", "checkout")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let theirs = r.json()["id"].as_i64().unwrap();

    // A lead sees their team's channels only: an address can be a credential.
    let seen = |who: &Creds| {
        let (app, who) = (&app, who.clone());
        async move {
            app.call_as(&who, Method::GET, base, &[], None).await.json()["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(seen(&ana).await, ["payments-alerts"]);
    assert!(seen(&cy).await.is_empty());
    assert_eq!(seen(&app.admin).await.len(), 2);

    // Subscriptions follow their channel.
    let sub = |id: i64| json!({"channel_id": id, "events": ["incident.opened"]});
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        "/api/v1/subscriptions",
        sub(theirs),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = send_as(&app, &ana, Method::POST, "/api/v1/subscriptions", sub(ours)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let ours_sub = r.json()["id"].as_i64().unwrap();
    let r = app.post("/api/v1/subscriptions", sub(theirs)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let theirs_sub = r.json()["id"].as_i64().unwrap();
    let listed = app
        .call_as(&ana, Method::GET, "/api/v1/subscriptions", &[], None)
        .await
        .json();
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    let r = delete_as(&app, &ana, &format!("/api/v1/subscriptions/{theirs_sub}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &ana, &format!("/api/v1/subscriptions/{ours_sub}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = delete_as(&app, &ana, &format!("{base}/{theirs}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = delete_as(&app, &ana, &format!("{base}/{ours}")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
}

#[sqlx::test]
async fn no_team_may_be_named_as_another_teams_slug_and_a_leads_rule_stays_in_its_team(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let ops = app
        .post(
            "/api/v1/teams",
            json!({"name": "Operations", "slug": "ops"}),
        )
        .await;
    assert_eq!(ops.status, StatusCode::CREATED, "{}", ops.text);
    team(&app, "Platform").await;
    // "OPS" would read as the slug of Operations; "operations" as a slug reads as its name.
    for body in [
        json!({"name": "OPS", "slug": "platform"}),
        json!({"name": "Platform", "slug": "operations"}),
    ] {
        let r = app
            .call(
                Method::PUT,
                "/api/v1/teams/platform",
                &[("if-match", "*")],
                Some(&body.to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{body}: {}", r.text);
    }
    let r = app.post("/api/v1/teams", json!({"name": "ops"})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    // A lead's rule: a condition, and one of the team's own services by name.
    let ana = app.account("ana@example.com", "responder").await;
    let r = put(
        &app,
        "/api/v1/teams/ops/members/ana",
        json!({"role": "lead"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for (name, team) in [("ops-api", "ops"), ("platform-api", "platform")] {
        let body = json!({"name": name, "tier": 2, "team": team});
        assert_eq!(
            app.post("/api/v1/services", body).await.status,
            StatusCode::CREATED
        );
    }
    let rule = |conditions: Value, service: &str| json!({"name": "Ops alerts", "team": "ops", "conditions": conditions, "service": service});
    let base = "/api/v1/routing-rules";
    for (body, field) in [
        (rule(json!([]), "ops-api"), "conditions"),
        (
            rule(json!(["labels.team = ops"]), "platform-api"),
            "service",
        ),
        (
            rule(json!(["labels.team = ops"]), "{labels.service}"),
            "service",
        ),
        (rule(json!(["labels.team = ops"]), ""), "service"),
    ] {
        let r = send_as(&app, &ana, Method::POST, base, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
    }
    let r = send_as(
        &app,
        &ana,
        Method::POST,
        base,
        rule(json!(["labels.team = ops"]), "ops-api"),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // An admin writes any rule.
    let r = app.post(base, rule(json!([]), "platform-api")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[sqlx::test]
async fn my_teams_narrow_the_lists_and_each_page_remembers_the_choice(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    team(&app, "Checkout").await;
    let ana = app.account("ana@example.com", "manager").await;
    let r = put(
        &app,
        "/api/v1/teams/payments/members/ana",
        json!({"role": "member"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for (name, team) in [("pay-svc", "payments"), ("co-svc", "checkout")] {
        let r = app
            .post(
                "/api/v1/services",
                json!({"name": name, "tier": 2, "team": team}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let ours = app
        .incident(json!({"title": "Ours is slow", "severity": "Sev3", "service": "pay-svc"}))
        .await;
    let theirs = app
        .incident(json!({"title": "Theirs is down", "severity": "Sev2", "service": "co-svc"}))
        .await;
    let get = |uri: &'static str| {
        let (app, ana) = (&app, &ana);
        async move { app.call_as(ana, Method::GET, uri, &[], None).await }
    };

    // The API narrows to what is asked and remembers nothing.
    let r = get("/api/v1/incidents?team=mine").await;
    assert!(
        r.text.contains(&ours) && !r.text.contains(&theirs),
        "{}",
        r.text
    );
    let r = get("/api/v1/incidents").await;
    assert!(r.text.contains(&ours) && r.text.contains(&theirs));

    // A page narrowed to my teams is remembered: the next page opens the same way, everywhere.
    let r = get("/incidents?team=mine").await;
    assert!(r.text.contains("Ours is slow") && !r.text.contains("Theirs is down"));
    assert!(
        r.text
            .contains(r#"<option value="mine" selected>My teams</option>"#)
    );
    for uri in ["/incidents", "/"] {
        let r = get(uri).await;
        assert_eq!(r.status, StatusCode::OK, "{uri}");
        assert!(r.text.contains("Ours is slow"), "{uri}");
        assert!(
            !r.text.contains("Theirs is down"),
            "{uri} remembers my teams"
        );
    }
    for uri in ["/action-items", "/postmortems", "/reports"] {
        let r = get(uri).await;
        assert_eq!(r.status, StatusCode::OK, "{uri}: {}", r.text);
        assert!(
            r.text
                .contains(r#"<option value="mine" selected>My teams</option>"#),
            "{uri}"
        );
    }
    // One team, then everything again, each remembered.
    let r = get("/?team=checkout").await;
    assert!(r.text.contains("Theirs is down") && !r.text.contains("Ours is slow"));
    let r = get("/incidents").await;
    assert!(r.text.contains("Theirs is down") && !r.text.contains("Ours is slow"));
    get("/incidents?team=").await;
    let r = get("/").await;
    assert!(r.text.contains("Theirs is down") && r.text.contains("Ours is slow"));
    // A team of no one's name narrows to nothing and is not remembered.
    let r = get("/incidents?team=nobody-here").await;
    assert!(!r.text.contains("Ours is slow"));
    let r = get("/incidents").await;
    assert!(r.text.contains("Ours is slow") && r.text.contains("Theirs is down"));

    // "mine" is not a team's to take.
    let r = app.post("/api/v1/teams", json!({"name": "Mine"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "slug");
}

/// A team's configuration as the matrix writes it: its base address, a body owned by the team
/// (`n` keeps names apart), and whether it is replaced with `PUT` and removed with `DELETE`.
struct Kind {
    base: &'static str,
    body: fn(usize) -> Value,
    put: bool,
    delete: bool,
}

const KINDS: [Kind; 6] = [
    Kind {
        base: "/api/v1/schedules",
        body: |n| schedule_body(&format!("Rota {n}"), "payments"),
        put: true,
        delete: false,
    },
    Kind {
        base: "/api/v1/escalation-policies",
        body: |n| policy_body(&format!("Policy {n}"), "payments"),
        put: true,
        delete: true,
    },
    Kind {
        base: "/api/v1/routing-rules",
        body: |n| rule_body(&format!("Rule {n}"), "payments"),
        put: true,
        delete: true,
    },
    Kind {
        base: "/api/v1/runbooks",
        body: |n| json!({"name": format!("Runbook {n}"), "service": "payments-api", "steps": ["Look"]}),
        put: true,
        delete: true,
    },
    Kind {
        base: "/api/v1/notification-channels",
        body: |n| {
            json!({"name": format!("room-{n}"), "kind": "slack", "team": "payments",
                         "url": format!("https://hooks.slack.com/services/T0/B0/{n}")})
        },
        put: false,
        delete: true,
    },
    Kind {
        base: "/api/v1/teams/payments/members",
        body: |_| json!({"role": "member"}),
        put: false,
        delete: false,
    },
];

/// Every write of a team's configuration, by its lead, a member (while the team keeps its
/// configuration to its leads, then when it lets its members change it), someone outside it
/// and a manager outside it: created, replaced and removed, or refused with 403 naming the team
/// and changing nothing. Membership is its leads' (and managers') whatever the team lets.
#[sqlx::test]
async fn the_role_and_team_matrix_over_every_write(pool: PgPool) {
    let app = TestApp::new(pool).await;
    team(&app, "Payments").await;
    app.person("Ana Ribeiro", "ana").await;
    let lead = app.account("lead@example.com", "responder").await;
    let member = app.account("member@example.com", "responder").await;
    let outsider = app.account("outsider@example.com", "responder").await;
    let manager = app.account("manager@example.com", "manager").await;
    for (handle, role) in [("lead", "lead"), ("member", "member")] {
        let uri = format!("/api/v1/teams/payments/members/{handle}");
        let r = put(&app, &uri, json!({"role": role})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "payments-api", "tier": 2, "team": "payments"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut n = 0;
    let mut made = |_: ()| {
        n += 1;
        n
    };
    for members_manage in [false, true] {
        let team = app.get("/api/v1/teams/payments").await;
        let etag = team.header("etag").unwrap().to_owned();
        let r = app
            .call(
                Method::PUT,
                "/api/v1/teams/payments",
                &[("if-match", &etag)],
                Some(&json!({"name": "Payments", "members_manage": members_manage}).to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let people = [
            ("lead", &lead, true),
            ("member", &member, members_manage),
            ("outsider", &outsider, false),
            ("manager", &manager, true),
        ];
        for kind in &KINDS {
            let membership = kind.base.ends_with("/members");
            for (who, creds, may) in &people {
                let may = *may && !(membership && *who == "member");
                let what = format!("{who} on {} (members_manage {members_manage})", kind.base);
                // Create (membership: put someone in the team).
                let r = if membership {
                    let handle = format!("p{}", made(()));
                    app.person(&handle, &handle).await;
                    put_as(
                        &app,
                        creds,
                        &format!("{}/{handle}", kind.base),
                        (kind.body)(0),
                    )
                    .await
                } else {
                    let body = (kind.body)(made(()));
                    app.call_as(creds, Method::POST, kind.base, &[], Some(&body.to_string()))
                        .await
                };
                let expected = match (may, membership) {
                    (false, _) => StatusCode::FORBIDDEN,
                    (true, true) => StatusCode::OK,
                    (true, false) => StatusCode::CREATED,
                };
                assert_eq!(r.status, expected, "create, {what}: {}", r.text);
                if !may {
                    assert!(
                        r.text.contains("Payments"),
                        "the refusal names the team: {}",
                        r.text
                    );
                }
                if membership {
                    continue;
                }
                // Replace and remove one the admin made.
                let body = (kind.body)(made(()));
                let r = app.post(kind.base, body.clone()).await;
                assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
                let id = r.json()["id"].as_i64().unwrap();
                let uri = format!("{}/{id}", kind.base);
                if kind.put {
                    let etag = r.header("etag").map(str::to_owned).unwrap_or_default();
                    let mut changed = body.clone();
                    changed["name"] = json!(format!("Renamed {}", made(())));
                    let r = app
                        .call_as(
                            creds,
                            Method::PUT,
                            &uri,
                            &[("if-match", &etag)],
                            Some(&changed.to_string()),
                        )
                        .await;
                    let expected = if may {
                        StatusCode::OK
                    } else {
                        StatusCode::FORBIDDEN
                    };
                    assert_eq!(r.status, expected, "replace, {what}: {}", r.text);
                }
                if kind.delete {
                    let r = delete_as(&app, creds, &uri).await;
                    let expected = if may {
                        StatusCode::NO_CONTENT
                    } else {
                        StatusCode::FORBIDDEN
                    };
                    assert_eq!(r.status, expected, "remove, {what}: {}", r.text);
                }
            }
        }
        // The team's own settings: its leads and managers, never its members.
        for (who, creds, may) in [
            ("lead", &lead, true),
            ("member", &member, false),
            ("outsider", &outsider, false),
            ("manager", &manager, true),
        ] {
            let etag = app
                .get("/api/v1/teams/payments")
                .await
                .header("etag")
                .unwrap()
                .to_owned();
            let r = app
                .call_as(
                    creds,
                    Method::PUT,
                    "/api/v1/teams/payments",
                    &[("if-match", &etag)],
                    Some(
                        &json!({"name": "Payments", "members_manage": members_manage,
                                      "description": format!("by {who}")})
                        .to_string(),
                    ),
                )
                .await;
            let expected = if may {
                StatusCode::OK
            } else {
                StatusCode::FORBIDDEN
            };
            assert_eq!(r.status, expected, "team settings, {who}: {}", r.text);
        }
    }
    // Every refusal is in the audit log (a minute's refusals of one route are one row with their
    // count): the outsider's fifteen writes in each round, the member's fifteen while the team
    // keeps its configuration to its leads, then two (membership and the team's settings).
    let refused = app
        .get("/api/v1/audit?outcome=refused&action=access.denied&limit=500")
        .await
        .json();
    let counted: i64 = refused["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_i64().unwrap_or(1))
        .sum();
    assert_eq!(counted, 15 + 15 + 15 + 2, "{refused}");
}
