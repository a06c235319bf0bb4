//! Postmortems: the INC-1187 document with every figure computed, its Markdown export, edits
//! checked against the version, and hostile text rendered harmless.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{TestApp, ago};
use serde_json::json;
use sqlx::PgPool;

/// The reference document's figures, as PRODUCT.md's table gives them.
const INC_1187_FIGURES: &[&str] = &[
    "Sev1",
    "payments-gateway (Tier1), impact on checkout",
    "2026-09-17",
    "detection → mitigation 0:45; → resolution 3:33",
    "ack Met (9 min of 15), resolve Met (3 h 33 min of 4 h)",
    "Ana Ribeiro",
    "Daniel Okafor",
    "Published",
    "Authorization requests failed: 109 400 of 352 800 (31%) between 16:02 and 16:52.",
    "payments-gateway availability SLO (99.9% monthly): about 70% of the monthly error budget consumed (budget ≈ 155 000 failed requests at 60 req/s average).",
    "Time to detect: 5 min from first error, 2 h 2 min from the change. Time to acknowledge: 9 min. Time to mitigate: 45 min from alert.",
];

/// The reference document's Timeline (UTC), line for line.
const REFERENCE_TIMELINE: &[(&str, &str)] = &[
    (
        "14:05",
        "PR \"chore: consolidate HTTP client settings\" deployed; sets MaxConnectionsPerServer = 10 on the processor client (previously unbounded). Canary at 10% for 15 min passes at ~25 req/s total",
    ),
    ("14:20", "Revision promoted to 100%"),
    (
        "15:40",
        "Traffic ramps toward peak; p95 authorization latency climbs from 0.9 s to 3.5 s. No alert (threshold 5 s)",
    ),
    ("16:02", "First timeouts (TaskCanceledException after 10 s)"),
    (
        "16:07",
        "Alert \"payments-gateway 5xx > 5% for 5 min\" fires; INC-1187 opened automatically as Sev2",
    ),
    ("16:16", "Primary on call acknowledges (9 min)"),
    (
        "16:20",
        "Raised to Sev1 (checkout failing for > 25% of requests); IC Ana Ribeiro, comms lead and scribe assigned; bridge opened",
    ),
    ("16:24", "First stakeholder update sent"),
    (
        "16:31",
        "Dependency telemetry shows processor latency up but processor 5xx flat; requests spend most time before the first byte is sent",
    ),
    (
        "16:38",
        "Scribe links the 14:05 deployment from the production environment history; IC decides to roll back",
    ),
    ("16:48", "Traffic shifted to previous revision"),
    ("16:52", "Error rate under 0.5%; incident marked Mitigated"),
    (
        "17:22",
        "30 min stable; second stakeholder update with mitigation",
    ),
    (
        "18:30",
        "Load test in staging reproduces queueing at 10 connections and 120 req/s with 1.2 s upstream latency",
    ),
    ("19:40", "Root cause recorded; incident Resolved"),
];

