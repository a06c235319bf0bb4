//! Notifications of SLA breaches: written with the breach, delivered at least once, signed the
//! Standard Webhooks way, retried against a failing endpoint and then given up.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use common::{TestApp, ago};
use quell::notify::sender::{SenderConfig, deliver_once, http_client};
use quell::sla::timers::fire_due;
use serde_json::{Value, json};
use sqlx::PgPool;

/// A receiving endpoint that records what it gets and answers with `status`.
#[derive(Clone)]
struct Receiver {
    got: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    status: Arc<Mutex<StatusCode>>,
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
    r.got.lock().unwrap().push((headers, body));
    *r.status.lock().unwrap()
}

async fn receiver(status: StatusCode) -> (Receiver, String) {
    let r = Receiver {
        got: Default::default(),
        status: Arc::new(Mutex::new(status)),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(r.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (r, url)
}

fn fast() -> SenderConfig {
    SenderConfig {
        base_delay_secs: 0.0,
        max_delay_secs: 0.0,
        max_attempts: 3,
        allow: common::loopback_allowed(),
        ..Default::default()
    }
}

/// A channel subscribed to SLA breaches of every service and severity (a new channel hears
/// nothing until subscribed).
async fn channel(app: &TestApp, name: &str, kind: &str, url: &str) -> Value {
    let r = app
        .post(
            "/api/v1/notification-channels",
            json!({"name": name, "kind": kind, "url": url, "events": ["sla.breached"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

#[sqlx::test]
async fn a_breach_reaches_a_signed_webhook_and_a_slack_channel(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let (hook, hook_url) = receiver(StatusCode::OK).await;
    let (slack, slack_url) = receiver(StatusCode::OK).await;
    let created = channel(&app, "ops webhook", "webhook", &hook_url).await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    let slack_channel = channel(&app, "ops slack", "slack", &slack_url).await;
    assert!(slack_channel["secret"].is_null());
    assert!(
        !app.get("/api/v1/notification-channels")
            .await
            .text
            .contains(&secret),
        "the secret is shown once"
    );

    let key = app.incident(json!({"title": "Card payments failing", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    assert_eq!(fire_due(&app.pool, 100).await.unwrap(), 1);
    assert_eq!(
        deliver_once(
            &app.pool,
            &http_client(fast().timeout, &fast().allow),
            &fast()
        )
        .await
        .unwrap(),
        2
    );

    let (headers, body) = hook.got.lock().unwrap()[0].clone();
    let payload: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(payload["type"], "sla.breached");
    assert_eq!(payload["incident"]["key"], key);
    let id = headers["webhook-id"].to_str().unwrap();
    let ts: i64 = headers["webhook-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((chrono::Utc::now().timestamp() - ts).abs() < 60);
    let expected = quell::notify::domain::sign(&secret, id, ts, &body).unwrap();
    assert_eq!(headers["webhook-signature"].to_str().unwrap(), expected);

    let (_, slack_body) = slack.got.lock().unwrap()[0].clone();
    let text = serde_json::from_str::<Value>(&slack_body).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains(&key) && text.contains("not acknowledged within 15 min"),
        "{text}"
    );

    let deliveries = app
        .get(&format!("/api/v1/incidents/{key}/notifications"))
        .await
        .json();
    let states: Vec<_> = deliveries["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(states, vec!["delivered", "delivered"]);
    assert!(
        app.get(&format!("/incidents/{key}"))
            .await
            .text
            .contains("ops slack")
    );
}

#[sqlx::test]
async fn a_failing_endpoint_is_retried_and_then_marked_failed(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let (hook, url) = receiver(StatusCode::INTERNAL_SERVER_ERROR).await;
    channel(&app, "flaky", "webhook", &url).await;
    let key = app.incident(json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    fire_due(&app.pool, 100).await.unwrap();
    let http = http_client(fast().timeout, &fast().allow);
    for _ in 0..5 {
        deliver_once(&app.pool, &http, &fast()).await.unwrap();
    }
    assert_eq!(
        hook.got.lock().unwrap().len(),
        3,
        "three attempts, then it gives up"
    );
    let d = app
        .get(&format!("/api/v1/incidents/{key}/notifications"))
        .await
        .json()["items"][0]
        .clone();
    assert_eq!(
        (
            d["state"].as_str(),
            d["attempts"].as_i64(),
            d["last_error"].as_str()
        ),
        (Some("failed"), Some(3), Some("HTTP 500"))
    );
    assert!(
        app.get(&format!("/incidents/{key}"))
            .await
            .text
            .contains("HTTP 500")
    );
}

#[sqlx::test]
async fn a_recovering_endpoint_gets_the_message_on_a_retry(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let (hook, url) = receiver(StatusCode::SERVICE_UNAVAILABLE).await;
    channel(&app, "recovering", "webhook", &url).await;
    let key = app.incident(json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    fire_due(&app.pool, 100).await.unwrap();
    let http = http_client(fast().timeout, &fast().allow);
    deliver_once(&app.pool, &http, &fast()).await.unwrap();
    *hook.status.lock().unwrap() = StatusCode::OK;
    deliver_once(&app.pool, &http, &fast()).await.unwrap();
    let d = app
        .get(&format!("/api/v1/incidents/{key}/notifications"))
        .await
        .json()["items"][0]
        .clone();
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_i64()),
        (Some("delivered"), Some(2))
    );
}

/// A sender that stalls past its lease (frozen, cut off) is fenced: the message it held is
/// taken again by another sender, whose claim number replaces its own, and its late result —
/// delivered or failed — is refused without changing anything. One that finds its lease gone
/// before it starts sending leaves the message alone.
#[sqlx::test]
async fn a_stalled_sender_past_its_lease_is_fenced_off(pool: PgPool) {
    use quell::notify::db;
    let app = TestApp::new(pool).await;
    let (hook, url) = receiver(StatusCode::OK).await;
    channel(&app, "ops", "webhook", &url).await;
    let key = app.incident(json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    fire_due(&app.pool, 100).await.unwrap();
    let row = || async {
        sqlx::query_as::<_, (String, i32, Option<String>)>(
            "select state, attempts, last_error from notifications",
        )
        .fetch_one(&app.pool)
        .await
        .unwrap()
    };

    // A sender whose lease is gone before it can start sends nothing and records nothing.
    let lapsed = SenderConfig {
        lease_secs: 0.0,
        ..fast()
    };
    assert_eq!(
        deliver_once(
            &app.pool,
            &http_client(lapsed.timeout, &lapsed.allow),
            &lapsed
        )
        .await
        .unwrap(),
        1
    );
    assert!(hook.got.lock().unwrap().is_empty(), "nothing was sent");
    assert_eq!(row().await, ("pending".into(), 1, None));

    // The stalled sender holds claim 2 with a lease that has run out; another takes claim 3.
    let stalled = db::claim(&app.pool, 10, 0.0).await.unwrap();
    assert_eq!(stalled[0].attempts, 2);
    let current = db::claim(&app.pool, 10, 60.0).await.unwrap();
    assert_eq!(current[0].attempts, 3);
    let id = current[0].id;
    assert!(
        db::claim(&app.pool, 10, 60.0).await.unwrap().is_empty(),
        "a held lease keeps the message from a third sender"
    );
    // The stalled one's failure would have made the message pending again: refused.
    assert!(
        !db::failed(&app.pool, id, 2, "timed out", Some(0.0))
            .await
            .unwrap()
    );
    assert!(
        !db::failed(&app.pool, id, 2, "timed out", None)
            .await
            .unwrap()
    );
    assert!(!db::delivered(&app.pool, id, 2).await.unwrap());
    assert_eq!(row().await, ("pending".into(), 3, None));
    // The current holder records its result; the stalled one's late success changes nothing.
    assert!(db::delivered(&app.pool, id, 3).await.unwrap());
    assert!(!db::delivered(&app.pool, id, 2).await.unwrap());
    assert!(!db::failed(&app.pool, id, 3, "again", None).await.unwrap());
    assert_eq!(row().await, ("delivered".into(), 3, None));
    let d = app
        .get(&format!("/api/v1/incidents/{key}/notifications"))
        .await
        .json()["items"][0]
        .clone();
    assert_eq!(d["state"], "delivered");
}

#[sqlx::test]
async fn three_engines_and_senders_deliver_every_breach_of_a_thousand_at_least_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let (hook, url) = receiver(StatusCode::OK).await;
    channel(&app, "ops", "webhook", &url).await;
    app.open_many(1000, "Sev1", 20).await;
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let pool = app.pool.clone();
            tokio::spawn(async move {
                let http = http_client(fast().timeout, &fast().allow);
                let cfg = SenderConfig {
                    batch: 40,
                    ..fast()
                };
                loop {
                    let fired = fire_due(&pool, 50).await.unwrap();
                    let sent = deliver_once(&pool, &http, &cfg).await.unwrap();
                    if fired == 0 && sent == 0 {
                        return;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    let breaches: i64 = sqlx::query_scalar("select count(*) from sla_breaches")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(breaches, 1000);
    let delivered: i64 =
        sqlx::query_scalar("select count(*) from notifications where state = 'delivered'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(delivered, 1000);
    let mut keys: Vec<String> = hook
        .got
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| {
            serde_json::from_str::<Value>(b).unwrap()["incident"]["key"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 1000, "every breach arrived");
}

#[sqlx::test]
async fn bad_channels_are_refused(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for (body, field) in [
        (
            json!({"name": "x", "kind": "pager", "url": "https://x.example"}),
            "kind",
        ),
        (
            json!({"name": "x", "kind": "slack", "url": "ftp://x.example"}),
            "url",
        ),
        (
            json!({"name": "", "kind": "slack", "url": "https://x.example"}),
            "name",
        ),
    ] {
        let r = app
            .post("/api/v1/notification-channels", body.clone())
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field);
    }
    channel(&app, "ops", "slack", "https://hooks.example/x").await;
    let r = app
        .post(
            "/api/v1/notification-channels",
            json!({"name": "ops", "kind": "slack", "url": "https://hooks.example/y"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
}

/// Admins manage channels on a page: a webhook's signing secret is shown once, a bad address is
/// named, removing one works.
#[sqlx::test]
async fn admins_add_and_remove_channels_on_their_page(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .form(
            "/admin/channels",
            &[
                ("name", "ops-hook"),
                ("kind", "webhook"),
                ("url", "https://hooks.example.com/quell"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("Added ops-hook"));
    assert!(
        r.text.contains("whsec_"),
        "the signing secret, once: {}",
        r.text
    );
    let again = app.get("/admin/channels").await;
    assert!(again.text.contains("https://hooks.example.com/quell"));
    assert!(!again.text.contains("whsec_"), "never shown again");
    let r = app
        .form(
            "/admin/channels",
            &[
                ("name", "bad"),
                ("kind", "slack"),
                ("url", "ftp://example.com"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("<strong>Address</strong>"), "{}", r.text);
    let id = app.get("/api/v1/notification-channels").await.json()["items"][0]["id"]
        .as_i64()
        .unwrap();
    let r = app.form(&format!("/admin/channels/{id}/delete"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(
        app.get("/api/v1/notification-channels").await.json()["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

async fn notifications(app: &TestApp) -> i64 {
    sqlx::query_scalar("select count(*) from notifications")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// A new channel used to be subscribed to every service's SLA breaches without anyone choosing
/// it. Now it hears nothing until subscribed, and its page says so.
#[sqlx::test]
async fn a_new_channel_hears_nothing_until_someone_subscribes_it(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let (hook, url) = receiver(StatusCode::OK).await;
    let added = app
        .form(
            "/admin/channels",
            &[("name", "ops-hook"), ("kind", "webhook"), ("url", &url)],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    assert!(
        added
            .text
            .contains("ops-hook has no subscriptions yet and receives nothing"),
        "{}",
        added.text
    );
    let r = app
        .post(
            "/api/v1/notification-channels",
            json!({"name": "ops-api", "kind": "slack", "url": url}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let subscriptions = app.get("/api/v1/subscriptions").await.json();
    assert_eq!(subscriptions["items"], json!([]), "nobody chose any");
    let page = app.get("/admin/channels").await;
    assert!(
        page.text
            .contains("a channel without subscriptions receives nothing"),
        "{}",
        page.text
    );
    assert_eq!(
        page.text.matches("none: receives nothing").count(),
        2,
        "each channel says it hears nothing: {}",
        page.text
    );

    app.incident(json!({"title": "Cards down", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)}))
        .await;
    assert_eq!(fire_due(&app.pool, 100).await.unwrap(), 1);
    assert_eq!(notifications(&app).await, 0, "a breach told no channel");

    // Subscribed on the page, the webhook hears the next breach.
    let id = app.get("/api/v1/notification-channels").await.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ops-hook")
        .unwrap()["id"]
        .to_string();
    let r = app
        .form(
            "/admin/subscriptions",
            &[("channel_id", id.as_str()), ("events", "sla.breached")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app.get("/admin/channels").await;
    assert_eq!(page.text.matches("none: receives nothing").count(), 1);
    app.incident(json!({"title": "Search down", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)}))
        .await;
    assert_eq!(fire_due(&app.pool, 100).await.unwrap(), 1);
    assert_eq!(notifications(&app).await, 1);
    let http = http_client(fast().timeout, &fast().allow);
    deliver_once(&app.pool, &http, &fast()).await.unwrap();
    let got = hook.got.lock().unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].1.contains("Search down"), "{}", got[0].1);
}

/// "Remove" deleted a channel with its subscriptions at one click. Now the list links to a
/// page that asks, naming the subscriptions that go with it, and only its button removes.
#[sqlx::test]
async fn removing_a_channel_asks_first_naming_its_subscriptions(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let created = channel(&app, "ops-slack", "slack", "https://hooks.example/x").await;
    let id = created["id"].as_i64().unwrap();
    let r = app
        .post(
            "/api/v1/subscriptions",
            json!({"channel_id": id, "events": ["incident.opened"], "severities": ["Sev1"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let list = app.get("/admin/channels").await;
    let ask = format!("/admin/channels/{id}/delete");
    assert!(
        list.text
            .contains(&format!(r#"<a class="danger" href="{ask}">"#)),
        "{}",
        list.text
    );
    assert!(
        !list.text.contains(&format!(r#"action="{ask}""#)),
        "the list itself removes nothing: {}",
        list.text
    );

    let question = app.get(&ask).await;
    assert_eq!(question.status, StatusCode::OK, "{}", question.text);
    assert!(
        question
            .text
            .contains("Remove channel ops-slack and its 2 subscriptions?"),
        "{}",
        question.text
    );
    assert!(question.text.contains("incident.opened"));
    assert!(
        question.text.contains(&format!(
            r#"<form method="post" action="{ask}" class="row">"#
        )),
        "{}",
        question.text
    );
    // No inline script or style: the page works under its own CSP, without JavaScript.
    for inline in ["style=", "<script>", " onclick=", " onsubmit="] {
        assert!(
            !question.text.contains(inline),
            "{inline}: {}",
            question.text
        );
    }
    let still = app.get("/api/v1/subscriptions").await.json();
    assert_eq!(
        still["items"].as_array().unwrap().len(),
        2,
        "asking removed nothing"
    );

    let r = app.form(&ask, &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.header("location"), Some("/admin/channels"));
    assert_eq!(
        app.get("/api/v1/subscriptions").await.json()["items"],
        json!([])
    );
    assert_eq!(app.get(&ask).await.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn messages_done_with_are_forgotten_after_their_retention_and_pending_ones_never(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    let key = app
        .incident(json!({"title": "Old page", "severity": "Sev3"}))
        .await;
    let number: i64 = key.trim_start_matches("INC-").parse().unwrap();
    sqlx::query(
        "insert into notification_channels (name, kind, url) values ('ops', 'webhook', 'https://hooks.example.com/x')",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    // Four messages: old and done with, old and pending, recent and done, old and cancelled.
    for (state, days) in [
        ("delivered", 500),
        ("pending", 500),
        ("failed", 10),
        ("cancelled", 401),
    ] {
        sqlx::query(
            "insert into notifications (channel_id, incident_id, event, payload, state, created_at)
             select c.id, i.id, 'incident.opened', '{}', $1, now() - make_interval(days => $2)
             from notification_channels c, incidents i where i.number = $3",
        )
        .bind(state)
        .bind(days)
        .bind(number)
        .execute(&app.pool)
        .await
        .unwrap();
    }
    let gone = quell::notify::db::purge_done(&app.pool, 400, 10_000)
        .await
        .unwrap();
    assert_eq!(gone, 2);
    let left: Vec<String> = sqlx::query_scalar("select state from notifications order by state")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert_eq!(left, ["failed", "pending"]);
}
