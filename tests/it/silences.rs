//! Silences: matching alerts stored and counted but opening no incident and paging nobody;
//! joining an open incident noted, not raised; the end handing still-firing alerts back to
//! routing; matchers as amtool writes them; windows, the admin's limit, the preview, the pages.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Creds, Hook, TestApp, alertmanager_payload};
use serde_json::{Value, json};
use sqlx::PgPool;

pub async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// payments-gateway paged through its policy, and a rule routing alerts to their service.
pub async fn paged_service(app: &TestApp) -> Hook {
    crate::paging::payments(app).await;
    app.service("search").await;
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "By service", "conditions": ["labels.service exists"], "service": "{labels.service}"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    app.integration("prod-alertmanager", "alertmanager").await
}

async fn silence(app: &TestApp, as_: &Creds, body: Value) -> common::Res {
    app.call_as(
        as_,
        Method::POST,
        "/api/v1/silences",
        &[],
        Some(&body.to_string()),
    )
    .await
}

pub fn fire(group: &str, fps: &[&str], service: &str) -> Value {
    let alerts: Vec<(&str, &str)> = fps.iter().map(|f| (*f, "firing")).collect();
    alertmanager_payload(
        group,
        &alerts,
        json!({"service": service, "severity": "critical"}),
    )
}

