//! The dashboard at `/`: open incidents worst first with their clocks, yours, updates due,
//! your overdue action items, and the 30-day trends.

use axum::http::{Method, StatusCode};
use serde_json::json;
use sqlx::PgPool;

use crate::common::{TestApp, ago};

fn position(html: &str, needle: &str) -> usize {
    html.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} is not on the page"))
}

#[sqlx::test]
async fn the_dashboard_shows_what_is_open_worst_first_and_what_is_yours(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    // The demo's Ana, signed in: she owns INC-1187's overdue action items.
    let email: String = sqlx::query_scalar("select email from people where handle = 'ana'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let ana = app.account(&email, "responder").await;
    let sev3 = app
        .incident(
            json!({"title": "Queue lag <i>slow</i>", "severity": "Sev3", "detected_at": ago(20)}),
        )
        .await;
    let sev1_acked = app
        .incident(json!({"title": "Payments down", "severity": "Sev1", "detected_at": ago(30)}))
        .await;
    assert!(
        app.post_empty(&format!("/api/v1/incidents/{sev1_acked}/acknowledge"))
            .await
            .status
            .is_success()
    );
    let sev1_new = app
        .incident(json!({"title": "Cards declined", "severity": "Sev1", "detected_at": ago(3)}))
        .await;
    // Ana is commander of one and looking into another.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/incidents/{sev1_acked}/roles/incident_commander"),
            &[],
            Some(&json!({"person": "ana"}).to_string()),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let r = app
        .call_as(
            &ana,
            Method::POST,
            &format!("/api/v1/incidents/{sev3}/claims"),
            &[],
            Some(&json!({"subject": "consumer lag"}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);

    let page = app.call_as(&ana, Method::GET, "/", &[], None).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = &page.text;
    assert!(
        html.contains("Open incidents: 3") && html.contains("2 not acknowledged"),
        "{html}"
    );
    // Sev1 before Sev3; within Sev1, the unacknowledged one first.
    assert!(
        position(html, &format!("<strong>{sev1_new}</strong>"))
            < position(html, &format!("<strong>{sev1_acked}</strong>"))
    );
    assert!(
        position(html, &format!("<strong>{sev1_acked}</strong>"))
            < position(html, &format!("<strong>{sev3}</strong>"))
    );
    // Clocks that tick: the unacknowledged one watches acknowledgement, with its due time.
    assert!(
        html.contains(r#"acknowledge <span class="countdown sla-running" data-due-at=""#),
        "{html}"
    );
    assert!(
        html.contains("Queue lag &#60;i&#62;slow&#60;/i&#62;"),
        "titles are escaped"
    );
    // Yours: the role and the claim; the overdue action items of INC-1187.
    let yours = &html[position(html, "id=\"dash-mine\"")..position(html, "id=\"dash-updates\"")];
    assert!(
        yours.contains(&sev1_acked) && yours.contains("Incident commander"),
        "{yours}"
    );
    assert!(
        yours.contains(&sev3) && yours.contains("looking into consumer lag"),
        "{yours}"
    );
    assert!(
        yours.contains("INC-1187 #") && yours.contains("sla-overdue"),
        "{yours}"
    );
    // The Sev1s owe stakeholder updates on the demo policy's cadence.
    let updates =
        &html[position(html, "id=\"dash-updates\"")..position(html, "id=\"dash-trends\"")];
    assert!(updates.contains(&sev1_new), "{updates}");
    // Three trends as SVG, with their definitions; today's bar counts today's incidents.
    assert_eq!(html.matches("<svg class=\"chart spark\"").count(), 3);
    assert!(html.contains("Incidents detected each day (UTC)"));
    assert!(html.contains("Mean of acknowledged − detected"));
    assert!(html.contains("3 in 30 days"), "{html}");
    // The page is live: it names the list's stream.
    assert!(html.contains(r#"data-stream="/incidents/events""#));
    // Someone signed out is sent to sign in.
    let nobody = app
        .call_as(
            &crate::common::Creds::default(),
            Method::GET,
            "/",
            &[],
            None,
        )
        .await;
    assert_eq!(nobody.status, StatusCode::SEE_OTHER);
}
