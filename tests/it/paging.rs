//! Paging: an alert on a service pages whoever its policy's first step names (a schedule's
//! on-call person), escalates when nobody acknowledges, and the signed acknowledge link stops
//! it; steps fire once with engines racing and after a crash; links work once; channels hear
//! what they subscribed to; email reaches a real SMTP server (Debian's python3-aiosmtpd).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::routing::post;
use quell::notify::sender::{SenderConfig, deliver_once, http_client};
use quell::paging::escalator::fire_due;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp, alertmanager_payload};

#[derive(Clone, Default)]
pub(crate) struct Receiver {
    pub(crate) got: Arc<Mutex<Vec<(HeaderMap, String)>>>,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
    r.got.lock().unwrap().push((headers, body));
    StatusCode::OK
}

pub(crate) async fn receiver() -> (Receiver, String) {
    let r = Receiver::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(r.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (r, url)
}

pub(crate) fn sender(smtp: Option<String>) -> SenderConfig {
    SenderConfig {
        base_delay_secs: 0.0,
        max_delay_secs: 0.0,
        max_attempts: 2,
        base_url: "http://quell.test".into(),
        smtp_url: smtp,
        mail_from: "Quell <quell@quell.test>".into(),
        allow: crate::common::loopback_allowed(),
        ..Default::default()
    }
}

pub(crate) async fn deliver(app: &TestApp, cfg: &SenderConfig) -> usize {
    deliver_once(&app.pool, &http_client(cfg.timeout, &cfg.allow), cfg)
        .await
        .unwrap()
}

/// Brings every pending escalation step due now (instead of waiting its delay).
pub(crate) async fn time_passes(pool: &PgPool) {
    sqlx::query(
        "update escalations set due_at = now() - interval '1 second' where state = 'pending'",
    )
    .execute(pool)
    .await
    .unwrap();
}

/// A schedule with one weekly rotation of `people`, handing off Mondays 09:00 in Lisbon.
async fn schedule(app: &TestApp, name: &str, people: &[&str]) {
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": name, "layers": [{"length": {"every": "week"}, "start": "2026-01-05T09:00:00",
                   "time_zone": "Europe/Lisbon", "people": people}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

pub(crate) async fn method(app: &TestApp, handle: &str, kind: &str, address: &str) -> Value {
    let r = app
        .post(
            &format!("/api/v1/people/{handle}/contact-methods"),
            json!({"kind": kind, "label": kind, "address": address}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

/// `handle`'s notification rules: each method (as `method` made it) after so many minutes.
pub(crate) async fn rules(app: &TestApp, handle: &str, rules: &[(&Value, i64)]) {
    for (m, after) in rules {
        let r = app
            .post(
                &format!("/api/v1/people/{handle}/notification-rules"),
                json!({"contact_method_id": m["id"], "after_minutes": after}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
}

/// payments-gateway with the demo's policy: the primary, then the secondary after 5 minutes,
/// then the engineering manager after 15.
pub(crate) async fn payments(app: &TestApp) {
    for (name, handle) in [
        ("Ana Ribeiro", "ana"),
        ("Ben Okafor", "ben"),
        ("Eve Manager", "eve"),
    ] {
        app.person(name, handle).await;
    }
    schedule(app, "Payments primary", &["ana"]).await;
    schedule(app, "Payments secondary", &["ben"]).await;
    app.service("payments-gateway").await;
    app.policy(
        "payments-gateway",
        json!({"name": "Payments", "steps": [
                {"targets": [{"schedule": "Payments primary"}], "delay_minutes": 5},
                {"targets": [{"schedule": "Payments secondary"}], "delay_minutes": 10},
                {"targets": [{"person": "eve"}], "delay_minutes": 15}]}),
    )
    .await;
}

pub(crate) fn paged(timeline: &[Value]) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e["kind"] == "paged")
        .map(|e| e["headline"].as_str().unwrap().to_owned())
        .collect()
}

pub(crate) fn ack_path(text: &str) -> String {
    let at = text.find("http://quell.test/incidents/").expect("a link") + "http://quell.test".len();
    text[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('"')
        .to_owned()
}

#[sqlx::test]
async fn an_alert_pages_the_on_call_person_escalates_and_the_acknowledge_link_stops_it(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let (ana_hook, ana_url) = receiver().await;
    let (ben_slack, ben_url) = receiver().await;
    let ana = method(&app, "ana", "webhook", &ana_url).await;
    let secret = ana["secret"].as_str().unwrap().to_owned();
    method(&app, "ben", "slack", &ben_url).await;
    let r = app
        .post(
            "/api/v1/routing-rules",
            json!({"name": "By service label", "conditions": ["labels.service = payments-gateway"],
                   "service": "{labels.service}", "severity": "Sev1", "title_template": "{labels.alertname}"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let am = app.integration("am", "alertmanager").await;
    let alert = alertmanager_payload(
        "PaymentsErrors",
        &[("p1", "firing")],
        json!({"service": "payments-gateway"}),
    );
    app.alert("alertmanager", &am, &alert).await;
    let key = app.incident_keys().await.remove(0);

    // Step 1 is due at once: the primary's on-call person gets a signed webhook.
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    assert_eq!(
        fire_due(&app.pool, 10).await.unwrap(),
        0,
        "step 2 waits 5 minutes"
    );
    assert_eq!(
        paged(&app.timeline(&key).await),
        ["Paged Ana Ribeiro (step 1 of 3, Payments)"]
    );
    assert_eq!(deliver(&app, &sender(None)).await, 1);
    let (headers, body) = ana_hook.got.lock().unwrap()[0].clone();
    let payload: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(payload["type"], "incident.paged");
    assert_eq!(payload["incident"]["key"], key);
    assert!(
        payload["ack_url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://quell.test/incidents/{key}/ack/"))
    );
    let ts: i64 = headers["webhook-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let id = headers["webhook-id"].to_str().unwrap();
    assert_eq!(
        headers["webhook-signature"].to_str().unwrap(),
        quell::notify::domain::sign(&secret, id, ts, &body).unwrap()
    );

    // Nobody acknowledges: five minutes on, the secondary is paged on Slack.
    time_passes(&app.pool).await;
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    assert_eq!(deliver(&app, &sender(None)).await, 1);
    let text = serde_json::from_str::<Value>(&ben_slack.got.lock().unwrap()[0].1).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains(&key) && text.contains("step 2 of 3"),
        "{text}"
    );
    let link = ack_path(&text[text.find("Acknowledge:").unwrap()..]);

    // Ben's link, without signing in: a GET only asks; the POST acknowledges as Ben.
    let nobody = Creds::default();
    let asked = app.call_as(&nobody, Method::GET, &link, &[], None).await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.text);
    assert!(
        asked.text.contains("Acknowledge as Ben Okafor?"),
        "{}",
        asked.text
    );
    assert_eq!(app.incident_json(&key).await["status"], "triggered");
    let done = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(
        done.text.contains("acknowledged as Ben Okafor"),
        "{}",
        done.text
    );
    let i = app.incident_json(&key).await;
    assert_eq!(i["status"], "acknowledged");
    let timeline = app.timeline(&key).await;
    let ack = timeline
        .iter()
        .find(|e| e["kind"] == "acknowledged")
        .unwrap();
    assert_eq!(ack["author"], "Ben Okafor");
    let stopped = timeline.iter().find(|e| e["kind"] == "escalation").unwrap();
    assert_eq!(
        stopped["headline"],
        "Escalation stopped: acknowledged by Ben Okafor"
    );

    // The manager is never paged; the link is spent.
    time_passes(&app.pool).await;
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 0);
    assert_eq!(paged(&app.timeline(&key).await).len(), 2);
    let again = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(again.status, StatusCode::GONE, "{}", again.text);
    let state = app
        .get(&format!("/api/v1/incidents/{key}/paging"))
        .await
        .json();
    assert_eq!(state["escalation"]["state"], "stopped");
    let sent: Vec<&str> = state["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["state"].as_str().unwrap())
        .collect();
    assert_eq!(sent, ["delivered", "delivered"]);
}

#[sqlx::test]
async fn the_last_step_waits_then_the_policy_repeats_and_then_ends(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Ana Ribeiro", "ana").await;
    app.service("search").await;
    app.policy("search", json!({"name": "Search", "repeat": 1, "steps": [{"targets": [{"person": "ana"}], "delay_minutes": 3}]})).await;
    let key = app
        .incident(json!({"title": "Search slow", "severity": "Sev3", "service": "search"}))
        .await;
    for _ in 0..3 {
        assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
        time_passes(&app.pool).await;
    }
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 0);
    let t = app.timeline(&key).await;
    assert_eq!(
        paged(&t),
        [
            "Nobody paged (step 1 of 1, Search); no way to reach Ana Ribeiro (no contact method)",
            "Nobody paged (step 1 of 1, Search), repeat 1; no way to reach Ana Ribeiro (no contact method)",
        ]
    );
    assert!(
        t.iter()
            .any(|e| e["headline"] == "Escalation ended after its last step; nobody acknowledged")
    );
}

#[sqlx::test]
async fn each_step_fires_once_with_three_engines_racing_and_after_a_crash(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    // 300 incidents open at once on payments-gateway, each starting its escalation.
    for i in 0..300 {
        app.incident(json!({"title": format!("Card failures {i}"), "severity": "Sev2", "service": "payments-gateway"}))
            .await;
    }
    // An engine that claims every due step and dies before committing fires nothing ...
    {
        let mut tx = app.pool.begin().await.unwrap();
        let due = quell::paging::db::due_incidents(&mut *tx, 1000)
            .await
            .unwrap();
        let claimed = quell::paging::db::claim_due(&mut *tx, &due).await.unwrap();
        assert_eq!(claimed.len(), 300);
        drop(tx);
    }
    assert_eq!(
        count(&app.pool, "select count(*) from escalation_steps").await,
        0
    );
    // ... and three engines racing then fire each step exactly once, twice over.
    for round in 1..=2 {
        let engines: Vec<_> = (0..3)
            .map(|_| {
                let pool = app.pool.clone();
                tokio::spawn(async move {
                    let mut total = 0;
                    loop {
                        let n = fire_due(&pool, 40).await.unwrap();
                        if n == 0 {
                            return total;
                        }
                        total += n;
                    }
                })
            })
            .collect();
        let mut fired = 0;
        for e in engines {
            fired += e.await.unwrap();
        }
        assert_eq!(fired, 300, "round {round}");
        assert_eq!(
            count(&app.pool, "select count(*) from escalation_steps").await,
            300 * round
        );
        assert_eq!(
            count(
                &app.pool,
                "select count(*) from timeline_events where kind = 'paged'"
            )
            .await,
            300 * round
        );
        time_passes(&app.pool).await;
    }
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// The acknowledge links queued so far, as (incident key, path).
async fn links(pool: &PgPool) -> Vec<(String, String)> {
    sqlx::query_as::<_, (String, String)>(
        "select payload->'incident'->>'key', payload->>'ack_path' from notifications
         where payload ? 'ack_path' order by id",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test]
async fn an_acknowledge_link_works_once_until_it_expires_and_only_as_sent(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    method(&app, "ana", "email", "ana@example.com").await;
    let mut keys = Vec::new();
    for title in ["First", "Second", "Third"] {
        keys.push(
            app.incident(
                json!({"title": title, "severity": "Sev2", "service": "payments-gateway"}),
            )
            .await,
        );
    }
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 3);
    let links = links(&app.pool).await;
    assert_eq!(links.len(), 3);
    let nobody = Creds::default();
    let post = |path: String| {
        let nobody = nobody.clone();
        let app = &app;
        async move {
            app.form_raw(&nobody, &path, String::new(), &[])
                .await
                .status
        }
    };
    let (first_key, first) = links[0].clone();
    // Tampered: one character of the signature changed.
    let mut tampered = first.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    assert_eq!(post(tampered).await, StatusCode::NOT_FOUND);
    // Another incident's URL with this token.
    let moved = first.replace(&format!("/{first_key}/"), &format!("/{}/", keys[1]));
    assert_eq!(post(moved).await, StatusCode::NOT_FOUND);
    assert_eq!(app.incident_json(&keys[1]).await["status"], "triggered");
    // Expired.
    let (_, third) = links[2].clone();
    sqlx::query("update ack_links set expires_at = now() - interval '1 second' where incident_id = (select id from incidents where number = $1)")
        .bind(keys[2].trim_start_matches("INC-").parse::<i64>().unwrap())
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(post(third).await, StatusCode::GONE);
    assert_eq!(app.incident_json(&keys[2]).await["status"], "triggered");
    // Valid: once.
    assert_eq!(post(first.clone()).await, StatusCode::OK);
    assert_eq!(
        app.incident_json(&first_key).await["status"],
        "acknowledged"
    );
    assert_eq!(post(first).await, StatusCode::GONE);
}

/// "Acknowledged by … at …", as a used link's page says it, from the incident's timeline.
async fn acknowledged_line(app: &TestApp, key: &str) -> String {
    let timeline = app.timeline(key).await;
    let ack = timeline
        .iter()
        .find(|e| e["kind"] == "acknowledged")
        .expect("an acknowledgement");
    let at: chrono::DateTime<chrono::Utc> = ack["occurred_at"].as_str().unwrap().parse().unwrap();
    format!(
        "{key} was acknowledged by {} at {}",
        ack["author"].as_str().unwrap(),
        at.format("%Y-%m-%d %H:%M UTC")
    )
}

/// Reopening a used acknowledge link said only "Gone" and led to the incident list. Its page now
/// says who acknowledged the incident and when (UTC), and leads to the incident itself; also
/// when someone else acknowledged before the link was used.
#[sqlx::test]
async fn a_used_acknowledge_link_says_who_acknowledged_and_links_to_the_incident(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    method(&app, "ana", "email", "ana@example.com").await;
    let mut keys = Vec::new();
    for title in ["Cards down", "Refunds slow"] {
        keys.push(
            app.incident(
                json!({"title": title, "severity": "Sev2", "service": "payments-gateway"}),
            )
            .await,
        );
    }
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 2);
    let links = links(&app.pool).await;
    let nobody = Creds::default();

    // Ana acknowledges with her link; opening it again names her, when, and the incident.
    let (key, link) = links[0].clone();
    let done = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    let again = app.call_as(&nobody, Method::GET, &link, &[], None).await;
    assert_eq!(again.status, StatusCode::GONE, "{}", again.text);
    let said = acknowledged_line(&app, &key).await;
    assert!(said.contains("by Ana Ribeiro at 20"), "{said}");
    assert!(again.text.contains(&said), "{said}: {}", again.text);
    assert!(
        again.text.contains(&format!(
            r#"<a class="button primary" href="/incidents/{key}">Open {key}</a>"#
        )),
        "{}",
        again.text
    );
    assert!(
        again.text.contains(r#"<header class="top">"#),
        "the styled page"
    );
    assert!(!again.text.contains(">Gone<"), "{}", again.text);

    // Someone else acknowledged first; the link is used up by pressing it anyway.
    let (key, link) = links[1].clone();
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Opened before it is pressed, the link's page names who acknowledged, and when.
    let opened = app.call_as(&nobody, Method::GET, &link, &[], None).await;
    assert_eq!(opened.status, StatusCode::OK, "{}", opened.text);
    let said = acknowledged_line(&app, &key).await;
    let (by, at) = said
        .trim_start_matches(&format!("{key} was acknowledged by "))
        .split_once(" at ")
        .unwrap();
    assert!(
        opened
            .text
            .contains(&format!("{by} acknowledged {key} at {at}")),
        "{said}: {}",
        opened.text
    );
    let pressed = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(pressed.status, StatusCode::OK, "{}", pressed.text);
    let again = app.call_as(&nobody, Method::GET, &link, &[], None).await;
    assert_eq!(again.status, StatusCode::GONE);
    let said = acknowledged_line(&app, &key).await;
    assert!(!said.contains("Ana Ribeiro"), "{said}");
    assert!(again.text.contains(&said), "{said}: {}", again.text);
    assert!(again.text.contains(&format!(r#"href="/incidents/{key}""#)));
}

#[sqlx::test]
async fn rules_delay_methods_and_an_acknowledgement_calls_off_what_was_not_sent(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let (hook, url) = receiver().await;
    let now_method = method(&app, "ana", "webhook", &url).await;
    let later = method(&app, "ana", "email", "ana@example.com").await;
    rules(&app, "ana", &[(&now_method, 0), (&later, 5)]).await;
    let key = app
        .incident(
            json!({"title": "Card failures", "severity": "Sev2", "service": "payments-gateway"}),
        )
        .await;
    fire_due(&app.pool, 10).await.unwrap();
    assert_eq!(
        deliver(&app, &sender(None)).await,
        1,
        "the email waits 5 minutes"
    );
    assert_eq!(hook.got.lock().unwrap().len(), 1);
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let states: Vec<(String, String)> = app
        .get(&format!("/api/v1/incidents/{key}/paging"))
        .await
        .json()["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["channel"].as_str().unwrap().to_owned(),
                n["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("Ana Ribeiro by webhook".to_owned(), "delivered".to_owned()),
            ("Ana Ribeiro by email".to_owned(), "cancelled".to_owned())
        ]
    );
}

#[sqlx::test]
async fn an_undeliverable_method_is_shown_to_its_owner(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    // Email with no SMTP server configured cannot be sent: after the last try, the method says so.
    method(&app, "ana", "email", "ana@example.com").await;
    app.incident(
        json!({"title": "Card failures", "severity": "Sev2", "service": "payments-gateway"}),
    )
    .await;
    fire_due(&app.pool, 10).await.unwrap();
    deliver(&app, &sender(None)).await;
    deliver(&app, &sender(None)).await;
    let ana = app.account("ana@example.com", "responder").await;
    let mine = app
        .call_as(
            &ana,
            Method::GET,
            "/api/v1/people/ana/contact-methods",
            &[],
            None,
        )
        .await
        .json();
    let m = &mine["contact_methods"][0];
    assert!(m["failing_since"].is_string(), "{mine}");
    assert!(
        m["last_error"].as_str().unwrap().contains("QUELL_SMTP_URL"),
        "{mine}"
    );
    // Admins see it on /oncall; responders do not.
    let admins = app.get("/oncall").await;
    assert!(
        admins.text.contains("Contact methods that stopped working")
            && admins.text.contains("Ana Ribeiro"),
        "{}",
        admins.text
    );
    let theirs = app.call_as(&ana, Method::GET, "/oncall", &[], None).await;
    assert!(!theirs.text.contains("Contact methods that stopped working"));
    // Not someone else's.
    let other = app
        .call_as(
            &ana,
            Method::GET,
            "/api/v1/people/ben/contact-methods",
            &[],
            None,
        )
        .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
}

#[sqlx::test]
async fn channels_hear_only_what_they_subscribed_to(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    app.service("search").await;
    let (_, url) = receiver().await;
    let mut ids = Vec::new();
    for name in ["payments-sev1", "executives", "everything"] {
        let r = app
            .post(
                "/api/v1/notification-channels",
                json!({"name": name, "kind": "slack", "url": url, "events": ["sla.breached"]}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        ids.push(r.json()["id"].as_i64().unwrap());
    }
    let subs = [
        json!({"channel_id": ids[0], "events": ["incident.opened", "incident.resolved"], "services": ["payments-gateway"], "severities": ["Sev1"]}),
        json!({"channel_id": ids[1], "events": ["update.posted"], "audiences": ["executives"]}),
        json!({"channel_id": ids[2], "events": ["incident.opened", "incident.acknowledged", "incident.severity_changed", "update.posted"]}),
    ];
    for s in subs {
        let r = app.post("/api/v1/subscriptions", s).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let sev1 = app
        .incident(json!({"title": "Cards down", "severity": "Sev1", "service": "payments-gateway"}))
        .await;
    let sev3 = app
        .incident(json!({"title": "Search slow", "severity": "Sev3", "service": "search"}))
        .await;
    for (key, audience) in [(&sev1, "executives"), (&sev3, "customers")] {
        let r = app
            .post(
                &format!("/api/v1/incidents/{key}/updates"),
                json!({"audience": audience, "body": "We are on it."}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    let r = app
        .post_empty(&format!("/api/v1/incidents/{sev3}/acknowledge"))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let heard: Vec<(String, String, String)> = sqlx::query_as(
        "select c.name, i.number::text, n.event from notifications n
         join notification_channels c on c.id = n.channel_id join incidents i on i.id = n.incident_id
         order by c.name, n.id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let n = |k: &str| k.trim_start_matches("INC-").to_owned();
    let e = |c: &str, k: &str, ev: &str| (c.to_owned(), n(k), ev.to_owned());
    assert_eq!(
        heard,
        [
            e("everything", &sev1, "incident.opened"),
            e("everything", &sev3, "incident.opened"),
            e("everything", &sev1, "update.posted"),
            e("everything", &sev3, "update.posted"),
            e("everything", &sev3, "incident.acknowledged"),
            e("executives", &sev1, "update.posted"),
            e("payments-sev1", &sev1, "incident.opened"),
        ]
    );
    // A stakeholder update's text is what the executives' channel is sent.
    let sent: String = sqlx::query_scalar(
        "select payload->>'message' from notifications n join notification_channels c on c.id = n.channel_id
         where c.name = 'executives'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(sent.contains("We are on it."), "{sent}");
}

#[sqlx::test]
async fn bad_paging_input_is_refused_naming_the_field_and_changes_nothing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.person("Ana Ribeiro", "ana").await;
    let cases = [
        (
            "/api/v1/escalation-policies",
            json!({"name": "P", "steps": []}),
            "steps",
        ),
        (
            "/api/v1/escalation-policies",
            json!({"name": "P", "steps": [{"targets": [{"person": "nobody"}], "delay_minutes": 5}]}),
            "steps[0].targets[0]",
        ),
        (
            "/api/v1/escalation-policies",
            json!({"name": "P", "steps": [{"targets": [{"schedule": "nope"}], "delay_minutes": 5}]}),
            "steps[0].targets[0]",
        ),
        (
            "/api/v1/escalation-policies",
            json!({"name": "P", "steps": [{"targets": [{"person": "ana"}], "delay_minutes": 0}]}),
            "steps[0].delay_minutes",
        ),
        (
            "/api/v1/people/ana/contact-methods",
            json!({"kind": "email", "label": "mail", "address": "not an address"}),
            "address",
        ),
        (
            "/api/v1/people/ana/contact-methods",
            json!({"kind": "pager", "label": "x", "address": "https://x.test"}),
            "kind",
        ),
        (
            "/api/v1/people/ana/contact-methods",
            json!({"kind": "webhook", "label": "x", "address": "ftp://x.test"}),
            "address",
        ),
        (
            "/api/v1/people/ana/notification-rules",
            json!({"contact_method_id": 999, "after_minutes": 1}),
            "contact_method_id",
        ),
        (
            "/api/v1/subscriptions",
            json!({"channel_id": 1, "events": ["incident.exploded"]}),
            "events[0]",
        ),
        (
            "/api/v1/schedules",
            json!({"name": "S", "layers": [{"length": {"every": "day"}, "start": "2026-01-05T09:00:00", "time_zone": "Mars/Olympus", "people": ["ana"]}]}),
            "layers[0].time_zone",
        ),
        (
            "/api/v1/schedules",
            json!({"name": "S", "layers": [{"length": {"every": "day"}, "start": "2026-01-05T09:00:00", "time_zone": "UTC", "people": []}]}),
            "layers[0].people",
        ),
    ];
    for (path, body, field) in cases {
        let r = app.post(path, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path} {body}: {}",
            r.text
        );
        assert_eq!(r.field(), field, "{path} {body}: {}", r.text);
    }
    for table in [
        "escalation_policies",
        "contact_methods",
        "notification_rules",
        "subscriptions",
        "schedules",
    ] {
        assert_eq!(
            count(&app.pool, &format!("select count(*) from {table}")).await,
            0,
            "{table}"
        );
    }
}

/// Debian's aiosmtpd, storing what it receives in a maildir.
pub(crate) struct SmtpServer {
    child: std::process::Child,
    maildir: std::path::PathBuf,
    pub(crate) url: String,
    /// Holds the maildir; removed after the server stops (fields drop after `drop`).
    _folder: crate::common::TempDir,
}

impl SmtpServer {
    /// Every message the server has received, long lines joined again (they come
    /// quoted-printable, as mail clients expect).
    pub(crate) fn mail(&self) -> Vec<String> {
        let Ok(new) = std::fs::read_dir(self.maildir.join("new")) else {
            return vec![];
        };
        new.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .map(|m| m.replace("=\n", "").replace("=3D", "="))
            .collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn smtp_server() -> SmtpServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The server makes the maildir itself: a name inside a folder of this test's own.
    let folder = crate::common::TempDir::new("smtp");
    let maildir = folder.path().join("mail");
    let child = std::process::Command::new("/usr/bin/python3")
        .args([
            "-m",
            "aiosmtpd",
            "-n",
            "-l",
            &format!("127.0.0.1:{port}"),
            "-c",
            "aiosmtpd.handlers.Mailbox",
        ])
        .arg(&maildir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("python3-aiosmtpd (scripts/test installs it)");
    let server = SmtpServer {
        child,
        maildir,
        url: format!("smtp://127.0.0.1:{port}"),
        _folder: folder,
    };
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return server;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the SMTP server did not start");
}

#[sqlx::test]
async fn a_page_by_email_reaches_a_real_smtp_server(pool: PgPool) {
    let smtp = smtp_server().await;
    let app = TestApp::new(pool).await;
    payments(&app).await;
    method(&app, "ana", "email", "ana.oncall@example.com").await;
    let key = app
        .incident(
            json!({"title": "Card failures", "severity": "Sev1", "service": "payments-gateway"}),
        )
        .await;
    fire_due(&app.pool, 10).await.unwrap();
    assert_eq!(deliver(&app, &sender(Some(smtp.url.clone()))).await, 1);
    let state = app
        .get(&format!("/api/v1/incidents/{key}/paging"))
        .await
        .json();
    assert_eq!(state["notifications"][0]["state"], "delivered", "{state}");
    let mail = smtp.mail();
    assert_eq!(mail.len(), 1);
    let m = &mail[0];
    assert!(m.contains("To: ana.oncall@example.com"), "{m}");
    assert!(
        m.contains(&format!("Subject: {key} (Sev1) Card failures")),
        "{m}"
    );
    let link = ack_path(&m[m.find("Acknowledge:").unwrap()..]);
    assert!(
        link.starts_with(&format!("/incidents/{key}/ack/")),
        "{link}"
    );
    let done = app
        .form_raw(&Creds::default(), &link, String::new(), &[])
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
}

#[sqlx::test]
async fn the_pages_show_who_is_on_call_and_let_people_set_how_they_are_reached(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let ana = app.account("ana@example.com", "responder").await;
    // How Ana is reached, set on her own page; bad input is named and changes nothing.
    let bad = app
        .form_as(
            &ana,
            "/account/paging",
            &[
                ("action", "add_method"),
                ("kind", "email"),
                ("label", "mail"),
                ("address", "nope"),
            ],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(bad.text.contains("an email address"), "{}", bad.text);
    let ok = app
        .form_as(
            &ana,
            "/account/paging",
            &[
                ("action", "add_method"),
                ("kind", "email"),
                ("label", "work <mail>"),
                ("address", "ana@example.com"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.text);
    let page = app
        .call_as(&ana, Method::GET, "/account/paging", &[], None)
        .await;
    assert!(
        page.text.contains("work &#60;mail&#62;") && !page.text.contains("work <mail>"),
        "escaped"
    );
    // On call now: the primary's person for payments-gateway.
    let now = app.call_as(&ana, Method::GET, "/oncall", &[], None).await;
    assert_eq!(now.status, StatusCode::OK);
    assert!(
        now.text.contains("Ana Ribeiro") && now.text.contains("Payments primary"),
        "{}",
        now.text
    );
    let list = app
        .call_as(&ana, Method::GET, "/schedules", &[], None)
        .await;
    assert!(list.text.contains("Payments secondary"));
    let id: i64 = sqlx::query_scalar("select id from schedules where name = 'Payments primary'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let s = app
        .call_as(&ana, Method::GET, &format!("/schedules/{id}"), &[], None)
        .await;
    assert_eq!(s.status, StatusCode::OK);
    assert!(
        s.text.contains("class=\"bar tone-0\"") && s.text.contains("Europe/Lisbon"),
        "{}",
        s.text
    );
    // A manager puts Ben in Ana's place for the next two hours from the schedule's page; an
    // override ending before it starts is refused naming the field, and changes nothing.
    let fmt = |m: i64| {
        (chrono::Utc::now() + chrono::Duration::minutes(m))
            .format("%Y-%m-%d %H:%M")
            .to_string()
    };
    let form = |from: String, to: String| {
        vec![
            ("version".to_owned(), "1".to_owned()),
            ("with".into(), "ben".into()),
            ("replaces".into(), "ana".into()),
            ("from".into(), from),
            ("to".into(), to),
        ]
    };
    let send = |fields: Vec<(String, String)>| {
        let app = &app;
        async move {
            let f: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            app.form(&format!("/schedules/{id}/overrides"), &f).await
        }
    };
    let bad = send(form(fmt(60), fmt(-60))).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(bad.text.contains("field-error"), "{}", bad.text);
    let ok = send(form(fmt(-1), fmt(120))).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.text);
    let now = app.get("/oncall").await;
    assert!(
        now.text.contains("Ben Okafor"),
        "the override decides who is paged first"
    );
    let stale = send(form(fmt(200), fmt(300))).await;
    assert_eq!(
        stale.status,
        StatusCode::CONFLICT,
        "made from version 1: {}",
        stale.text
    );
    assert!(
        stale.text.contains("it changed since you loaded it"),
        "{}",
        stale.text
    );
    let removed = app
        .form(
            &format!("/schedules/{id}/overrides/0/delete"),
            &[("version", "2")],
        )
        .await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.text);
    assert!(app.get("/oncall").await.text.contains("Ana Ribeiro"));
    // Her calendar feed, made on the Schedules page, read without signing in.
    let made = app.form_as(&ana, "/oncall/feed", &[]).await;
    assert_eq!(made.status, StatusCode::OK, "its address is shown once");
    let at = made.text.find("http://quell.test/oncall/").unwrap() + "http://quell.test".len();
    let feed_path = made.text[at..].split('<').next().unwrap().to_owned();
    let list = app
        .call_as(&ana, Method::GET, "/schedules", &[], None)
        .await;
    assert!(!list.text.contains(&feed_path), "and never again");
    assert!(list.text.contains("You made your calendar feed"));
    let feed = app
        .call_as(&Creds::default(), Method::GET, &feed_path, &[], None)
        .await;
    assert_eq!(feed.status, StatusCode::OK, "{feed_path}");
    assert!(
        feed.header("content-type")
            .unwrap()
            .starts_with("text/calendar")
    );
    assert!(
        feed.text.contains("SUMMARY:On call: Payments primary"),
        "{}",
        feed.text
    );
    let wrong = app
        .call_as(
            &Creds::default(),
            Method::GET,
            "/oncall/nope.ics",
            &[],
            None,
        )
        .await;
    assert_eq!(wrong.status, StatusCode::NOT_FOUND);
    // An admin subscribes a channel on the channels page.
    let (_, url) = receiver().await;
    let r = app
        .post(
            "/api/v1/notification-channels",
            json!({"name": "ops", "kind": "slack", "url": url}),
        )
        .await;
    let channel = r.json()["id"].as_i64().unwrap().to_string();
    let sub = app
        .form(
            "/admin/subscriptions",
            &[
                ("channel_id", channel.as_str()),
                ("events", "incident.opened"),
                ("events", "incident.resolved"),
                ("severities", "Sev1"),
                ("services", "payments-gateway"),
            ],
        )
        .await;
    assert_eq!(sub.status, StatusCode::SEE_OTHER, "{}", sub.text);
    let listed = app.get("/api/v1/subscriptions").await.json();
    let mine = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["events"] == json!(["incident.opened", "incident.resolved"]))
        .unwrap();
    assert_eq!(mine["severities"], json!(["Sev1"]));
    assert_eq!(mine["services"], json!(["payments-gateway"]));
    // The incident page shows the escalation and who was paged.
    let key = app
        .incident(json!({"title": "Cards down", "severity": "Sev1", "service": "payments-gateway"}))
        .await;
    fire_due(&app.pool, 10).await.unwrap();
    let page = app
        .call_as(&ana, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    assert!(
        page.text.contains("Paging and notifications")
            && page.text.contains("Ana Ribeiro by work &#60;mail&#62;"),
        "{}",
        page.text
    );
    assert!(page.text.contains("step 2 of 3 due"), "{}", page.text);
}

#[sqlx::test]
async fn managers_write_policies_and_point_services_at_them_in_the_browser(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    app.service("search").await;
    let bad = app
        .form(
            "/escalation-policies",
            &[
                ("name", "Search"),
                ("steps", "5 | person: ana\nsoon | person: ben"),
                ("repeat", "0"),
            ],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(
        bad.text.contains("soon | person: ben"),
        "the form keeps what was typed"
    );
    let unknown = app
        .form(
            "/escalation-policies",
            &[("name", "Search"), ("steps", "5 | person: nobody")],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        count(&app.pool, "select count(*) from escalation_policies").await,
        1
    );
    let ok = app
        .form(
            "/escalation-policies",
            &[
                ("name", "Search"),
                ("steps", "3 | person: ben\n10 | schedule: Payments primary"),
                ("repeat", "1"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.text);
    let set = app
        .form(
            "/oncall/assign",
            &[("service", "search"), ("policy", "Search")],
        )
        .await;
    assert_eq!(set.status, StatusCode::SEE_OTHER, "{}", set.text);
    let policies = app.get("/api/v1/escalation-policies").await.json();
    let search = policies["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Search")
        .unwrap();
    assert_eq!(search["services"], json!(["search"]));
    assert_eq!(search["repeat"], 1);
    assert_eq!(
        search["steps"][1],
        json!({"targets": [{"schedule": "Payments primary"}], "delay_minutes": 10})
    );
    let id = search["id"].as_i64().unwrap();
    let edit = app.get(&format!("/escalation-policies/{id}")).await;
    assert!(
        edit.text
            .contains("3 | person: ben\n10 | schedule: Payments primary"),
        "{}",
        edit.text
    );
    let now = app.get("/oncall").await;
    assert!(
        now.text.contains("Ben Okafor"),
        "search now pages Ben first"
    );
    let removed = app
        .form(&format!("/escalation-policies/{id}/delete"), &[])
        .await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER);
    assert_eq!(
        count(&app.pool, "select count(*) from escalation_policies").await,
        1
    );
}

#[sqlx::test]
async fn escalate_now_pages_the_next_step_at_once_and_once_with_three_engines_racing(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let mut hooks = Vec::new();
    for who in ["ana", "ben", "eve"] {
        let (hook, url) = receiver().await;
        method(&app, who, "slack", &url).await;
        hooks.push(hook);
    }
    let key = app
        .incident(
            json!({"title": "Card failures", "severity": "Sev1", "service": "payments-gateway"}),
        )
        .await;
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 0, "step 2 waits");
    let escalate = |body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            app.post(&format!("/api/v1/incidents/{key}/escalate"), body)
                .await
        }
    };
    // The page offers it while paging, naming the next step.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("Escalate now"), "{}", page.text);
    assert!(page.text.contains("name=\"step\" value=\"2\""));

    // Two people press it having both seen step 2 next: one escalation, the other told.
    assert!(page.text.contains("name=\"round\" value=\"0\""));
    let r = escalate(json!({"step": 2, "round": 0})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = escalate(json!({"step": 2, "round": 0})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("due already"), "{}", r.text);
    let r = escalate(json!({"step": 0})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    // The audit keeps which step was made due.
    let steps: Vec<Value> = sqlx::query_scalar(
        "select after -> 'step' from audit_log where action = 'incident.escalate_now'",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(steps, [json!(2)]);
    let engines = (0..3).map(|_| {
        let pool = app.pool.clone();
        tokio::spawn(async move { fire_due(&pool, 10).await.unwrap() })
    });
    let mut fired = 0;
    for e in engines.collect::<Vec<_>>() {
        fired += e.await.unwrap();
    }
    assert_eq!(fired, 1, "one engine fired step 2");
    assert_eq!(
        paged(&app.timeline(&key).await),
        [
            "Paged Ana Ribeiro (step 1 of 3, Payments)",
            "Paged Ben Okafor (step 2 of 3, Payments)"
        ]
    );
    let said = app
        .timeline(&key)
        .await
        .iter()
        .filter(|e| {
            e["headline"]
                .as_str()
                .unwrap_or("")
                .starts_with("Escalated now by admin: step 2 of 3 (Payments) is due at once")
        })
        .count();
    assert_eq!(said, 1);
    // Ben's page is delivered, with its step.
    assert_eq!(deliver(&app, &sender(None)).await, 2);
    let got = hooks[1].got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    assert!(got[0].1.contains("step 2 of 3"), "{}", got[0].1);
    let r = escalate(json!({"step": 2})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("step 3 of 3 is next"), "{}", r.text);
    assert_eq!(
        fire_due(&app.pool, 10).await.unwrap(),
        0,
        "nothing more fired"
    );

    // From the page, the last step; then nobody is left to escalate to.
    let version = app.incident_json(&key).await["version"]
        .as_i64()
        .unwrap()
        .to_string();
    let r = app
        .form(
            &format!("/incidents/{key}/escalate"),
            &[("version", &version), ("step", "3"), ("round", "0")],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    assert_eq!(paged(&app.timeline(&key).await).len(), 3);
    let r = escalate(json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("nobody is left"), "{}", r.text);
    // A press with no body at all (curl -X POST) is the same question, not a malformed one.
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/escalate"))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    // Acknowledged, or without a policy, nobody is being paged.
    let r = app
        .post(&format!("/api/v1/incidents/{key}/acknowledge"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = escalate(json!({})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let quiet = app
        .incident(json!({"title": "No policy here", "severity": "Sev3"}))
        .await;
    let r = app
        .post(&format!("/api/v1/incidents/{quiet}/escalate"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("no escalation policy"), "{}", r.text);
    let r = app
        .post(
            &format!("/api/v1/incidents/{quiet}/escalate"),
            json!({"step": "two"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
}
