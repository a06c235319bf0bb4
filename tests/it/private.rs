//! Private incidents: an incident kept to named teams and people is not there for anyone else —
//! not in lists, search, the dashboard, a service's page, related suggestions, streams, shared
//! channels or challenges, and its key answers 404 as a key of no incident does. And a tidy
//! check that every query reading incidents for a person asks who may see them.

use std::path::Path;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{self, Creds, TestApp, open_stream};

async fn get_as(app: &TestApp, who: &Creds, uri: &str) -> common::Res {
    app.call_as(who, Method::GET, uri, &[], None).await
}

async fn send_as(
    app: &TestApp,
    who: &Creds,
    method: Method,
    uri: &str,
    body: Value,
) -> common::Res {
    app.call_as(who, method, uri, &[], Some(&body.to_string()))
        .await
}

/// A team `slug` whose one member is `handle`.
async fn team_of(app: &TestApp, name: &str, handle: &str) {
    let r = app.post("/api/v1/teams", json!({"name": name})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let slug = r.json()["slug"].as_str().unwrap().to_owned();
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/teams/{slug}/members/{handle}"),
            &[],
            Some(&json!({"role": "member"}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// A Slack channel of `team` ("" for the installation's) told when incidents open; its id.
async fn channel(app: &TestApp, name: &str, team: &str) -> i64 {
    let r = app
        .post(
            "/api/v1/notification-channels",
            json!({"name": name, "kind": "slack", "team": team, "events": ["incident.opened"],
                   "url": format!("https://hooks.slack.com/services/T0/B0/{name}")}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()["id"].as_i64().unwrap()
}

async fn told(app: &TestApp, channel: i64, key: &str) -> i64 {
    let number: i64 = key.trim_start_matches("INC-").parse().unwrap();
    sqlx::query_scalar(
        "select count(*) from notifications n join incidents i on i.id = n.incident_id
         where n.channel_id = $1 and i.number = $2",
    )
    .bind(channel)
    .bind(number)
    .fetch_one(&app.pool)
    .await
    .unwrap()
}

#[sqlx::test]
async fn a_restricted_incident_is_not_there_for_an_outsider(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("vault-proxy").await;
    let sam = app.account("sam@example.com", "responder").await;
    let olga = app.account("olga@example.com", "responder").await;
    let mo = app.account("mo@example.com", "manager").await;
    team_of(&app, "Security", "sam").await;
    let shared = channel(&app, "everyone", "").await;
    let ours = channel(&app, "security-room", "security").await;

    // Olga's live list is open before anything happens.
    let other = app.replica();
    let mut olgas = open_stream(&other, &olga, "/incidents/events", &[]).await;
    assert_eq!(olgas.status, StatusCode::OK);

    // An open incident and a restricted one, both about a zeppelin credential on vault-proxy.
    let open = app
        .incident(
            json!({"title": "vault-proxy zeppelin credential rotation slow",
                         "severity": "Sev3", "service": "vault-proxy",
                         "summary": "zeppelin credential rotation takes minutes"}),
        )
        .await;
    let secret = app
        .incident(
            json!({"title": "Zeppelin credential used from outside the cluster",
                         "severity": "Sev2", "service": "vault-proxy",
                         "summary": "the zeppelin credential read settlement records",
                         "access": {"restricted": true, "teams": ["security"]}}),
        )
        .await;
    let secret_title = "Zeppelin credential used from outside the cluster";

    // Shared channels never hear of it; the team's own does. The open one reaches both.
    assert_eq!(told(&app, shared, &secret).await, 0);
    assert_eq!(told(&app, ours, &secret).await, 1);
    assert_eq!(told(&app, shared, &open).await, 1);

    for who in [&olga, &mo] {
        // Lists, filters and search, in the API and on the pages.
        for uri in [
            "/api/v1/incidents".to_owned(),
            "/api/v1/incidents?q=zeppelin".to_owned(),
            format!("/api/v1/incidents?q={secret}"),
            "/api/v1/search?q=zeppelin".to_owned(),
            "/incidents".to_owned(),
            "/incidents?q=zeppelin".to_owned(),
            "/search?q=zeppelin".to_owned(),
            "/".to_owned(),
            "/services/vault-proxy".to_owned(),
            format!("/api/v1/incidents/{open}/related"),
            format!("/incidents/{open}"),
        ] {
            let r = get_as(&app, who, &uri).await;
            assert_eq!(r.status, StatusCode::OK, "{uri}: {}", r.text);
            assert!(
                !r.text.contains(&secret),
                "{uri} names {secret}: {}",
                r.text
            );
            assert!(!r.text.contains(secret_title), "{uri} shows its title");
        }
        // Typing its key into the list's search box goes nowhere, as for a key of nothing.
        let r = get_as(&app, who, &format!("/incidents?q={secret}")).await;
        assert_eq!(r.status, StatusCode::OK);
        // Its key answers exactly what a key of no incident answers, everywhere under it.
        let none = "INC-999999";
        for (path, missing) in [
            (
                format!("/api/v1/incidents/{secret}"),
                format!("/api/v1/incidents/{none}"),
            ),
            (
                format!("/api/v1/incidents/{secret}/timeline"),
                format!("/api/v1/incidents/{none}/timeline"),
            ),
            (
                format!("/api/v1/incidents/{secret}/access"),
                format!("/api/v1/incidents/{none}/access"),
            ),
            (format!("/incidents/{secret}"), format!("/incidents/{none}")),
            (
                format!("/incidents/{secret}/postmortem"),
                format!("/incidents/{none}/postmortem"),
            ),
            // Written as the handler reads it once decoded (INC%2D… is INC-…).
            (
                format!("/api/v1/incidents/{}", secret.replace('-', "%2D")),
                format!("/api/v1/incidents/{}", none.replace('-', "%2D")),
            ),
            (
                format!("/incidents/{}/postmortem.md", secret.replace('I', "%49")),
                format!("/incidents/{}/postmortem.md", none.replace('I', "%49")),
            ),
        ] {
            let (r, n) = (
                get_as(&app, who, &path).await,
                get_as(&app, who, &missing).await,
            );
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text);
            assert_eq!(n.status, StatusCode::NOT_FOUND, "{missing}");
            assert_eq!(
                r.text.replace(&secret, none),
                n.text,
                "{path} tells itself apart"
            );
        }
        let r = open_stream(
            &app.router,
            who,
            &format!("/incidents/{secret}/events"),
            &[],
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        // Writes by its key are not found either, and change nothing.
        let r = send_as(
            &app,
            who,
            Method::POST,
            &format!("/api/v1/incidents/{secret}/timeline"),
            json!({"body": "hello?"}),
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        // Linking to it by its key names no incident.
        let r = send_as(
            &app,
            who,
            Method::POST,
            &format!("/api/v1/incidents/{open}/related"),
            json!({"incident": secret}),
        )
        .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("there is no incident"), "{}", r.text);
    }

    // A member of its team sees it and works it; the note reaches the member's stream and not
    // Olga's, which hears the open incident's note written after it.
    let mut sams = open_stream(&other, &sam, "/incidents/events", &[]).await;
    let r = get_as(&app, &sam, "/api/v1/incidents?q=zeppelin").await;
    assert!(r.text.contains(&secret), "{}", r.text);
    let r = get_as(&app, &sam, "/api/v1/search?q=zeppelin").await;
    assert!(r.text.contains(&secret), "{}", r.text);
    let r = send_as(
        &app,
        &sam,
        Method::POST,
        &format!("/api/v1/incidents/{secret}/timeline"),
        json!({"body": "rotated the zeppelin credential"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(
            &format!("/api/v1/incidents/{open}/timeline"),
            json!({"body": "still slow"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let e = sams
        .wait_for("the member's note", Duration::from_secs(10), |e| {
            e.json()["body"] == "rotated the zeppelin credential"
        })
        .await;
    assert_eq!(e.json()["incident"], secret.as_str());
    let e = olgas
        .wait_for("the open incident's note", Duration::from_secs(10), |e| {
            e.event == "timeline" && e.json()["body"] == "still slow" || e.data.contains(&secret)
        })
        .await;
    assert_eq!(
        e.json()["incident"],
        open.as_str(),
        "the outsider's stream sent {}",
        e.data
    );

    // Whoever opens its page is in the audit log.
    let r = get_as(&app, &sam, &format!("/incidents/{secret}")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains("Restricted"), "the page says so");
    let audit = app
        .get("/api/v1/audit?action=incident.viewed&limit=50")
        .await
        .json();
    assert!(
        audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["target"] == secret.as_str() && e["actor"].as_str().unwrap().contains("sam")),
        "{audit}"
    );

    // Challenges are never built from it (as if it did not exist).
    let r = app
        .post("/api/v1/challenges/generate", json!({"incident": secret}))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

    // Opening it to everyone is on its timeline, and then Olga finds it.
    let r = send_as(
        &app,
        &sam,
        Method::PUT,
        &format!("/api/v1/incidents/{secret}/access"),
        json!({"restricted": false}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["restricted"], false);
    let kinds: Vec<Value> = app
        .timeline(&secret)
        .await
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| *k == "access").count(),
        2,
        "{kinds:?}"
    );
    let r = get_as(&app, &olga, &format!("/api/v1/incidents/{secret}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[sqlx::test]
async fn access_is_checked_and_the_one_restricting_keeps_sight(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let sam = app.account("sam@example.com", "responder").await;
    let olga = app.account("olga@example.com", "responder").await;
    let vic = app.account("vic@example.com", "viewer").await;
    team_of(&app, "Security", "sam").await;
    let key = app
        .incident(json!({"title": "Badge reader logs", "severity": "Sev3"}))
        .await;
    let uri = format!("/api/v1/incidents/{key}/access");
    let before = app.incident_json(&key).await;

    for (body, field) in [
        (json!({"restricted": true, "teams": ["nope"]}), "teams"),
        (
            json!({"restricted": true, "people": ["nobody-here"]}),
            "people",
        ),
        (json!({"restricted": true}), "teams"),
        (json!({"restricted": false, "teams": ["security"]}), "teams"),
    ] {
        let r = send_as(&app, &sam, Method::PUT, &uri, body.clone()).await;
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
        &sam,
        Method::PUT,
        &uri,
        json!({"restricted": true, "colour": "red"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let r = send_as(
        &app,
        &vic,
        Method::PUT,
        &uri,
        json!({"restricted": true, "people": ["vic"]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "a viewer changes nothing");
    assert_eq!(
        app.incident_json(&key).await["version"],
        before["version"],
        "nothing changed"
    );

    // Olga keeps it to Security; she is not in it, so she is named too and still sees it.
    let r = send_as(
        &app,
        &olga,
        Method::PUT,
        &uri,
        json!({"restricted": true, "teams": ["Security"]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let access = &r.json()["access"];
    assert_eq!(access["teams"][0]["name"], "security", "{access}");
    assert_eq!(access["people"][0]["name"], "olga", "{access}");
    assert_eq!(get_as(&app, &olga, &uri).await.status, StatusCode::OK);
    // A stale copy is refused.
    let r = app
        .call(
            Method::PUT,
            &uri,
            &[("if-match", &format!("\"v{}\"", before["version"]))],
            Some(&json!({"restricted": true, "teams": ["security"]}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    // The same access again changes nothing (no second timeline entry).
    let again = send_as(
        &app,
        &sam,
        Method::PUT,
        &uri,
        json!({"restricted": true, "teams": ["security"], "people": ["olga"]}),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    let entries = app.timeline(&key).await;
    assert_eq!(entries.iter().filter(|e| e["kind"] == "access").count(), 1);
    let line = entries.iter().find(|e| e["kind"] == "access").unwrap();
    assert!(
        line["headline"]
            .as_str()
            .unwrap()
            .starts_with("Restricted to Security, @olga"),
        "{line}"
    );

    // On the page: the form keeps it to named people, and a bad name comes back beside it.
    let page = get_as(&app, &sam, &format!("/incidents/{key}")).await;
    let version = app.incident_json(&key).await["version"].to_string();
    let r = app
        .form_as(
            &sam,
            &format!("/incidents/{key}/access"),
            &[
                ("restricted", "true"),
                ("teams", "security"),
                ("people", "ghost"),
                ("version", &version),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("there is nobody called"), "{}", r.text);
    assert!(page.text.contains("Who may see it"));
    let r = app
        .form_as(
            &sam,
            &format!("/incidents/{key}/access"),
            &[("teams", ""), ("people", ""), ("version", &version)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["restricted"], false);
}

/// The string literals of Rust source, each with the line it starts on (comments skipped).
fn literals(text: &str) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' => {
                // A char literal ('"', '\\'), or a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1] as char).is_alphanumeric() && b[i - 1] != b'_') =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) == Some(&b'"') {
                    let end = format!("\"{}", "#".repeat(hashes));
                    let start = j + 1;
                    let len = text[start..].find(&end).unwrap_or(text.len() - start);
                    let s = &text[start..start + len];
                    out.push((line, s.to_owned()));
                    line += s.matches('\n').count();
                    i = start + len + end.len();
                    continue;
                }
            }
            b'"' => {
                let mut j = i + 1;
                let mut s = String::new();
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    s.push(b[j] as char);
                    j += 1;
                }
                out.push((line, s.clone()));
                line += s.matches('\n').count();
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether SQL reads the incidents table (`from incidents`, `join incidents`).
fn reads_incidents(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    words.windows(2).any(|w| {
        (w[0] == "from" || w[0] == "join")
            && (w[1] == "incidents"
                || w[1]
                    .strip_prefix("incidents")
                    .is_some_and(|rest| rest.starts_with([')', ',', ';'])))
    })
}

/// Every query in `src/` that reads the incidents table either asks `incident_visible(` who
/// may see them, or says in a comment of its own why it reads every incident (`-- every
/// incident: …`: an engine, an aggregate, an incident whose address passed the gate). A new
/// list that forgot would show a restricted incident to everyone; this names its file and line.
#[test]
fn every_read_of_incidents_asks_who_may_see_them_or_says_why_not() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::architecture::files(&src, &mut files);
    files.sort();
    let mut unasked = Vec::new();
    let mut asked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, sql) in literals(&text) {
            if !reads_incidents(&sql) {
                continue;
            }
            if sql.contains("incident_visible(") || sql.contains("-- every incident:") {
                asked += 1;
            } else {
                unasked.push(format!(
                    "{}:{line}",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        asked > 20,
        "the scan found only {asked} reads: it no longer reads the sources"
    );
    assert!(
        unasked.is_empty(),
        "reads of incidents that neither ask incident_visible nor say why: {unasked:#?}"
    );
}

#[test]
fn the_scan_finds_sql_in_every_kind_of_literal() {
    let text = "let a = '\"'; // from incidents\nsqlx::query!(r#\"select 1\n from incidents i\"#);\nq(\"select id from incidents where x\");\nlet l: &'a str = \"join incidents)\";";
    let found: Vec<(usize, bool)> = literals(text)
        .iter()
        .map(|(line, s)| (*line, reads_incidents(s)))
        .collect();
    assert_eq!(found, vec![(2, true), (4, true), (5, true)]);
    assert!(!reads_incidents("select * from incidents_archive"));
    assert!(reads_incidents("select count(*) from incidents)"));
}
