//! Changes as records of a service: reported through the API or by PagerDuty change events,
//! listed with filters and a cursor, shown across services and per service; bad input stores
//! nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{self, TestApp, ago};

async fn change(app: &TestApp, body: Value) -> common::Res {
    app.post("/api/v1/changes", body).await
}

#[sqlx::test]
async fn a_change_is_recorded_for_its_service_and_listed_newest_first(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    app.service("checkout-api").await;
    let r = change(
        &app,
        json!({"service": "payments-gateway", "kind": "config", "environment": "Production",
               "summary": "chore: consolidate HTTP client settings", "author": "sam",
               "link": "https://git.example/pr/812", "occurred_at": ago(120)}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let c = r.json();
    assert_eq!(c["service"], "payments-gateway");
    assert_eq!(c["kind"], "config");
    assert_eq!(c["environment"], "production");
    assert_eq!(c["source"], "api");
    let location = r.header("location").unwrap().to_owned();
    assert_eq!(app.get(&location).await.json()["summary"], c["summary"]);
    for (service, minutes) in [("checkout-api", 60), ("payments-gateway", 30)] {
        let r = change(
            &app,
            json!({"service": service, "summary": format!("deploy {minutes}"), "occurred_at": ago(minutes)}),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        assert_eq!(r.json()["kind"], "deploy", "a deploy unless told");
    }
    let summaries = |q: &str| {
        let q = q.to_owned();
        let app = &app;
        async move {
            let r = app.get(&format!("/api/v1/changes{q}")).await;
            assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text);
            let j = r.json();
            (
                j["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["summary"].as_str().unwrap().to_owned())
                    .collect::<Vec<_>>(),
                j["next_cursor"].as_str().map(str::to_owned),
            )
        }
    };
    assert_eq!(
        summaries("").await.0,
        [
            "deploy 30",
            "deploy 60",
            "chore: consolidate HTTP client settings"
        ]
    );
    assert_eq!(
        summaries("?service=payments-gateway").await.0,
        ["deploy 30", "chore: consolidate HTTP client settings"]
    );
    assert_eq!(
        summaries("?kind=config").await.0,
        ["chore: consolidate HTTP client settings"]
    );
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert_eq!(
        summaries(&format!("?from={today}&to={today}"))
            .await
            .0
            .len(),
        // Just after midnight some of the changes (2 h, 1 h and 30 min old) fell on yesterday.
        [120, 60, 30]
            .into_iter()
            .filter(|m| {
                let at = chrono::Utc::now() - chrono::Duration::minutes(*m);
                at.format("%Y-%m-%d").to_string() == today
            })
            .count()
    );
    // A page at a time.
    let (first, next) = summaries("?limit=2").await;
    assert_eq!(first, ["deploy 30", "deploy 60"]);
    let (rest, last) = summaries(&format!("?limit=2&cursor={}", next.unwrap())).await;
    assert_eq!(rest, ["chore: consolidate HTTP client settings"]);
    assert_eq!(last, None);
}

#[sqlx::test]
async fn bad_changes_are_refused_naming_the_field_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let future = (chrono::Utc::now() + chrono::Duration::minutes(5)).to_rfc3339();
    for (body, field) in [
        (json!({"service": "nope", "summary": "x"}), "service"),
        (
            json!({"service": "payments-gateway", "summary": "x", "occurred_at": future}),
            "occurred_at",
        ),
        (
            json!({"service": "payments-gateway", "summary": "x", "kind": "rollback"}),
            "kind",
        ),
        (
            json!({"service": "payments-gateway", "summary": " "}),
            "summary",
        ),
        (
            json!({"service": "payments-gateway", "summary": "x", "link": "javascript:alert(1)"}),
            "link",
        ),
        (
            json!({"service": "payments-gateway", "summary": "x", "colour": "red"}),
            "colour",
        ),
    ] {
        let r = change(&app, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}");
    }
    for q in [
        "?kind=rollback",
        "?from=yesterday",
        "?cursor=x",
        "?limit=0",
        "?from=2026-09-18&to=2026-09-17",
    ] {
        let r = app.get(&format!("/api/v1/changes{q}")).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{q}: {}",
            r.text
        );
    }
    let n: i64 = sqlx::query_scalar("select count(*) from changes")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
    // Viewers read changes; recording one takes a responder.
    let vic = app.account("vic@example.com", "viewer").await;
    let r = app
        .call_as(
            &vic,
            Method::POST,
            "/api/v1/changes",
            &[],
            Some(r#"{"service": "payments-gateway", "summary": "x"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .call_as(&vic, Method::GET, "/api/v1/changes", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[sqlx::test]
async fn pagerduty_change_events_become_changes_of_the_service_they_name(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout-api").await;
    let h = app.integration("ci", "pagerduty-events-v2").await;
    for (summary, details) in [
        (
            "Deploy 2.4.1",
            json!({"service": "checkout-api", "kind": "feature flag", "environment": "staging"}),
        ),
        (
            "Deploy of something unknown",
            json!({"service": "no-such-service"}),
        ),
    ] {
        let r = app
            .hook(
                "/v2/change/enqueue",
                &[],
                &json!({"routing_key": h.key,
                        "payload": {"summary": summary, "timestamp": ago(10), "source": "ci-runner-7",
                                    "custom_details": details},
                        "links": [{"href": "https://ci.example/run/9", "text": "run"}]})
                .to_string(),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }
    let items = app.get("/api/v1/changes").await.json()["items"].clone();
    let known = items
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["summary"] == "Deploy 2.4.1")
        .unwrap();
    assert_eq!(known["service"], "checkout-api");
    assert_eq!(known["kind"], "feature_flag");
    assert_eq!(known["environment"], "staging");
    assert_eq!(known["author"], "ci-runner-7");
    assert_eq!(known["link"], "https://ci.example/run/9");
    assert_eq!(known["source"], "ci");
    let unknown = items
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["summary"] == "Deploy of something unknown")
        .expect("kept, not lost");
    assert_eq!(unknown["service"], Value::Null);
}

#[sqlx::test]
async fn the_change_pages_list_changes_across_services_and_per_service(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    app.service("checkout-api").await;
    for (service, summary) in [
        ("payments-gateway", "<b>pool size</b> 10"),
        ("checkout-api", "checkout 1.2"),
    ] {
        let r = change(
            &app,
            json!({"service": service, "summary": summary, "kind": "config"}),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED);
    }
    let all = app.get("/changes").await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.text);
    assert!(all.text.contains("checkout 1.2") && all.text.contains("&#60;b&#62;pool size"));
    assert!(all.text.contains("configuration change"));
    let one = app.get("/services/payments-gateway/changes").await;
    assert_eq!(one.status, StatusCode::OK);
    assert!(one.text.contains("pool size") && !one.text.contains("checkout 1.2"));
    let filtered = app.get("/changes?service=checkout-api&kind=config").await;
    assert!(filtered.text.contains("checkout 1.2") && !filtered.text.contains("pool size"));
    assert_eq!(
        app.get("/services/nope/changes").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/changes?kind=rollback").await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
}

/// The change events stored before changes were records of their own move into `changes`, with
/// their service when `custom_details.service` names one; a postmortem's hand-picked triggering
/// event becomes a change confirmed as the incident's trigger.
#[sqlx::test(migrations = false)]
async fn change_events_stored_before_migrate_into_changes(pool: PgPool) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (before, after): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|f| f.file_name().unwrap().to_string_lossy().as_ref() < "20261201100000");
    for f in &before {
        sqlx::raw_sql(&std::fs::read_to_string(f).unwrap())
            .execute(&pool)
            .await
            .unwrap();
    }
    sqlx::raw_sql(
        r#"insert into services (name, tier) values ('checkout-api', 1);
           insert into integrations (name, format, key_hash, key_prefix)
               values ('ci', 'pagerduty-events-v2', '\x01', 'abcdef');
           insert into change_events (integration_id, summary, source, occurred_at, details, links, raw)
           select id, 'Deploy 2.4.1', 'ci-runner', now() - interval '1 hour',
                  '{"service": "checkout-api", "kind": "config"}', '[{"href": "https://ci/1"}]', '{}'
           from integrations;
           insert into change_events (integration_id, summary, source, occurred_at, details, links, raw)
           select id, 'Deploy of an unknown service', 'ci-runner', now() - interval '2 hours',
                  '{"service": "nope"}', '[{"href": "javascript:x"}]', '{}'
           from integrations;
           insert into incidents (title, severity, peak_severity, status, service_id, started_at,
                                  detected_at)
           select 'Checkout failing', 'Sev2', 'Sev2', 'triggered', id, now() - interval '30 min',
                  now() - interval '25 min'
           from services;
           insert into timeline_events (incident_id, occurred_at, kind, author, body)
           select id, now() - interval '3 hours', 'context', 'scribe', 'PR 77 deployed'
           from incidents;
           insert into postmortems (incident_id, trigger_event_id)
           select i.id, e.id from incidents i join timeline_events e on e.incident_id = i.id;"#,
    )
    .execute(&pool)
    .await
    .unwrap();
    for f in &after {
        sqlx::raw_sql(&std::fs::read_to_string(f).unwrap())
            .execute(&pool)
            .await
            .unwrap();
    }
    let rows: Vec<(String, Option<String>, String, String, bool)> = sqlx::query_as(
        "select c.summary, s.name, c.kind, c.link, c.integration_id is not null
         from changes c left join services s on s.id = c.service_id order by c.occurred_at desc",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        rows,
        [
            (
                "Deploy 2.4.1".into(),
                Some("checkout-api".into()),
                "config".into(),
                "https://ci/1".into(),
                true
            ),
            (
                "Deploy of an unknown service".into(),
                None,
                "deploy".into(),
                "".into(),
                true
            ),
            (
                "PR 77 deployed".into(),
                Some("checkout-api".into()),
                "deploy".into(),
                "".into(),
                false
            ),
        ]
    );
    // The postmortem's hand-picked trigger became the incident's confirmed suspect.
    let confirmed: (String, String) = sqlx::query_as(
        "select c.summary, v.verdict from suspect_verdicts v join changes c on c.id = v.change_id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        confirmed,
        ("PR 77 deployed".into(), "confirmed_trigger".into())
    );
}

/// A time `minutes` before `t`, as RFC 3339.
fn before(t: &str, minutes: i64) -> String {
    (common::at(t) - chrono::Duration::minutes(minutes)).to_rfc3339()
}

#[sqlx::test]
async fn suspects_are_the_days_changes_to_the_service_and_its_dependencies_ranked(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("db").await;
    app.service("elsewhere").await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "app", "tier": 1, "depends_on": ["db"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let started = ago(60);
    let key = app
        .incident(
            json!({"title": "App failing", "severity": "Sev2", "service": "app",
                         "started_at": started, "detected_at": before(&started, -5)}),
        )
        .await;
    for (service, env, minutes, summary) in [
        ("app", "production", 180, "app prod 3 h before"),
        ("app", "staging", 30, "app staging 30 min before"),
        ("db", "production", 60, "db prod 1 h before"),
        ("app", "production", 25 * 60, "app prod 25 h before"),
        ("elsewhere", "production", 10, "another service"),
        ("app", "production", -2, "after the start"),
    ] {
        let r = change(
            &app,
            json!({"service": service, "environment": env, "summary": summary,
                   "occurred_at": before(&started, minutes)}),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{summary}: {}", r.text);
    }
    let r = app
        .get(&format!("/api/v1/incidents/{key}/suspect-changes"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let j = r.json();
    assert_eq!(j["window_hours"], 24);
    let order: Vec<&str> = j["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "db prod 1 h before",
            "app prod 3 h before",
            "app staging 30 min before"
        ],
        "production first, then the nearest; dependencies included; nothing older than a day, \
         of another service or after the start"
    );
    assert!(j["items"][0]["verdict"].is_null());
    // The page lists them too.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("Suspect changes") && page.text.contains("db prod 1 h before"));
    assert!(!page.text.contains("app prod 25 h before"));
}

#[sqlx::test]
async fn verdicts_go_on_the_timeline_and_one_confirmed_trigger_gives_the_time_from_the_change(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let started = ago(60);
    let detected = before(&started, -5);
    let key = app
        .incident(
            json!({"title": "Timeouts", "severity": "Sev2", "service": "payments-gateway",
                         "started_at": started, "detected_at": detected}),
        )
        .await;
    let mut ids = vec![];
    for (minutes, summary) in [
        (117, "chore: consolidate HTTP client settings"),
        (300, "fix: logging"),
    ] {
        let r = change(
            &app,
            json!({"service": "payments-gateway", "kind": "config", "summary": summary,
                   "occurred_at": before(&started, minutes)}),
        )
        .await;
        ids.push(r.json()["id"].as_i64().unwrap());
    }
    let judge = |id: i64, verdict: &str| {
        let app = &app;
        let path = format!("/api/v1/incidents/{key}/suspect-changes/{id}");
        let body = json!({ "verdict": verdict });
        async move { app.post(&path, body).await }
    };
    let r = judge(ids[1], "ruled_out").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["verdict"], "ruled_out");
    let r = judge(ids[0], "confirmed_trigger").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let timeline = app.timeline(&key).await;
    let verdicts: Vec<&str> = timeline
        .iter()
        .filter(|e| e["kind"] == "suspect_verdict")
        .map(|e| e["headline"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.len(), 2);
    assert!(
        verdicts[1].starts_with(
            "Change confirmed as the trigger: chore: consolidate HTTP client settings"
        ),
        "{verdicts:?}"
    );
    // Time to detect from the change: detection (started + 5 min) − change (started − 117 min).
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["trigger"]["change_id"], ids[0]);
    assert_eq!(
        incident["trigger"]["time_to_detect_from_change_secs"],
        122 * 60
    );
    assert_eq!(
        incident["trigger"]["time_to_detect_from_change"],
        "2 h 2 min"
    );
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("Time to detect from the change"));
    let pm = app
        .get(&format!("/api/v1/incidents/{key}/postmortem"))
        .await
        .json();
    assert!(
        pm["response"]
            .as_str()
            .unwrap()
            .contains("2 h 2 min from the change"),
        "{}",
        pm["response"]
    );
    // Only one trigger: a second is refused until the first is ruled out.
    let before_count = app.timeline(&key).await.len();
    let r = judge(ids[1], "confirmed_trigger").await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert_eq!(
        app.timeline(&key).await.len(),
        before_count,
        "nothing written"
    );
    assert_eq!(judge(ids[0], "ruled_out").await.status, StatusCode::OK);
    assert_eq!(
        judge(ids[1], "confirmed_trigger").await.status,
        StatusCode::OK
    );
    assert_eq!(
        app.incident_json(&key).await["trigger"]["change_id"],
        ids[1]
    );
    // Bad input changes nothing.
    assert_eq!(
        judge(ids[0], "guilty").await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    assert_eq!(
        judge(999_999, "suspected").await.status,
        StatusCode::NOT_FOUND
    );
    let other = app
        .incident(json!({"title": "Elsewhere", "severity": "Sev3"}))
        .await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{other}/suspect-changes/{}", ids[0]),
            json!({"verdict": "suspected"}),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::NOT_FOUND,
        "not a suspect of an incident without a service"
    );
    // One click on the page.
    let r = app
        .form(
            &format!("/incidents/{key}/suspects/{}", ids[0]),
            &[("verdict", "suspected")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let suspects = app
        .get(&format!("/api/v1/incidents/{key}/suspect-changes"))
        .await
        .json();
    let first = suspects["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == ids[0])
        .unwrap()
        .clone();
    assert_eq!(first["verdict"], "suspected");
}

#[sqlx::test]
async fn inc_1187s_trigger_is_its_confirmed_configuration_change(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let incident = app.incident_json("INC-1187").await;
    assert_eq!(
        incident["trigger"]["summary"],
        "chore: consolidate HTTP client settings"
    );
    assert_eq!(
        incident["trigger"]["time_to_detect_from_change"],
        "2 h 2 min"
    );
    let suspects = app
        .get("/api/v1/incidents/INC-1187/suspect-changes")
        .await
        .json();
    let verdicts: Vec<(&str, &str)> = suspects["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["summary"].as_str().unwrap(),
                s["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "chore: consolidate HTTP client settings",
                "confirmed_trigger"
            ),
            ("receipt-emails-v2 on for 50% of merchants", "ruled_out"),
            (
                "fix: log the processor's request id on timeouts",
                "ruled_out"
            ),
        ]
    );
}

/// The issue's check: a new service with three changes (one a capacity change, one older than a
/// day) and an incident; the capacity change ranks first, the old one is absent, and confirming
/// it gives the time from the change on the page.
#[sqlx::test]
async fn a_capacity_change_ranks_first_and_is_checked_by_littles_law(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "ledger", "tier": 1, "peak_requests_per_second": 200,
                   "peak_latency_seconds": 0.5}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["peak_requests_per_second"], 200.0);
    let started = ago(30);
    let key = app
        .incident(
            json!({"title": "Ledger slow", "severity": "Sev2", "service": "ledger",
                         "started_at": started, "detected_at": before(&started, -10)}),
        )
        .await;
    let mut ids = vec![];
    for body in [
        json!({"summary": "deploy 2.3.1", "occurred_at": before(&started, 20)}),
        // Rate and latency from the service record: 200 × 0.5 = 100 needed, 4 × 20 = 80 allowed.
        json!({"kind": "config", "summary": "Cap DB connections", "occurred_at": before(&started, 90),
               "capacity": {"limit": "max_connections", "per_replica": 20, "replicas": 4}}),
        json!({"summary": "deploy 2.3.0", "occurred_at": before(&started, 25 * 60)}),
    ] {
        let mut body = body;
        body["service"] = json!("ledger");
        let r = change(&app, body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        ids.push(r.json());
    }
    let check = &ids[1]["capacity_check"];
    assert_eq!(check["status"], "under_provisioned");
    assert_eq!(check["arithmetic"]["needed_at_peak"], 100);
    assert_eq!(check["arithmetic"]["allowed"], 80);
    assert_eq!(check["arithmetic"]["short_at_peak"], 20);
    assert_eq!(check["arithmetic"]["figures_from"], "service");
    assert!(ids[0]["capacity_check"].is_null(), "a plain deploy");
    let suspects = app
        .get(&format!("/api/v1/incidents/{key}/suspect-changes"))
        .await
        .json();
    let order: Vec<&str> = suspects["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["summary"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["Cap DB connections", "deploy 2.3.1"]);
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(
        page.text.contains("under-provisioned")
            && page.text.contains(
                "200 req/s × 0.5 s = 100 concurrent requests needed at peak (rate and latency from the service record)"
            ),
        "{}",
        page.text
    );
    let id = ids[1]["id"].as_i64().unwrap();
    let r = app
        .form(
            &format!("/incidents/{key}/suspects/{id}"),
            &[("verdict", "confirmed_trigger")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    // Detected 10 min after the start, the change 90 min before it.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("Time to detect from the change"));
    assert!(page.text.contains("1 h 40 min"), "{}", page.text);
    // The service page and the change list show the finding too.
    for path in ["/services/ledger", "/changes", "/services/ledger/changes"] {
        let p = app.get(path).await;
        assert!(
            p.text.contains("under-provisioned") && p.text.contains("20 short"),
            "{path}: {}",
            p.text
        );
    }
    // A faster service record changes the verdict: it is read when the check is shown.
    let etag = app
        .get("/api/v1/services/ledger")
        .await
        .header("etag")
        .unwrap()
        .to_owned();
    let r = app
        .call(
            Method::PATCH,
            "/api/v1/services/ledger",
            &[("if-match", &etag)],
            Some(&json!({"peak_latency_seconds": 0.3}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let c = app.get(&format!("/api/v1/changes/{id}")).await.json();
    assert_eq!(
        c["capacity_check"]["status"], "no_headroom",
        "60 needed, 120 at 2× peak, 80 allowed: {c}"
    );
}

#[sqlx::test]
async fn a_change_that_sets_a_capacity_setting_without_figures_is_marked_not_checked(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("api").await;
    let r = change(
        &app,
        json!({"service": "api", "kind": "config", "summary": "Raise the HTTP client timeout to 30 s"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let c = r.json();
    assert_eq!(c["capacity_check"]["status"], "not_checked");
    assert!(
        c["capacity_check"]["explanation"]
            .as_str()
            .unwrap()
            .contains("changes a timeout but carries no figures")
    );
    // Figures without a rate or latency anywhere: a capacity change that cannot be checked yet.
    let r = change(
        &app,
        json!({"service": "api", "summary": "pool", "capacity": {"limit": "pool", "per_replica": 5, "replicas": 2}}),
    )
    .await;
    assert_eq!(r.json()["capacity_check"]["status"], "not_checked");
    let page = app.get("/changes").await;
    assert!(page.text.contains("capacity change, not checked"));
}

#[sqlx::test]
async fn bad_capacity_figures_are_refused_naming_the_field(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("api").await;
    for (capacity, field) in [
        (
            json!({"limit": "pool", "per_replica": 0, "replicas": 2}),
            "capacity.per_replica",
        ),
        (
            json!({"limit": "", "per_replica": 5, "replicas": 2}),
            "capacity.limit",
        ),
        (
            json!({"limit": "pool", "per_replica": 5, "replicas": 0}),
            "capacity.replicas",
        ),
        (
            json!({"limit": "pool", "per_replica": 5, "replicas": 2, "peak_latency_seconds": -1}),
            "capacity.peak_latency_seconds",
        ),
        (json!({"limit": "pool", "per_replica": 5}), "capacity"),
    ] {
        let r = change(
            &app,
            json!({"service": "api", "summary": "x", "capacity": capacity}),
        )
        .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{capacity}: {}",
            r.text
        );
        assert!(r.text.contains(field), "{capacity}: {}", r.text);
    }
    let r = app
        .post(
            "/api/v1/services",
            json!({"name": "slow", "tier": 2, "peak_latency_seconds": 0}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("peak_latency_seconds"), "{}", r.text);
    let listed = app.get("/api/v1/changes").await.json();
    assert_eq!(
        listed["items"].as_array().unwrap().len(),
        0,
        "nothing stored"
    );
    assert_eq!(
        app.get("/api/v1/services/slow").await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test]
async fn inc_1187s_change_is_flagged_84_short_with_the_arithmetic(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let suspects = app
        .get("/api/v1/incidents/INC-1187/suspect-changes")
        .await
        .json();
    let trigger = &suspects["items"][0];
    assert_eq!(trigger["verdict"], "confirmed_trigger");
    assert_eq!(trigger["capacity"]["limit"], "MaxConnectionsPerServer");
    let check = &trigger["capacity_check"];
    assert_eq!(check["status"], "under_provisioned");
    let a = &check["arithmetic"];
    assert_eq!(
        (
            &a["needed_at_peak"],
            &a["needed_per_replica_at_peak"],
            &a["allowed"],
            &a["short_at_peak"]
        ),
        (&json!(144), &json!(24), &json!(60), &json!(84))
    );
    let arithmetic = "120 req/s × 1.2 s = 144 concurrent requests needed at peak, 24 per replica across 6 replicas; MaxConnectionsPerServer = 10 per replica allows 60 in all → 84 short.";
    assert!(
        check["explanation"]
            .as_str()
            .unwrap()
            .starts_with(arithmetic)
    );
    for path in [
        "/incidents/INC-1187",
        "/services/payments-gateway",
        "/changes",
    ] {
        let page = app.get(path).await;
        assert!(
            page.text.contains("under-provisioned") && page.text.contains(arithmetic),
            "{path}"
        );
    }
    // The day's other changes touch no capacity setting.
    for s in suspects["items"].as_array().unwrap()[1..].iter() {
        assert!(s["capacity_check"].is_null(), "{s}");
    }
}

#[sqlx::test]
async fn a_change_recorded_from_the_page_is_checked_and_a_bad_one_is_shown_again(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let mut fields = vec![
        ("service", "payments-gateway"),
        ("kind", "config"),
        ("summary", "Cap processor connections"),
        ("capacity_limit", "MaxConnectionsPerServer"),
        ("capacity_per_replica", "ten"),
        ("capacity_replicas", "6"),
        ("capacity_peak_requests_per_second", "120"),
        ("capacity_peak_latency_seconds", "1.2"),
    ];
    let r = app.form("/changes", &fields).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("<strong>Per replica</strong>")
            && r.text.contains("Cap processor connections")
    );
    fields[4] = ("capacity_per_replica", "10");
    fields[0] = ("service", "nope");
    let r = app.form("/changes", &fields).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("there is no service named"));
    let listed = app.get("/api/v1/changes").await.json();
    assert!(
        listed["items"].as_array().unwrap().is_empty(),
        "nothing stored"
    );
    fields[0] = ("service", "payments-gateway");
    let r = app.form("/changes", &fields).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let c = &app.get("/api/v1/changes").await.json()["items"][0];
    assert_eq!(c["capacity_check"]["arithmetic"]["short_at_peak"], 84);
    let page = app.get("/changes").await;
    assert!(page.text.contains("under-provisioned") && page.text.contains("→ 84 short"));
}

/// The change list's date filters read mm/dd/yyyy in an en-US browser. They are ISO text now,
/// and a filter the server cannot read is named on the list page itself (422), kept as typed.
#[sqlx::test]
async fn the_change_lists_take_iso_dates_and_name_one_they_cannot_read(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let page = app.get("/changes").await;
    assert!(!page.text.contains(r#"type="date""#), "{}", page.text);
    assert!(
        page.text.contains(
            r#"name="from" inputmode="numeric" pattern="\d{4}-\d{2}-\d{2}" placeholder="YYYY-MM-DD""#
        ),
        "{}",
        page.text
    );
    for path in ["/changes", "/services/payments-gateway/changes"] {
        let r = app.get(&format!("{path}?from=09%2F17%2F2026")).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert!(
            r.text
                .contains(r#"<p class="field-error" role="alert"><strong>From</strong>"#),
            "{path}: {}",
            r.text
        );
        assert!(
            r.text.contains(r#"value="09/17/2026""#),
            "{path}: kept as typed: {}",
            r.text
        );
        assert!(r.text.contains("Fix the filters"), "{path}");
    }
    let r = app.get("/changes?from=2026-09-17&to=2026-09-18").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.contains(r#"value="2026-09-17""#));
}
