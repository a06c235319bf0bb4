//! The public status page as a comms lead uses it: components arranged by an admin, an
//! incident published with a public title, its customers-audience updates on the page and in
//! Statuspage's JSON shapes, resolved with a closing word; a restricted or unpublished
//! incident's title in no public output; ETags for a crowd.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{TestApp, ago};

const SECRET: &str = "db-primary OOM in rack 7 (internal)";
const HIDDEN: &str = "Tenant acme-corp data export stuck";

/// Every public output, as (address, body), read without signing in.
async fn public_outputs(app: &TestApp) -> Vec<(String, String)> {
    let anonymous = app.signed_out_browser().await;
    let mut out = Vec::new();
    let mut paths: Vec<String> = [
        "/status",
        "/status/api/v2/summary.json",
        "/status/api/v2/status.json",
        "/status/api/v2/components.json",
        "/status/api/v2/incidents.json",
        "/status/api/v2/incidents/unresolved.json",
        "/status/api/v2/scheduled-maintenances.json",
    ]
    .map(str::to_owned)
    .to_vec();
    let incidents = app
        .call_as(
            &anonymous,
            Method::GET,
            "/status/api/v2/incidents.json",
            &[],
            None,
        )
        .await
        .json();
    for i in incidents["incidents"].as_array().unwrap() {
        paths.push(format!("/status/incidents/{}", i["id"].as_str().unwrap()));
    }
    for p in paths {
        let r = app.call_as(&anonymous, Method::GET, &p, &[], None).await;
        assert_eq!(r.status, StatusCode::OK, "{p}: {}", r.text);
        out.push((p, r.text));
    }
    out
}

fn none_says(outputs: &[(String, String)], text: &str) {
    for (path, body) in outputs {
        assert!(!body.contains(text), "{path} shows {text:?}:\n{body}");
    }
}

