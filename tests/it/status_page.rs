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
        "/status/api/v2/scheduled-maintenances/upcoming.json",
        "/status/api/v2/scheduled-maintenances/active.json",
        "/status/history.atom",
        "/status/subscribe",
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

/// An incident on checkout under its internal title, begun `minutes` ago.
async fn secret_incident(app: &TestApp, minutes: i64) -> String {
    let started = ago(minutes);
    app.incident(
        json!({"title": SECRET, "severity": "Sev2", "service": "checkout",
                        "started_at": started, "detected_at": started}),
    )
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

    let key = secret_incident(&app, 20).await;
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
    let key = secret_incident(&app, 15).await;
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

/// The link in a message that starts with `prefix` (up to the end of its line), as a path.
fn link_after(mail: &str, prefix: &str) -> String {
    let at = mail
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{mail}"));
    let url = mail[at + prefix.len()..].lines().next().unwrap().trim();
    url.trim_start_matches("http://quell.test").to_owned()
}

/// The messages the SMTP server holds for `to`.
fn mail_to(smtp: &crate::paging::SmtpServer, to: &str) -> Vec<String> {
    smtp.mail()
        .into_iter()
        .filter(|m| m.contains(&format!("To: {to}")))
        .collect()
}

/// Subscribes `email` through the public form, as a browser without a session.
async fn subscribe(app: &TestApp, fields: &[(&str, &str)]) -> crate::common::Res {
    let body = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencoding(v)))
        .collect::<Vec<_>>()
        .join("&");
    app.form_raw(
        &crate::common::Creds::default(),
        "/status/subscribe",
        body,
        &[],
    )
    .await
}