#[sqlx::test]
async fn a_silence_holds_matching_alerts_and_its_end_hands_the_firing_ones_to_routing(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let oncall = app.account("oncall@example.com", "responder").await;
    // The lane has read the (no) silences before the silence is made: it must notice the change.
    let r = app
        .alert(
            "alertmanager",
            &am,
            &fire("Http5xxHigh", &["w1"], "payments-gateway"),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_keys().await.len(), 1);
    let escalations = || count(&pool, "select count(*) from escalations");
    assert_eq!(escalations().await, 1);

    // Made from matcher text as amtool writes it.
    let r = silence(
        &app,
        &oncall,
        json!({"matchers": ["alertname=DiskFull service=~\"pay.*\""], "duration": "1h",
               "comment": "Disk migration CHG-2211"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.header("etag"), Some("\"v1\""));
    let s = r.json();
    let id = s["id"].as_i64().unwrap();
    assert_eq!(
        s["matchers"],
        json!(["alertname=\"DiskFull\"", "service=~\"pay.*\""])
    );
    assert_eq!(s["state"], "active");
    assert_eq!(s["created_by"], "oncall");
    assert_eq!(
        r.header("location").map(str::to_owned),
        Some(format!("/api/v1/silences/{id}"))
    );

    // Matching alerts: stored and counted, no incident, nobody paged; a resend counts again.
    let disk = fire("DiskFull", &["d1", "d2"], "payments-gateway");
    for _ in 0..2 {
        let r = app.alert("alertmanager", &am, &disk).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }
    assert_eq!(
        app.incident_keys().await.len(),
        1,
        "the silence opened nothing"
    );
    assert_eq!(escalations().await, 1, "and paged nobody");
    let got = app.get(&format!("/api/v1/silences/{id}")).await.json();
    assert_eq!(
        (got["alerts"].clone(), got["deliveries"].clone()),
        (json!(2), json!(4))
    );
    let held = app
        .get(&format!("/api/v1/silences/{id}/alerts"))
        .await
        .json();
    assert_eq!(held["items"].as_array().unwrap().len(), 2);
    assert_eq!(held["items"][0]["incident"], Value::Null);
    assert_eq!(held["items"][0]["status"], "firing");

    // Alerts it does not match go on as before: another service, another alert name.
    let mut search = fire("DiskFull", &["s1"], "search");
    search["groupKey"] = json!("{}:{alertname=\"DiskFull\", service=\"search\"}");
    app.alert("alertmanager", &am, &search).await;
    app.alert(
        "alertmanager",
        &am,
        &fire("QueueDepth", &["q1"], "payments-gateway"),
    )
    .await;
    assert_eq!(app.incident_keys().await.len(), 3);
    assert_eq!(
        escalations().await,
        2,
        "search has no policy; payments does"
    );

    // One of the held alerts resolves while silenced.
    let d2_resolved = alertmanager_payload(
        "DiskFull",
        &[("d2", "resolved")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alert("alertmanager", &am, &d2_resolved).await;

    // Ended by a person: If-Match is needed, and a second end is refused.
    let path = format!("/api/v1/silences/{id}/expire");
    let r = app.call_as(&oncall, Method::POST, &path, &[], None).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED, "{}", r.text);
    let r = app
        .call_as(
            &oncall,
            Method::POST,
            &path,
            &[("if-match", "\"v1\"")],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["state"], "expired");
    assert_eq!(r.json()["expired_by"], "oncall");
    let r = app
        .call_as(&oncall, Method::POST, &path, &[("if-match", "*")], None)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    // The end hands d1, still firing, to routing at once (in whichever replica runs it first):
    // it opens its incident and pages; d2 had resolved and stays quiet. Once only.
    // Three replicas' engines racing: each silence is handed back once.
    for _ in 0..2 {
        let (a, b, c) = tokio::join!(
            quell::alerts::unsilence::hand_back(&pool),
            quell::alerts::unsilence::hand_back(&pool),
            quell::alerts::unsilence::hand_back(&pool)
        );
        for r in [a, b, c] {
            r.unwrap();
        }
    }
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 4, "one incident for the still-firing alert");
    let opened = app.incident_json(&keys[3]).await;
    assert_eq!(opened["title"], "DiskFull on d1");
    assert_eq!(opened["alert_count"], 1);
    assert_eq!(escalations().await, 3, "and its service's policy pages");
    assert_eq!(
        count(
            &pool,
            "select count(*) from silenced_alerts where status = 'released'"
        )
        .await,
        1
    );
    // After the end, the same alerts open incidents as usual (d1 joins its group's).
    app.alert("alertmanager", &am, &disk).await;
    assert_eq!(app.incident_keys().await.len(), 4);
    assert_eq!(app.incident_json(&keys[3]).await["alert_count"], 2);

    // Every change is in the audit log.
    let audit = count(
        &pool,
        "select count(*) from audit_log where action in ('silence.create', 'silence.expire')",
    )
    .await;
    assert_eq!(audit, 2);
}

#[sqlx::test]
async fn a_silenced_alert_joining_an_open_incident_is_noted_and_raises_nothing(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let warn = alertmanager_payload(
        "Latency",
        &[("l1", "firing")],
        json!({"service": "payments-gateway", "severity": "warning"}),
    );
    app.alert("alertmanager", &am, &warn).await;
    let key = app.incident_keys().await[0].clone();
    assert_eq!(app.incident_json(&key).await["severity"], "Sev3");

    let r = app
        .post(
            "/api/v1/silences",
            json!({"matchers": ["{instance=\"l2:9100\"}"], "duration": "30m", "comment": "l2 is being rebuilt"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    // A critical alert of the same group joins the open incident, silenced.
    let crit = alertmanager_payload(
        "Latency",
        &[("l1", "firing"), ("l2", "firing")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    let r = app.alert("alertmanager", &am, &crit).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(app.incident_keys().await.len(), 1);
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["alert_count"], 2);
    assert_eq!(
        incident["severity"], "Sev3",
        "a silenced alert raises nothing"
    );
    let alerts = app
        .get(&format!("/api/v1/incidents/{key}/alerts"))
        .await
        .json();
    let l2 = alerts["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["dedup_key"] == "l2")
        .unwrap()
        .clone();
    assert_eq!(l2["silence_id"], id);
    let notes: Vec<String> = app
        .timeline(&key)
        .await
        .iter()
        .filter(|e| e["kind"] == "note")
        .map(|e| e["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        notes,
        [format!(
            "Alert \"Latency on l2\" joined while silence {id} held it; nobody was paged for it"
        )]
    );
    let held = app
        .get(&format!("/api/v1/silences/{id}/alerts"))
        .await
        .json();
    assert_eq!(held["items"][0]["incident"], key.as_str());
    assert_eq!(
        count(&pool, "select count(*) from silenced_alerts").await,
        0
    );
}

#[sqlx::test]
async fn a_silence_that_has_not_started_holds_nothing_yet(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let starts = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    let r = app
        .post(
            "/api/v1/silences",
            json!({"matchers": ["alertname=DiskFull"], "starts_at": starts, "duration": "2h", "comment": "tonight's upgrade"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["state"], "pending");
    app.alert(
        "alertmanager",
        &am,
        &fire("DiskFull", &["d1"], "payments-gateway"),
    )
    .await;
    assert_eq!(app.incident_keys().await.len(), 1, "not yet silenced");
    // Listed among the current ones, not the expired.
    let current = app.get("/api/v1/silences").await.json();
    assert_eq!(current["items"].as_array().unwrap().len(), 1);
    let over = app.get("/api/v1/silences?state=expired").await.json();
    assert!(over["items"].as_array().unwrap().is_empty());
    let r = app.get("/api/v1/silences?state=maybe").await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "state".into())
    );
}

#[sqlx::test]
async fn refusals_name_the_field_and_store_nothing(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let viewer = app.account("viewer@example.com", "viewer").await;
    let responder = app.account("resp@example.com", "responder").await;
    let ok = json!({"matchers": ["alertname=DiskFull"], "duration": "2h", "comment": "why"});
    for (change, field) in [
        (json!({"matchers": []}), "matchers"),
        (json!({"matchers": ["alertname"]}), "matchers"),
        (json!({"matchers": ["job!=node"]}), "matchers"),
        (json!({"matchers": ["job=~\"(\""]}), "matchers"),
        (json!({"duration": null}), "ends_at"),
        (json!({"duration": "soon"}), "duration"),
        (json!({"ends_at": "2020-01-01T00:00:00Z"}), "duration"),
        (
            json!({"duration": null, "ends_at": "2020-01-01T00:00:00Z"}),
            "ends_at",
        ),
        (json!({"duration": "15d"}), "ends_at"),
        (json!({"comment": "  "}), "comment"),
    ] {
        let mut body = ok.clone();
        for (k, v) in change.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        let r = silence(&app, &responder, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body}: {}", r.text);
    }
    let r = silence(&app, &viewer, ok.clone()).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert_eq!(count(&pool, "select count(*) from silences").await, 0);
    // Matchers may come in pieces; the set is judged whole.
    let pieces =
        json!({"matchers": ["alertname=DiskFull", "env!=dev"], "duration": "1h", "comment": "x"});
    let r = silence(&app, &responder, pieces).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(
        r.json()["matchers"],
        json!(["alertname=\"DiskFull\"", "env!=\"dev\""])
    );
    sqlx::query("delete from silences")
        .execute(&pool)
        .await
        .unwrap();

    // An admin shortens the longest silence; a responder may not.
    let r = app.get("/api/v1/silences/policy").await;
    assert_eq!(r.json()["max_hours"], 336);
    let etag = r.header("etag").unwrap().to_owned();
    let body = json!({"max_hours": 1}).to_string();
    let r = app
        .call_as(
            &responder,
            Method::PUT,
            "/api/v1/silences/policy",
            &[("if-match", &etag)],
            Some(&body),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app
        .call(
            Method::PUT,
            "/api/v1/silences/policy",
            &[("if-match", &etag)],
            Some(&body),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .call(
            Method::PUT,
            "/api/v1/silences/policy",
            &[("if-match", &etag)],
            Some(&body),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::PRECONDITION_FAILED,
        "a stale copy: {}",
        r.text
    );
    let r = silence(&app, &responder, ok.clone()).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "ends_at".into())
    );
    assert!(r.text.contains("at most 1 h"), "{}", r.text);
    let r = silence(
        &app,
        &responder,
        json!({"matchers": ["alertname=DiskFull"], "duration": "59m", "comment": "short"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[sqlx::test]
async fn a_preview_lists_last_weeks_alerts_a_draft_would_hold(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alert(
        "alertmanager",
        &am,
        &fire("DiskFull", &["d1", "d2"], "payments-gateway"),
    )
    .await;
    app.alert("alertmanager", &am, &fire("DiskFull", &["s1"], "search"))
        .await;
    let r = app
        .post(
            "/api/v1/silences/preview",
            json!({"matchers": ["alertname=\"DiskFull\", service!=\"search\""], "duration": "1h", "comment": ""}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let p = r.json();
    assert_eq!(p["considered"], 3);
    assert_eq!(p["matched"], 2);
    assert_eq!(p["incidents"], json!(["INC-1"]));
    assert_eq!(
        p["matchers"],
        json!(["alertname=\"DiskFull\"", "service!=\"search\""])
    );
    assert_eq!(
        count(&pool, "select count(*) from silences").await,
        0,
        "nothing saved"
    );
    let r = app
        .post(
            "/api/v1/silences/preview",
            json!({"matchers": ["service!=search"]}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "matchers".into())
    );
}

#[sqlx::test]
async fn silences_are_made_previewed_and_ended_from_the_pages(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let oncall = app.account("oncall@example.com", "responder").await;
    let hostile = "<script>alert(1)</script>";
    let body = alertmanager_payload(
        "DiskFull",
        &[("d1", "firing")],
        json!({"service": "payments-gateway", "team": hostile}),
    );
    app.alert("alertmanager", &am, &body).await;
    let key = app.incident_keys().await[0].clone();

    // "Silence alerts like this" from the incident fills the form from its first alert.
    let page = app
        .call_as(
            &oncall,
            Method::GET,
            &format!("/incidents/{key}"),
            &[],
            None,
        )
        .await;
    assert!(
        page.text.contains(&format!("/silences?incident={key}")),
        "the incident links to it"
    );
    let r = app
        .call_as(
            &oncall,
            Method::GET,
            &format!("/silences?incident={key}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(
        r.text.contains("alertname=&#34;DiskFull&#34;")
            || r.text.contains("alertname=&quot;DiskFull&quot;"),
        "{}",
        r.text
    );
    assert!(!r.text.contains(hostile), "label text is escaped");
    assert!(
        r.text.contains("would have held <strong>1</strong>"),
        "and previewed"
    );

    // Made from the form: sent to its page.
    let r = app
        .form_as(
            &oncall,
            "/silences",
            &[
                ("matchers", "alertname=DiskFull"),
                ("duration", "2h"),
                ("comment", hostile),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let to = r.header("location").unwrap().to_owned();
    assert!(to.starts_with("/silences/"), "{to}");
    let shown = app.call_as(&oncall, Method::GET, &to, &[], None).await;
    assert_eq!(shown.status, StatusCode::OK);
    assert!(
        shown.text.contains("alertname=&#34;DiskFull&#34;")
            || shown.text.contains("alertname=&quot;DiskFull&quot;")
    );
    assert!(
        !shown.text.contains(hostile) && shown.text.contains("script&#62;alert(1)"),
        "{}",
        shown.text
    );
    let list = app
        .call_as(&oncall, Method::GET, "/silences", &[], None)
        .await;
    assert!(list.text.contains(&to));

    // A bad form comes back naming the field, with what was typed.
    let r = app
        .form_as(
            &oncall,
            "/silences",
            &[
                ("matchers", "alertname"),
                ("duration", "2h"),
                ("comment", "x"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("has no comparison"), "{}", r.text);
    let r = app
        .form_as(
            &oncall,
            "/silences",
            &[
                ("matchers", "alertname=X"),
                ("ends_at", "tomorrow"),
                ("comment", "x"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("2026-12-24T18:00"), "{}", r.text);
    let r = app
        .form_as(
            &oncall,
            "/silences/preview",
            &[
                ("matchers", "alertname=DiskFull"),
                ("duration", "2h"),
                ("comment", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(
        r.text.contains("would have held <strong>1</strong>"),
        "{}",
        r.text
    );

    // Ended from its page.
    let id = to.trim_start_matches("/silences/");
    let r = app
        .form_as(&oncall, &format!("{to}/expire"), &[("version", "1")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let got = app.get(&format!("/api/v1/silences/{id}")).await.json();
    assert_eq!(got["state"], "expired");
    assert_eq!(count(&pool, "select count(*) from silences").await, 1);

    // Viewers read the page but get no form; the admin's limit form is theirs alone.
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(&viewer, Method::GET, "/silences", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(!r.text.contains("action=\"/silences\"") && !r.text.contains("/silences/policy"));
    let r = app
        .form_as(
            &oncall,
            "/silences/policy",
            &[("max_hours", "2"), ("version", "1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let admin = app.account("root@example.com", "admin").await;
    let r = app
        .form_as(
            &admin,
            "/silences/policy",
            &[("max_hours", "lots"), ("version", "1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let r = app
        .form_as(
            &admin,
            "/silences/policy",
            &[("max_hours", "2"), ("version", "1")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(
        app.get("/api/v1/silences/policy").await.json()["max_hours"],
        2
    );
}

#[sqlx::test]
async fn amtool_speaks_to_quell_as_to_alertmanager(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let oncall = app.account("oncall@example.com", "responder").await;
    let base = "/api/v1/alertmanager/api/v2";
    // What amtool 0.25 sends, as captured from `amtool silence add -c upgrade -d 1h -a me
    // alertname=Foo 'service=~"pay.*"'`: it asks the status first.
    let r = app
        .call_as(&oncall, Method::GET, &format!("{base}/status"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["versionInfo"]["version"].is_string());
    let now = chrono::Utc::now();
    let body = json!({"comment": "upgrade", "createdBy": "me",
        "endsAt": now + chrono::Duration::hours(1), "startsAt": now,
        "matchers": [{"isEqual": true, "isRegex": false, "name": "alertname", "value": "Foo"},
                     {"isEqual": true, "isRegex": true, "name": "service", "value": "pay.*"},
                     {"isEqual": false, "isRegex": false, "name": "env", "value": "dev"}]});
    let post = |b: Value| {
        let app = &app;
        let oncall = &oncall;
        async move {
            app.call_as(
                oncall,
                Method::POST,
                &format!("{base}/silences"),
                &[],
                Some(&b.to_string()),
            )
            .await
        }
    };
    let r = post(body.clone()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let id = r.json()["silenceID"].as_str().unwrap().to_owned();
    let ours = app.get(&format!("/api/v1/silences/{id}")).await.json();
    assert_eq!(
        ours["matchers"],
        json!(["alertname=\"Foo\"", "service=~\"pay.*\"", "env!=\"dev\""])
    );
    assert_eq!(ours["comment"], "upgrade (by me)");
    assert_eq!(ours["created_by"], "oncall");

    let listed = app
        .call_as(&oncall, Method::GET, &format!("{base}/silences"), &[], None)
        .await;
    let listed = listed.json();
    let one = &listed.as_array().unwrap()[0];
    assert_eq!(one["id"], id.as_str());
    assert_eq!(one["status"]["state"], "active");
    assert_eq!(one["matchers"], body["matchers"]);
    let got = app.get(&format!("{base}/silence/{id}")).await;
    assert_eq!(got.json()["id"], id.as_str());

    // amtool silence update: the id names the silence replaced, which ends.
    let mut update = body.clone();
    update["id"] = json!(id);
    update["comment"] = json!("longer");
    let r = post(update).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let new_id = r.json()["silenceID"].as_str().unwrap().to_owned();
    assert_ne!(new_id, id);
    assert_eq!(
        app.get(&format!("/api/v1/silences/{id}")).await.json()["state"],
        "expired"
    );

    // amtool silence expire.
    let r = app
        .call_as(
            &oncall,
            Method::DELETE,
            &format!("{base}/silence/{new_id}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        app.get(&format!("/api/v1/silences/{new_id}")).await.json()["state"],
        "expired"
    );

    // Refusals name the field; a viewer may read but not make one.
    let mut bad = body.clone();
    bad["matchers"] = json!([{"name": "job", "value": "x", "isEqual": false}]);
    let r = post(bad).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "matchers".into())
    );
    let mut bad = body.clone();
    bad["endsAt"] = json!(now - chrono::Duration::hours(1));
    let r = post(bad).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, "ends_at".into())
    );
    let viewer = app.account("viewer@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            &format!("{base}/silences"),
            &[],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(count(&pool, "select count(*) from silences").await, 2);
}

#[sqlx::test]
async fn in_one_post_a_silenced_alert_never_decides_the_incident_an_unsilenced_one_opens(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let r = app
        .post(
            "/api/v1/silences",
            json!({"matchers": ["instance=\"d1:9100\""], "duration": "1h", "comment": "d1 rebuilt"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // One notification, one group: the silenced critical alert first, an unsilenced warning.
    let mut body = alertmanager_payload(
        "Mixed",
        &[("d1", "firing"), ("w1", "firing")],
        json!({"service": "search", "severity": "warning"}),
    );
    body["alerts"][0]["labels"]["severity"] = json!("critical");
    body["alerts"][0]["labels"]["service"] = json!("payments-gateway");
    let r = app.alert("alertmanager", &am, &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 1);
    let incident = app.incident_json(&keys[0]).await;
    assert_eq!(
        incident["title"], "Mixed on w1",
        "the unsilenced alert opens it"
    );
    assert_eq!(incident["severity"], "Sev3");
    assert_eq!(incident["service"], "search");
    assert_eq!(
        count(&pool, "select count(*) from escalations").await,
        0,
        "payments is not paged"
    );

    // amtool's `silence query alertname=…` filters on the server.
    let other = json!({"matchers": ["alertname=Other"], "duration": "1h", "comment": "x"});
    assert_eq!(
        app.post("/api/v1/silences", other).await.status,
        StatusCode::CREATED
    );
    let q = app
        .get("/api/v1/alertmanager/api/v2/silences?filter=alertname%3DOther")
        .await
        .json();
    assert_eq!(q.as_array().unwrap().len(), 1);
    assert_eq!(q[0]["matchers"][0]["value"], "Other");
    let all = app.get("/api/v1/alertmanager/api/v2/silences").await.json();
    assert_eq!(all.as_array().unwrap().len(), 2);
}