async fn update(app: &TestApp, key: &str, audience: &str, body: &str) {
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/updates"),
            json!({"audience": audience, "body": body}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

/// Puts `body` as the admin.
async fn put(app: &TestApp, path: &str, body: &Value) -> crate::common::Res {
    app.call_as(&app.admin, Method::PUT, path, &[], Some(&body.to_string()))
        .await
}

async fn step(app: &TestApp, key: &str, action: &str) {
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/{action}"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{action}: {}", r.text);
}

#[sqlx::test]
async fn a_comms_lead_publishes_updates_and_resolves_and_the_public_sees_exactly_that(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    app.service("checkout").await;
    app.service("search").await;
    let r = app
        .call_as(
            &app.admin,
            Method::PUT,
            "/api/v1/status/settings",
            &[],
            Some(
                &json!({"name": "Acme Status", "intro": "How our services are doing."}).to_string(),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let component = |name: &str, group: &str, position: i32, services: Vec<&str>| json!({"name": name, "group": group, "position": position, "services": services});
    let r = app
        .post(
            "/api/v1/status/components",
            component("Checkout", "Shop", 1, vec!["checkout"]),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let checkout = r.json()["id"].as_i64().unwrap();
    let r = app
        .post(
            "/api/v1/status/components",
            component("Search", "Shop", 2, vec!["search"]),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post("/api/v1/status/components", component("API", "", 3, vec![]))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // Bad input is told and changes nothing.
    let r = app
        .post(
            "/api/v1/status/components",
            component("checkout", "", 4, vec![]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("already called"), "{}", r.text);
    let r = app
        .post(
            "/api/v1/status/components",
            component("Mail", "", 4, vec!["nope"]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("services"), "{}", r.text);

    let started = ago(20);
    let key = app
        .incident(
            json!({"title": SECRET, "severity": "Sev2", "service": "checkout",
                         "started_at": started, "detected_at": started}),
        )
        .await;
    update(
        &app,
        &key,
        "internal",
        "Internal: rolled back 4f2a, watching heap",
    )
    .await;
    // Written for customers before anyone chose to go public: it stays unpublished.
    update(&app, &key, "customers", "Draft for Acme Corp only").await;

    // Not yet published: nothing of it is public.
    let before = public_outputs(&app).await;
    none_says(&before, SECRET);
    none_says(&before, "Draft for Acme");
    let summary: Value = serde_json::from_str(&before[1].1).unwrap();
    assert_eq!(summary["status"]["indicator"], "none");
    assert_eq!(summary["status"]["description"], "All Systems Operational");

    // Published with a public title and how it affects checkout.
    let publication = |status: &str| {
        json!({"title": "Elevated checkout errors",
               "components": [{"component": checkout, "status": status}],
               "message": "We are investigating elevated checkout errors."})
    };
    let path = format!("/api/v1/incidents/{key}/publication");
    let r = put(&app, &path, &publication("partial_outage")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = put(&app, &path, &publication("operational")).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("components[0].status"), "{}", r.text);

    update(&app, &key, "customers", "A fix is being rolled out.").await;
    update(&app, &key, "executives", "Revenue impact about 2%").await;
    let during = public_outputs(&app).await;
    none_says(&during, SECRET);
    none_says(&during, "rolled back 4f2a");
    none_says(&during, "Revenue impact");
    none_says(&during, "Draft for Acme");
    // A component an unresolved incident names cannot go.
    let gone = format!("/api/v1/status/components/{checkout}");
    let r = app
        .call_as(&app.admin, Method::DELETE, &gone, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    // The refused "Mail" was not made.
    let listed = app.get("/api/v1/status/components").await.text;
    assert!(
        !listed.contains("Mail") && listed.contains("Checkout"),
        "{listed}"
    );
    let page = &during[0].1;
    assert!(
        page.contains("Acme Status") && page.contains("How our services are doing."),
        "{page}"
    );
    assert!(page.contains("Elevated checkout errors"), "{page}");
    assert!(
        page.contains("Partial outage") && page.contains("Partial System Outage"),
        "{page}"
    );
    // Newest first.
    let fix = page.find("A fix is being rolled out.").unwrap();
    let first = page
        .find("We are investigating elevated checkout errors.")
        .unwrap();
    assert!(fix < first, "{page}");

    // Statuspage's shapes.
    let summary: Value = serde_json::from_str(&during[1].1).unwrap();
    assert_eq!(summary["page"]["name"], "Acme Status");
    assert_eq!(summary["status"]["indicator"], "major");
    let components = summary["components"].as_array().unwrap();
    let group = components.iter().find(|c| c["name"] == "Shop").unwrap();
    assert_eq!(group["group"], true);
    assert_eq!(group["status"], "partial_outage");
    let c = components.iter().find(|c| c["name"] == "Checkout").unwrap();
    assert_eq!(c["status"], "partial_outage");
    assert_eq!(c["group_id"], group["id"]);
    for field in [
        "id",
        "name",
        "status",
        "created_at",
        "updated_at",
        "position",
        "page_id",
        "only_show_if_degraded",
    ] {
        assert!(c.get(field).is_some(), "{field} in {c}");
    }
    let incident = &summary["incidents"][0];
    assert_eq!(incident["name"], "Elevated checkout errors");
    assert_eq!(incident["status"], "investigating");
    assert_eq!(incident["impact"], "major");
    let updates = incident["incident_updates"].as_array().unwrap();
    assert_eq!(updates.len(), 2, "{incident}");
    assert_eq!(updates[0]["body"], "A fix is being rolled out.");
    assert_eq!(updates[0]["affected_components"], Value::Null);
    assert_eq!(
        updates[1]["affected_components"][0]["new_status"],
        "partial_outage"
    );
    // Public ids say nothing of the incident's number.
    let number = key.trim_start_matches("INC-");
    assert_ne!(incident["id"], number);
    let shortlink = incident["shortlink"].as_str().unwrap();
    let id = incident["id"].as_str().unwrap();
    assert!(
        shortlink.ends_with(&format!("/status/incidents/{id}")),
        "{shortlink}"
    );
    assert!(!shortlink.ends_with(&format!("/{number}")), "{shortlink}");

    // Mitigated, then resolved: the closing word is the last update.
    step(&app, &key, "acknowledge").await;
    step(&app, &key, "mitigate").await;
    let unresolved = app
        .get("/status/api/v2/incidents/unresolved.json")
        .await
        .json();
    assert_eq!(unresolved["incidents"][0]["status"], "monitoring");
    step(&app, &key, "resolve").await;
    let after = public_outputs(&app).await;
    none_says(&after, SECRET);
    let summary: Value = serde_json::from_str(&after[1].1).unwrap();
    assert_eq!(summary["status"]["indicator"], "none");
    assert_eq!(summary["incidents"], json!([]));
    let incidents: Value = serde_json::from_str(&after[4].1).unwrap();
    let resolved = &incidents["incidents"][0];
    assert_eq!(resolved["status"], "resolved");
    assert!(resolved["resolved_at"].is_string());
    assert_eq!(
        resolved["incident_updates"][0]["body"],
        "This incident has been resolved."
    );
    assert_eq!(resolved["incident_updates"][0]["status"], "resolved");
    assert_eq!(resolved["incident_updates"].as_array().unwrap().len(), 3);
    let unresolved: Value = serde_json::from_str(&after[5].1).unwrap();
    assert_eq!(unresolved["incidents"], json!([]));
    // The incident's own page, and the day's bar shows the outage.
    let number = resolved["id"].as_str().unwrap();
    let own = after
        .iter()
        .find(|(p, _)| p == &format!("/status/incidents/{number}"))
        .unwrap();
    assert!(
        own.1.contains("This incident has been resolved.") && own.1.contains("Resolved"),
        "{}",
        own.1
    );
    // Checkout, made today, has one day on the page, and it had an incident.
    let page = &after[0].1;
    let checkout_row = &page[page.find("id=\"c").unwrap()..];
    assert!(
        checkout_row.contains("0 of 1 day without an incident"),
        "{page}"
    );
    assert!(page.contains("Past incidents"), "{page}");

    // Reopened: open again, and what the public read while it was mitigated still says so.
    step(&app, &key, "reopen").await;
    let unresolved = app
        .get("/status/api/v2/incidents/unresolved.json")
        .await
        .json();
    let again = &unresolved["incidents"][0];
    assert_eq!(again["status"], "investigating", "{again}");
    let said: Vec<(&str, &str)> = again["incident_updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["status"].as_str().unwrap(), u["body"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        vec![
            ("investigating", "A fix is being rolled out."),
            (
                "investigating",
                "We are investigating elevated checkout errors."
            )
        ]
    );
}

#[sqlx::test]
async fn a_restricted_incident_never_reaches_any_public_output(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("exports").await;
    app.person("Sam Ruiz", "sam").await;
    let r = app
        .post(
            "/api/v1/status/components",
            json!({"name": "Exports", "services": ["exports"]}),
        )
        .await;
    let exports = r.json()["id"].as_i64().unwrap();
    let started = ago(10);
    let key = app
        .incident(
            json!({"title": HIDDEN, "severity": "Sev3", "service": "exports",
                         "started_at": started, "detected_at": started}),
        )
        .await;
    let publication = json!({"title": "Delayed exports", "message": "Exports are delayed.",
                             "components": [{"component": exports, "status": "degraded_performance"}]});
    let path = format!("/api/v1/incidents/{key}/publication");
    let r = put(&app, &path, &publication).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let shown = public_outputs(&app).await;
    assert!(shown[0].1.contains("Delayed exports") && shown[0].1.contains("Exports are delayed."));
    none_says(&shown, HIDDEN);

    // Restricted since: gone from every public output, and it cannot be published again.
    let r = app
        .call_as(
            &app.admin,
            Method::PUT,
            &format!("/api/v1/incidents/{key}/access"),
            &[],
            Some(&json!({"restricted": true, "people": ["sam"]}).to_string()),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let hidden = public_outputs(&app).await;
    for text in [HIDDEN, "Delayed exports", "Exports are delayed."] {
        none_says(&hidden, text);
    }
    let summary: Value = serde_json::from_str(&hidden[1].1).unwrap();
    assert_eq!(summary["status"]["indicator"], "none");
    let r = put(&app, &path, &publication).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let number = key.trim_start_matches("INC-");
    let anonymous = app.signed_out_browser().await;
    let r = app
        .call_as(
            &anonymous,
            Method::GET,
            &format!("/status/incidents/{number}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn the_public_answers_carry_an_etag_and_a_304_costs_nothing_to_send(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let anonymous = app.signed_out_browser().await;
    for path in ["/status", "/status/api/v2/summary.json"] {
        let r = app.call_as(&anonymous, Method::GET, path, &[], None).await;
        assert_eq!(r.status, StatusCode::OK);
        let tag = r.headers["etag"].to_str().unwrap().to_owned();
        assert!(
            r.headers["cache-control"]
                .to_str()
                .unwrap()
                .contains("public")
        );
        let again = app
            .call_as(
                &anonymous,
                Method::GET,
                path,
                &[("if-none-match", &tag)],
                None,
            )
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(again.text.is_empty());
    }
    // A change makes a new tag; the old one is answered in full.
    let summary = "/status/api/v2/summary.json";
    let r = app
        .call_as(&anonymous, Method::GET, summary, &[], None)
        .await;
    let old = r.headers["etag"].to_str().unwrap().to_owned();
    let r = put(&app, "/api/v1/status/settings", &json!({"name": "Renamed"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let asked = [("if-none-match", old.as_str())];
    let r = app
        .call_as(&anonymous, Method::GET, summary, &asked, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_ne!(r.headers["etag"].to_str().unwrap(), old);
    assert!(r.text.contains("Renamed"));
    let nothing = "/status/api/v2/nothing.json";
    let r = app
        .call_as(&anonymous, Method::GET, nothing, &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn maintenance_reaches_the_page_only_when_announced_and_never_by_its_own_name(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.service("db").await;
    let r = app
        .post(
            "/api/v1/status/components",
            json!({"name": "Database", "services": ["db"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let now: String =
        sqlx::query_scalar("select to_char(now() at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')")
            .fetch_one(&pool)
            .await
            .unwrap();
    let secret = "Patch db-7 kernel CVE-2026-1234";
    let r = app
        .post(
            "/api/v1/maintenance-windows",
            json!({"name": secret, "services": ["db"], "mode": "quiet", "starts_at": now,
                   "duration": "2h", "comment": "ticket OPS-99"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let window = r.json()["id"].as_i64().unwrap();

    // Not announced: nothing of it is public.
    let quiet = public_outputs(&app).await;
    none_says(&quiet, "Scheduled maintenance");
    none_says(&quiet, "under_maintenance");
    none_says(&quiet, secret);

    let r = app
        .form(
            "/admin/status/announcements",
            &[("window", &window.to_string())],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let shown = public_outputs(&app).await;
    none_says(&shown, secret);
    none_says(&shown, "OPS-99");
    none_says(&shown, &format!("\"{window}-"));
    let summary: Value = serde_json::from_str(&shown[1].1).unwrap();
    assert_eq!(summary["status"]["indicator"], "maintenance", "{summary}");
    assert_eq!(summary["components"][0]["status"], "under_maintenance");
    let m = &summary["scheduled_maintenances"][0];
    assert_eq!(m["name"], "Scheduled maintenance: Database");
    assert_eq!(m["status"], "in_progress");
    assert_eq!(m["impact"], "maintenance");
    assert!(m["scheduled_until"].is_string() && m["incident_updates"][0]["body"].is_string());
    assert!(shown[0].1.contains("Under maintenance"), "{}", shown[0].1);

    // Withdrawn: gone again.
    let r = app
        .form(&format!("/admin/status/announcements/{window}/delete"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    none_says(&public_outputs(&app).await, "Scheduled maintenance");
}

/// Parses an Atom document with Python's feedparser (Debian's python3-feedparser, which
/// scripts/test installs): (bozo, feed title, entries as title, link, id, summary).
async fn feedparser(doc: &str) -> Value {
    use tokio::io::AsyncWriteExt;
    let script = "import sys, json, feedparser\n\
                  f = feedparser.parse(sys.stdin.buffer.read())\n\
                  print(json.dumps({'bozo': f.bozo, 'version': f.version, 'title': f.feed.get('title'),\n\
                    'entries': [{'title': e.title, 'link': e.link, 'id': e.id, 'updated': e.updated,\n\
                                 'summary': e.summary} for e in f.entries]}))";
    let mut child = tokio::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 with feedparser (scripts/test installs python3-feedparser)");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(doc.as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[sqlx::test]
async fn the_atom_feed_reads_in_a_real_feed_parser_and_holds_only_what_is_public(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout").await;
    app.person("Sam Ruiz", "sam").await;
    let r = app
        .post(
            "/api/v1/status/components",
            json!({"name": "Checkout", "services": ["checkout"]}),
        )
        .await;
    let checkout = r.json()["id"].as_i64().unwrap();
    let started = ago(15);
    let key = app
        .incident(
            json!({"title": SECRET, "severity": "Sev2", "service": "checkout",
                         "started_at": started, "detected_at": started}),
        )
        .await;
    update(&app, &key, "internal", "Internal: heap at 97% <script>").await;
    let path = format!("/api/v1/incidents/{key}/publication");
    let publication = json!({"title": "Checkout errors & <timeouts>",
                             "message": "We are looking into \"failed\" payments.",
                             "components": [{"component": checkout, "status": "major_outage"}]});
    let r = put(&app, &path, &publication).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    update(&app, &key, "customers", "Payments are recovering.").await;

    let anonymous = app.signed_out_browser().await;
    let atom = "/status/history.atom";
    let r = app.call_as(&anonymous, Method::GET, atom, &[], None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/atom+xml")
    );
    assert!(
        !r.text.contains(SECRET) && !r.text.contains("heap at 97%"),
        "{}",
        r.text
    );
    let feed = feedparser(&r.text).await;
    assert_eq!(feed["bozo"], false, "{feed}");
    assert_eq!(feed["version"], "atom10", "{feed}");
    assert_eq!(feed["title"], "Status — incident history");
    let entries = feed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{feed}");
    let e = &entries[0];
    assert_eq!(e["title"], "Checkout errors & <timeouts>");
    assert!(e["link"].as_str().unwrap().contains("/status/incidents/"));
    let summary = e["summary"].as_str().unwrap();
    let recovering = summary.find("Payments are recovering.").unwrap();
    let looking = summary
        .find("We are looking into &quot;failed&quot; payments.")
        .or_else(|| summary.find("We are looking into \"failed\" payments."))
        .unwrap();
    assert!(recovering < looking, "newest first: {summary}");

    // Restricted: the feed has no entry for it.
    let r = put(
        &app,
        &format!("/api/v1/incidents/{key}/access"),
        &json!({"restricted": true, "people": ["sam"]}),
    )
    .await;
    assert!(r.status.is_success(), "{}", r.text);
    let r = app.call_as(&anonymous, Method::GET, atom, &[], None).await;
    let feed = feedparser(&r.text).await;
    assert_eq!(feed["entries"], json!([]), "{feed}");
    assert!(!r.text.contains("Checkout errors"));
}