#[sqlx::test]
async fn the_inc_1187_postmortem_shows_the_reference_figures_computed(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let page = app.get("/incidents/INC-1187/postmortem").await;
    assert_eq!(page.status, StatusCode::OK);
    let md = app.get("/incidents/INC-1187/postmortem.md").await;
    assert_eq!(md.status, StatusCode::OK);
    assert!(
        md.header("content-type")
            .unwrap()
            .starts_with("text/markdown")
    );
    for figure in INC_1187_FIGURES {
        let html_figure = figure.replace('>', "&gt;").replace('"', "&#34;");
        assert!(page.text.contains(&html_figure), "page lacks {figure:?}");
        assert!(md.text.contains(figure), "export lacks {figure:?}");
    }
    for n in 2311..=2318 {
        assert!(page.text.contains(&format!("AB#{n}")), "AB#{n}");
        assert!(md.text.contains(&format!("AB#{n}")), "AB#{n}");
    }
    let order = [
        "## Summary",
        "## Impact",
        "## Timeline (UTC)",
        "## Root cause",
        "## Contributing factors",
        "## Detection",
        "## Response",
        "### What went well",
        "### What was hard",
        "### Where we got lucky",
        "## Action items",
        "## Lessons",
    ];
    let mut last = 0;
    for heading in order {
        let at = md.text[last..]
            .find(heading)
            .unwrap_or_else(|| panic!("{heading} missing or out of order"))
            + last;
        last = at;
    }
    // The Timeline reads as the reference's, line for line, its figures computed.
    let rows: Vec<&str> = md.text[md.text.find("| Time | Event |").unwrap()..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = REFERENCE_TIMELINE
        .iter()
        .map(|(t, e)| format!("| {t} | {} |", e.replace('|', "\\|")))
        .collect();
    assert_eq!(rows, expected);
    for (t, e) in REFERENCE_TIMELINE {
        let html_line = format!(
            "<td>{t}</td><td>{}</td>",
            e.replace('>', "&#62;").replace('"', "&#34;")
        );
        assert!(page.text.contains(&html_line), "page lacks {html_line}");
    }
    // Prose cites the figures by name; the document shows them computed.
    for sentence in [
        "A configuration change deployed at 14:05 capped outbound HTTP connections",
        "31% of authorization requests failed for 50 minutes. Rolling back to the previous Container Apps revision restored service at 16:52.",
        "fired 5 minutes after the first error",
        "Acknowledged in 9 minutes;",
    ] {
        assert!(md.text.contains(sentence), "export lacks {sentence:?}");
        assert!(page.text.contains(sentence), "page lacks {sentence:?}");
    }
    let api = app
        .get("/api/v1/incidents/INC-1187/postmortem")
        .await
        .json();
    assert!(
        api["sections"]["summary"]
            .as_str()
            .unwrap()
            .contains("{failed_share} of authorization requests failed for {impact_duration}"),
        "the summary stores the citation, not the number"
    );
    // Impact: what failed, the written bullets, the budget — one list, as the reference.
    let impact = &md.text[md.text.find("## Impact").unwrap()..md.text.find("## Timeline").unwrap()];
    let bullets: Vec<&str> = impact.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(bullets.len(), 4, "{impact}");
    assert!(bullets[0].starts_with("- Authorization requests failed: 109 400"));
    assert!(bullets[1].starts_with("- Orders that failed checkout"));
    assert!(bullets[3].starts_with("- payments-gateway availability SLO"));
    assert!(!impact.contains("\n\n- Orders"), "one list: {impact}");
    // Loading the demo again writes nothing twice.
    quell::demo::load(&app.pool).await.unwrap();
    let again = app.get("/incidents/INC-1187/postmortem.md").await;
    assert_eq!(again.text.matches("AB#2311").count(), 1);
}

#[sqlx::test]
async fn a_breached_incident_shows_its_own_figures(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app
        .incident(json!({"title": "Search slow", "severity": "Sev2", "started_at": ago(200), "detected_at": ago(190)}))
        .await;
    for (action, minutes) in [("acknowledge", 130), ("mitigate", 100), ("resolve", 10)] {
        let r = app
            .post(
                &format!("/api/v1/incidents/{key}/{action}"),
                json!({"at": ago(minutes)}),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    let incident = app.incident_json(&key).await;
    let ack = incident["sla"]["ack"]["text"].as_str().unwrap().to_owned();
    assert!(ack.starts_with("Breached (1 h"), "{ack}");
    let page = app.get(&format!("/incidents/{key}/postmortem")).await;
    assert!(page.text.contains(&format!("ack {ack}")), "{ack}");
    assert!(
        page.text
            .contains("detection → mitigation 1:30; → resolution 3:00")
    );
    assert!(page.text.contains("Time to detect: 10 min from first error. Time to acknowledge: 1 h. Time to mitigate: 1 h 30 min from alert."));
    // Prose cites this incident's own figures; one not known yet stays as written.
    let r = app
        .form(
            &format!("/incidents/{key}/postmortem/sections"),
            &[
                ("section", "summary"),
                (
                    "text",
                    "Acknowledged after {time_to_acknowledge}, mitigated {time_to_mitigate} after detection; {failed_share} failed.",
                ),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let sentence = "Acknowledged after 1 hour, mitigated 1 hour 30 minutes after detection; {failed_share} failed.";
    assert!(
        app.get(&format!("/incidents/{key}/postmortem"))
            .await
            .text
            .contains(sentence)
    );
    assert!(
        app.get(&format!("/incidents/{key}/postmortem.md"))
            .await
            .text
            .contains(sentence)
    );
}

#[sqlx::test]
async fn stale_section_edits_are_refused_and_change_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    app.get(&format!("/incidents/{key}/postmortem")).await;
    let path = format!("/incidents/{key}/postmortem/sections");
    let r = app
        .form(
            &path,
            &[("section", "summary"), ("text", "First"), ("version", "1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(
            &path,
            &[
                ("section", "root_cause"),
                ("text", "Stale"),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let md = app
        .get(&format!("/incidents/{key}/postmortem.md"))
        .await
        .text;
    assert!(md.contains("First") && !md.contains("Stale"));
    let r = app
        .form(
            &path,
            &[("section", "epilogue"), ("text", "x"), ("version", "2")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[sqlx::test]
async fn hostile_text_in_every_field_is_rendered_harmless(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Eve <script>alert(9)</script>", "eve").await;
    let key = app
        .incident(json!({"title": "<script>alert(1)</script>", "severity": "Sev3", "started_at": ago(30), "detected_at": ago(30)}))
        .await;
    app.get(&format!("/incidents/{key}/postmortem")).await;
    let hostile = "<script>alert(2)</script> <img src=x onerror=alert(3)> [click](javascript:alert(4)) <a href=\"javascript:alert(5)\">x</a>";
    let sections = [
        "summary",
        "impact",
        "root_cause",
        "contributing_factors",
        "detection",
        "went_well",
        "was_hard",
        "got_lucky",
        "lessons",
    ];
    for (n, section) in sections.iter().enumerate() {
        let version = (n + 1).to_string();
        let r = app
            .form(
                &format!("/incidents/{key}/postmortem/sections"),
                &[
                    ("section", section),
                    ("text", hostile),
                    ("version", &version),
                ],
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{section}: {}", r.text);
    }
    let r = app
        .form(
            &format!("/incidents/{key}/postmortem/action-items"),
            &[
                ("action", "<script>alert(6)</script>"),
                ("type", "prevent"),
                ("owner", "eve"),
                ("due_on", "2026-12-01"),
                ("work_item", "<b>AB#1</b>"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get(&format!("/incidents/{key}/postmortem")).await;
    // Escaped text may still read "onerror=": what matters is that no tag or link carries it.
    for bad in ["<script>alert", "<img", "href=\"javascript:", "<b>AB#1</b>"] {
        assert!(!page.text.contains(bad), "{bad} in the page");
    }
    assert!(
        page.text.contains("&#60;script&#62;alert(1)"),
        "the title is shown as text"
    );
    let md = app.get(&format!("/incidents/{key}/postmortem.md")).await;
    assert_eq!(md.header("x-content-type-options"), Some("nosniff"));
    assert!(
        md.header("content-type")
            .unwrap()
            .starts_with("text/markdown"),
        "the export is never HTML"
    );
    let r = app
        .call(
            Method::GET,
            &format!("/incidents/{key}/postmortem"),
            &[],
            None,
        )
        .await;
    assert!(
        r.header("content-security-policy")
            .unwrap()
            .contains("script-src 'self'")
    );
}

#[sqlx::test]
async fn action_items_are_listed_filtered_and_moved_along(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let count = |v: serde_json::Value| v["items"].as_array().unwrap().len();
    let overdue = app.get("/api/v1/action-items?overdue=true").await.json();
    assert_eq!(
        count(overdue.clone()),
        8,
        "every INC-1187 item was due in September"
    );
    assert!(
        overdue["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["overdue"] == true)
    );
    assert_eq!(
        count(app.get("/api/v1/action-items?owner=ana").await.json()),
        3
    );
    assert_eq!(
        count(app.get("/api/v1/action-items?type=process").await.json()),
        2
    );
    let first = overdue["items"][0]["id"].as_i64().unwrap();
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/action-items/{first}"),
            &[],
            Some(r#"{"status": "done"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        count(app.get("/api/v1/action-items?overdue=true").await.json()),
        7,
        "done is never overdue"
    );
    assert_eq!(
        count(app.get("/api/v1/action-items?status=done").await.json()),
        5,
        "PAY-184's four, done months ago, and this one"
    );
    let r = app.get("/api/v1/action-items?type=blame").await;
    assert_eq!(
        (r.status, r.field().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "type")
    );
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/action-items/{first}"),
            &[],
            Some(r#"{"status": "forgotten"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let page = app.get("/action-items?overdue=true").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("AB#2314") && page.text.contains("overdue"));
    assert!(
        page.text.contains("of 5"),
        "completion rate per type: detect, INC-1187 and PAY-184"
    );
}

/// The address of a list page's "Next page" link, unescaped.
fn next_page_link(html: &str) -> String {
    html.split("href=\"")
        .filter_map(|s| s.split('"').next())
        .find(|h| h.contains("cursor="))
        .expect("a next-page link")
        .replace("&amp;", "&")
        .replace("&#38;", "&")
}

/// The action-item list comes a page at a time, soonest due first and undated last, every item
/// exactly once however the pages fall; a cursor or page size that makes no sense is refused.
#[sqlx::test]
async fn action_items_come_a_page_at_a_time_each_once_in_due_order(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = app.past_incident(60).await;
    sqlx::raw_sql(&format!(
        "insert into postmortems (incident_id, status, summary, root_cause)
         select id, 'published', 'Slow', 'A limit' from incidents where number = {n};
         insert into action_items (postmortem_id, number, action, type, due_on, work_item)
         select (select id from postmortems), g, 'Item ' || g, 'detect',
                case when g % 5 = 0 then null else date '2026-01-01' + (g % 7) end, ''
         from generate_series(1, 250) g;",
        n = key.trim_start_matches("INC-")
    ))
    .execute(&pool)
    .await
    .unwrap();
    let mut seen: Vec<(Option<String>, i64)> = Vec::new();
    let mut url = "/api/v1/action-items?limit=100".to_owned();
    let mut pages = 0;
    loop {
        let r = app.get(&url).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let j = r.json();
        pages += 1;
        for i in j["items"].as_array().unwrap() {
            seen.push((
                i["due_on"].as_str().map(str::to_owned),
                i["id"].as_i64().unwrap(),
            ));
        }
        match j["next_cursor"].as_str() {
            Some(c) => url = format!("/api/v1/action-items?limit=100&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 250, "every item once");
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| (a.0.is_none(), &a.0, a.1).cmp(&(b.0.is_none(), &b.0, b.1)));
    assert_eq!(seen, sorted, "soonest due first, undated last, then by id");
    for (url, field) in [
        ("/api/v1/action-items?cursor=nonsense", "cursor"),
        ("/api/v1/action-items?limit=0", "limit"),
        ("/api/v1/action-items?limit=501", "limit"),
    ] {
        let r = app.get(url).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        assert_eq!(r.field(), field, "{url}");
    }
    // The page: a hundred rows and the way to the next hundred, filters kept.
    let page = app.get("/action-items?type=detect").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.text.matches("<td><a href=\"/incidents/").count(), 100);
    let next = next_page_link(&page.text);
    assert!(next.contains("type=detect"), "{next}");
    let second = app.get(&next).await;
    assert_eq!(second.status, StatusCode::OK);
    assert_eq!(
        second.text.matches("<td><a href=\"/incidents/").count(),
        100
    );
    assert!(second.text.contains("First page"));
}

/// The action-item list opened on a hundred items long done. It now lists what is left to do
/// (open or in progress) unless asked, a page at a time with that filter kept, and links to the
/// whole list.
#[sqlx::test]
async fn the_action_item_list_opens_on_what_is_left_to_do(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let key = app.past_incident(60).await;
    // 130 done, due first; then 120 open or in progress.
    sqlx::raw_sql(&format!(
        "insert into postmortems (incident_id, status, summary, root_cause)
         select id, 'published', 'Slow', 'A limit' from incidents where number = {n};
         insert into action_items (postmortem_id, number, action, type, due_on, work_item, status)
         select (select id from postmortems), g, 'Item ' || g, 'detect',
                date '2026-01-01' + g,  '',
                case when g <= 130 then 'done' when g % 2 = 0 then 'open' else 'in_progress' end
         from generate_series(1, 250) g;",
        n = key.trim_start_matches("INC-")
    ))
    .execute(&pool)
    .await
    .unwrap();
    let rows = |html: &str| html.matches("<td><a href=\"/incidents/").count();
    let done_rows = |html: &str| html.matches(r#"<option value="done" selected>"#).count();
    let page = app.get("/action-items").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(rows(&page.text), 100);
    assert_eq!(done_rows(&page.text), 0, "nothing done on the first page");
    assert!(
        page.text
            .contains(r#"<option value="unfinished" selected>"#),
        "the filter says what is shown"
    );
    assert!(
        page.text
            .contains(r#"<a href="/action-items?status=any">Show done ones too</a>"#)
    );
    let next = next_page_link(&page.text);
    let second = app.get(&next).await;
    assert_eq!(second.status, StatusCode::OK);
    assert_eq!(rows(&second.text), 20, "{next}");
    assert_eq!(done_rows(&second.text), 0);

    // Asked for, the whole list, a page at a time with the filter kept.
    let all = app.get("/action-items?status=any").await;
    assert_eq!(rows(&all.text), 100);
    assert_eq!(done_rows(&all.text), 100, "due first, the done ones");
    assert!(next_page_link(&all.text).contains("status=any"));
    let done = app.get("/action-items?status=done").await;
    assert_eq!(rows(&done.text), 100);
    assert_eq!(done_rows(&done.text), 101, "each row, and the filter");
    // The API's default stays the whole list; it can ask for what is left too.
    let api = app.get("/api/v1/action-items?limit=500").await.json();
    assert_eq!(api["items"].as_array().unwrap().len(), 250);
    let left = app
        .get("/api/v1/action-items?status=unfinished&limit=500")
        .await
        .json();
    assert_eq!(left["items"].as_array().unwrap().len(), 120);
    let r = app.get("/action-items?status=later").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("Check status"), "{}", r.text);
}

/// The managers' list comes a page at a time too, newest incident first, each postmortem once,
/// its filters kept from page to page.
#[sqlx::test]
async fn the_postmortem_list_comes_a_page_at_a_time(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    sqlx::raw_sql(
        "insert into incidents (title, severity, peak_severity, status, summary, started_at,
                                detected_at, acknowledged_at, mitigated_at, resolved_at)
         select 'Past ' || g, 'Sev3', 'Sev3', 'resolved', '', t, t, t, t, t
         from generate_series(1, 230) g,
              lateral (select now() - make_interval(hours => g / 2) as t) x;
         insert into postmortems (incident_id, status, summary, root_cause, published_at)
         select id, 'published', 'Slow', 'A limit', now() from incidents;",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut url = "/api/v1/postmortems?severity=Sev3".to_owned();
    loop {
        let j = app.get(&url).await.json();
        for p in j["items"].as_array().unwrap() {
            seen.push((
                p["detected_at"].as_str().unwrap().to_owned(),
                p["incident"].as_str().unwrap().to_owned(),
            ));
        }
        match j["next_cursor"].as_str() {
            Some(c) => url = format!("/api/v1/postmortems?severity=Sev3&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 230, "each postmortem once");
    let mut keys: Vec<&String> = seen.iter().map(|(_, k)| k).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 230);
    assert!(
        seen.windows(2).all(|w| w[0].0 >= w[1].0),
        "newest incident first"
    );
    let page = app.get("/postmortems?severity=Sev3").await;
    assert_eq!(page.status, StatusCode::OK);
    let next = next_page_link(&page.text);
    assert!(next.contains("severity=Sev3"), "{next}");
    let second = app.get(&next).await;
    assert_eq!(second.status, StatusCode::OK);
    assert!(second.text.contains("First page"));
    let r = app.get("/api/v1/postmortems?cursor=1.x").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), "cursor");
}

/// A word in more incidents than search ranks (the newest of each source's matches are) still
/// answers with the best of the newest; a word only in the oldest incident, behind thousands of
/// newer ones and their timelines, is still found (the walk of the newest rows falls short and
/// the GIN index is asked).
#[sqlx::test]
async fn search_finds_the_newest_of_a_common_word_and_the_oldest_of_a_rare_one(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let candidates = quell::search::db::CANDIDATES;
    let newer = quell::search::db::WINDOWS[0] + 50;
    sqlx::raw_sql(&format!(
        "insert into incidents (title, severity, peak_severity, status, summary, started_at, detected_at)
         values ('Zeppelin over the data centre', 'Sev2', 'Sev2', 'triggered', '', now() - interval '3 years',
                 now() - interval '3 years');
         insert into incidents (title, severity, peak_severity, status, summary, started_at, detected_at)
         select case when g % 2 = 0 then 'Payments failing ' || g else 'Queue slow ' || g end, 'Sev3', 'Sev3',
                'triggered', '', now() - make_interval(mins => {newer} - g), now() - make_interval(mins => {newer} - g)
         from generate_series(1, {newer}) g;
         insert into timeline_events (incident_id, occurred_at, kind, author, body)
         select id, detected_at, 'note', 'Ana', 'Checked the payments dashboard' from incidents;"
    ))
    .execute(&pool)
    .await
    .unwrap();
    assert!(
        newer / 2 > candidates,
        "more payments incidents than are ranked"
    );
    let r = app.get("/api/v1/search?q=zeppelin").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let items = r.json()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["title"], "Zeppelin over the data centre");

    let r = app.get("/api/v1/search?q=payments").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let items = r.json()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 50, "a page of results");
    let newest = format!("Payments failing {}", newer - newer % 2);
    assert_eq!(
        items[0]["title"], newest,
        "equally good matches: the newest first"
    );
    for i in &items {
        assert!(
            i["title"].as_str().unwrap().starts_with("Payments failing"),
            "{i}"
        );
        assert_eq!(i["sources"], json!(["incident", "timeline"]), "{i}");
    }
}

#[sqlx::test]
async fn search_ranks_inc_1187_first_for_connection_pool(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    app.incident(json!({"title": "Thread pool saturation on reports", "severity": "Sev3",
                         "summary": "The worker pool was too small; the database connection was fine", "started_at": ago(60), "detected_at": ago(60)}))
        .await;
    app.incident(json!({"title": "<script>alert(1)</script> pool party", "severity": "Sev4", "started_at": ago(30), "detected_at": ago(30)}))
        .await;
    let r = app.get("/api/v1/search?q=connection%20pool").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let items = r.json()["items"].as_array().unwrap().clone();
    assert_eq!(items[0]["key"], "INC-1187", "{items:?}");
    assert!(
        items[0]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "postmortem")
    );
    assert!(
        items
            .iter()
            .any(|i| i["title"] == "Thread pool saturation on reports"),
        "{items:?}"
    );
    let page = app.get("/search?q=pool").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("<mark>"), "matches are highlighted");
    assert!(
        !page.text.contains("<script>alert(1)"),
        "snippets and titles are escaped"
    );
    let misses = app.get("/near-misses").await;
    assert!(
        misses
            .text
            .contains("Idempotency keys prevented duplicate charges"),
        "near misses gather every got-lucky entry"
    );
    // A near miss citing a figure shows it filled in, as the postmortem does.
    let r = app
        .form(
            "/incidents/INC-1187/postmortem/sections",
            &[
                ("section", "got_lucky"),
                ("text", "- Caught {time_to_detect} after the first error."),
                (
                    "version",
                    &app.get("/api/v1/incidents/INC-1187/postmortem")
                        .await
                        .json()["version"]
                        .to_string(),
                ),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let misses = app.get("/near-misses").await.text;
    assert!(
        misses.contains("Caught 5 minutes after the first error."),
        "{misses}"
    );
    let r = app.get("/search?q=INC-1187").await;
    assert_eq!(
        (r.status, r.header("location")),
        (StatusCode::SEE_OTHER, Some("/incidents/INC-1187"))
    );
    assert_eq!(
        app.get("/api/v1/search?q=").await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
}

#[sqlx::test]
async fn publishing_names_what_is_missing_then_freezes_a_version_and_later_edits_show_a_diff(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    app.person("Olu Owner", "olu").await;
    let key = app.past_incident(90).await;
    let base = format!("/incidents/{key}/postmortem");
    app.get(&base).await;
    let r = app.form(&format!("{base}/publish"), &[]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    for missing in [
        "a root cause",
        "at least one action item with an owner and a due date",
        "the impact figures",
    ] {
        assert!(r.text.contains(missing), "{missing}: {}", r.text);
    }
    let r = app
        .form(
            &format!("{base}/sections"),
            &[
                ("section", "root_cause"),
                ("text", "A pool sized by hand."),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = app
        .form(
            &format!("{base}/facts"),
            &[
                ("impacted", "search"),
                ("requests_label", "Searches"),
                ("failed_requests", "1200"),
                ("total_requests", "40000"),
                ("trigger_event_id", ""),
                ("version", "2"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(
            &format!("{base}/action-items"),
            &[
                ("action", "Size the pool"),
                ("type", "prevent"),
                ("owner", "olu"),
                ("due_on", "2026-12-24"),
                ("work_item", "LIN-7"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form(&format!("{base}/review"), &[("to", "in_review")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = app.form(&format!("{base}/publish"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get(&base).await.text;
    assert!(page.contains("Published version 1") && !page.contains("Edited since publication on"));

    let r = app
        .form(
            &format!("{base}/sections"),
            &[
                ("section", "lessons"),
                ("text", "Derive limits from traffic."),
                ("version", "3"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get(&base).await.text;
    assert!(page.contains("Edited since publication on"));
    let v1 = app.get(&format!("{base}/versions/1")).await;
    assert_eq!(v1.status, StatusCode::OK);
    let changes = v1.text.split("<article").next().unwrap();
    assert!(
        changes.contains("<ins>Derive limits from traffic.</ins>"),
        "the diff shows the edit, as text: {changes}"
    );
    assert!(!changes.contains("## "), "not raw Markdown");
    let frozen = v1.text.split("<article").nth(1).unwrap();
    assert!(
        !frozen.contains("Derive limits from traffic."),
        "the published version is frozen"
    );
    assert!(
        frozen.contains("Searches failed: 1 200 of 40 000 (3%)"),
        "with its figures"
    );
    assert_eq!(
        app.get(&format!("{base}/versions/9")).await.status,
        StatusCode::NOT_FOUND
    );
    // Publishing the edits makes version 2; version 1 stays as it was.
    let r = app.form(&format!("{base}/publish"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get(&base).await.text;
    assert!(page.contains("Published version 2") && !page.contains("Edited since publication on"));
    assert!(page.contains(&format!(r#"<a href="{base}/versions/1">1</a>"#)));
    let v2 = app.get(&format!("{base}/versions/2")).await.text;
    assert!(
        v2.split("<article")
            .nth(1)
            .unwrap()
            .contains("Derive limits from traffic.")
    );
    let v1 = app.get(&format!("{base}/versions/1")).await.text;
    assert!(
        !v1.split("<article")
            .nth(1)
            .unwrap()
            .contains("Derive limits from traffic.")
    );
}

#[sqlx::test]
async fn the_service_page_shows_the_error_budget_left_this_month(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("search-api").await;
    let key = app
        .incident(json!({"title": "Search failing", "severity": "Sev2", "service": "search-api"}))
        .await;
    let page = app.get("/services/search-api").await.text;
    assert!(
        page.contains(
            "Error budget this month: 0 of ≈ 155 000 failed requests used (0%); 100% left"
        ),
        "{page}"
    );
    app.get(&format!("/incidents/{key}/postmortem")).await;
    let r = app
        .form(
            &format!("/incidents/{key}/postmortem/facts"),
            &[
                ("impacted", ""),
                ("requests_label", "Searches"),
                ("failed_requests", "12000"),
                ("total_requests", ""),
                ("trigger_event_id", ""),
                ("version", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get("/services/search-api").await.text;
    assert!(
        page.contains(
            "12 000 of ≈ 155 000 failed requests used (8%); 92% left (from 1 postmortem)"
        ),
        "{page}"
    );
}

#[sqlx::test]
async fn viewing_a_postmortem_writes_nothing_until_the_first_edit(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let rows = || async {
        sqlx::query_scalar::<_, i64>("select count(*) from postmortems")
            .fetch_one(&app.pool)
            .await
            .unwrap()
    };
    for path in [
        format!("/incidents/{key}/postmortem"),
        format!("/incidents/{key}/postmortem.md"),
        format!("/api/v1/incidents/{key}/postmortem"),
        format!("/api/v1/incidents/{key}/postmortem/comments"),
    ] {
        let r = app.get(&path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    }
    assert_eq!(rows().await, 0, "views start nothing");
    let doc = app
        .get(&format!("/api/v1/incidents/{key}/postmortem"))
        .await
        .json();
    assert_eq!(doc["status"], "draft");
    // The version the unsaved draft showed is the one the first edit expects.
    let version = doc["version"].to_string();
    let r = app
        .form(
            &format!("/incidents/{key}/postmortem/sections"),
            &[
                ("section", "summary"),
                ("text", "Checkout failed."),
                ("version", &version),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(rows().await, 1);
    // The draft shown before the row existed is the row the first edit created.
    let id: i64 = sqlx::query_scalar("select id from incidents")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let stored = quell::postmortems::db::for_incident(&app.pool, id)
        .await
        .unwrap()
        .unwrap();
    let draft = quell::postmortems::db::Postmortem::unsaved_draft(id, stored.created_at);
    assert_eq!(stored.status, draft.status);
    assert_eq!(stored.requests_label, draft.requests_label);
    assert_eq!(stored.impacted, draft.impacted);
    assert_eq!(
        (stored.failed_requests, stored.total_requests),
        (None, None)
    );
    assert_eq!(stored.summary, "Checkout failed.");
    assert_eq!(
        stored.version,
        draft.version + 1,
        "one edit past the starting version"
    );
}

/// The completion rates read counts the database keeps per (type, status) as items change; after
/// edits, a deletion, a bulk insert and a postmortem's cascade they still equal a fresh count.
#[sqlx::test]
async fn the_kept_item_counts_follow_every_change(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    async fn agree(pool: &PgPool, after: &str) -> usize {
        let kept: Vec<(String, String, i64)> = sqlx::query_as(
            "select type, status, n from action_item_counts where n <> 0 order by 1, 2",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        let counted: Vec<(String, String, i64)> = sqlx::query_as(
            "select type, status, count(*) from action_items group by 1, 2 order by 1, 2",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        assert_eq!(kept, counted, "after {after}");
        counted.len()
    }
    assert!(agree(&app.pool, "the demo").await > 0);
    let items = app.get("/api/v1/action-items").await.json();
    let (ids, versions): (Vec<i64>, Vec<String>) = items["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["id"].as_i64().unwrap(), format!("\"v{}\"", i["version"])))
        .unzip();
    for (i, patch) in [
        (0, r#"{"status": "done"}"#),
        (1, r#"{"type": "process", "status": "in_progress"}"#),
        (2, r#"{"action": "Reworded; type and status unchanged"}"#),
    ] {
        let r = app
            .call(
                Method::PATCH,
                &format!("/api/v1/action-items/{}", ids[i]),
                &[("if-match", versions[i].as_str())],
                Some(patch),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        agree(&app.pool, patch).await;
    }
    let r = app
        .call(
            Method::DELETE,
            &format!("/api/v1/action-items/{}", ids[3]),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    agree(&app.pool, "a deletion").await;
    sqlx::query(
        "insert into action_items (postmortem_id, number, action, type, status)
         select postmortem_id, number * 10 + 1000 + g, 'copy', 'detect', 'wont_do'
         from action_items, generate_series(1, 3) g",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    agree(&app.pool, "a bulk insert").await;
    sqlx::query("delete from postmortems where id = (select min(postmortem_id) from action_items)")
        .execute(&app.pool)
        .await
        .unwrap();
    agree(&app.pool, "a postmortem's cascade").await;
}

/// The postmortem pages' date fields read mm/dd/yyyy in an en-US browser while Quell writes
/// ISO dates. Every one is ISO text now; a date the server cannot read is named, and the form
/// comes back as typed (422) with nothing saved: the list's filters and an action item's due
/// date, new or edited.
#[sqlx::test]
async fn postmortem_dates_are_iso_and_a_bad_one_comes_back_as_typed(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.person("Ana Ribeiro", "ana").await;
    let key = app.past_incident(60).await;
    sqlx::raw_sql(&format!(
        "insert into postmortems (incident_id, status, summary, root_cause)
         select id, 'draft', 'Slow', 'A limit' from incidents where number = {n};
         insert into action_items (postmortem_id, number, action, type, due_on, work_item)
         select id, 1, 'Raise the pool limit', 'prevent', date '2026-10-01', '' from postmortems;",
        n = key.trim_start_matches("INC-")
    ))
    .execute(&pool)
    .await
    .unwrap();
    let iso = r#"inputmode="numeric" pattern="\d{4}-\d{2}-\d{2}" placeholder="YYYY-MM-DD""#;

    // The list's filters.
    let list = app.get("/postmortems?status=any").await;
    assert!(!list.text.contains(r#"type="date""#), "{}", list.text);
    assert_eq!(list.text.matches(iso).count(), 2, "{}", list.text);
    let r = app.get("/postmortems?status=any&to=17%2F09%2F2026").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text.contains("<strong>To</strong>") && r.text.contains(r#"value="17/09/2026""#),
        "{}",
        r.text
    );
    assert!(r.text.contains("Fix the filters"));
    assert!(
        !r.text.contains(&key),
        "nothing listed under a filter it could not read"
    );

    // An action item's due date, on the postmortem page.
    let page_uri = format!("/incidents/{key}/postmortem");
    let page = app.get(&page_uri).await;
    assert!(!page.text.contains(r#"type="date""#), "{}", page.text);
    assert_eq!(page.text.matches(iso).count(), 2, "the edit and add forms");
    let items = format!("{page_uri}/action-items");
    let r = app
        .form(
            &items,
            &[
                ("action", "Alert on pool saturation"),
                ("type", "detect"),
                ("owner", "ana"),
                ("due_on", "10/15/2026"),
                ("work_item", "AB#77"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text
            .contains(r#"<details class="more no-print" id="add-item" open>"#),
        "the form is open: {}",
        r.text
    );
    assert!(
        r.text
            .contains("<strong>Due on</strong>: &#34;10/15/2026&#34; is not a date"),
        "{}",
        r.text
    );
    for kept in [
        ">Alert on pool saturation</textarea>",
        r#"value="10/15/2026""#,
        r#"value="AB#77""#,
        "<option selected>detect</option>",
        r#"<option value="ana" selected>Ana Ribeiro</option>"#,
    ] {
        assert!(r.text.contains(kept), "{kept}: {}", r.text);
    }
    let listed = app.get("/api/v1/action-items").await.json();
    assert_eq!(
        listed["items"].as_array().unwrap().len(),
        1,
        "nothing added"
    );

    let item = listed["items"][0].clone();
    let r = app
        .form(
            &format!("{items}/{}", item["id"]),
            &[
                ("action", "Raise the pool limit to 200"),
                ("type", "prevent"),
                ("owner", ""),
                ("due_on", "1 Oct"),
                ("work_item", ""),
                ("status", "in_progress"),
                ("version", &item["version"].to_string()),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains(r#"<details class="more" open>"#),
        "{}",
        r.text
    );
    assert!(r.text.contains(">Raise the pool limit to 200</textarea>"));
    assert!(r.text.contains(r#"value="1 Oct""#));
    let after = app.get("/api/v1/action-items").await.json();
    assert_eq!(after["items"][0]["action"], "Raise the pool limit");
    assert_eq!(after["items"][0]["due_on"], "2026-10-01");

    // Written as ISO, it is saved.
    let r = app
        .form(
            &items,
            &[
                ("action", "Alert on pool saturation"),
                ("type", "detect"),
                ("owner", "ana"),
                ("due_on", "2026-10-15"),
                ("work_item", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
}
