//! Evidence attached to incidents: pasted items keep their source; Slack, Linear and Jira exports
//! are held, then picked from; a bad file is refused naming what is wrong and nothing is kept;
//! git is read as it was at the commit before the incident started.

use std::io::Write;
use std::process::Command;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::TestApp;

fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, body) in files {
        w.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(body.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Slack's `ts` for a time.
fn ts(at: &str) -> String {
    format!("{}.000100", crate::common::at(at).timestamp())
}

/// A workspace export: #payments-oncall around the OrbitPay incident, and #random.
fn slack_export() -> Vec<u8> {
    let day = format!(
        r#"[{{"type":"message","user":"U1","text":"checkout p99 is climbing, anyone deploying?","ts":"{}"}},
            {{"type":"message","subtype":"channel_join","user":"U2","text":"<@U2> has joined the channel","ts":"{}"}},
            {{"type":"message","user":"U2","text":"<@U1> processor status page says green &amp; no deploys","ts":"{}"}},
            {{"type":"message","user":"U1","text":"retry queue at 12k and rising","ts":"{}"}},
            {{"type":"message","user":"U2","text":"fixed it with full jitter","ts":"{}"}}]"#,
        ts("2026-10-21T22:12:00Z"),
        ts("2026-10-21T22:12:30Z"),
        ts("2026-10-21T22:13:00Z"),
        ts("2026-10-21T22:16:00Z"),
        ts("2026-10-21T23:20:00Z"),
    );
    let random = format!(
        r#"[{{"type":"message","user":"U1","text":"lunch?","ts":"{}"}}]"#,
        ts("2026-10-21T12:00:00Z")
    );
    zip_of(&[
        (
            "channels.json",
            r#"[{"id":"C1","name":"payments-oncall"},{"id":"C2","name":"random"}]"#,
        ),
        (
            "users.json",
            r#"[{"id":"U1","name":"maria","profile":{"display_name":"maria"}},{"id":"U2","name":"sam","real_name":"Sam Ortiz"}]"#,
        ),
        ("payments-oncall/2026-10-21.json", &day),
        ("random/2026-10-21.json", &random),
    ])
}

/// The OrbitPay incident: started 22:10, detected 22:14 UTC on 2026-10-21.
async fn orbitpay(app: &TestApp) -> String {
    app.incident(json!({
        "title": "Checkout payments failing",
        "severity": "Sev1",
        "started_at": "2026-10-21T22:10:00Z",
        "detected_at": "2026-10-21T22:14:00Z"
    }))
    .await
}

async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(&format!("select count(*) from {table}"))
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test]
async fn pasted_items_keep_their_source_and_bad_ones_name_the_field(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let uri = format!("/api/v1/incidents/{key}/evidence");
    let code = json!({"kind": "code", "title": "retry.ts", "text": "const delay = base * 2 ** attempt;",
        "source": {"repository": "orbitpay/payments-worker", "path": "src/retry.ts", "commit": "4e1c2a9", "language": "typescript"}});
    let r = app.post(&uri, code.clone()).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let item = r.json();
    assert_eq!(item["origin"], "pasted");
    assert_eq!(item["source"]["path"], "src/retry.ts");
    assert_eq!(item["incident"], key.as_str());
    assert_eq!(item["added_by"], "admin");

    // Each kind names what it needs; nothing is stored on a refusal.
    for (body, field) in [
        (
            json!({"kind": "code", "title": "x", "text": "y", "source": {"repository": "r"}}),
            "source.path",
        ),
        (
            json!({"kind": "chat", "title": "x", "text": "y", "source": {"channel": "#ops"}}),
            "source.author",
        ),
        (
            json!({"kind": "ticket", "title": "x", "text": "y"}),
            "source.key",
        ),
        (
            json!({"kind": "metric", "title": " ", "text": "y"}),
            "title",
        ),
        (
            json!({"kind": "timeline", "title": "x", "text": "y"}),
            "kind",
        ),
        (
            json!({"kind": "metric", "title": "x", "text": "y", "source": {"colour": "red"}}),
            "source.colour",
        ),
    ] {
        let r = app.post(&uri, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
    }
    assert_eq!(count(&pool, "incident_evidence").await, 1);

    let list = app.get(&uri).await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let id = item["id"].as_i64().unwrap();
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(&viewer, Method::POST, &uri, &[], Some(&code.to_string()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .call(Method::DELETE, &format!("{uri}/{id}"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = app
        .call(Method::DELETE, &format!("{uri}/{id}"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(count(&pool, "incident_evidence").await, 0);
}

#[sqlx::test]
async fn a_slack_export_is_held_then_a_channel_range_is_picked_into_one_excerpt(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let base = format!("/api/v1/incidents/{key}/evidence/imports");
    let r = app
        .upload(
            &format!("{base}?format=slack&name=orbitpay.zip"),
            slack_export(),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let held = r.json();
    assert_eq!(held["format"], "slack");
    assert_eq!(held["file_name"], "orbitpay.zip");
    // The join message is housekeeping, not conversation.
    assert_eq!(held["rows"], 5);
    let channels: Vec<(&str, i64)> = held["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["messages"].as_i64().unwrap()))
        .collect();
    assert_eq!(channels, [("payments-oncall", 4), ("random", 1)]);
    let id = held["id"].as_i64().unwrap();

    // One channel, from 22:00 to 22:30: the three lines during the incident, not the 23:20 one.
    let r = app
        .get(&format!(
            "{base}/{id}?channel=%23payments-oncall&from=2026-10-21T22:00:00Z&to=2026-10-21T22:30:00Z"
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let rows = r.json()["rows"].as_array().unwrap().clone();
    let texts: Vec<&str> = rows.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        [
            "checkout p99 is climbing, anyone deploying?",
            "@maria processor status page says green & no deploys",
            "retry queue at 12k and rising"
        ]
    );
    assert_eq!(rows[1]["author"], "Sam Ortiz");
    let ns: Vec<i64> = rows.iter().map(|m| m["n"].as_i64().unwrap()).collect();

    let r = app
        .post(&format!("{base}/{id}/pick"), json!({"rows": ns}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let items = r.json()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1, "one excerpt");
    let e = &items[0];
    assert_eq!(e["kind"], "chat");
    assert_eq!(e["origin"], "slack");
    assert_eq!(e["source"]["channel"], "#payments-oncall");
    assert_eq!(e["source"]["author"], "maria, Sam Ortiz");
    assert_eq!(e["source"]["at"], "2026-10-21T22:16:00.000100Z");
    assert_eq!(e["title"], "#payments-oncall, 2026-10-21 22:12–22:16 UTC");
    assert_eq!(
        e["text"],
        "[22:12:00] maria: checkout p99 is climbing, anyone deploying?\n\
         [22:13:00] Sam Ortiz: @maria processor status page says green & no deploys\n\
         [22:16:00] maria: retry queue at 12k and rising"
    );

    // Messages of two channels are not one excerpt; a number the upload lacks is named.
    let all = app.get(&format!("{base}/{id}")).await.json();
    let every: Vec<i64> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["n"].as_i64().unwrap())
        .collect();
    let r = app
        .post(&format!("{base}/{id}/pick"), json!({"rows": every}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("one channel"), "{}", r.text);
    let r = app
        .post(&format!("{base}/{id}/pick"), json!({"rows": [4242]}))
        .await;
    assert_eq!(r.field(), "rows");
    assert!(r.text.contains("no row 4242"), "{}", r.text);
    assert_eq!(count(&pool, "incident_evidence").await, 1);
}

#[sqlx::test]
async fn channel_day_files_linear_and_jira_exports_import(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let base = format!("/api/v1/incidents/{key}/evidence/imports");
    let pick_all = async |id: i64| -> Vec<Value> {
        let rows = app.get(&format!("{base}/{id}")).await.json()["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["n"].clone())
            .collect::<Vec<_>>();
        let r = app
            .post(&format!("{base}/{id}/pick"), json!({"rows": rows}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r.json()["items"].as_array().unwrap().clone()
    };

    // One channel's day file, named by the caller.
    let day = format!(
        r#"[{{"type":"message","username":"pagerbot","text":"[FIRING] CheckoutErrorRate","ts":"{}"}}]"#,
        ts("2026-10-21T22:14:00Z")
    );
    let r = app
        .upload(
            &format!("{base}?format=slack_channel&channel=alerts&name=2026-10-21.json"),
            day.into_bytes(),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let items = pick_all(r.json()["id"].as_i64().unwrap()).await;
    assert_eq!(items[0]["source"]["channel"], "#alerts");
    assert_eq!(items[0]["source"]["author"], "pagerbot");

    // Linear CSV: a ticket per pick, dated when it was created.
    let linear = "ID,Team,Title,Description,Status,Created\n\
                  PAY-184,Payments,Retry storm after processor timeout,\"Workers saturated for 40 minutes;\nretries came back together\",Done,2026-09-14T10:00:00.000Z\n";
    let r = app
        .upload(&format!("{base}?format=linear"), linear.as_bytes().to_vec())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let items = pick_all(r.json()["id"].as_i64().unwrap()).await;
    assert_eq!(items[0]["kind"], "ticket");
    assert_eq!(items[0]["origin"], "linear");
    assert_eq!(items[0]["source"]["key"], "PAY-184");
    assert_eq!(items[0]["source"]["at"], "2026-09-14T10:00:00Z");
    assert_eq!(
        items[0]["title"],
        "PAY-184 · Retry storm after processor timeout"
    );
    assert!(
        items[0]["text"]
            .as_str()
            .unwrap()
            .contains("retries came back together")
    );

    // Jira JSON with a document-format description, and Jira CSV.
    let jira = r#"{"issues":[{"key":"PAY-247","fields":{"summary":"Dedupe scheduled retries","created":"2026-10-22T09:30:00.000+0000",
        "description":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Key on (intentId, attemptCount)"}]}]}}}]}"#;
    let r = app
        .upload(&format!("{base}?format=jira"), jira.as_bytes().to_vec())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let items = pick_all(r.json()["id"].as_i64().unwrap()).await;
    assert_eq!(items[0]["origin"], "jira");
    assert!(
        items[0]["text"]
            .as_str()
            .unwrap()
            .contains("(intentId, attemptCount)")
    );
    let jira_csv = "Summary,Issue key,Issue id,Created,Description\nCheckout 5xx,PAY-12,10001,14/Sep/26 10:00 AM,Timeouts\n";
    let r = app
        .upload(&format!("{base}?format=jira"), jira_csv.as_bytes().to_vec())
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(count(&pool, "incident_evidence").await, 3);
}

#[sqlx::test]
async fn a_bad_upload_is_refused_naming_what_is_wrong_and_nothing_is_kept(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let base = format!("/api/v1/incidents/{key}/evidence/imports");
    let bad_day = zip_of(&[(
        "payments-oncall/2026-10-21.json",
        r#"[{"type":"message","text":"ok","ts":"1792620840.000100"},{"type":"message","text":"bad","ts":"at ten"}]"#,
    )]);
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        ("", b"x".to_vec(), "format", "one of slack"),
        ("?format=excel", b"x".to_vec(), "format", "one of slack"),
        (
            "?format=slack",
            b"PK\x03\x04 not really".to_vec(),
            "file",
            "not a zip archive",
        ),
        (
            "?format=slack",
            bad_day,
            "file",
            "payments-oncall/2026-10-21.json, message 2: `ts` \"at ten\" is not a Slack timestamp",
        ),
        (
            "?format=slack",
            zip_of(&[("channels.json", "[]")]),
            "file",
            "holds no channel messages",
        ),
        (
            "?format=slack_channel",
            b"[]".to_vec(),
            "channel",
            "name the channel",
        ),
        (
            "?format=slack_channel&channel=ops",
            b"{\"not\": \"a list\"}".to_vec(),
            "file",
            "expected a list of messages",
        ),
        (
            "?format=linear",
            b"ID,Name\nPAY-1,x\n".to_vec(),
            "file",
            "the CSV has no \"Title\" column",
        ),
        (
            "?format=jira",
            b"Summary,Issue key,Created\nx,PAY-1,soon\n".to_vec(),
            "file",
            "row 2: PAY-1: Created \"soon\" is not a time",
        ),
        (
            "?format=jira",
            br#"{"issues":[{"key":"PAY-1"}]}"#.to_vec(),
            "file",
            "issues[0]: `fields` is missing",
        ),
        (
            "?format=linear",
            b"   ".to_vec(),
            "file",
            "the file is empty",
        ),
    ];
    for (query, body, field, says) in cases {
        let r = app.upload(&format!("{base}{query}"), body).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{query}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{query}: {}", r.text);
        let message = r.json()["error"]["details"]["fields"][0]["message"].clone();
        assert!(
            message.as_str().unwrap().contains(says),
            "{query}: {}",
            r.text
        );
    }
    // Over the upload limit: 413, read no further.
    let r = app
        .upload(
            &format!("{base}?format=slack"),
            vec![b'x'; quell::evidence::domain::UPLOAD_LIMIT + 1],
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text);
    assert_eq!(count(&pool, "evidence_imports").await, 0);
    assert_eq!(count(&pool, "evidence_import_rows").await, 0);
    assert_eq!(count(&pool, "incident_evidence").await, 0);
    // An upload for an incident that does not exist is not read at all.
    let r = app
        .upload(
            "/api/v1/incidents/INC-999999/evidence/imports?format=slack",
            slack_export(),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// A repository under the app's git root with two commits of `src/retry.ts`: the
/// deterministic backoff two hours before the incident, and the fix an hour after it started.
fn repository(app: &TestApp) -> (std::path::PathBuf, String) {
    repository_at(&app.git_root())
}

/// [`repository`], made under `root`.
pub fn repository_at(root: &std::path::Path) -> (std::path::PathBuf, String) {
    let dir = root.join(format!("payments-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let git = |args: &[&str], when: &str| {
        let out = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args(args)
            .current_dir(&dir)
            .env("GIT_AUTHOR_DATE", when)
            .env("GIT_COMMITTER_DATE", when)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q", "-b", "main"], "2026-10-21T20:00:00Z");
    std::fs::write(
        dir.join("src/retry.ts"),
        "// retry with backoff\nexport function delay(attempt: number) {\n  return 1000 * 2 ** attempt;\n}\n",
    )
    .unwrap();
    git(&["add", "."], "2026-10-21T20:10:00Z");
    git(
        &["commit", "-q", "-m", "Retry with backoff"],
        "2026-10-21T20:10:00Z",
    );
    let before = git(&["rev-parse", "HEAD"], "2026-10-21T20:10:00Z");
    std::fs::write(
        dir.join("src/retry.ts"),
        "// Full jitter, added after PAY-184\nexport function delay(attempt: number) {\n  return Math.random() * 1000 * 2 ** attempt;\n}\n",
    )
    .unwrap();
    git(
        &["commit", "-q", "-am", "Full jitter"],
        "2026-10-21T23:10:00Z",
    );
    (dir, before)
}

#[sqlx::test]
async fn git_is_read_as_it_was_at_the_commit_before_the_incident(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let (dir, before) = repository(&app);
    let repo = dir.display().to_string();
    let uri = format!("/api/v1/incidents/{key}/evidence/git");
    let r = app
        .post(
            &uri,
            json!({"repository": repo, "path": "src/retry.ts", "lines": "2-4"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let e = r.json();
    assert_eq!(e["kind"], "code");
    assert_eq!(e["origin"], "git");
    assert_eq!(e["source"]["commit"], before.as_str());
    assert_eq!(e["source"]["language"], "typescript");
    assert_eq!(e["source"]["path"], "src/retry.ts");
    assert_eq!(e["source"]["at"], "2026-10-21T20:10:00Z");
    assert_eq!(
        e["text"],
        "export function delay(attempt: number) {\n  return 1000 * 2 ** attempt;\n}"
    );
    assert!(!e["text"].as_str().unwrap().contains("jitter"));

    // A named branch reads the same history; refusals name the field.
    let r = app
        .post(
            &uri,
            json!({"repository": repo, "path": "src/retry.ts", "reference": "main"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    for (body, field, says) in [
        (
            json!({"repository": "/etc", "path": "passwd"}),
            "repository",
            "is not a git repository Quell may read",
        ),
        (
            json!({"repository": format!("{repo}/../../.."), "path": "x"}),
            "repository",
            "is not a git repository Quell may read",
        ),
        (
            json!({"repository": repo, "path": "../secrets"}),
            "path",
            "no ..",
        ),
        (
            json!({"repository": repo, "path": "src/missing.ts"}),
            "path",
            "there is no src/missing.ts",
        ),
        (
            json!({"repository": repo, "path": "src"}),
            "path",
            "a folder",
        ),
        (
            json!({"repository": repo, "path": "src/retry.ts", "lines": "9-12"}),
            "lines",
            "has 4 lines",
        ),
        (
            json!({"repository": repo, "path": "src/retry.ts", "reference": "nope"}),
            "reference",
            "no branch or tag",
        ),
        (
            json!({"repository": app.git_root().join("none").display().to_string(), "path": "x"}),
            "repository",
            "is not a git repository Quell may read",
        ),
    ] {
        let r = app.post(&uri, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
        assert!(r.text.contains(says), "{body}: {}", r.text);
    }
    // An incident older than the repository has no commit before it.
    let old = app
        .incident(json!({"title": "Old", "severity": "Sev3", "started_at": "2020-01-01T00:00:00Z", "detected_at": "2020-01-01T00:00:00Z"}))
        .await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{old}/evidence/git"),
            json!({"repository": repo, "path": "src/retry.ts"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("no commit in its history is older"),
        "{}",
        r.text
    );
    assert_eq!(count(&pool, "incident_evidence").await, 2);
    std::fs::remove_dir_all(dir).ok();
}

#[sqlx::test]
async fn the_evidence_pages_upload_pick_and_escape(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = orbitpay(&app).await;
    let responder = app.account("responder@example.com", "responder").await;
    let page = format!("/incidents/{key}/evidence");

    // Pasting through the form; what people write is escaped.
    let r = app
        .form_as(
            &responder,
            &page,
            &[
                ("kind", "chat"),
                ("title", "<script>alert(1)</script>"),
                ("text", "we saw <b>errors</b>"),
                ("channel", "#ops"),
                ("author", "maria"),
                ("at", "2026-10-21 22:12"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app.call_as(&responder, Method::GET, &page, &[], None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.text.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("<script>alert(1)"));
    assert!(r.text.contains("2026-10-21 22:12 UTC"));
    // A form missing what the kind needs comes back with the field named.
    let r = app
        .form_as(
            &responder,
            &page,
            &[("kind", "ticket"), ("title", "t"), ("text", "x")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("<strong>Key</strong>"), "{}", r.text);

    // Upload through the page, pick on the next one.
    let upload = format!("/incidents/{key}/evidence/imports");
    let export = slack_export();
    let r = app
        .multipart_as(
            &responder,
            &upload,
            &[("format", "slack"), ("channel", "")],
            &[("file", "orbitpay.zip", &export)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let pick_page = r.header("location").unwrap().to_owned();
    let r = app
        .call_as(
            &responder,
            Method::GET,
            &format!(
                "{pick_page}?channel=payments-oncall&from=2026-10-21+22%3A00&to=2026-10-21+22%3A30"
            ),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("retry queue at 12k and rising"));
    assert!(
        !r.text.contains("fixed it with full jitter"),
        "outside the range"
    );
    assert!(
        r.text.contains("#random (1,"),
        "the channel picker lists every channel"
    );
    let r = app
        .form_as(
            &responder,
            &format!("{pick_page}/pick"),
            &[("row.0", "on"), ("row.3", "on"), ("title", "On-call chat")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let items = app
        .get(&format!("/api/v1/incidents/{key}/evidence"))
        .await
        .json();
    let titles: Vec<&str> = items["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["<script>alert(1)</script>", "On-call chat"]);
    // Nothing picked: the pick page again, saying so.
    let r = app
        .form_as(&responder, &format!("{pick_page}/pick"), &[("title", "")])
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("pick 1 to 2000"), "{}", r.text);

    // A bad file through the page: the list again with the problem named, nothing kept.
    let r = app
        .multipart_as(
            &responder,
            &upload,
            &[("format", "jira")],
            &[("file", "jira.csv", b"Summary\nx\n")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text.contains("the CSV has no &#34;Issue key&#34; column"),
        "{}",
        r.text
    );
    assert_eq!(count(&pool, "evidence_imports").await, 1);
    // Without the session's CSRF token the upload is refused.
    let mut stranger = responder.clone();
    stranger.csrf = Some("forged".into());
    let r = app
        .multipart_as(
            &stranger,
            &upload,
            &[("format", "slack")],
            &[("file", "x.zip", &export)],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(count(&pool, "evidence_imports").await, 1);
}

/// A challenge generated from an incident starts from what was attached to it; an item written
/// after detection is flagged by the leak guard, one written before is not.
#[sqlx::test]
async fn generation_starts_from_the_attached_evidence_and_flags_late_items(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    quell::demo::load(&app.pool).await.unwrap();
    // The demo's OrbitPay incident (PAY-184) carries the code, chat and metric responders attached.
    let demo = app.get("/api/v1/incidents/INC-184/evidence").await.json();
    let kinds: Vec<&str> = demo["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["code", "code", "chat", "metric"]);

    // INC-1187 was detected at 16:07 UTC on 2026-09-17.
    let uri = "/api/v1/incidents/INC-1187/evidence";
    for (title, at) in [
        ("Before detection", "2026-09-17T16:03:00Z"),
        ("After detection", "2026-09-17T16:40:00Z"),
    ] {
        let r = app
            .post(
                uri,
                json!({"kind": "chat", "title": title, "text": "payments look slow",
                       "source": {"channel": "#payments", "author": "ana", "at": at}}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let (id, src) = app.generated_challenge("INC-1187").await;
    let titles: Vec<&str> = src["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles[..2], ["Before detection", "After detection"]);
    let leaks = app
        .get(&format!("/api/v1/challenges/{id}/leaks"))
        .await
        .json();
    let flagged: Vec<(i64, &str)> = leaks["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["evidence"].as_i64().unwrap(),
                l["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        flagged
            .iter()
            .any(|(n, why)| *n == 1 && why.contains("after the incident was detected")),
        "{flagged:?}"
    );
    assert!(!flagged.iter().any(|(n, _)| *n == 0), "{flagged:?}");
}
