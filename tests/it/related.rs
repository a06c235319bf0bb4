//! Related incidents: linked both ways with a note, on both pages, both timelines and the
//! postmortem; suggestions from the same service and its dependencies by full-text search; bad
//! input changes nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::TestApp;

fn keys(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_owned())
        .collect()
}

async fn related(app: &TestApp, key: &str) -> Value {
    let r = app.get(&format!("/api/v1/incidents/{key}/related")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()
}

fn related_entries(timeline: &[Value]) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e["kind"] == "related")
        .map(|e| e["headline"].as_str().unwrap().to_owned())
        .collect()
}

#[sqlx::test]
async fn two_incidents_are_linked_both_ways_with_a_note_and_unlinked(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-worker").await;
    let a = app
        .incident(json!({"title": "Checkout hangs then fails", "severity": "Sev1", "service": "payments-worker"}))
        .await;
    let b = app
        .incident(json!({"title": "Retry queue overload", "severity": "Sev1", "service": "payments-worker"}))
        .await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{a}/related"),
            json!({"incident": b, "note": "Same retry path"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["key"], b.as_str());
    assert_eq!(r.json()["note"], "Same retry path");
    // Both ways: each lists the other.
    assert_eq!(keys(&related(&app, &a).await["items"]), [b.as_str()]);
    let from_b = related(&app, &b).await;
    assert_eq!(keys(&from_b["items"]), [a.as_str()]);
    assert_eq!(from_b["items"][0]["note"], "Same retry path");
    assert_eq!(
        related_entries(&app.timeline(&a).await),
        [format!(
            "Related to {b} (Retry queue overload): Same retry path"
        )]
    );
    assert_eq!(
        related_entries(&app.timeline(&b).await),
        [format!(
            "Related to {a} (Checkout hangs then fails): Same retry path"
        )]
    );
    for (page, other) in [(&a, &b), (&b, &a)] {
        let p = app.get(&format!("/incidents/{page}")).await;
        assert!(
            p.text.contains(&format!("href=\"/incidents/{other}\""))
                && p.text.contains("Same retry path"),
            "{page}"
        );
    }
    // In the postmortem, its API and its Markdown export.
    let pm = app
        .get(&format!("/api/v1/incidents/{a}/postmortem"))
        .await
        .json();
    assert_eq!(pm["related"][0]["key"], b.as_str());
    let md = app.get(&format!("/incidents/{a}/postmortem.md")).await;
    assert!(
        md.text.contains(&format!(
            "## Related incidents\n\n- {b}: Retry queue overload — Same retry path"
        )),
        "{}",
        md.text
    );
    let page = app.get(&format!("/incidents/{b}/postmortem")).await;
    assert!(
        page.text.contains("Related incidents") && page.text.contains("Checkout hangs then fails")
    );
    // Unlinked from the other side: gone from both, said on both timelines.
    let unlink_path = format!("/api/v1/incidents/{b}/related/{a}");
    let unlink = || app.call(Method::DELETE, &unlink_path, &[], None);
    let r = unlink().await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert!(keys(&related(&app, &a).await["items"]).is_empty());
    assert!(keys(&related(&app, &b).await["items"]).is_empty());
    assert_eq!(
        related_entries(&app.timeline(&a).await)[1],
        format!("No longer related to {b} (Retry queue overload)")
    );
    assert_eq!(
        unlink().await.status,
        StatusCode::NOT_FOUND,
        "not related any more"
    );
}

#[sqlx::test]
async fn bad_links_are_refused_naming_the_field_and_change_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let a = app
        .incident(json!({"title": "One", "severity": "Sev3"}))
        .await;
    let b = app
        .incident(json!({"title": "Two", "severity": "Sev3"}))
        .await;
    let link = |from: &str, body: Value| {
        let path = format!("/api/v1/incidents/{from}/related");
        let app = &app;
        async move { app.post(&path, body).await }
    };
    assert_eq!(
        link(&a, json!({"incident": b.trim_start_matches("INC-")}))
            .await
            .status,
        StatusCode::CREATED,
        "a bare number names the incident too"
    );
    let before = (app.timeline(&a).await.len(), app.timeline(&b).await.len());
    for (body, status, field) in [
        (
            json!({"incident": a}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "incident",
        ),
        (
            json!({"incident": "INC-999999"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "incident",
        ),
        (
            json!({"incident": "PAY-184"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "incident",
        ),
        (
            json!({"incident": b, "note": "x".repeat(1001)}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "note",
        ),
        (
            json!({"incident": b}),
            StatusCode::CONFLICT,
            "related already",
        ),
        (
            json!({"note": "no incident"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "incident",
        ),
    ] {
        let r = link(&a, body.clone()).await;
        assert_eq!(r.status, status, "{body}: {}", r.text);
        assert!(r.text.contains(field), "{body}: {}", r.text);
    }
    // The other way round is the same link.
    assert_eq!(
        link(&b, json!({"incident": a})).await.status,
        StatusCode::CONFLICT
    );
    assert_eq!(
        (app.timeline(&a).await.len(), app.timeline(&b).await.len()),
        before,
        "nothing written"
    );
    assert_eq!(
        link("INC-999999", json!({"incident": a})).await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn suggestions_match_text_within_the_service_and_its_dependencies(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-worker").await;
    app.service("billing").await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "checkout-api", "tier": 1, "depends_on": ["payments-worker"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let past = app
        .incident(json!({"title": "Retry queue overload during processor degradation", "severity": "Sev1",
                         "service": "payments-worker",
                         "summary": "Failed authorizations retried in lockstep; /checkout p99 reached 9 s."}))
        .await;
    let same_service_other_text = app
        .incident(
            json!({"title": "Certificate expired", "severity": "Sev3", "service": "checkout-api"}),
        )
        .await;
    let other_service_same_text = app
        .incident(
            json!({"title": "Checkout retry storm", "severity": "Sev2", "service": "billing"}),
        )
        .await;
    let now = app
        .incident(json!({"title": "Checkout hangs then fails", "severity": "Sev1", "service": "checkout-api",
                         "summary": "Merchants report checkout hangs; the retry set is growing."}))
        .await;
    let found = related(&app, &now).await;
    assert_eq!(
        keys(&found["suggestions"]),
        [past.as_str()],
        "not {same_service_other_text} (no matching words) nor {other_service_same_text} (another service)"
    );
    // One click links it; it moves from the suggestions to the links.
    let page = app.get(&format!("/incidents/{now}")).await;
    assert!(page.text.contains("Maybe related") && page.text.contains("Retry queue overload"));
    let r = app
        .form(
            &format!("/incidents/{now}/related"),
            &[("incident", past.as_str())],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let found = related(&app, &now).await;
    assert_eq!(keys(&found["items"]), [past.as_str()]);
    assert!(keys(&found["suggestions"]).is_empty());
    // And the page's unlink button.
    let r = app
        .form(&format!("/incidents/{now}/related/{past}/unlink"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert!(keys(&related(&app, &past).await["items"]).is_empty());
    // A form with a bad key answers naming the field and links nothing.
    let r = app
        .form(
            &format!("/incidents/{now}/related"),
            &[("incident", "nope")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(keys(&related(&app, &now).await["items"]).is_empty());
}
