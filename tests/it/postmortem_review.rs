//! Around the postmortem: reviewers' comments, work-item links from the admins' trackers,
//! action items edited and removed, the managers' list with its filters, and the owner's items
//! on the dashboard.

use crate::common;

use axum::http::{Method, StatusCode};
use common::TestApp;
use serde_json::{Value, json};
use sqlx::PgPool;

const AZURE: &str = "https://dev.azure.com/orbitpay/payments/_workitems/edit/";

async fn table_count(app: &TestApp, table: &str) -> i64 {
    sqlx::query_scalar(&format!("select count(*) from {table}"))
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn work_items_link_to_the_tracker_an_admin_set_up(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    // The demo links AB# to Azure Boards.
    let page = app.get("/incidents/INC-1187/postmortem").await.text;
    assert!(
        page.contains(&format!(
            r#"<a href="{AZURE}2311" rel="noopener noreferrer">AB#2311</a>"#
        )),
        "{page}"
    );
    let md = app.get("/incidents/INC-1187/postmortem.md").await.text;
    assert!(md.contains(&format!("| [AB#2318]({AZURE}2318) |")), "{md}");
    let items = app.get("/api/v1/action-items?type=mitigate").await.json();
    assert_eq!(items["items"][0]["work_item_url"], format!("{AZURE}2318"));

    // Refused: a bad prefix, a template without {n} or not http(s), a prefix taken (any case).
    let trackers = app.get("/api/v1/work-item-trackers").await.json();
    let before = trackers["items"].as_array().unwrap().len();
    for (body, field) in [
        (
            json!({"prefix": "A B#", "name": "x", "url_template": "https://x/{n}"}),
            "prefix",
        ),
        (
            json!({"prefix": "OPS-", "name": "x", "url_template": "https://x/"}),
            "url_template",
        ),
        (
            json!({"prefix": "OPS-", "name": "x", "url_template": "javascript:alert(1)//{n}"}),
            "url_template",
        ),
        (
            json!({"prefix": "OPS-", "name": " ", "url_template": "https://x/{n}"}),
            "name",
        ),
    ] {
        let r = app.post("/api/v1/work-item-trackers", body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field, "{body}");
    }
    let r = app
        .post(
            "/api/v1/work-item-trackers",
            json!({"prefix": "ab#", "name": "Again", "url_template": "https://x/{n}"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert_eq!(
        app.get("/api/v1/work-item-trackers").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        before
    );

    // Only admins change trackers.
    let responder = app.account("r@example.com", "responder").await;
    let r = app
        .call_as(
            &responder,
            Method::POST,
            "/api/v1/work-item-trackers",
            &[],
            Some(r#"{"prefix": "OPS-", "name": "Ops", "url_template": "https://x/{n}"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Changing the template changes every link; removing the tracker leaves text.
    let ab = trackers["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["prefix"] == "AB#")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/work-item-trackers/{ab}"),
            &[],
            Some(r#"{"prefix": "AB#", "name": "Azure Boards", "url_template": "https://boards.example.com/wi/{n}"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let page = app.get("/incidents/INC-1187/postmortem").await.text;
    assert!(page.contains(r#"href="https://boards.example.com/wi/2312""#));
    let r = app
        .call(
            Method::DELETE,
            &format!("/api/v1/work-item-trackers/{ab}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let page = app.get("/incidents/INC-1187/postmortem").await.text;
    assert!(page.contains("<td>AB#2312</td>"), "plain text again");

    // The admin page adds one, and a refused form says why and keeps what was typed.
    let r = app
        .form(
            "/admin/trackers",
            &[
                ("prefix", "AB#"),
                ("name", "Azure Boards"),
                (
                    "url_template",
                    "https://dev.azure.com/orbitpay/payments/_workitems/edit/{n}",
                ),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(
            "/admin/trackers",
            &[
                ("prefix", "OPS-"),
                ("name", "Ops <b>board</b>"),
                ("url_template", "ftp://x/{n}"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("url_template") && r.text.contains("http(s) URL"));
    assert!(
        r.text.contains("Ops &#60;b&#62;board&#60;/b&#62;"),
        "typed text kept, escaped"
    );
    let page = app.get("/admin/trackers").await.text;
    assert!(page.contains("Azure Boards") && !page.contains("ftp://"));
}

#[sqlx::test]
async fn reviewers_comment_on_a_section_and_resolve_comments(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(60).await;
    let base = format!("/incidents/{key}/postmortem");
    let api = format!("/api/v1{base}/comments");

    let r = app
        .form(
            &format!("{base}/comments"),
            &[
                ("part", "root_cause"),
                (
                    "body",
                    "Why 10? <script>alert(1)</script>\nSay where it came from.",
                ),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .post(
            &api,
            json!({"part": "timeline", "body": "Add the 16:31 finding."}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let timeline_comment = r.json()["id"].as_i64().unwrap();

    // Refused, nothing stored.
    for (body, field) in [
        (json!({"part": "epilogue", "body": "x"}), "part"),
        (json!({"part": "summary", "body": "   "}), "body"),
        (json!({"part": "summary", "body": "x".repeat(4001)}), "body"),
    ] {
        let r = app.post(&api, body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field);
    }
    let viewer = app.account("v@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            &api,
            &[],
            Some(r#"{"part": "summary", "body": "x"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(table_count(&app, "postmortem_comments").await, 2);

    let page = app.get(&base).await.text;
    assert!(page.contains("2 open review comments"));
    assert!(page.contains("Why 10? &#60;script&#62;alert(1)&#60;/script&#62;"));
    assert!(!page.contains("<script>alert(1)"));
    // Each comment sits with the part it is about.
    let root_cause = page.find(r#"id="comments-root_cause""#).unwrap();
    let timeline = page.find(r#"id="comments-timeline""#).unwrap();
    let why = page.find("Why 10?").unwrap();
    let finding = page.find("Add the 16:31 finding.").unwrap();
    assert!(root_cause < why && timeline < finding && finding < root_cause);

    let r = app
        .post_empty(&format!("{api}/{timeline_comment}/resolve"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["resolved_by"].is_string());
    let list = app.get(&api).await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    assert!(app.get(&base).await.text.contains("1 open review comment."));
    assert_eq!(
        app.post_empty(&format!("{api}/999999/resolve"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // A comment belongs to its own postmortem.
    let other = app.past_incident(30).await;
    let r = app
        .post_empty(&format!(
            "/api/v1/incidents/{other}/postmortem/comments/{timeline_comment}/resolve"
        ))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let pm = app.get(&format!("/api/v1{base}")).await.json();
    assert_eq!(pm["open_comments"], 1);
}

async fn item_of(app: &TestApp, key: &str, number: i64) -> Value {
    app.get(&format!("/api/v1/incidents/{key}/postmortem"))
        .await
        .json()["action_items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["number"] == number)
        .cloned()
        .unwrap_or(Value::Null)
}

#[sqlx::test]
async fn action_items_are_edited_with_their_version_and_removed(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let item = item_of(&app, "INC-1187", 4).await;
    let id = item["id"].as_i64().unwrap();
    let url = format!("/api/v1/action-items/{id}");
    let v = item["version"].as_i64().unwrap();
    let etag = format!("\"v{v}\"");

    // Changing what the document shows needs If-Match; a stale one is refused.
    let body = r#"{"action": "Alert on payments-gateway p95 > 2 s for 5 min (Sev1)", "owner": "priya", "due_on": "2026-10-02", "work_item": "AB#2399"}"#;
    let r = app.call(Method::PATCH, &url, &[], Some(body)).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED);
    let r = app
        .call(Method::PATCH, &url, &[("if-match", "\"v99\"")], Some(body))
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED);
    let r = app
        .call(Method::PATCH, &url, &[("if-match", &etag)], Some(body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let edited = r.json();
    assert_eq!(edited["owner"], "priya");
    assert_eq!(edited["due_on"], "2026-10-02");
    assert_eq!(edited["work_item"], "AB#2399");
    assert_eq!(r.header("etag"), Some(format!("\"v{}\"", v + 1).as_str()));
    let page = app.get("/incidents/INC-1187/postmortem").await.text;
    assert!(page.contains("for 5 min (Sev1)") && page.contains(&format!("{AZURE}2399")));
    assert!(
        page.contains("Edited since publication on"),
        "the published document changed"
    );

    // Bad fields change nothing.
    let now = format!("\"v{}\"", v + 1);
    for (bad, field) in [
        (r#"{"owner": "nobody-here"}"#, "owner"),
        (r#"{"due_on": "soon"}"#, "due_on"),
        (r#"{"type": "blame"}"#, "type"),
        (r#"{"action": ""}"#, "action"),
        (r#"{"status": "forgotten"}"#, "status"),
        (r#"{}"#, "body"),
    ] {
        let r = app
            .call(Method::PATCH, &url, &[("if-match", &now)], Some(bad))
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(r.field(), field, "{bad}");
    }
    assert_eq!(item_of(&app, "INC-1187", 4).await["owner"], "Priya Nair");
    // Clearing the owner; a status change alone needs no If-Match.
    let r = app
        .call(
            Method::PATCH,
            &url,
            &[("if-match", &now)],
            Some(r#"{"owner": null}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["owner"].is_null());
    let r = app
        .call(
            Method::PATCH,
            &url,
            &[],
            Some(r#"{"status": "in progress"}"#),
        )
        .await;
    assert_eq!(r.json()["status"], "in_progress");

    // The page's form edits and removes; another incident's item is not reachable through it.
    let item7 = item_of(&app, "INC-1187", 7).await;
    let id7 = item7["id"].as_i64().unwrap().to_string();
    let v7 = item7["version"].as_i64().unwrap().to_string();
    let pairs = [
        (
            "action",
            "Add \"recent configuration changes\" to the runbook",
        ),
        ("type", "process"),
        ("owner", "ana"),
        ("due_on", "2026-09-22"),
        ("work_item", "AB#2317"),
        ("status", "done"),
        ("version", v7.as_str()),
    ];
    let r = app
        .form(
            &format!("/incidents/INC-1187/postmortem/action-items/{id7}"),
            &pairs,
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(item_of(&app, "INC-1187", 7).await["status"], "done");
    let r = app
        .form(
            &format!("/incidents/INC-1187/postmortem/action-items/{id7}"),
            &pairs,
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::CONFLICT,
        "the same form twice is stale"
    );

    let other = app.past_incident(30).await;
    let r = app
        .form(
            &format!("/incidents/{other}/postmortem/action-items/{id7}/delete"),
            &[("version", &(v7.parse::<i64>().unwrap() + 1).to_string())],
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app
        .form(
            &format!("/incidents/INC-1187/postmortem/action-items/{id7}/delete"),
            &[("version", &(v7.parse::<i64>().unwrap() + 1).to_string())],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert!(item_of(&app, "INC-1187", 7).await.is_null());
    assert_eq!(
        item_of(&app, "INC-1187", 8).await["work_item"],
        "AB#2318",
        "the others keep their numbers"
    );
    let r = app.call(Method::DELETE, &url, &[], None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.call(Method::DELETE, &url, &[], None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn managers_list_postmortems_by_service_severity_period_and_open_items(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    app.service("search").await;
    let other = app
        .incident(json!({"title": "Search slow", "severity": "Sev3", "service": "search",
                         "started_at": "2026-10-03T10:00:00Z", "detected_at": "2026-10-03T10:05:00Z"}))
        .await;
    // Its postmortem is begun by a first edit (viewing alone starts nothing).
    let r = app
        .form(
            &format!("/incidents/{other}/postmortem/sections"),
            &[
                ("section", "summary"),
                ("text", "Search was slow."),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let keys = |q: &str| {
        let q = q.to_owned();
        let app = &app;
        async move {
            let r = app.get(&format!("/api/v1/postmortems{q}")).await;
            assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text);
            r.json()["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["incident"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        keys("").await,
        ["INC-1187", "INC-184"],
        "published only, by default, newest incident first"
    );
    assert_eq!(
        keys("?status=any").await,
        [other.as_str(), "INC-1187", "INC-184"]
    );
    assert_eq!(keys("?status=draft").await, [other.as_str()]);
    assert_eq!(keys("?status=any&service=search").await, [other.as_str()]);
    assert_eq!(
        keys("?status=any&severity=sev1").await,
        ["INC-1187", "INC-184"]
    );
    assert_eq!(
        keys("?status=any&from=2026-09-17&to=2026-09-17").await,
        ["INC-1187"],
        "both ends of the period included"
    );
    assert_eq!(keys("?status=any&from=2026-09-18").await, [other.as_str()]);
    assert_eq!(
        keys("?open_items=true").await,
        ["INC-1187"],
        "PAY-184's items are all done"
    );
    assert!(keys("?status=any&severity=Sev4").await.is_empty());

    let pm = &app.get("/api/v1/postmortems").await.json()["items"][0];
    assert_eq!(
        pm["duration"],
        "detection → mitigation 0:45; → resolution 3:33"
    );
    assert_eq!(pm["budget_consumed_percent"], 70);
    assert_eq!(
        (
            pm["action_items"].as_i64(),
            pm["open_action_items"].as_i64()
        ),
        (Some(8), Some(8))
    );
    assert_eq!(pm["owner"], "Daniel Okafor");

    for (q, field) in [
        ("?from=17/09/2026", "from"),
        ("?from=2026-09-18&to=2026-09-17", "to"),
        ("?severity=Sev9", "severity"),
        ("?status=lost", "status"),
        ("?open_items=maybe", "open_items"),
    ] {
        let r = app.get(&format!("/api/v1/postmortems{q}")).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{q}");
        assert_eq!(r.field(), field, "{q}");
    }

    let page = app.get("/postmortems?severity=Sev1&open_items=true").await;
    assert_eq!(page.status, StatusCode::OK);
    for needle in [
        "INC-1187",
        "70%",
        "8 open of 8",
        "8 overdue",
        "Daniel Okafor",
        "0:45",
    ] {
        assert!(page.text.contains(needle), "{needle}");
    }
    assert!(!page.text.contains(&other));
}

#[sqlx::test]
async fn the_owner_sees_their_unfinished_items_on_the_dashboard(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let owner = app.account("olu@example.com", "responder").await;
    let me = app
        .call_as(&owner, Method::GET, "/api/v1/me", &[], None)
        .await
        .json();
    let handle = me["handle"].as_str().unwrap().to_owned();
    let key = app.past_incident(60).await;
    let items = format!("/incidents/{key}/postmortem/action-items");
    for (action, due) in [
        ("Write the <b>capacity</b> runbook", "2020-01-31"),
        ("Load-test the pool", "2099-01-31"),
        ("Already done", "2020-01-01"),
    ] {
        let r = app
            .form(
                &items,
                &[
                    ("action", action),
                    ("type", "prevent"),
                    ("owner", &handle),
                    ("due_on", due),
                    ("work_item", ""),
                ],
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    }
    let done = app
        .get(&format!("/api/v1/action-items?owner={handle}"))
        .await
        .json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "Already done")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    app.call(
        Method::PATCH,
        &format!("/api/v1/action-items/{done}"),
        &[],
        Some(r#"{"status": "done"}"#),
    )
    .await;

    let dash = app
        .call_as(&owner, Method::GET, "/incidents", &[], None)
        .await
        .text;
    assert!(dash.contains("Your action items: 2 open"), "{dash}");
    assert!(dash.contains("1 overdue"));
    assert!(dash.contains("Write the &#60;b&#62;capacity&#60;/b&#62; runbook"));
    assert!(dash.contains("Load-test the pool") && !dash.contains("Already done"));
    // Someone who owns nothing sees no such panel.
    let admin_dash = app.get("/incidents").await.text;
    assert!(!admin_dash.contains("Your action items"));
}

#[sqlx::test]
async fn setting_a_status_from_the_list_returns_to_the_same_filters(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let page = app.get("/action-items?owner=ana&overdue=true").await.text;
    assert!(
        page.contains(r#"name="back" value="owner=ana&#38;overdue=true""#),
        "{page}"
    );
    let id = item_of(&app, "INC-1187", 4).await["id"].as_i64().unwrap();
    for (back, to) in [
        (
            "owner=ana&overdue=true",
            "/action-items?owner=ana&overdue=true",
        ),
        ("owner=ana&next=//evil.example", "/action-items?owner=ana"),
        ("//evil.example/x", "/action-items"),
        ("", "/action-items"),
    ] {
        let r = app
            .form(
                &format!("/action-items/{id}"),
                &[("status", "in_progress"), ("back", back)],
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.header("location"), Some(to), "{back:?}");
    }
    assert_eq!(item_of(&app, "INC-1187", 4).await["status"], "in_progress");
}
