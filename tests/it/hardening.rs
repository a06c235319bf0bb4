//! What a hostile probe of a running Quell found, each finding reproduced as it was found and
//! checked fixed: lists broken by an item without a due date, NULs that cost whole alert batches
//! and answered 500s, refusal floods that grew the audit log, open redirects after sign-in,
//! session rows for anonymous visitors, revived tokens, shared idempotency keys, escaping rule
//! regexes, replayed signed webhooks, payload details told to senders without a key, and the
//! audit log's owner switching its guard off.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Creds, Hook, PASSWORD, TestApp, alertmanager_payload, signed_headers};
use serde_json::{Value, json};
use sqlx::PgPool;

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// F1: an open action item without a due date broke every list that shows action items.
#[sqlx::test]
async fn an_action_item_without_a_due_date_is_never_overdue_and_every_list_answers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let key = app.past_incident(60).await;
    let r = app
        .form(
            &format!("/incidents/{key}/postmortem/action-items"),
            &[
                ("action", "Alert on queue depth"),
                ("type", "detect"),
                ("owner", "ana"),
                ("due_on", "2020-01-01"),
                ("work_item", ""),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let items = app.get("/api/v1/action-items").await.json();
    let item = &items["items"][0];
    assert_eq!(item["overdue"], true, "due in 2020 and open: overdue");
    // Any responder can take the due date away — the probe's way in.
    let r = app
        .call_as(
            &ana,
            Method::PATCH,
            &format!("/api/v1/action-items/{}", item["id"]),
            &[("if-match", &format!("\"v{}\"", item["version"]))],
            Some(r#"{"due_on": null}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app.get("/api/v1/action-items").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.json()["items"][0]["overdue"],
        false,
        "no due date: never overdue"
    );
    assert_eq!(r.json()["items"][0]["due_on"], Value::Null);
    let r = app.get("/api/v1/action-items?overdue=true").await;
    assert_eq!(r.json()["items"], json!([]));
    for page in [
        "/action-items",
        "/action-items?overdue=true",
        "/postmortems",
    ] {
        let r = app.get(page).await;
        assert_eq!(r.status, StatusCode::OK, "{page}: {}", r.text);
    }
    // The owner's own list of unfinished items heads the incident list.
    let r = app
        .call_as(&ana, Method::GET, "/incidents", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(
        r.text.contains("Alert on queue depth"),
        "the item is listed"
    );
}

/// F2: one NUL anywhere in an alert made PostgreSQL refuse the whole post, answered 503, so the
/// sender retried forever and none of the post's alerts opened an incident.
#[sqlx::test]
async fn a_nul_in_one_alert_of_ten_loses_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("prometheus", "alertmanager").await;
    let fingerprints: Vec<String> = (0..10).map(|i| format!("fp{i}")).collect();
    let alerts: Vec<(&str, &str)> = fingerprints
        .iter()
        .map(|f| (f.as_str(), "firing"))
        .collect();
    let mut body = alertmanager_payload("DiskFull", &alerts, json!({"service": "db"}));
    body["groupKey"] = json!("{}:{alertname=\"Disk\u{0}Full\"}");
    let hostile = &mut body["alerts"][3];
    hostile["labels"]["te\u{0}am"] = json!("st\u{0}orage");
    hostile["annotations"]["summary"] = json!("disk\u{0} full");
    hostile["fingerprint"] = json!("fp\u{0}3");
    let r = app.alert("alertmanager", &h, &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(
        app.stored_alerts().await,
        10,
        "every alert of the post is stored"
    );
    assert_eq!(
        app.incident_keys().await.len(),
        1,
        "one incident for the group"
    );
    let stored: (String, Value, String) =
        sqlx::query_as("select dedup_key, labels, summary from alerts where dedup_key = 'fp3'")
            .fetch_one(&app.pool)
            .await
            .expect("the alert is stored with the NUL removed");
    assert_eq!(stored.1["team"], "storage");
    assert_eq!(stored.2, "disk full");
    // The same post again is a retry: deduplicated on the cleaned keys, nothing new.
    let r = app.alert("alertmanager", &h, &body).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(app.stored_alerts().await, 10);

    // PagerDuty events and change events, and the generic format.
    let pd = app.integration("pd", "pagerduty-events-v2").await;
    let r = app
        .hook(
            "/v2/enqueue",
            &[],
            &json!({"routing_key": pd.key, "event_action": "trigger",
                    "payload": {"summary": "Checkout\u{0} failing", "source": "web\u{0}1",
                                "severity": "critical", "custom_details": {"a\u{0}": "b\u{0}"}}})
            .to_string(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let r = app
        .hook(
            "/v2/change/enqueue",
            &[],
            &json!({"routing_key": pd.key,
                    "payload": {"summary": "Deploy\u{0} 42", "source": "ci", "custom_details": {"sha": "ab\u{0}c"}}})
            .to_string(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let generic = app.integration("cron", "generic").await;
    let r = app
        .alert(
            "generic",
            &generic,
            &json!({"title": "Backup\u{0} late", "metadata": {"k\u{0}": "v\u{0}"}, "dedup_key": "b\u{0}1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    assert_eq!(r.json()["dedup_key"], "b1");
    assert_eq!(app.stored_alerts().await, 12);
    assert_eq!(count(&app.pool, "select count(*) from changes").await, 1);
}

/// A payload PostgreSQL refuses for good is a 400 for its own post, never a 503, and the posts
/// written in the same batch are stored.
#[sqlx::test]
async fn a_payload_the_database_refuses_is_a_400_and_the_rest_of_the_batch_is_stored(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("prometheus", "alertmanager").await;
    // A value the database will never take (here: by a rule of this test's own database).
    sqlx::raw_sql(
        "create function refuse_poison() returns trigger language plpgsql as $$
         begin
             if new.summary like '%poison%' then
                 raise exception 'poison' using errcode = '22023';
             end if;
             return new;
         end $$;
         create trigger refuse_poison before insert on alerts
             for each row execute function refuse_poison();",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let posts = (0..10).map(|i| {
        let fp = format!("fp{i}");
        let mut body = alertmanager_payload(&format!("G{i}"), &[(&fp, "firing")], json!({}));
        if i == 4 {
            body["alerts"][0]["annotations"]["summary"] = json!("poison");
        }
        let app = &app;
        let h = &h;
        async move { app.alert("alertmanager", h, &body).await }
    });
    let answers = futures_util::future::join_all(posts).await;
    for (i, r) in answers.iter().enumerate() {
        if i == 4 {
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
            assert_eq!(r.code(), "unstorable_payload");
            assert!(r.header("retry-after").is_none());
        } else {
            assert_eq!(r.status, StatusCode::ACCEPTED, "post {i}: {}", r.text);
        }
    }
    assert_eq!(app.stored_alerts().await, 9);
}

/// F3: a NUL in people's input answered 500 and logged an error; now it is refused with a 422
/// naming the field, and nothing changes.
#[sqlx::test]
async fn a_nul_in_api_input_is_refused_naming_the_field(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments").await;
    let key = app.past_incident(30).await;
    let cases: Vec<(Method, String, Value, &str)> = vec![
        (
            Method::POST,
            "/api/v1/incidents".into(),
            json!({"title": "a\u{0}b", "severity": "Sev2"}),
            "title",
        ),
        (
            Method::POST,
            format!("/api/v1/incidents/{key}/timeline"),
            json!({"body": "x\u{0}"}),
            "body",
        ),
        (
            Method::POST,
            format!("/api/v1/incidents/{key}/updates"),
            json!({"audience": "internal", "body": "\u{0}"}),
            "body",
        ),
        (
            Method::POST,
            format!("/api/v1/incidents/{key}/postmortem/comments"),
            json!({"part": "summary", "body": "\u{0}"}),
            "body",
        ),
        (
            Method::PUT,
            format!("/api/v1/incidents/{key}/roles/scribe"),
            json!({"person": "ad\u{0}min"}),
            "person",
        ),
        (
            Method::POST,
            "/api/v1/services".into(),
            json!({"name": "svc", "tier": 1, "team": "t\u{0}"}),
            "team",
        ),
        (
            Method::POST,
            "/api/v1/users".into(),
            json!({"email": "n@example.com", "role": "viewer", "password": "long enough\u{0}pw"}),
            "password",
        ),
        (
            Method::POST,
            "/api/v1/tokens".into(),
            json!({"name": "bridge\u{0}"}),
            "name",
        ),
        (
            Method::POST,
            "/api/v1/routing-rules".into(),
            json!({"name": "r", "conditions": ["labels.a = \u{0}"]}),
            "conditions[0]",
        ),
        (
            Method::POST,
            "/api/v1/work-item-trackers".into(),
            json!({"prefix": "AB#", "name": "\u{0}", "url_template": "https://x/{n}"}),
            "name",
        ),
        (
            Method::POST,
            "/api/v1/incidents".into(),
            json!({"title": "t", "severity": "Sev2", "meta\u{0}": 1}),
            "meta",
        ),
    ];
    let before = count(&app.pool, "select count(*) from audit_log").await;
    for (method, path, body, field) in cases {
        let r = app
            .call(method.clone(), &path, &[], Some(&body.to_string()))
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{method} {path}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{method} {path}");
        assert!(r.text.contains("NUL"), "{}", r.text);
    }
    assert_eq!(
        count(&app.pool, "select count(*) from audit_log").await,
        before,
        "nothing was changed"
    );
    assert_eq!(app.incident_keys().await.len(), 1);
    // Query strings and paths.
    for (path, status, field) in [
        ("/api/v1/incidents?q=a%00b", 422, "q"),
        ("/api/v1/incidents?service=%00", 422, "service"),
        ("/api/v1/action-items?owner=%00", 422, "owner"),
        ("/api/v1/audit?actor=x%00&action=y", 422, "actor"),
        ("/api/v1/search?q=%00", 422, "q"),
        ("/api/v1/services/a%00b", 400, ""),
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status.as_u16(), status, "{path}: {}", r.text);
        if !field.is_empty() {
            assert_eq!(r.field(), field, "{path}");
        }
    }
    for page in [
        "/services/a%00b",
        "/search?q=%00",
        "/admin/audit?action=%00",
    ] {
        let r = app.get(page).await;
        assert!(r.status.is_client_error(), "{page}: {}", r.status);
        assert!(r.text.contains("<html"), "an error page for {page}");
    }
}

#[sqlx::test]
async fn a_nul_in_a_form_is_refused_and_a_nul_password_does_not_sign_in(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let version = app.incident_json(&key).await["version"].to_string();
    let r = app
        .form(
            &format!("/incidents/{key}/notes"),
            &[
                ("body", "checked\u{0}the dashboards"),
                ("version", &version),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("body"), "the page names the field");
    assert_eq!(app.timeline(&key).await.len(), 1, "only the opening");
    let browser = app.signed_out_browser().await;
    let r = app
        .form_as(
            &browser,
            "/login",
            &[
                ("email", common::ADMIN_EMAIL),
                ("password", &format!("{PASSWORD}\u{0}")),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.session_cookie(), None, "not signed in");
}

/// Failed sign-ins are counted under a hash of what was typed: a 50 KB email is a wrong email,
/// not a key too long for the database's index (which answered 500).
#[sqlx::test]
async fn a_huge_email_is_a_failed_sign_in(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let browser = app.signed_out_browser().await;
    let email = format!("{}@example.com", "a".repeat(50_000));
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("csrf", browser.csrf.as_deref().unwrap())
        .append_pair("email", &email)
        .append_pair("password", "not the password")
        .finish();
    let r = app
        .form_raw(
            &browser,
            "/login",
            body,
            &[("x-forwarded-for", &"9".repeat(20_000))],
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        &r.text[..200.min(r.text.len())]
    );
    let longest = count(
        &app.pool,
        "select max(length(key))::int8 from login_throttle",
    )
    .await;
    assert!(longest < 80, "{longest}");
}

/// Values far longer than any index entry PostgreSQL keeps (about 2.7 KB) are refused as wrong
/// fields, never stored halfway or answered 500.
#[sqlx::test]
async fn long_values_are_refused_as_fields_not_answered_500(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let long = "a".repeat(20_000);
    let cases = [
        (
            "/api/v1/users",
            json!({"email": format!("{long}@example.com"), "role": "viewer"}),
        ),
        (
            "/api/v1/users",
            json!({"email": "n@example.com", "name": long, "role": "viewer"}),
        ),
        (
            "/api/v1/integrations",
            json!({"name": long, "format": "generic"}),
        ),
        (
            "/api/v1/notification-channels",
            json!({"name": long, "kind": "slack", "url": "https://hooks.example/x"}),
        ),
        ("/api/v1/services", json!({"name": long, "tier": 1})),
        (
            "/api/v1/work-item-trackers",
            json!({"prefix": format!("{long}#"), "name": "x", "url_template": "https://x/{n}"}),
        ),
        (
            "/api/v1/routing-rules",
            json!({"name": long, "conditions": ["labels.a = b"]}),
        ),
        (
            "/api/v1/incidents",
            json!({"title": long, "severity": "Sev2"}),
        ),
    ];
    for (path, body) in cases {
        let r = app.post(path, body).await;
        assert!(
            r.status.is_client_error() || r.status.is_success(),
            "{path}: {} {}",
            r.status,
            &r.text[..300.min(r.text.len())]
        );
    }
}

/// F4: refusals were tallied by what the requester chose, so 1,000 made-up paths made 1,000
/// permanent audit rows.
#[sqlx::test]
async fn a_flood_of_refusals_from_one_address_adds_a_handful_of_audit_rows(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let refused = || {
        count(
            &app.pool,
            "select count(*) from audit_log where outcome = 'refused'",
        )
    };
    let before = refused().await;
    let nobody = Creds::default();
    let flood = (0..1000).map(|i| {
        let app = &app;
        let nobody = &nobody;
        async move {
            let path = if i == 0 {
                format!("/x-{}", "y".repeat(50_000))
            } else {
                format!("/x-{i}")
            };
            app.call_as(
                nobody,
                Method::POST,
                &path,
                &[
                    ("origin", "https://evil.example"),
                    ("x-forwarded-for", "203.0.113.9"),
                ],
                None,
            )
            .await
            .status
        }
    });
    let answers = futures_util::future::join_all(flood).await;
    assert!(answers.iter().all(|s| *s == StatusCode::FORBIDDEN));
    let added = refused().await - before;
    // One row a minute per action, route and address: two if the flood straddles a minute.
    assert!((1..=2).contains(&added), "{added} rows for 1,000 refusals");
    let tally = count(
        &app.pool,
        "select coalesce(sum(count), 0)::int8 from audit_refusal_tally where action = 'csrf.cross_origin'",
    )
    .await;
    assert_eq!(tally, 1000, "every refusal is counted");
    let longest = count(&app.pool, "select max(length(target))::int8 from audit_log").await;
    assert!(longest <= 200, "targets are cut short: {longest}");

    // Webhooks with made-up integration ids, and sign-ins with made-up emails, likewise.
    let before = refused().await;
    for i in 0..200 {
        let r = app
            .hook(
                &format!("/hooks/alertmanager/{}", uuid::Uuid::new_v4()),
                &[
                    ("authorization", "Bearer nope"),
                    ("x-forwarded-for", "203.0.113.9"),
                ],
                "{}",
            )
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{i}");
    }
    for i in 0..20 {
        let browser = app.signed_out_browser().await;
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("csrf", browser.csrf.as_deref().unwrap())
            .append_pair("email", &format!("guess{i}@example.com"))
            .append_pair("password", "not the password")
            .finish();
        let r = app
            .form_raw(
                &browser,
                "/login",
                body,
                &[("x-forwarded-for", "203.0.113.9")],
            )
            .await;
        assert!(r.status.is_client_error());
    }
    let added = refused().await - before;
    // alerts.unauthorized, login.failed, login.throttled: at most two minutes of each.
    assert!(added <= 6, "{added} rows for 220 refusals");
}

/// F5: `next` after sign-in let control characters through: `/\t/evil.example` is
/// `//evil.example` to a browser, and `/\n/x` answered 500 after the sign-in succeeded.
#[sqlx::test]
async fn sign_in_never_leads_off_site(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (next, lands) in [
        ("/%09/evil.example", "/incidents"),
        ("/%0A/x", "/incidents"),
        ("/%0D%0ASet-Cookie:%20x=1", "/incidents"),
        ("/%5C/evil.example", "/incidents"),
        ("%2F%2Fevil.example", "/incidents"),
        ("https://evil.example/", "/incidents"),
        (
            "/incidents/INC-1?status=open",
            "/incidents/INC-1?status=open",
        ),
    ] {
        let browser = app.signed_out_browser().await;
        let page = app
            .call_as(
                &Creds::default(),
                Method::GET,
                &format!("/login?next={next}"),
                &[],
                None,
            )
            .await;
        assert_eq!(page.status, StatusCode::OK, "{next}");
        let body = format!(
            "csrf={}&email={}&password={}&next={next}",
            browser.csrf.as_deref().unwrap(),
            "admin%40quell.test",
            PASSWORD.replace(' ', "+"),
        );
        let r = app.form_raw(&browser, "/login", body, &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{next}: {}", r.text);
        assert_eq!(r.header("location"), Some(lands), "{next}");
    }
}

/// F6: every anonymous `GET /login` wrote a session row, kept for 12 hours.
#[sqlx::test]
async fn the_sign_in_page_stores_nothing_for_anonymous_visitors(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let sessions = || count(&app.pool, "select count(*) from sessions");
    let before = sessions().await;
    for _ in 0..500 {
        let r = app
            .call_as(&Creds::default(), Method::GET, "/login", &[], None)
            .await;
        assert_eq!(r.status, StatusCode::OK);
    }
    for page in ["/nowhere", "/incidents"] {
        app.call_as(&Creds::default(), Method::GET, page, &[], None)
            .await;
    }
    assert_eq!(
        sessions().await,
        before,
        "no session rows for anonymous visits"
    );

    // The form's token must be the one its cookie holds, and signed by Quell.
    let browser = app.signed_out_browser().await;
    let other = app.signed_out_browser().await;
    let token = browser.csrf.clone().unwrap();
    let (nonce, _) = token.split_once('.').unwrap();
    let forged = format!("{nonce}.{}", "0".repeat(64));
    for (cookie, csrf) in [
        (None, token.clone()),
        (other.cookie.clone(), token.clone()),
        (Some(format!("quell_login={forged}")), forged.clone()),
    ] {
        let creds = Creds {
            cookie,
            csrf: Some(csrf),
            ..Default::default()
        };
        let r = app
            .form_as(
                &creds,
                "/login",
                &[("email", common::ADMIN_EMAIL), ("password", PASSWORD)],
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{creds:?}");
    }
    assert_eq!(sessions().await, before);
    // The real pair signs in, and only then is there a session.
    let r = app
        .form_as(
            &browser,
            "/login",
            &[("email", common::ADMIN_EMAIL), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(sessions().await, before + 1);
}

/// F8: re-enabling a disabled person brought their old API tokens back.
#[sqlx::test]
async fn disabling_revokes_tokens_for_good(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let id = app.get("/api/v1/users").await.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == "ana@example.com")
        .unwrap()["id"]
        .clone();
    let app = &app;
    let me = |creds: Creds| async move {
        app.call_as(&creds, Method::GET, "/api/v1/me", &[], None)
            .await
            .status
    };
    assert_eq!(me(ana.clone()).await, StatusCode::OK);
    for disabled in [true, false] {
        let r = app
            .call(
                Method::PATCH,
                &format!("/api/v1/users/{id}"),
                &[],
                Some(&json!({ "disabled": disabled }).to_string()),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    assert_eq!(
        me(ana.clone()).await,
        StatusCode::UNAUTHORIZED,
        "the old token stays revoked"
    );
    let tokens = app.get("/api/v1/tokens").await.json();
    let hers = tokens["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["owner"] == "ana@example.com")
        .collect::<Vec<_>>();
    assert!(hers.iter().all(|t| !t["revoked_at"].is_null()), "{hers:?}");
    // Signed in again, she makes a new one for herself.
    let ana = app.sign_in("ana@example.com", PASSWORD).await;
    let r = app
        .form_as(&ana, "/account/tokens", &[("name", "laptop")])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let at = r.text.find("id=\"new-token\">").unwrap() + "id=\"new-token\">".len();
    let token = r.text[at..].split('<').next().unwrap().to_owned();
    assert!(token.starts_with("quell_"), "{token}");
    let creds = Creds {
        token: Some(token),
        ..Default::default()
    };
    assert_eq!(me(creds.clone()).await, StatusCode::OK);
}

/// `/account` makes and revokes a person's own tokens: no admin needed for the first one.
#[sqlx::test]
async fn people_make_and_revoke_their_own_tokens_on_the_account_page(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let vic = app.account("vic@example.com", "viewer").await;
    let r = app
        .form_as(&vic, "/account/tokens", &[("name", "  ")])
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("1 to 100 characters"));
    let r = app
        .form_as(&vic, "/account/tokens", &[("name", "<b>grafana</b>")])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("&#60;b&#62;grafana"), "the name is escaped");
    let at = r.text.find("id=\"new-token\">").unwrap() + "id=\"new-token\">".len();
    let token = r.text[at..].split('<').next().unwrap().to_owned();
    let with_token = Creds {
        token: Some(token.clone()),
        ..Default::default()
    };
    let me = app
        .call_as(&with_token, Method::GET, "/api/v1/me", &[], None)
        .await;
    assert_eq!(me.json()["email"], "vic@example.com");
    let again = app.call_as(&vic, Method::GET, "/account", &[], None).await;
    assert!(!again.text.contains(&token), "the secret is shown once");
    let id = app
        .call_as(&with_token, Method::GET, "/api/v1/tokens", &[], None)
        .await
        .json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "<b>grafana</b>")
        .unwrap()["id"]
        .clone();
    // Someone else's token is not vic's to revoke, even through her own page.
    let admin_tokens = app.get("/api/v1/tokens").await.json();
    let admins = admin_tokens["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["owner"] == common::ADMIN_EMAIL)
        .unwrap()["id"]
        .clone();
    let r = app
        .form_as(&vic, &format!("/account/tokens/{admins}/revoke"), &[])
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app
        .form_as(&vic, &format!("/account/tokens/{id}/revoke"), &[])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let me = app
        .call_as(&with_token, Method::GET, "/api/v1/me", &[], None)
        .await;
    assert_eq!(me.status, StatusCode::UNAUTHORIZED);
}

/// F9: idempotency records were global, so another person reusing a key and body received the
/// first person's answer.
#[sqlx::test]
async fn idempotency_keys_belong_to_the_person_who_sent_them(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let bob = app.account("bob@example.com", "responder").await;
    let body = r#"{"title": "Checkout failing", "severity": "Sev2"}"#;
    let app = &app;
    let post = |creds: Creds| async move {
        app.call_as(
            &creds,
            Method::POST,
            "/api/v1/incidents",
            &[("idempotency-key", "retry-1")],
            Some(body),
        )
        .await
    };
    let first = post(ana.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let replay = post(ana.clone()).await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.json()["key"], first.json()["key"]);
    let bobs = post(bob.clone()).await;
    assert_eq!(bobs.status, StatusCode::CREATED, "{}", bobs.text);
    assert_eq!(bobs.header("idempotent-replayed"), None);
    assert_ne!(
        bobs.json()["key"],
        first.json()["key"],
        "bob's own incident"
    );
    assert_eq!(app.incident_keys().await.len(), 2);
}

/// F10: a rule regex could close its anchoring group and match everything.
#[sqlx::test]
async fn a_rule_regex_cannot_escape_its_anchors(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "sneaky", "conditions": ["labels.alertname =~ zzz)|(?:.*"], "severity": "Sev1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "conditions[0]");
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "checkout", "conditions": ["labels.alertname =~ zzz|Checkout.*"], "severity": "Sev1"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let h = app.integration("prometheus", "alertmanager").await;
    for (group, severity) in [("CheckoutDown", "Sev1"), ("xzzz", "Sev3")] {
        let r = app
            .alert(
                "alertmanager",
                &h,
                &alertmanager_payload(group, &[(group, "firing")], json!({})),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let key = app.incident_keys().await.pop().unwrap();
        assert_eq!(
            app.incident_json(&key).await["severity"],
            severity,
            "{group}"
        );
    }
}

/// A signed webhook replayed with the same `webhook-id` was stored again each time.
#[sqlx::test]
async fn a_replayed_signed_webhook_is_answered_but_not_stored_twice(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let h = app.integration("cron", "generic").await;
    let secret = h.secret.clone().unwrap();
    let body = json!({"title": "Backup late"}).to_string();
    let now = chrono::Utc::now().timestamp();
    let headers = signed_headers(&secret, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", now, &body);
    let post = || {
        let hs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let path = format!("/hooks/generic/{}", h.id);
        let body = body.clone();
        let app = &app;
        async move { app.hook(&path, &hs, &body).await }
    };
    let answers = futures_util::future::join_all((0..5).map(|_| post())).await;
    for r in &answers {
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        assert_eq!(r.json()["dedup_key"], answers[0].json()["dedup_key"]);
    }
    assert_eq!(app.stored_alerts().await, 1);
    let deliveries = count(&app.pool, "select deliveries::int8 from alerts").await;
    assert_eq!(deliveries, 1, "the replays were not counted as deliveries");
    // Another message id is another delivery of the same alert (no dedup key: a new alert).
    let other = signed_headers(&secret, "msg_other", now, &body);
    let hs: Vec<(&str, &str)> = other
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = app
        .hook(&format!("/hooks/generic/{}", h.id), &hs, &body)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(app.stored_alerts().await, 2);
    // A message id too long to remember is refused before anything is stored.
    let long = signed_headers(&secret, &"m".repeat(300), now, &body);
    let hs: Vec<(&str, &str)> = long.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = app
        .hook(&format!("/hooks/generic/{}", h.id), &hs, &body)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    assert!(r.text.contains("webhook-id"));
}

/// Payloads were validated before the key was checked, so a caller without a key learned what a
/// valid payload looks like.
#[sqlx::test]
async fn a_sender_without_the_key_learns_nothing_about_its_payload(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let am = app.integration("prometheus", "alertmanager").await;
    let generic = app.integration("cron", "generic").await;
    let pd = app.integration("pd", "pagerduty-events-v2").await;
    let wrong = |h: &Hook| Hook {
        key: "0".repeat(32),
        ..h.clone()
    };
    let bad_body = json!({"alerts": "not a list"});
    for (format, h) in [
        ("alertmanager", &am),
        ("grafana", &am),
        ("generic", &generic),
    ] {
        let r = app.alert(format, &wrong(h), &bad_body).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{format}: {}", r.text);
        assert!(!r.text.contains("alerts"), "{format}: {}", r.text);
    }
    let r = app.alert("alertmanager", &am, &bad_body).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.text.contains("groupKey"),
        "the sender with the key hears why: {}",
        r.text
    );
    let r = app
        .alert("generic", &generic, &json!({"status": "burning"}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // PagerDuty: the key is in the body; a wrong one hides the event's faults.
    let event = |key: &str| json!({"routing_key": key, "event_action": "explode"}).to_string();
    let r = app.hook("/v2/enqueue", &[], &event(&"0".repeat(32))).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    assert!(!r.text.contains("event_action"), "{}", r.text);
    let r = app.hook("/v2/enqueue", &[], &event(&pd.key)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("event_action"), "{}", r.text);
    assert_eq!(app.stored_alerts().await, 0);
}

/// F11: the role Quell connects as owned the audit log and could switch its append-only trigger
/// off. Handed to a role of its own, the log takes appends from Quell and nothing else.
#[sqlx::test]
async fn a_protected_audit_log_takes_appends_from_quell_and_nothing_else(pool: PgPool) {
    // Quell's own role in a protected deployment: an ordinary role, not the database's owner.
    let app_role = format!("quell_app_{}", uuid::Uuid::new_v4().simple());
    sqlx::raw_sql(&format!(
        "create role {app_role} login password 'app-password';
         grant select, insert, update, delete on all tables in schema public to {app_role};
         grant usage, select on all sequences in schema public to {app_role};"
    ))
    .execute(&pool)
    .await
    .unwrap();
    // Refused for a role that could take the log back.
    let mut admin = pool.acquire().await.unwrap();
    let err = quell::audit::db::hand_over(&mut admin, "quell")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("superuser"), "{err}");
    quell::audit::db::hand_over(&mut admin, &app_role)
        .await
        .unwrap();
    quell::audit::db::hand_over(&mut admin, &app_role)
        .await
        .expect("safe to run again");
    drop(admin);

    let options = (*pool.connect_options())
        .clone()
        .username(&app_role)
        .password("app-password");
    let as_app = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap();
    assert!(
        !quell::audit::db::guard_can_be_lifted(&as_app)
            .await
            .unwrap()
    );
    // Quell works as this role: it signs people in, changes things, records refusals.
    let app = TestApp::new(as_app.clone()).await;
    app.past_incident(10).await;
    app.call_as(
        &Creds::default(),
        Method::POST,
        "/x",
        &[("origin", "https://evil.example")],
        None,
    )
    .await;
    let rows = count(&as_app, "select count(*) from audit_log").await;
    assert!(rows >= 3, "{rows}");
    for sql in [
        "update audit_log set actor = 'someone else'",
        "delete from audit_log",
        "truncate audit_log cascade",
        "alter table audit_log disable trigger audit_log_no_update_or_delete",
        "alter table audit_log owner to current_user",
        "drop table audit_log cascade",
        "create or replace function audit_log_is_append_only() returns trigger language plpgsql as $$ begin return new; end $$",
        "set role quell_audit_owner",
    ] {
        let err = sqlx::raw_sql(sql).execute(&as_app).await.unwrap_err();
        assert!(
            err.to_string().contains("permission denied")
                || err.to_string().contains("must be owner"),
            "{sql}: {err}"
        );
    }
    assert_eq!(count(&as_app, "select count(*) from audit_log").await, rows);
    as_app.close().await;
}

/// The OpenAPI description names each operation once, so validators and client generators
/// take it (scripts/test also runs a real validator over it).
#[sqlx::test]
async fn every_api_operation_has_its_own_operation_id(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let spec = app.get("/api/v1/openapi.json").await.json();
    let mut seen = std::collections::BTreeMap::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_default().to_owned();
            assert!(
                id.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && id.len() > 4,
                "{method} {path}: {id:?}"
            );
            if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
                panic!("{id} names both {other} and {method} {path}");
            }
        }
    }
    assert!(seen.contains_key("acknowledgeIncident") && seen.contains_key("listIncidents"));
}

/// F7: a connection could send its headers a byte at a time, or sit idle, for ever, and there
/// was no cap on how many were open.
#[sqlx::test]
async fn slow_and_idle_connections_are_closed_and_open_connections_are_capped(pool: PgPool) {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    let app = TestApp::new(pool).await;
    let start = |limits: quell::http::serve::Limits| {
        let router = app.router.clone();
        async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = tokio::spawn(quell::http::serve::serve(listener, router, limits, async {
                let _ = stopped.await;
            }));
            (addr, stop, server)
        }
    };
    /// Reads until the server closes the connection; what it sent on the way.
    async fn until_closed(conn: &mut TcpStream) -> String {
        let mut all = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), conn.read_to_end(&mut all));
        read.await.expect("the server closes the connection").ok();
        String::from_utf8_lossy(&all).into_owned()
    }
    const GET: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: quell.test\r\n\r\n";

    let (addr, stop, server) = start(quell::http::serve::Limits {
        header_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(30),
        max_connections: 16,
        drain: Duration::from_secs(5),
    })
    .await;
    // Headers that never finish.
    let mut slow = TcpStream::connect(addr).await.unwrap();
    let began = Instant::now();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: quell.test\r\n")
        .await
        .unwrap();
    let answer = until_closed(&mut slow).await;
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(
        began.elapsed() >= Duration::from_millis(900),
        "{:?}",
        began.elapsed()
    );
    // A kept-alive connection that goes quiet after its answer.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(GET).await.unwrap();
    let answer = until_closed(&mut idle).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    stop.send(()).unwrap();
    server.await.unwrap();

    // Silence in both directions ends a connection too, headers or not.
    let (addr, stop, server) = start(quell::http::serve::Limits {
        header_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(1),
        max_connections: 16,
        drain: Duration::from_secs(5),
    })
    .await;
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let began = Instant::now();
    until_closed(&mut silent).await;
    assert!(began.elapsed() >= Duration::from_millis(900));
    stop.send(()).unwrap();
    server.await.unwrap();

    // At most two connections at once: a third waits until one closes.
    let (addr, stop, server) = start(quell::http::serve::Limits {
        header_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        max_connections: 2,
        drain: Duration::from_secs(5),
    })
    .await;
    let mut first = TcpStream::connect(addr).await.unwrap();
    let _second = TcpStream::connect(addr).await.unwrap();
    // The first is served, so both are surely accepted before the third arrives.
    first.write_all(GET).await.unwrap();
    let mut buf = [0u8; 512];
    let n = first.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200 OK"));
    let mut third = TcpStream::connect(addr).await.unwrap();
    third.write_all(GET).await.unwrap();
    let waited = tokio::time::timeout(Duration::from_millis(500), third.read(&mut buf)).await;
    assert!(
        waited.is_err(),
        "the third connection is not served while two are open"
    );
    drop(first);
    let n = tokio::time::timeout(Duration::from_secs(10), third.read(&mut buf))
        .await
        .expect("served once a connection closes")
        .unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200 OK"));
    stop.send(()).unwrap();
    drop((third, _second));
    server.await.unwrap();
}

/// Generated hostile text for the property test below.
mod hostile {
    use proptest::prelude::*;

    /// One piece of a JSON string literal's content, already escaped: NUL, lone surrogates (only
    /// writable as JSON escapes), right-to-left text and overrides, emoji and their escaped
    /// surrogate pairs, quotes, controls, markup, 64 KB, or any character at all.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => any::<char>().prop_map(|c| {
                let quoted = serde_json::to_string(&c.to_string()).unwrap();
                quoted[1..quoted.len() - 1].to_owned()
            }),
            2 => Just(r"\u0000".to_owned()),
            1 => prop::sample::select(vec![r"\ud800", r"\udbff", r"\udc00", r"\udfff"])
                .prop_map(str::to_owned),
            1 => Just(r"\ud83d\ude00".to_owned()),
            1 => prop::sample::select(vec![
                "😀", "👩‍👩‍👧", "\u{202e}", "\u{200f}", "مرحبا بالعالم", "שלום", "ﷺ", "é",
            ])
            .prop_map(str::to_owned),
            1 => prop::sample::select(vec![
                r#"\""#, r"\\", r"\n", r"\u0001", r"\u001f", "<script>alert(1)</script>",
                "{labels.x}", "%00", "' or 1=1 --",
            ])
            .prop_map(str::to_owned),
            1 => Just("x".repeat(64 * 1024)),
        ]
    }

    /// The content of a JSON string: up to eight pieces.
    pub fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 0..8).prop_map(|pieces| pieces.concat())
    }
}

/// A webhook post of the property test: what it tries, where, with which headers and body.
struct Post(String, String, Vec<(String, String)>, String);

/// Arbitrary strings through every webhook format and the main create endpoints: never a 5xx
/// (nor a panic, which would answer 500), and every 2xx stored.
#[sqlx::test]
async fn hostile_strings_never_cause_a_5xx_and_every_2xx_is_stored(pool: PgPool) {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;

    let app = TestApp::new(pool).await;
    app.service("payments").await;
    let key = app.past_incident(30).await;
    let am = app.integration("prometheus", "alertmanager").await;
    let grafana = app.integration("grafana", "grafana").await;
    let generic = app.integration("cron", "generic").await;
    let pd = app.integration("pd", "pagerduty-events-v2").await;
    let delivered = |h: &Hook| {
        let sql = format!(
            "select coalesce(sum(deliveries), 0)::int8 from alerts where integration_id = '{}'",
            h.id
        );
        let pool = app.pool.clone();
        async move { count(&pool, &sql).await }
    };

    let mut runner = TestRunner::default();
    let strategy = hostile::text();
    let cases = 24;
    for case in 0..cases {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        // Bodies are written as text, since a lone surrogate cannot be put into a Rust string.
        let bearer = |h: &Hook| format!("Bearer {}", h.key);
        let am_body = |field: &str| {
            let mut labels = r#"{"alertname": "Disk", "k": "v"}"#.to_owned();
            let (mut summary, mut fingerprint, mut group) = (
                "disk full".to_owned(),
                format!("fp{case}"),
                format!("g{case}"),
            );
            match field {
                "labels" => labels = format!(r#"{{"alertname": "Disk", "k{s}": "{s}"}}"#),
                "summary" => summary = s.clone(),
                "fingerprint" => fingerprint = s.clone(),
                _ => group = s.clone(),
            }
            format!(
                r#"{{"version": "4", "groupKey": "{group}", "status": "firing", "receiver": "q",
                    "alerts": [{{"status": "firing", "labels": {labels},
                                 "annotations": {{"summary": "{summary}"}},
                                 "startsAt": "2026-09-17T16:00:00Z", "fingerprint": "{fingerprint}"}}]}}"#
            )
        };
        let mut posts: Vec<Post> = Vec::new();
        for field in ["labels", "summary", "fingerprint", "groupKey"] {
            for (format, h) in [("alertmanager", &am), ("grafana", &grafana)] {
                posts.push(Post(
                    format!("{format} {field}"),
                    format!("/hooks/{format}/{}", h.id),
                    vec![("authorization".into(), bearer(h))],
                    am_body(field),
                ));
            }
        }
        for body in [
            format!(r#"{{"title": "{s}"}}"#),
            format!(r#"{{"title": "t", "dedup_key": "{s}"}}"#),
            format!(
                r#"{{"title": "t{case}", "metadata": {{"{s}": "{s}"}}, "labels": {{"a": "{s}"}}}}"#
            ),
        ] {
            posts.push(Post(
                "generic".into(),
                format!("/hooks/generic/{}", generic.id),
                vec![("authorization".into(), bearer(&generic))],
                body,
            ));
        }
        for payload in [
            format!(r#"{{"summary": "{s}", "source": "web", "severity": "critical"}}"#),
            format!(
                r#"{{"summary": "s", "source": "{s}", "severity": "error", "custom_details": {{"{s}": ["{s}"]}}}}"#
            ),
        ] {
            posts.push(Post(
                "pagerduty".into(),
                "/v2/enqueue".into(),
                vec![],
                format!(r#"{{"routing_key": "{}", "event_action": "trigger", "dedup_key": "d{case}", "payload": {payload}}}"#, pd.key),
            ));
        }
        posts.push(Post(
            "pagerduty change".into(),
            "/v2/change/enqueue".into(),
            vec![],
            format!(r#"{{"routing_key": "{}", "payload": {{"summary": "{s}", "custom_details": {{"x": "{s}"}}}}}}"#, pd.key),
        ));
        for Post(what, path, headers, body) in posts {
            let (before_alerts, before_changes) = (
                count(
                    &app.pool,
                    "select coalesce(sum(deliveries), 0)::int8 from alerts",
                )
                .await,
                count(&app.pool, "select count(*) from changes").await,
            );
            let hs: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let r = app.hook(&path, &hs, &body).await;
            assert!(
                r.status.as_u16() < 500,
                "{what} with {s:?}: {} {}",
                r.status,
                r.text
            );
            let (after_alerts, after_changes) = (
                count(
                    &app.pool,
                    "select coalesce(sum(deliveries), 0)::int8 from alerts",
                )
                .await,
                count(&app.pool, "select count(*) from changes").await,
            );
            let stored = (after_alerts - before_alerts) + (after_changes - before_changes);
            if r.status.is_success() {
                assert_eq!(
                    stored, 1,
                    "{what} with {s:?} answered {} but stored {stored}",
                    r.status
                );
            } else {
                assert_eq!(stored, 0, "{what} with {s:?} refused yet stored");
            }
        }

        // People's creates: a 2xx is a new row, anything else changes nothing.
        let creates = [
            (
                "incident",
                "/api/v1/incidents".to_owned(),
                format!(r#"{{"title": "{s}", "severity": "Sev3", "summary": "{s}"}}"#),
                "select count(*) from incidents",
            ),
            (
                "note",
                format!("/api/v1/incidents/{key}/timeline"),
                format!(r#"{{"body": "{s}"}}"#),
                "select count(*) from timeline_events",
            ),
            (
                "update",
                format!("/api/v1/incidents/{key}/updates"),
                format!(r#"{{"audience": "internal", "body": "{s}"}}"#),
                "select count(*) from stakeholder_updates",
            ),
            (
                "service",
                "/api/v1/services".to_owned(),
                format!(r#"{{"name": "svc-{case}", "tier": 2, "description": "{s}"}}"#),
                "select count(*) from services",
            ),
            (
                "comment",
                format!("/api/v1/incidents/{key}/postmortem/comments"),
                format!(r#"{{"part": "summary", "body": "{s}"}}"#),
                "select count(*) from postmortem_comments",
            ),
        ];
        for (what, path, body, rows) in creates {
            let before = count(&app.pool, rows).await;
            let r = app.call(Method::POST, &path, &[], Some(&body)).await;
            assert!(
                r.status.as_u16() < 500,
                "{what} with {s:?}: {} {}",
                r.status,
                r.text
            );
            let added = count(&app.pool, rows).await - before;
            if r.status.is_success() {
                assert!(
                    added >= 1,
                    "{what} with {s:?} answered {} but stored nothing",
                    r.status
                );
            } else {
                assert_eq!(added, 0, "{what} with {s:?} refused yet stored");
            }
        }
    }
    // Every webhook above was authenticated: none of it is a refusal.
    assert!(delivered(&am).await + delivered(&generic).await > 0);
}

/// PostgreSQL unreachable: API, pages and webhooks answer 503 with `Retry-After` within the
/// acquire timeout instead of hanging or a 500; `/readyz` says so and `/healthz` still answers.
#[tokio::test]
async fn an_unreachable_database_is_a_quick_503_with_retry_after() {
    use http_body_util::BodyExt;
    use std::time::{Duration, Instant};
    use tower::ServiceExt;
    // A port nothing listens on: every connection attempt is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(Duration::from_millis(300))
        .connect_lazy(&format!("postgres://quell:quell@127.0.0.1:{port}/quell"))
        .unwrap();
    let state = quell::state::AppState::new(
        pool,
        quell::state::AppConfig {
            base_url: "http://quell.test".into(),
            trust_forwarded_for: false,
            oidc: None,
            git_roots: vec![],
            webhook_allow: Default::default(),
            live: Default::default(),
            request_timeout: Duration::from_secs(30),
            bodies: Default::default(),
            uploads: Default::default(),
            metrics_token: None,
        },
    );
    let app = quell::app(state);
    let ask = |uri: &'static str, auth: bool| {
        let app = app.clone();
        async move {
            let mut req = axum::http::Request::builder()
                .uri(uri)
                .header("host", "quell.test");
            if auth {
                req = req
                    .header("authorization", "Bearer quell_some_token_of_someone")
                    .header("cookie", "quell=AAAAAAAAAAAAAAAAAAAAAA");
            }
            let began = Instant::now();
            let res = app
                .oneshot(req.body(axum::body::Body::empty()).unwrap())
                .await
                .unwrap();
            let retry = res
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            let status = res.status();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (
                status,
                retry,
                String::from_utf8_lossy(&body).into_owned(),
                began.elapsed(),
            )
        }
    };
    let (status, retry, body, took) = ask("/api/v1/incidents", true).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry.as_deref(), Some("2"));
    assert!(
        body.contains("\"unavailable\"") && body.contains("nothing was changed"),
        "{body}"
    );
    assert!(
        took < Duration::from_secs(5),
        "answered in {took:?}, not hung"
    );
    let (status, _, body, _) = ask("/readyz", false).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (status, _, _, _) = ask("/healthz", false).await;
    assert_eq!(status, StatusCode::OK);
    // A page (the session store cannot be read either) is an HTML 503 with Retry-After.
    let (status, retry, body, _) = ask("/incidents", true).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry.as_deref(), Some("2"));
}

/// Two hundred clients each sending a 1 MiB body at once took gigabytes: every body was read
/// and parsed side by side. Large bodies now take room from a budget before they are read: one
/// that finds none waits its turn and is then answered 503 with `Retry-After`, storing nothing;
/// small posts pass meanwhile; and a client that declares a large body and stalls holds the
/// room only until its body's deadline.
#[sqlx::test]
async fn large_bodies_wait_for_room_and_a_stalled_one_cannot_keep_it(pool: PgPool) {
    use axum::body::{Body, Bytes};
    use futures_util::StreamExt;
    use http_body_util::BodyExt;
    use std::time::{Duration, Instant};
    use tower::ServiceExt;
    let app = TestApp::new(pool.clone()).await;
    let am = app.integration("am", "alertmanager").await;
    let state = quell::state::AppState::new(
        pool.clone(),
        quell::state::AppConfig {
            base_url: "http://quell.test".into(),
            trust_forwarded_for: false,
            oidc: None,
            git_roots: vec![],
            webhook_allow: Default::default(),
            live: Default::default(),
            request_timeout: Duration::from_secs(30),
            bodies: quell::state::BodySettings {
                budget_bytes: 1024 * 1024,
                wait: Duration::from_millis(300),
                read_within: Duration::from_secs(1),
                ..Default::default()
            },
            uploads: Default::default(),
            metrics_token: None,
        },
    );
    let router = quell::app(state);
    let post = |length: usize, body: Body| {
        let router = router.clone();
        let am = am.clone();
        async move {
            let req = axum::http::Request::post(format!("/hooks/alertmanager/{}", am.id))
                .header("authorization", format!("Bearer {}", am.key))
                .header("content-type", "application/json")
                .header("content-length", length.to_string())
                .body(body)
                .unwrap();
            let res = router.oneshot(req).await.unwrap();
            let status = res.status();
            let retry = res
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            let text = res.into_body().collect().await.unwrap().to_bytes();
            (status, retry, String::from_utf8_lossy(&text).into_owned())
        }
    };
    let fps: Vec<String> = (0..1500).map(|n| format!("big-{n}")).collect();
    let alerts: Vec<(&str, &str)> = fps.iter().map(|f| (f.as_str(), "firing")).collect();
    let large = alertmanager_payload("Large", &alerts, json!({"service": "checkout"})).to_string();
    assert!(large.len() > 400 * 1024, "{} bytes", large.len());

    // A client declares 700 KB, sends the first kilobyte and stalls; it has its room once its
    // body is being read.
    let (reading, read) = tokio::sync::oneshot::channel::<()>();
    let stalled = futures_util::stream::once(async move {
        let _ = reading.send(());
        Ok::<_, std::io::Error>(Bytes::from(vec![b' '; 1000]))
    })
    .chain(futures_util::stream::pending());
    let held_since = Instant::now();
    let staller = tokio::spawn(post(700_000, Body::from_stream(stalled)));
    read.await.unwrap();

    // No room for a second large body: 503 after the wait, nothing stored.
    let began = Instant::now();
    let (status, retry, text) = post(large.len(), Body::from(large.clone())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert_eq!(retry.as_deref(), Some("2"));
    assert!(
        text.contains("\"overloaded\"") && text.contains("large request bodies"),
        "{text}"
    );
    assert!(began.elapsed() >= Duration::from_millis(300));
    assert_eq!(app.stored_alerts().await, 0);

    // A small post is not held up by the large ones.
    let small = alertmanager_payload("Small", &[("s1", "firing")], json!({})).to_string();
    let (status, _, text) = post(small.len(), Body::from(small)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    assert_eq!(app.stored_alerts().await, 1);

    // The stalled body runs out of time and gives its room back.
    let (status, _, text) = staller.await.unwrap();
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("did not arrive within 1 s"), "{text}");
    assert!(held_since.elapsed() >= Duration::from_secs(1));
    let (status, _, text) = post(large.len(), Body::from(large)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    assert_eq!(app.stored_alerts().await, 1501);
}
