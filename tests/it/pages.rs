//! The browser pages: what a person must see, forms that work without JavaScript, stale forms,
//! and hostile text rendered harmless.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{TestApp, ago};
use serde_json::json;
use sqlx::PgPool;

fn position(html: &str, needle: &str) -> usize {
    html.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not on the page"))
}

#[sqlx::test]
async fn the_list_shows_open_incidents_first_with_severity_and_status(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout-api").await;
    let minor = app
        .incident(json!({"title": "Minor glitch", "severity": "Sev4", "service": "checkout-api"}))
        .await;
    let major = app
        .incident(json!({"title": "Checkout down", "severity": "Sev1"}))
        .await;
    let old = app
        .incident(json!({"title": "Old outage", "severity": "Sev1"}))
        .await;
    app.post_empty(&format!("/api/v1/incidents/{old}/resolve"))
        .await;

    let r = app.get("/incidents").await;
    assert_eq!(r.status, StatusCode::OK);
    let html = &r.text;
    assert!(position(html, &major) < position(html, &minor));
    assert!(position(html, &minor) < position(html, &old));
    assert!(html.contains(r#"<span class="sev sev-Sev1">Sev1</span>"#));
    assert!(html.contains("triggered") && html.contains("resolved"));
    assert!(html.contains("UTC"));

    let r = app.get("/incidents?status=open&service=checkout-api").await;
    assert!(r.text.contains(&minor) && !r.text.contains(&major));
    let r = app.get("/incidents?severity=Sev9").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("is not a severity"));
    assert_eq!(
        app.get("/").await.status,
        StatusCode::OK,
        "/ is the dashboard"
    );
}

#[sqlx::test]
async fn opening_an_incident_from_the_form(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let r = app.get("/incidents/new").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains(r#"name="title""#) && r.text.contains("payments-gateway"));

    // A mistake shows the form again with the error and what was typed.
    let r = app
        .form(
            "/incidents",
            &[
                ("title", "Payments failing"),
                ("severity", "Sev2"),
                ("service", ""),
                ("detected_at", "yesterday"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("detected_at") && r.text.contains("is not a time"));
    assert!(r.text.contains(r#"value="Payments failing""#));
    assert_eq!(
        app.get("/api/v1/incidents").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    let r = app
        .form(
            "/incidents",
            &[
                ("title", "Payments failing"),
                ("severity", "Sev2"),
                ("service", "payments-gateway"),
                ("summary", ""),
                ("impact", ""),
                ("started_at", ""),
                ("detected_at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let location = r.header("location").unwrap().to_owned();
    assert!(location.starts_with("/incidents/INC-"));
    let page = app.get(&location).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("Payments failing"));
}

#[sqlx::test]
async fn the_incident_page_shows_what_a_responder_needs(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    app.person("Ana Ribeiro", "ana").await;
    let key = app
        .incident(json!({"title": "Card authorizations time out", "severity": "Sev2", "service": "payments-gateway",
                         "started_at": ago(20), "detected_at": ago(15), "impact": "31% of authorizations fail"}))
        .await;
    app.call(
        axum::http::Method::PUT,
        &format!("/api/v1/incidents/{key}/roles/incident_commander"),
        &[],
        Some(r#"{"person":"ana"}"#),
    )
    .await;
    let r = app.get(&format!("/incidents/{key}")).await;
    assert_eq!(r.status, StatusCode::OK);
    let html = &r.text;
    for needle in [
        "Card authorizations time out",
        "Sev2",
        "triggered",
        "payments-gateway",
        "Incident commander",
        "Ana Ribeiro",
        "Time to detect",
        "5 min",
        "Open for",
        "31% of authorizations fail",
        "Incident opened as Sev2 on payments-gateway",
        r#"action="/incidents/"#,
        r#"name="body""#,
        "UTC",
    ] {
        assert!(html.contains(needle), "{needle:?} missing");
    }
    // Only the legal next steps are offered.
    for legal in ["acknowledge", "mitigate", "resolve"] {
        assert!(
            html.contains(&format!(r#"name="action" value="{legal}""#)),
            "{legal}"
        );
    }
    assert!(!html.contains(r#"value="reopen""#));
    assert!(
        html.contains(r#"name="version" value="2""#),
        "the role assignment made version 2"
    );
    assert_eq!(
        app.get("/incidents/INC-424242").await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn forms_acknowledge_mitigate_resolve_and_add_notes(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(60).await;
    let r = app
        .form(
            &format!("/incidents/{key}/transition"),
            &[
                ("version", "1"),
                ("action", "acknowledge"),
                ("note", "on it"),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(
            &format!("/incidents/{key}/notes"),
            &[
                ("body", "rolled back the deploy"),
                ("at", ""),
                ("kind", "note"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = app
        .form(
            &format!("/incidents/{key}/transition"),
            &[
                ("version", "2"),
                ("action", "mitigate"),
                ("note", ""),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = app
        .form(
            &format!("/incidents/{key}/severity"),
            &[
                ("version", "3"),
                ("severity", "Sev1"),
                ("reason", ""),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("reason"));
    let r = app
        .form(
            &format!("/incidents/{key}/transition"),
            &[
                ("version", "3"),
                ("action", "resolve"),
                ("note", "fixed"),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);

    let html = app.get(&format!("/incidents/{key}")).await.text;
    assert!(html.contains(r#"class="status status-resolved""#));
    assert!(html.contains("rolled back the deploy") && html.contains("on it"));
    assert!(html.contains(r#"value="reopen""#));
    assert!(html.contains("Time to resolve"));

    let r = app
        .form(
            &format!("/incidents/{key}/notes"),
            &[("body", "   "), ("at", "")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .form(
            &format!("/incidents/{key}/transition"),
            &[("version", "4"), ("action", "explode")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .form(
            &format!("/incidents/{key}/transition"),
            &[("action", "reopen")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("<strong>Version</strong>"), "{}", r.text);
    assert!(r.text.contains("Nothing was changed."));
    // A page that is not there changed nothing, and says so in words.
    let r = app.get("/incidents/INC-999999").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.text.contains("<h1>Not found</h1>"), "{}", r.text);
    assert!(!r.text.contains("Nothing was changed"));
    // A note before the incident started points to the Background kind, from the page it came from.
    let r = app
        .form_raw(
            &app.admin,
            &format!("/incidents/{key}/notes"),
            form_urlencoded::Serializer::new(String::new())
                .append_pair("csrf", app.admin.csrf.as_deref().unwrap())
                .append_pair("body", "deploy went out")
                .append_pair("at", "2020-01-01 10:00")
                .append_pair("kind", "note")
                .finish(),
            &[("referer", &format!("http://quell.test/incidents/{key}"))],
        )
        .await;
    // The incident's page again, the reason beside the note form and the note still in it.
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("choose the kind Background"), "{}", r.text);
    assert!(r.text.contains(
        r#"<p class="field-error" role="alert" tabindex="-1" autofocus><strong>When</strong>"#
    ));
    assert!(r.text.contains("deploy went out</textarea>"), "{}", r.text);
    assert!(r.text.contains(r#"value="2020-01-01 10:00""#));
}

#[sqlx::test]
async fn a_stale_form_gets_409_showing_the_other_responders_change(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(60).await;
    // Someone else raises the severity after this person loaded the page at version 1.
    app.post(
        &format!("/api/v1/incidents/{key}/severity"),
        json!({"severity": "Sev1", "reason": "checkout failing"}),
    )
    .await;
    let r = app
        .form(
            &format!("/incidents/{key}/severity"),
            &[
                ("version", "1"),
                ("severity", "Sev3"),
                ("reason", "looks minor"),
                ("at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.text.contains("not</strong> applied"));
    assert!(r.text.contains("Severity raised from Sev2 to Sev1"));
    assert!(r.text.contains("checkout failing"));
    assert_eq!(app.incident_json(&key).await["severity"], "Sev1");

    let r = app
        .form(
            &format!("/incidents/{key}/edit"),
            &[
                ("version", "1"),
                ("title", "Mine"),
                ("severity", ""),
                ("service", ""),
                ("summary", ""),
                ("impact", ""),
                ("started_at", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(app.incident_json(&key).await["title"], "Past");
}

#[sqlx::test]
async fn hostile_text_is_escaped_everywhere(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let evil = r#"<script>alert(1)</script><img src=x onerror=alert(2)>"#;
    let key = app
        .incident(json!({"title": evil, "severity": "Sev2", "summary": evil, "impact": evil}))
        .await;
    app.post(
        &format!("/api/v1/incidents/{key}/timeline"),
        json!({"body": evil}),
    )
    .await;
    for url in [
        format!("/incidents/{key}"),
        "/incidents".to_owned(),
        format!("/incidents/{key}/edit"),
    ] {
        let html = app.get(&url).await.text;
        assert!(!html.contains("<script>alert"), "{url}");
        assert!(!html.contains("<img src=x"), "{url}");
        assert!(
            html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{url}"
        );
    }
}

#[sqlx::test]
async fn service_pages_list_show_create_and_edit(pool: PgPool) {
    let app = TestApp::new(pool).await;
    assert!(app.get("/services").await.text.contains("No services yet"));
    let r = app.post("/api/v1/teams", json!({"name": "Payments"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let form = app.get("/services/new").await.text;
    assert!(
        form.contains(r#"<option value="payments">Payments</option>"#),
        "the form offers the teams: {form}"
    );
    let r = app
        .form("/services", &[("name", "Bad Name"), ("tier", "1")])
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("lowercase"));
    let r = app
        .form(
            "/services",
            &[
                ("name", "payments-gateway"),
                ("tier", "1"),
                ("team", "Payments"),
                ("slo_target_percent", "99.9"),
                ("avg_requests_per_second", "60"),
                ("runbook_url", ""),
                ("description", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    app.incident(json!({"title": "Timeouts", "severity": "Sev2", "service": "payments-gateway"}))
        .await;
    let html = app.get("/services/payments-gateway").await.text;
    assert!(html.contains("Tier1") && html.contains("99.9 %") && html.contains("Timeouts"));
    assert!(
        html.contains(r#"<a href="/teams/payments">Payments</a>"#),
        "the service names its team: {html}"
    );
    let r = app
        .form(
            "/services/payments-gateway/edit",
            &[
                ("version", "1"),
                ("name", "payments-gateway"),
                ("tier", "2"),
                ("team", "Payments"),
                ("slo_target_percent", "abc"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("is not a number"));
    assert_eq!(
        app.get("/services/nope").await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn static_assets_are_served(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.get("/static/quell.css").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains(".sev-Sev1"));
    let page = app.get("/incidents").await.text;
    assert!(page.contains(&format!(
        "/static/quell.css?v={}",
        quell::http::ASSET_VERSION
    )));
}

#[sqlx::test]
async fn the_edit_form_changes_only_what_was_changed(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(90).await;
    let form = app.get(&format!("/incidents/{key}/edit")).await.text;
    let started = form
        .split(r#"name="started_at" value=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let before = app.incident_json(&key).await["started_at"].clone();
    let r = app
        .form(
            &format!("/incidents/{key}/edit"),
            &[
                ("version", "1"),
                ("title", "Checkout slow"),
                ("service", ""),
                ("summary", "p99 at 9 s"),
                ("impact", ""),
                ("started_at", &started),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let i = app.incident_json(&key).await;
    assert_eq!(i["title"], "Checkout slow");
    assert_eq!(i["summary"], "p99 at 9 s");
    assert_eq!(
        i["started_at"], before,
        "an untouched start time keeps its seconds"
    );
    let edit = app
        .timeline(&key)
        .await
        .into_iter()
        .find(|e| e["kind"] == "edited")
        .unwrap();
    let changed: Vec<_> = edit["details"]["changes"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(changed, vec!["summary", "title"]);

    let r = app
        .form(
            &format!("/incidents/{key}/edit"),
            &[("version", "2"), ("title", ""), ("started_at", "")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("a title is required"));
}

#[sqlx::test]
async fn searching_for_a_key_opens_that_incident(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app
        .incident(json!({"title": "Checkout down", "severity": "Sev1"}))
        .await;
    let r = app
        .get(&format!("/incidents?q={}", key.to_lowercase()))
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        r.header("location"),
        Some(format!("/incidents/{key}").as_str())
    );
    let r = app.get("/incidents?q=INC-999999").await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "an unknown key is just a search with no hits"
    );
    assert!(r.text.contains("No incidents match"));
}

#[sqlx::test]
async fn admins_add_users_who_are_then_offered_for_roles(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .form(
            "/admin/users",
            &[
                ("name", "Ana Ribeiro"),
                ("email", "not-an-email"),
                ("role", "responder"),
                ("password", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("email") && r.text.contains(r#"value="Ana Ribeiro""#));
    let r = app
        .form(
            "/admin/users",
            &[
                ("name", "Ana Ribeiro"),
                ("email", "ana@example.com"),
                ("role", "responder"),
                ("password", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(
            "/admin/users",
            &[
                ("name", "Ana Again"),
                ("email", "ana@example.com"),
                ("role", "viewer"),
                ("password", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("exists"));
    let r = app
        .form(
            "/admin/users",
            &[
                ("name", "Bo"),
                ("email", "bo@example.com"),
                ("role", "viewer"),
                ("password", "short"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("10 to 128 characters"));
    assert!(
        app.get("/admin/users")
            .await
            .text
            .contains("ana@example.com")
    );

    let key = app.past_incident(30).await;
    assert!(
        app.get(&format!("/incidents/{key}"))
            .await
            .text
            .contains(r#"<option value="ana">Ana Ribeiro</option>"#)
    );
    let r = app
        .form(
            &format!("/incidents/{key}/roles"),
            &[
                ("version", "1"),
                ("role", "incident_commander"),
                ("person", "ana"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        app.incident_json(&key).await["roles"]["incident_commander"]["name"],
        "Ana Ribeiro"
    );
    let r = app
        .form(
            &format!("/incidents/{key}/roles"),
            &[
                ("version", "2"),
                ("role", "incident_commander"),
                ("person", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(app.incident_json(&key).await["roles"]["incident_commander"].is_null());
}

#[sqlx::test]
async fn error_pages_show_the_signed_in_persons_header(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let key = app.past_incident(10).await;
    for (method, path, form) in [
        ("GET", "/incidents/INC-99999".to_owned(), None),
        ("GET", "/no/such/page".to_owned(), None),
        (
            "POST",
            format!("/incidents/{key}/notes"),
            Some(vec![("body", ""), ("version", "1")]),
        ),
    ] {
        let r = match form {
            None => {
                app.call_as(&ana, axum::http::Method::GET, &path, &[], None)
                    .await
            }
            Some(fields) => app.form_as(&ana, &path, &fields).await,
        };
        assert!(r.status.is_client_error(), "{method} {path}: {}", r.status);
        assert!(
            r.text.contains("Sign out"),
            "{method} {path}: the signed-in header"
        );
        assert!(r.text.contains("ana"), "{method} {path}: her name");
        assert!(!r.text.contains(">Sign in<"), "{method} {path}");
    }
    // Signed out, the same page offers to sign in.
    let r = app
        .call_as(
            &common::Creds::default(),
            axum::http::Method::GET,
            "/login?x=%00",
            &[],
            None,
        )
        .await;
    assert!(r.text.contains("Sign in"));
}

/// Dangerous steps ask first without JavaScript (a confirmation page that changes nothing) and
/// go through once confirmed; a bare Sev1 is warned about beside Resolve; a responder who is one
/// of the people takes incident commander in one click; a resolved incident's next step is its
/// postmortem.
#[sqlx::test]
async fn the_incident_page_asks_before_dangerous_steps_and_warns_before_resolving(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Ana Ribeiro", "ana").await;
    let ana = app.account("ana@example.com", "responder").await;
    let key = app
        .incident(json!({"title": "Checkout down", "severity": "Sev1"}))
        .await;
    let page = format!("/incidents/{key}");
    let r = app.call_as(&ana, Method::GET, &page, &[], None).await;
    assert!(
        r.text.contains("Before resolving this Sev1: no incident commander, no impact written, no stakeholder update sent."),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("I&#39;ll take incident commander")
            || r.text.contains("I'll take incident commander")
    );
    // Summary and impact come before the timeline.
    assert!(r.text.find("<h2>Impact</h2>").unwrap() < r.text.find("Timeline").unwrap());

    // Resolving a triggered incident asks first and changes nothing until confirmed.
    let resolve = [
        ("version", "1"),
        ("action", "resolve"),
        ("note", ""),
        ("at", ""),
    ];
    let r = app
        .form_as(&ana, &format!("{page}/transition"), &resolve)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.text
            .contains(&format!("Resolve {key} while it is still triggered?")),
        "{}",
        r.text
    );
    assert!(r.text.contains(r#"name="confirm" value="yes""#));
    assert_eq!(app.incident_json(&key).await["status"], "triggered");

    // Taking incident commander in one click.
    let r = app
        .form_as(
            &ana,
            &format!("{page}/roles"),
            &[
                ("version", "1"),
                ("role", "incident_commander"),
                ("person", "ana"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app.call_as(&ana, Method::GET, &page, &[], None).await;
    assert!(
        r.text
            .contains("Before resolving this Sev1: no impact written, no stakeholder update sent.")
    );
    assert!(!r.text.contains("take incident commander"));

    // Lowering a Sev1 asks first too.
    let version = app.incident_json(&key).await["version"].to_string();
    let lower = [
        ("version", version.as_str()),
        ("severity", "Sev3"),
        ("reason", "only one merchant"),
        ("at", ""),
    ];
    let r = app.form_as(&ana, &format!("{page}/severity"), &lower).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains(&format!("Lower {key} from Sev1 to Sev3?")));
    assert_eq!(app.incident_json(&key).await["severity"], "Sev1");
    let mut confirmed = lower.to_vec();
    confirmed.push(("confirm", "yes"));
    let r = app
        .form_as(&ana, &format!("{page}/severity"), &confirmed)
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["severity"], "Sev3");

    // Confirmed, resolving goes through; then the postmortem is the next step.
    let version = app.incident_json(&key).await["version"].to_string();
    let r = app
        .form_as(
            &ana,
            &format!("{page}/transition"),
            &[
                ("version", &version),
                ("action", "resolve"),
                ("note", ""),
                ("at", ""),
                ("confirm", "yes"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app.call_as(&ana, Method::GET, &page, &[], None).await;
    assert!(
        r.text.contains(&format!(
            r#"<a class="button primary" href="/incidents/{key}/postmortem">Postmortem</a>"#
        )),
        "{}",
        r.text
    );
    assert!(!r.text.contains("Before resolving"));
}

/// `GET` on an address only forms post to gave the browser's bare "HTTP ERROR 405". A wrong
/// method on a page route now answers the app's own error page (the person's header, what is
/// wrong, a way on) with an `Allow` header; the API keeps its JSON error format.
#[sqlx::test]
async fn wrong_methods_answer_a_styled_page_and_the_api_its_json(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    for path in ["/escalation-policies", "/admin/subscriptions"] {
        let r = app.call_as(&ana, Method::GET, path, &[], None).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{path}");
        assert!(
            r.header("content-type")
                .is_some_and(|t| t.starts_with("text/html")),
            "{path}: {:?}",
            r.headers
        );
        assert_eq!(r.header("allow"), Some("POST"), "{path}");
        assert!(
            r.text.contains(r#"<header class="top">"#) && r.text.contains("Sign out"),
            "{path}: the app's header, signed in: {}",
            r.text
        );
        assert!(
            r.text.contains("That method is not allowed here")
                && r.text.contains(&format!("GET is not allowed on {path}")),
            "{path}: {}",
            r.text
        );
        assert!(r.text.contains(r#"href="/incidents""#), "a way on");
    }
    // A form sent to a page that only opens: the same page, and nothing was changed.
    let r = app.form_as(&ana, "/incidents/new", &[]).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.header("allow"), Some("GET,HEAD"));
    assert!(
        r.text.contains("POST is not allowed on /incidents/new")
            && r.text.contains("Nothing was changed"),
        "{}",
        r.text
    );
    // The API answers in its own format.
    let r = app
        .call(Method::DELETE, "/api/v1/incidents", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{}", r.text);
    assert_eq!(r.header("allow"), Some("GET,HEAD,POST"));
    assert_eq!(r.code(), "method_not_allowed");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/api/v1/incidents does not take DELETE"),
        "{}",
        r.text
    );
    assert!(r.json()["error"].get("details").is_some());
}

/// `/favicon.ico` was a 404 on every page. It is an icon now, to anyone (browsers ask before
/// signing in), and the same icon is served as SVG among the static files.
#[sqlx::test]
async fn the_favicon_is_served_to_anyone(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let nobody = common::Creds::default();
    let r = app
        .call_as(&nobody, Method::GET, "/favicon.ico", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("content-type"), Some("image/x-icon"));
    assert!(
        r.header("cache-control")
            .is_some_and(|c| c.contains("max-age"))
    );
    let body = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/static/favicon.ico")).unwrap();
    assert_eq!(&body[..4], [0, 0, 1, 0], "an icon file");
    assert_eq!(
        r.header("content-length"),
        Some(body.len().to_string().as_str())
    );
    let r = app
        .call_as(&nobody, Method::GET, "/static/favicon.svg", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("content-type"), Some("image/svg+xml"));
    assert!(r.text.starts_with("<svg"), "{}", r.text);
}

/// After a form the page opens at the part that changed, saying it was saved; a refused form
/// comes back with the error beside it and what was typed still in it, and changes nothing.
#[sqlx::test]
async fn forms_return_to_the_part_they_changed_and_a_refusal_keeps_the_typing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    // (form, its fields, where the page opens after, what it says there)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);
    let cases: [Case; 4] = [
        (
            "notes",
            vec![
                ("body", "rolled back the deploy"),
                ("at", ""),
                ("kind", "note"),
            ],
            "?saved=note#timeline-panel",
            "Added to the timeline.",
        ),
        (
            "updates",
            vec![
                ("audience", "internal"),
                ("body", "Checkout is failing for some"),
                ("at", ""),
            ],
            "?saved=update#updates",
            "Stakeholder update recorded.",
        ),
        (
            "bridge",
            vec![
                ("call_url", "https://meet.example.com/inc"),
                ("chat_url", ""),
            ],
            "?saved=bridge#bridge-form",
            "Bridge saved.",
        ),
        (
            "claims",
            vec![("subject", "the processor's status page")],
            "?saved=claim#claims",
            "Claim saved.",
        ),
    ];
    for (form, fields, place, notice) in cases {
        let r = app.form(&format!("/incidents/{key}/{form}"), &fields).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{form}: {}", r.text);
        let to = r.header("location").unwrap().to_owned();
        assert_eq!(to, format!("/incidents/{key}{place}"), "{form}");
        let page = app.get(to.split('#').next().unwrap()).await.text;
        assert!(
            page.contains(&format!(
                r#"<p class="notice saved" role="status">{notice}</p>"#
            )),
            "{form}: no notice on the page"
        );
    }
    // Without `saved`, no notice.
    assert!(
        !app.get(&format!("/incidents/{key}"))
            .await
            .text
            .contains("notice saved")
    );

    let before = app.timeline(&key).await.len();
    let typed = "found the bad config <b>push</b>";
    let r = app
        .form(
            &format!("/incidents/{key}/notes"),
            &[
                ("body", typed),
                ("at", "yesterday-ish"),
                ("kind", "context"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let html = &r.text;
    assert!(
        html.contains(
            r#"<p class="field-error" role="alert" tabindex="-1" autofocus><strong>When</strong>"#
        ),
        "{html}"
    );
    assert!(
        html.contains("found the bad config &#60;b&#62;push&#60;/b&#62;</textarea>")
            || html.contains("found the bad config &lt;b&gt;push&lt;/b&gt;</textarea>"),
        "the typed note is kept, escaped"
    );
    assert!(html.contains(r#"value="yesterday-ish""#));
    assert!(html.contains(r#"<option value="context" selected>"#));
    assert_eq!(
        app.timeline(&key).await.len(),
        before,
        "nothing was written"
    );

    let r = app
        .form(
            &format!("/incidents/{key}/updates"),
            &[
                ("audience", "executives"),
                ("body", "Half of checkouts fail"),
                ("at", "13:99"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("Half of checkouts fail</textarea>"));
    assert!(r.text.contains(r#"<option value="executives" selected>"#));

    let version = app.incident_json(&key).await["version"]
        .as_i64()
        .unwrap()
        .to_string();
    let r = app
        .form(
            &format!("/incidents/{key}/severity"),
            &[
                ("version", &version),
                ("severity", "Sev1"),
                ("reason", "every card fails"),
                ("at", "soon"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains(r#"value="every card fails""#));
    assert!(r.text.contains(r#"<option value="Sev1" selected>"#));
    assert_eq!(app.incident_json(&key).await["severity"], "Sev2");
}

/// A viewer reads an incident but is shown no form they could not send: no note, severity,
/// role, update, bridge, claim, step or link form, and no link to edit it.
#[sqlx::test]
async fn a_viewer_is_not_shown_the_forms_a_responder_uses(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let viewer = app.account("vic@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::GET,
            &format!("/incidents/{key}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let main = &r.text[r.text.find("<main").unwrap()..];
    assert!(main.contains(&key));
    assert!(
        !main.contains(r#"method="post""#),
        "a viewer sees a form: {main}"
    );
    assert!(!main.contains(&format!("/incidents/{key}/edit")));
    // A responder sees them.
    let html = app.get(&format!("/incidents/{key}")).await.text;
    for action in ["notes", "severity", "roles", "updates", "bridge", "claims"] {
        assert!(
            html.contains(&format!(r#"action="/incidents/{key}/{action}""#)),
            "{action}"
        );
    }
}