fn urlencoding(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Mails what is due and delivers it through `smtp`.
async fn mail_round(app: &TestApp, smtp: &str) {
    quell::statuspage::mailer::round(&app.pool).await.unwrap();
    let cfg = crate::paging::sender(Some(smtp.to_owned()));
    while crate::paging::deliver(app, &cfg).await > 0 {}
}

async fn anonymous_get(app: &TestApp, path: &str) -> crate::common::Res {
    app.call_as(
        &crate::common::Creds::default(),
        Method::GET,
        path,
        &[],
        None,
    )
    .await
}

async fn anonymous_post(app: &TestApp, path: &str) -> crate::common::Res {
    app.form_raw(&crate::common::Creds::default(), path, String::new(), &[])
        .await
}

#[sqlx::test]
async fn a_subscriber_confirms_receives_each_public_update_once_and_leaves_in_one_click(
    pool: PgPool,
) {
    let smtp = crate::paging::smtp_server().await;
    let app = TestApp::new(pool).await;
    app.service("checkout").await;
    app.service("search").await;
    let id = |r: crate::common::Res| r.json()["id"].as_i64().unwrap().to_string();
    let checkout = id(app
        .post(
            "/api/v1/status/components",
            json!({"name": "Checkout", "services": ["checkout"]}),
        )
        .await);
    let search = id(app
        .post(
            "/api/v1/status/components",
            json!({"name": "Search", "services": ["search"]}),
        )
        .await);

    // The form, without signing in; bad input is named and keeps nothing.
    let form = anonymous_get(&app, "/status/subscribe").await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.text);
    assert!(
        form.text
            .contains(&format!("name=\"component_{checkout}\"")),
        "{}",
        form.text
    );
    assert_eq!(form.header("cache-control"), Some("no-store"));
    let r = subscribe(&app, &[("email", "not an address"), ("scope", "all")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("an email address like"), "{}", r.text);
    let r = subscribe(&app, &[("email", "ana@example.com"), ("scope", "some")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("choose at least one component"),
        "{}",
        r.text
    );
    let listed = app.get("/api/v1/status/subscribers").await.json();
    assert_eq!(listed["items"], json!([]), "{listed}");

    // Ana hears about checkout, Eve about search, Bob about everything but never confirms.
    let ticked = format!("component_{checkout}");
    let r = subscribe(
        &app,
        &[
            ("email", "ana@example.com"),
            ("scope", "some"),
            (&ticked, "on"),
        ],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("Check your inbox"), "{}", r.text);
    let ticked_search = format!("component_{search}");
    subscribe(
        &app,
        &[
            ("email", "eve@example.com"),
            ("scope", "some"),
            (&ticked_search, "on"),
        ],
    )
    .await;
    subscribe(&app, &[("email", "bob@example.com"), ("scope", "all")]).await;
    // Asking again at once says the same and sends nothing more.
    let again = subscribe(&app, &[("email", "ANA@example.com"), ("scope", "all")]).await;
    assert_eq!(
        again.text,
        r.text.replace("ana@example.com", "ANA@example.com")
    );
    mail_round(&app, &smtp.url).await;
    let ana = mail_to(&smtp, "ana@example.com");
    assert_eq!(ana.len(), 1, "{ana:?}");
    assert!(
        ana[0].contains("Subject: Confirm your subscription to"),
        "{}",
        ana[0]
    );
    let manage = link_after(&ana[0], "http://quell.test");
    assert!(manage.starts_with("/status/subscription/"), "{manage}");
    // Opening the link confirms nothing by itself (mail scanners open links); pressing does.
    let page = anonymous_get(&app, &manage).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("Confirm") && page.text.contains("ana@example.com"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert!(app.get("/api/v1/status/subscribers").await.json()["confirmed"] == 0);
    let done = anonymous_post(&app, &format!("{manage}/confirm")).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("Confirmed"), "{}", done.text);
    let eve = mail_to(&smtp, "eve@example.com");
    let eve_link = link_after(&eve[0], "http://quell.test");
    anonymous_post(&app, &format!("{eve_link}/confirm")).await;
    let listed = app.get("/api/v1/status/subscribers").await.json();
    assert_eq!(
        (listed["confirmed"].as_i64(), listed["waiting"].as_i64()),
        (Some(2), Some(1)),
        "{listed}"
    );

    // The comms lead's run on checkout: a draft before publishing, two public updates, an
    // internal note, the resolution.
    let key = secret_incident(&app, 15).await;
    update(&app, &key, "customers", "Draft for Acme Corp only").await;
    let path = format!("/api/v1/incidents/{key}/publication");
    let publication = json!({"title": "Elevated checkout errors",
        "components": [{"component": checkout.parse::<i64>().unwrap(), "status": "partial_outage"}],
        "message": "We are investigating elevated checkout errors."});
    assert_eq!(put(&app, &path, &publication).await.status, StatusCode::OK);
    update(&app, &key, "internal", "Internal: rolled back 4f2a").await;
    update(&app, &key, "customers", "A fix is being rolled out.").await;
    step(&app, &key, "resolve").await;
    mail_round(&app, &smtp.url).await;
    // Run again: every event was mailed once.
    mail_round(&app, &smtp.url).await;

    let ana = mail_to(&smtp, "ana@example.com");
    assert_eq!(
        ana.len(),
        4,
        "a confirmation, two updates, the resolution: {ana:#?}"
    );
    let subjects: Vec<&str> = ana
        .iter()
        .map(|m| m.lines().find(|l| l.starts_with("Subject: ")).unwrap())
        .collect();
    assert!(
        subjects.contains(&"Subject: [Status] Elevated checkout errors: Investigating"),
        "{subjects:?}"
    );
    assert!(
        subjects.contains(&"Subject: [Status] Elevated checkout errors: Resolved"),
        "{subjects:?}"
    );
    let said: String = ana.concat();
    for public in [
        "We are investigating elevated checkout errors.",
        "A fix is being rolled out.",
        "This incident has been resolved.",
    ] {
        assert_eq!(said.matches(public).count(), 1, "{public}: {said}");
    }
    assert_eq!(
        said.matches("Affects: Checkout (Partial outage)").count(),
        3
    );
    for private in [SECRET, "Draft for Acme", "rolled back 4f2a"] {
        assert!(!said.contains(private), "{private} was mailed: {said}");
    }
    let update_mail = ana
        .iter()
        .find(|m| m.contains("A fix is being rolled out."))
        .unwrap();
    assert!(
        update_mail.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"),
        "{update_mail}"
    );
    assert!(update_mail.contains("/status/incidents/"), "{update_mail}");
    // Eve chose search only; Bob never confirmed.
    assert_eq!(mail_to(&smtp, "eve@example.com").len(), 1);
    assert_eq!(mail_to(&smtp, "bob@example.com").len(), 1);

    // The message's link leads to one button, no sign-in (opening it alone, as a mail
    // scanner does, changes nothing); pressed: gone, and nothing more is sent.
    let leave = link_after(update_mail, "\nUnsubscribe: ");
    let r = anonymous_get(&app, &leave).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("ana@example.com"), "{}", r.text);
    assert_eq!(
        app.get("/api/v1/status/subscribers").await.json()["confirmed"],
        2
    );
    let r = anonymous_post(&app, &leave).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(
        r.text.contains("Unsubscribed") && r.text.contains("ana@example.com"),
        "{}",
        r.text
    );
    // The mail client's own button (RFC 8058) posts to the same address.
    let header = update_mail
        .lines()
        .find_map(|l| l.strip_prefix("List-Unsubscribe: <"))
        .unwrap();
    assert_eq!(
        header
            .trim_end_matches('>')
            .trim_start_matches("http://quell.test"),
        leave
    );
    let r = anonymous_get(&app, &leave).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert!(r.text.contains("no longer valid"), "{}", r.text);
    step(&app, &key, "reopen").await;
    update(
        &app,
        &key,
        "customers",
        "The errors are back; we are on it.",
    )
    .await;
    mail_round(&app, &smtp.url).await;
    assert_eq!(mail_to(&smtp, "ana@example.com").len(), 4);
    let listed = app.get("/api/v1/status/subscribers").await.json();
    assert!(!listed.to_string().contains("ana@example.com"), "{listed}");
}

#[sqlx::test]
async fn mail_about_an_incident_restricted_before_it_went_is_never_sent(pool: PgPool) {
    let smtp = crate::paging::smtp_server().await;
    let app = TestApp::new(pool).await;
    app.service("exports").await;
    app.person("Sam Ruiz", "sam").await;
    subscribe(&app, &[("email", "ana@example.com"), ("scope", "all")]).await;
    mail_round(&app, &smtp.url).await;
    let link = link_after(&mail_to(&smtp, "ana@example.com")[0], "http://quell.test");
    anonymous_post(&app, &format!("{link}/confirm")).await;

    let key = app
        .incident(json!({"title": HIDDEN, "severity": "Sev3", "service": "exports"}))
        .await;
    let path = format!("/api/v1/incidents/{key}/publication");
    let r = put(
        &app,
        &path,
        &json!({"title": "Delayed exports", "message": "Exports are delayed."}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Queued, not yet sent; then restricted: the message is called off.
    quell::statuspage::mailer::round(&app.pool).await.unwrap();
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
    update(&app, &key, "customers", "Exports resume at noon.").await;
    mail_round(&app, &smtp.url).await;
    let all = smtp.mail().concat();
    for text in [
        HIDDEN,
        "Delayed exports",
        "Exports are delayed.",
        "Exports resume",
    ] {
        assert!(!all.contains(text), "{text} was mailed: {all}");
    }
}

#[sqlx::test]
async fn a_message_that_cannot_be_delivered_shows_as_failing_to_admins(pool: PgPool) {
    let smtp = crate::paging::smtp_server().await;
    let app = TestApp::new(pool).await;
    app.service("checkout").await;
    subscribe(&app, &[("email", "ana@example.com"), ("scope", "all")]).await;
    mail_round(&app, &smtp.url).await;
    let link = link_after(&mail_to(&smtp, "ana@example.com")[0], "http://quell.test");
    anonymous_post(&app, &format!("{link}/confirm")).await;
    let key = app
        .incident(json!({"title": "Checkout down", "severity": "Sev2", "service": "checkout"}))
        .await;
    let r = put(
        &app,
        &format!("/api/v1/incidents/{key}/publication"),
        &json!({"title": "Checkout unavailable", "message": "Checkout is unavailable."}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // The mail server is gone: every try fails, and the message is given up on.
    drop(smtp);
    mail_round(&app, "smtp://127.0.0.1:9").await;
    let listed = app.get("/api/v1/status/subscribers").await.json();
    assert_eq!(listed["failing"], 1, "{listed}");
    let ana = &listed["items"][0];
    assert!(ana["failing_since"].is_string(), "{ana}");
    assert!(
        ana["last_error"].as_str().unwrap().contains("SMTP"),
        "{ana}"
    );
    let page = app
        .call_as(&app.admin, Method::GET, "/admin/status", &[], None)
        .await;
    assert!(
        page.text.contains("1 failing") && page.text.contains("ana@example.com"),
        "{}",
        page.text
    );
    // An admin removes the address.
    let id = ana["id"].as_i64().unwrap();
    let r = app
        .call_as(
            &app.admin,
            Method::DELETE,
            &format!("/api/v1/status/subscribers/{id}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(
        app.get("/api/v1/status/subscribers").await.json()["items"],
        json!([])
    );
}

/// The public page as it reads in `c` once it says `ready`. The browser keeps a copy for 10 s
/// (`Cache-Control: max-age=10`), as any reader's does: it reloads, as a reader would, which
/// asks the server again (with the copy's ETag).
async fn public_page(c: &fantoccini::Client, base: &str, ready: &str) -> String {
    c.goto(&format!("{base}/status")).await.unwrap();
    let mut last = String::new();
    for _ in 0..40 {
        if let Ok(el) = c.find(fantoccini::Locator::Css("main")).await
            && let Ok(text) = el.text().await
        {
            if text.contains(ready) {
                return text;
            }
            last = text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        c.refresh().await.unwrap();
    }
    panic!("/status never said {ready:?}; it says {last}");
}

/// How far the page runs past the window's width (0: it fits).
async fn overflow(c: &fantoccini::Client) -> i64 {
    c.execute(
        "return document.documentElement.scrollWidth - window.innerWidth;",
        vec![],
    )
    .await
    .unwrap()
    .as_i64()
    .unwrap()
}

#[sqlx::test]
async fn a_comms_lead_publishes_updates_and_resolves_in_chromium_on_a_phone_and_a_laptop(
    pool: PgPool,
) {
    use crate::browser::{click, sign_in_at, text_when, type_into};
    use fantoccini::Locator;
    crate::browser::account(
        &pool,
        "cara@example.com",
        "Cara Comms",
        quell::auth::domain::UserRole::Responder,
    )
    .await;
    let draft = quell::services::domain::ServiceDraft {
        name: "checkout".into(),
        tier: 1,
        ..Default::default()
    };
    quell::services::db::insert(&pool, &draft.validated().unwrap(), None)
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap();
    let checkout = quell::statuspage::actions::create_component(
        &mut tx,
        &quell::audit::Actor::system("test"),
        quell::statuspage::domain::ComponentDraft {
            name: "Checkout".into(),
            description: String::new(),
            group: String::new(),
            position: 1,
            services: vec!["checkout".into()],
        },
    )
    .await
    .unwrap()
    .id;
    tx.commit().await.unwrap();
    let base = crate::browser::serve(pool.clone()).await;
    let (_driver, driver_url) = crate::browser::chromedriver().await;

    for width in [360, 1280] {
        let key = crate::browser::open_incident(
            &pool,
            &format!("{SECRET} {width}"),
            quell::domain::Severity::Sev2,
            Some("checkout"),
            "",
            10,
        )
        .await;
        let public = format!("Checkout errors seen at {width} px");
        let c = crate::browser::browser_sized(&driver_url, width, 900).await;
        let run = async {
            // Publish from the incident's publish page.
            sign_in_at(
                &c,
                &format!("{base}/incidents/{key}/publication"),
                "cara@example.com",
            )
            .await;
            type_into(&c, r#"input[name="title"]"#, &public).await;
            c.find(Locator::Css(&format!(
                r#"select[name="component_{checkout}"]"#
            )))
            .await
            .unwrap()
            .select_by_value("partial_outage")
            .await
            .unwrap();
            type_into(
                &c,
                r#"textarea[name="message"]"#,
                "We are looking into checkout errors.",
            )
            .await;
            click(&c, r#"form[action$="/publication"] button[type="submit"]"#).await;
            text_when(&c, "main", |t| t.contains("On the status page as")).await;

            // The page, as the public reads it.
            let page = public_page(&c, &base, &public).await;
            assert!(
                page.contains("We are looking into checkout errors."),
                "{page}"
            );
            assert!(
                page.contains("Partial outage") && page.contains("Investigating"),
                "{page}"
            );
            assert!(!page.contains(SECRET), "{page}");
            assert!(overflow(&c).await <= 0, "the page fits {width} px");

            // A second public update from the incident page, then mitigated and resolved.
            c.goto(&format!("{base}/incidents/{key}")).await.unwrap();
            type_into(
                &c,
                r#"form[action$="/updates"] textarea[name="body"]"#,
                "A fix is rolling out.",
            )
            .await;
            c.find(Locator::Css(
                r#"form[action$="/updates"] select[name="audience"]"#,
            ))
            .await
            .unwrap()
            .select_by_value("customers")
            .await
            .unwrap();
            click(&c, r#"form[action$="/updates"] button[type="submit"]"#).await;
            text_when(&c, "main", |t| t.contains("A fix is rolling out.")).await;
            let page = public_page(&c, &base, "A fix is rolling out.").await;
            assert!(
                page.contains("We are looking into checkout errors."),
                "{page}"
            );
            for action in ["acknowledge", "mitigate", "resolve"] {
                c.goto(&format!("{base}/incidents/{key}")).await.unwrap();
                click(
                    &c,
                    &format!(r#"form.steps button[name="action"][value="{action}"]"#),
                )
                .await;
                text_when(&c, ".incident-head .status", |t| {
                    t == match action {
                        "acknowledge" => "acknowledged",
                        "mitigate" => "mitigated",
                        _ => "resolved",
                    }
                })
                .await;
            }
            let page = public_page(&c, &base, "All Systems Operational").await;
            let past = &page[page.find("Past incidents").unwrap()..];
            assert!(
                past.contains(&public) && past.contains("Resolved"),
                "{page}"
            );
            assert!(overflow(&c).await <= 0, "the page fits {width} px");
            // Its own page: the three public updates, newest first.
            click(&c, "main a[href^=\"/status/incidents/\"]").await;
            let own = text_when(&c, "main", |t| {
                t.contains("This incident has been resolved.")
            })
            .await;
            assert!(own.contains(&public) && !own.contains(SECRET), "{own}");
            let order: Vec<usize> = [
                "This incident has been resolved.",
                "A fix is rolling out.",
                "We are looking into checkout errors.",
            ]
            .iter()
            .map(|t| own.find(t).unwrap_or_else(|| panic!("{t} in {own}")))
            .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "newest first: {own}");
            assert!(
                overflow(&c).await <= 0,
                "the incident's page fits {width} px"
            );
        };
        run.await;
        c.close().await.unwrap();
    }
}

#[sqlx::test]
async fn a_change_made_on_one_replica_shows_at_once_on_another(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.service("checkout").await;
    // Two more replicas on the same database, each with its own copy of the page.
    let (one, two) = (
        crate::browser::serve(pool.clone()).await,
        crate::browser::serve(pool.clone()).await,
    );
    let http = reqwest::Client::new();
    let read = |base: &str| {
        let (http, url) = (http.clone(), format!("{base}/status/api/v2/summary.json"));
        async move {
            http.get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let before = read(&two).await;
    assert_eq!(before["incidents"], json!([]), "{before}");
    assert_eq!(read(&two).await, before, "served again from the copy");

    // Published through the first; the second answers with it on the next request.
    let key = secret_incident(&app, 5).await;
    let r = put(
        &app,
        &format!("/api/v1/incidents/{key}/publication"),
        &json!({"title": "Checkout slow", "message": "Looking into it."}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for base in [&one, &two] {
        let now = read(base).await;
        assert_eq!(now["incidents"][0]["name"], "Checkout slow", "{now}");
    }
    // A customers update and the resolution, the same.
    update(&app, &key, "customers", "Fixed, watching.").await;
    let now = read(&two).await;
    assert_eq!(
        now["incidents"][0]["incident_updates"][0]["body"], "Fixed, watching.",
        "{now}"
    );
    step(&app, &key, "resolve").await;
    let now = read(&two).await;
    assert_eq!(now["incidents"], json!([]), "{now}");
    assert_eq!(now["status"]["indicator"], "none", "{now}");
}

#[sqlx::test]
async fn the_form_sends_a_few_confirmations_an_hour_to_one_client_and_then_refuses(pool: PgPool) {
    let app = TestApp::with(pool, |c| c.trust_forwarded_for = true).await;
    let from = |ip: &'static str, email: String| {
        let app = &app;
        async move {
            let body = format!("email={}&scope=all", urlencoding(&email));
            let creds = crate::common::Creds::default();
            let headers = [("x-forwarded-for", ip)];
            app.form_raw(&creds, "/status/subscribe", body, &headers)
                .await
        }
    };
    // One inbox under aliases, from one client: five confirmations, then a refusal.
    for n in 1..=5 {
        let r = from("203.0.113.7", format!("victim+{n}@example.com")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let r = from("203.0.113.7", "victim+6@example.com".into()).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert!(r.text.contains("try again in an hour"), "{}", r.text);
    // Another client is not held back; nothing was kept of the refused one.
    let r = from("198.51.100.2", "ana@example.com".into()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let listed = app.get("/api/v1/status/subscribers").await.json();
    assert_eq!(listed["waiting"], 6, "{listed}");
    assert!(!listed.to_string().contains("victim+6"), "{listed}");
}

#[sqlx::test]
async fn an_incident_older_than_the_page_keeps_still_opens_by_its_link(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout").await;
    let key = secret_incident(&app, 30).await;
    let r = put(
        &app,
        &format!("/api/v1/incidents/{key}/publication"),
        &json!({"title": "Checkout outage in the spring", "message": "Checkout is down."}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let id = r.json()["public_id"].as_str().unwrap().to_owned();
    step(&app, &key, "resolve").await;
    // A hundred days on.
    sqlx::query(
        "update incidents set started_at = started_at - interval '100 days',
                detected_at = detected_at - interval '100 days',
                acknowledged_at = acknowledged_at - interval '100 days',
                mitigated_at = mitigated_at - interval '100 days',
                resolved_at = resolved_at - interval '100 days' where number = $1",
    )
    .bind(key.trim_start_matches("INC-").parse::<i64>().unwrap())
    .execute(&app.pool)
    .await
    .unwrap();
    let page = anonymous_get(&app, "/status").await;
    assert!(
        !page.text.contains("Checkout outage in the spring"),
        "{}",
        page.text
    );
    let own = anonymous_get(&app, &format!("/status/incidents/{id}")).await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text);
    assert!(
        own.text.contains("Checkout outage in the spring")
            && own.text.contains("Checkout is down.")
            && own.text.contains("This incident has been resolved."),
        "{}",
        own.text
    );
    assert!(!own.text.contains(SECRET), "{}", own.text);
    // Served again from the copy, the same bytes.
    let again = anonymous_get(&app, &format!("/status/incidents/{id}")).await;
    assert_eq!(again.header("etag"), own.header("etag"));
    let none = anonymous_get(&app, "/status/incidents/0123456789ab").await;
    assert_eq!(none.status, StatusCode::NOT_FOUND);
}
