//! What the second hostile probe found (issue 28), each finding reproduced as it was found and
//! checked fixed: requests cancelled mid-write, severity changes racing due timers, leaked live
//! slots, webhooks aimed inside the network, secrets in delivery errors, links of people who can
//! no longer act, uploads without a quota, git reads outside the roots, and the smaller ones.

use crate::common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use common::TestApp;
use serde_json::json;
use sqlx::{Connection, PgPool};
use tower::ServiceExt;

/// A small deterministic generator, so a failure can be run again as it was.
pub struct Dice(u64);

impl Dice {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Polls `fut` until it is ready, counting the times it was polled: how many waits it makes.
pub async fn waits_of<F: std::future::Future>(fut: F) -> (F::Output, usize) {
    let mut fut = std::pin::pin!(fut);
    let mut waits = 0usize;
    std::future::poll_fn(|cx| {
        waits += 1;
        fut.as_mut().poll(cx).map(|r| (r, waits))
    })
    .await
}

/// Polls `fut` at most `after` times and drops it there unless it was ready: a client that
/// goes away, or a timeout, at that point.
pub async fn cut_after<F: std::future::Future>(fut: F, after: usize) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut left = after;
    std::future::poll_fn(|cx| {
        if left == 0 {
            return std::task::Poll::Ready(None);
        }
        left -= 1;
        fut.as_mut().poll(cx).map(Some)
    })
    .await
}

/// Quell's sessions of this test's database that sit inside a transaction, not running. Asked
/// on a connection of the test's own: one from the pool could be the very session it looks for.
async fn idle_in_transaction(watch: &mut sqlx::PgConnection) -> i64 {
    sqlx::query_scalar::<_, i64>(
        "select count(*) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and state like 'idle in transaction%'",
    )
    .fetch_one(watch)
    .await
    .unwrap()
}

/// Waits a second at most for no session to be idle in a transaction (a cut request's
/// connection is idle in one until the pool, a moment later, rolls it back as it takes the
/// connection back); returns how many still were.
async fn settle(watch: &mut sqlx::PgConnection) -> i64 {
    let until = tokio::time::Instant::now() + Duration::from_secs(1);
    loop {
        let n = idle_in_transaction(watch).await;
        if n == 0 || tokio::time::Instant::now() > until {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// F2: a request cancelled while its transaction began left the pooled connection inside that
/// transaction (sqlx's `begin` is not cancel-safe), so the next borrower's writes ran in it.
#[sqlx::test]
async fn requests_aborted_mid_write_leave_no_session_in_a_transaction_and_lose_no_write(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let key = app.past_incident(30).await;
    let token = app.admin.token.clone().unwrap();
    let request = |n: usize| {
        let (uri, body) = if n % 4 == 3 {
            let severity = ["Sev1", "Sev2", "Sev3"][n % 3];
            (
                format!("/api/v1/incidents/{key}/severity"),
                json!({"severity": severity, "reason": format!("probe {n}")}),
            )
        } else {
            (
                format!("/api/v1/incidents/{key}/timeline"),
                json!({"body": format!("probe note {n}")}),
            )
        };
        Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("host", "quell.test")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    // Each request is cut off after its k-th wait (the k-th time it is polled and not ready),
    // k running over every wait an uncut request makes: before the transaction, while it
    // begins, mid-write, at commit. Four at a time, so the waits interleave as they do live.
    let (_, waits) = waits_of(app.router.clone().oneshot(request(0))).await;
    let cut = |n: usize, after: usize| {
        let fut = app.router.clone().oneshot(request(n));
        async move {
            cut_after(fut, after)
                .await
                .map(|res| (n, res.unwrap().status().as_u16()))
        }
    };
    let mut watch = sqlx::PgConnection::connect_with(&pool.connect_options())
        .await
        .unwrap();
    let mut answered = Vec::new();
    let mut dice = Dice::new(0x5eed_2802);
    let mut stale_after = Vec::new();
    const ROUNDS: usize = 3;
    let mut n = 1;
    for round in 0..ROUNDS {
        for k in 1..=waits + 2 {
            // One alone, cut after exactly k waits; then four together at random points.
            answered.extend(cut(n, k).await);
            if idle_in_transaction(&mut watch).await > 0 && settle(&mut watch).await > 0 {
                stale_after.push((round, k));
            }
            let four = futures_util::future::join_all(
                (1..=4).map(|i| cut(n + i, 1 + dice.below(waits as u64 + 2) as usize)),
            )
            .await;
            n += 5;
            answered.extend(four.into_iter().flatten());
            if idle_in_transaction(&mut watch).await > 0 && settle(&mut watch).await > 0 {
                stale_after.push((round, 0));
            }
        }
    }
    // And two left to finish: on a loaded machine a request may need more waits than the one
    // measured first, and what is answered 201 must be stored whatever the cuts did.
    for _ in 0..2 {
        answered.extend(cut(n, usize::MAX).await);
        n += 1;
    }
    assert_eq!(
        stale_after,
        vec![],
        "cut off after these waits, a request left a pooled connection inside a transaction"
    );
    assert!(
        answered.iter().all(|(_, s)| *s < 500),
        "no 5xx: {answered:?}"
    );
    // Read on the test's own connection: what it sees is committed.
    let stored: Vec<String> = sqlx::query_scalar(
        "select e.body from timeline_events e join incidents i on i.id = e.incident_id
         where e.body like 'probe note %'",
    )
    .fetch_all(&mut watch)
    .await
    .unwrap();
    let acknowledged: Vec<String> = answered
        .iter()
        .filter(|(n, s)| *s == 201 && n % 4 != 3)
        .map(|(n, _)| format!("probe note {n}"))
        .collect();
    assert!(
        !acknowledged.is_empty(),
        "some requests finished before they were cut off"
    );
    for note in &acknowledged {
        assert!(
            stored.contains(note),
            "{note} was answered 201 but is not stored"
        );
    }
    // And the pool still works for everyone after.
    let r = app.get(&format!("/api/v1/incidents/{key}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// The SLA engine and the escalation engine, firing in a loop until stopped, as every replica
/// runs them.
struct Engines {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<(usize, Vec<String>)>,
}

impl Engines {
    fn start(pool: &PgPool) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (pool, until) = (pool.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut fired = 0;
            while !until.load(std::sync::atomic::Ordering::Relaxed) {
                for round in [
                    quell::sla::timers::fire_due(&pool, 50).await,
                    quell::paging::escalator::fire_due(&pool, 50).await,
                ] {
                    match round {
                        Ok(n) => fired += n,
                        Err(e) => failures.push(e.to_string()),
                    }
                }
                tokio::task::yield_now().await;
            }
            (fired, failures)
        });
        Self { stop, task }
    }

    /// Stops them; what they fired and how they failed.
    async fn stop(self) -> (usize, Vec<String>) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// F3: raising the severity of an incident whose timers were due at that moment deadlocked with
/// the SLA engine (which held the timers it claimed and waited for the incident), and the
/// person was answered 500. Here the engine fires in a loop while people change severities of
/// backdated incidents, every change making new deadlines due at once.
#[sqlx::test]
async fn severity_changes_racing_due_timers_never_deadlock_or_answer_500(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let mut keys = Vec::new();
    for _ in 0..6 {
        keys.push(app.past_incident(240).await);
    }
    let engine = Engines::start(&pool);
    let token = app.admin.token.clone().unwrap();
    let mut dice = Dice::new(28_03);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for round in 0..50 {
        let changes = (0..6).map(|i| {
            let key = &keys[(i + round) % keys.len()];
            let severity = ["Sev1", "Sev2", "Sev3", "Sev4"][dice.below(4) as usize];
            let req = Request::builder()
                .method(Method::POST)
                .uri(format!("/api/v1/incidents/{key}/severity"))
                .header("host", "quell.test")
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"severity": severity, "reason": "the probe raises it"}).to_string(),
                ))
                .unwrap();
            app.router.clone().oneshot(req)
        });
        for res in futures_util::future::join_all(changes).await {
            *statuses.entry(res.unwrap().status().as_u16()).or_default() += 1;
        }
    }
    let (fired, failures) = engine.stop().await;
    assert!(
        statuses.keys().all(|s| *s < 500),
        "no change answered 5xx: {statuses:?}"
    );
    assert!(
        statuses.get(&200).copied().unwrap_or(0) > 150,
        "most changes went through: {statuses:?}"
    );
    assert!(fired > 0, "the engine fired the due timers meanwhile");
    assert_eq!(failures, Vec::<String>::new(), "the engine never failed");
}

/// F3, the escalation engine's side: acknowledging incidents while their first step fires.
#[sqlx::test]
async fn acknowledging_while_escalations_fire_never_deadlocks_or_answers_500(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    crate::paging::payments(&app).await;
    let engine = Engines::start(&pool);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for round in 0..10 {
        let mut keys = Vec::new();
        for i in 0..8 {
            keys.push(
                app.incident(json!({"title": format!("Card failures {round}.{i}"),
                    "severity": "Sev2", "service": "payments-gateway"}))
                    .await,
            );
        }
        let paths: Vec<String> = keys
            .iter()
            .map(|key| format!("/api/v1/incidents/{key}/acknowledge"))
            .collect();
        let acks = paths.iter().map(|path| app.post_empty(path));
        for r in futures_util::future::join_all(acks).await {
            *statuses.entry(r.status.as_u16()).or_default() += 1;
        }
    }
    let (_, failures) = engine.stop().await;
    assert_eq!(
        statuses.get(&200),
        Some(&80),
        "every acknowledgement went through: {statuses:?}"
    );
    assert_eq!(failures, Vec::<String>::new(), "the engines never failed");
}

/// Rows in `live_streams` of the person with `email`.
async fn slots_of(pool: &PgPool, email: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(
        "select count(*) from live_streams s join people p on p.id = s.person_id
         where p.email = $1 and s.lease_until > now()",
    )
    .bind(email)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// F4: opens of `/incidents/events` cut off after a few milliseconds left their rows in
/// `live_streams`, renewed for ever by the replica, and the person got 429 on every live page.
#[sqlx::test]
async fn live_stream_slots_end_with_their_streams_however_the_request_ends(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let viewer = app.account("vic@example.com", "viewer").await;
    let open = || {
        let mut req = Request::builder()
            .method(Method::GET)
            .uri("/incidents/events")
            .header("host", "quell.test")
            .header("accept", "text/event-stream");
        if let Some(c) = &viewer.cookie {
            req = req.header("cookie", c);
        }
        app.router.clone().oneshot(req.body(Body::empty()).unwrap())
    };
    let (res, waits) = waits_of(open()).await;
    assert_eq!(res.unwrap().status(), StatusCode::OK);
    // Cut off after every wait of the open, again and again: 300 opens in all, the answered
    // ones dropped at once (a tab closed as the page loaded).
    for n in 0..300 {
        let _ = cut_after(open(), 1 + n % (waits + 1)).await;
    }
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    while slots_of(&pool, "vic@example.com").await > 0 && tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        slots_of(&pool, "vic@example.com").await,
        0,
        "every slot ended with its stream"
    );
    // A new session of the same person opens a live page at once.
    let again = app.sign_in("vic@example.com", common::PASSWORD).await;
    let s = common::open_stream(&app.router, &again, "/incidents/events", &[]).await;
    assert_eq!(s.status, StatusCode::OK);
}

/// The service `payments`, paging `targets` (JSON) through a one-step policy named `policy`.
async fn payments_paging(app: &TestApp, policy: &str, targets: serde_json::Value) {
    app.service("payments").await;
    app.policy(
        "payments",
        json!({"name": policy, "steps": [{"targets": targets, "delay_minutes": 5}]}),
    )
    .await;
}

/// Changes account `id` as an admin would (`{"role": …}` or `{"disabled": …}`).
async fn change_account(app: &TestApp, id: i64, change: serde_json::Value) {
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/users/{id}"),
            &[],
            Some(&change.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// A listener on loopback that counts the connections made to it.
async fn counting_listener() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, hits)
}

/// F5 and F6: any person could aim a webhook contact method at loopback, the metadata address
/// or a private range, and Quell posted signed pages there and told viewers what answered; and
/// a failed delivery's error carried the full URL (a Slack webhook's URL is its secret) to
/// every viewer of the incident.
#[sqlx::test]
async fn webhooks_inside_the_network_are_refused_and_failures_never_name_the_address(pool: PgPool) {
    let app = TestApp::with(pool.clone(), |c| c.webhook_allow = Default::default()).await;
    let (port, hits) = counting_listener().await;
    let rita = app.account("rita@example.com", "responder").await;
    let viewer = app.account("vic@example.com", "viewer").await;
    // Saved: refused, naming the field, for every spelling of an inside address.
    for (who, handle) in [(&rita, "rita"), (&viewer, "vic")] {
        for url in [
            format!("http://127.0.0.1:{port}/"),
            "http://169.254.169.254/latest/meta-data/".into(),
            "http://10.1.2.3/hook".into(),
            "http://192.168.0.10/hook".into(),
            format!("http://0:{port}/"),
            format!("http://2130706433:{port}/"),
            format!("http://[::1]:{port}/"),
            format!("http://localhost:{port}/"),
        ] {
            let r = app
                .call_as(
                    who,
                    Method::POST,
                    &format!("/api/v1/people/{handle}/contact-methods"),
                    &[],
                    Some(&json!({"kind": "webhook", "label": "mine", "address": url}).to_string()),
                )
                .await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{url}: {}",
                r.text
            );
            assert_eq!(r.field(), "address", "{url}");
            assert!(r.text.contains("QUELL_WEBHOOK_ALLOW"), "{url}: {}", r.text);
        }
    }
    // Methods saved before the rule (or whose name resolves inside now) are refused when sent:
    // a local name, and this machine's own name, which resolves to one of its addresses.
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty());
    let mut inside = vec![format!("http://localhost:{port}/hook")];
    if let Some(h) = &host
        && let Ok(addrs) = tokio::net::lookup_host((h.as_str(), port)).await
        && addrs
            .into_iter()
            .all(|a| quell::egress::is_internal(a.ip()))
    {
        inside.push(format!("http://{h}:{port}/hook"));
    }
    let secret_url = "https://hooks.slack.invalid/services/T0001/B0001/SeCrEtToKeN";
    for (n, url) in inside.iter().chain([&secret_url.to_owned()]).enumerate() {
        let kind = if url == secret_url {
            "slack"
        } else {
            "webhook"
        };
        sqlx::query(
            "insert into contact_methods (person_id, kind, label, address)
             select id, $1, $2, $3 from people where email = 'rita@example.com'",
        )
        .bind(kind)
        .bind(format!("method {n}"))
        .bind(url)
        .execute(&pool)
        .await
        .unwrap();
    }
    payments_paging(&app, "Rita", json!([{"person": "rita"}])).await;
    let key = app
        .incident(json!({"title": "Card failures", "severity": "Sev2", "service": "payments"}))
        .await;
    quell::paging::escalator::fire_due(&pool, 50).await.unwrap();
    let cfg = quell::notify::sender::SenderConfig {
        max_attempts: 1,
        timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let http = quell::notify::sender::http_client(cfg.timeout, &cfg.allow);
    quell::notify::sender::deliver_once(&pool, &http, &cfg)
        .await
        .unwrap();
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing reached the listener on loopback"
    );
    let r = app
        .call_as(
            &viewer,
            Method::GET,
            &format!("/api/v1/incidents/{key}/notifications"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let items = r.json()["items"].as_array().unwrap().clone();
    let failed: Vec<&str> = items
        .iter()
        .filter(|d| d["state"] == "failed")
        .map(|d| d["last_error"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(failed.len(), inside.len() + 1, "{items:?}");
    assert_eq!(
        failed
            .iter()
            .filter(|e| e.starts_with("refused: the address is inside this network"))
            .count(),
        inside.len(),
        "{failed:?}"
    );
    let page = app
        .call_as(
            &viewer,
            Method::GET,
            &format!("/incidents/{key}"),
            &[],
            None,
        )
        .await;
    for what in [r.text.as_str(), page.text.as_str()] {
        for secret in [
            "SeCrEtToKeN",
            "hooks.slack.invalid",
            "localhost:",
            &port.to_string(),
        ] {
            assert!(!what.contains(secret), "a viewer reads {secret:?}");
        }
    }
}

/// The account id of the person with `email`.
async fn account_id(pool: &PgPool, email: &str) -> i64 {
    sqlx::query_scalar("select id from people where email = $1")
        .bind(email)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// F7: a viewer named in a policy acknowledged through their link, and a disabled account was
/// still paged and its link acknowledged as that person.
#[sqlx::test]
async fn acknowledge_links_act_only_with_the_rights_their_person_has_now(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.account("rita@example.com", "responder").await;
    app.account("sam@example.com", "responder").await;
    app.account("vic@example.com", "viewer").await;
    for handle in ["rita", "sam"] {
        let r = app
            .post(
                &format!("/api/v1/people/{handle}/contact-methods"),
                json!({"kind": "email", "label": "work", "address": format!("{handle}@example.com")}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    // A policy refuses a target who could not acknowledge.
    let r = app
        .post(
            "/api/v1/escalation-policies",
            json!({"name": "Viewers", "steps": [{"targets": [{"person": "vic"}], "delay_minutes": 5}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.field().starts_with("steps[0].targets"), "{}", r.text);
    assert!(r.text.contains("cannot acknowledge"), "{}", r.text);
    payments_paging(&app, "Both", json!([{"person": "rita"}, {"person": "sam"}])).await;
    let first = app
        .incident(json!({"title": "Card failures", "severity": "Sev2", "service": "payments"}))
        .await;
    quell::paging::escalator::fire_due(&pool, 50).await.unwrap();
    let link = |email: &'static str, key: String| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, String>(
                "select n.payload->>'ack_path' from notifications n join people p on p.id = n.person_id
                 where p.email = $1 and n.payload->'incident'->>'key' = $2",
            )
            .bind(email)
            .bind(key)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let (rita_link, sam_link) = (
        link("rita@example.com", first.clone()).await,
        link("sam@example.com", first.clone()).await,
    );
    // Since the page went out, rita may only read and sam was disabled.
    let rita = account_id(&pool, "rita@example.com").await;
    let sam = account_id(&pool, "sam@example.com").await;
    change_account(&app, rita, json!({"role": "viewer"})).await;
    change_account(&app, sam, json!({"disabled": true})).await;
    let nobody = common::Creds::default();
    for path in [&rita_link, &sam_link] {
        let shown = app.call_as(&nobody, Method::GET, path, &[], None).await;
        assert_eq!(shown.status, StatusCode::FORBIDDEN, "{}", shown.text);
        assert!(shown.text.contains("no longer works"), "{}", shown.text);
        let used = app.form_raw(&nobody, path, String::new(), &[]).await;
        assert_eq!(used.status, StatusCode::FORBIDDEN, "{}", used.text);
    }
    assert_eq!(
        app.incident_json(&first).await["status"],
        "triggered",
        "nobody acknowledged it"
    );
    // Neither is paged again: the next incident's step finds nobody who can act.
    let second = app
        .incident(json!({"title": "More card failures", "severity": "Sev2", "service": "payments"}))
        .await;
    quell::paging::escalator::fire_due(&pool, 50).await.unwrap();
    let pages: i64 = sqlx::query_scalar(
        "select count(*) from notifications where payload->'incident'->>'key' = $1",
    )
    .bind(&second)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(pages, 0, "no page to a viewer or a disabled account");
    let paged: Vec<String> = app
        .timeline(&second)
        .await
        .iter()
        .filter(|e| e["kind"] == "paged")
        .map(|e| e["headline"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(paged.len(), 1, "{paged:?}");
    assert!(
        paged[0].contains("not paged:") && paged[0].contains("cannot acknowledge"),
        "{paged:?}"
    );
}

/// A zip of `files`, deflated.
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    for (name, body) in files {
        w.start_file(*name, deflated).unwrap();
        w.write_all(body).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// `[0,0,…,0]` of about `bytes` bytes: each value two bytes of JSON, 32 as a `serde_json::Value`.
fn zeros(bytes: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(bytes + 2);
    v.push(b'[');
    while v.len() < bytes {
        v.extend_from_slice(b"0,");
    }
    v.extend_from_slice(b"0]");
    v
}

fn refusal(e: quell::domain::DomainError) -> String {
    match e {
        quell::domain::DomainError::Invalid { message, .. } => message,
        quell::domain::DomainError::Conflict(m) => m,
    }
}

const MIB: usize = 1024 * 1024;

/// F1: a 63 KB Slack export took about 0.9 GB: its files were parsed into `serde_json::Value`
/// trees (about 32 bytes a value) before they were checked. Read a record at a time, a file
/// that is not what the export writes is refused at its first wrong record, holding next to
/// nothing, and what a real one keeps is bounded whatever it unpacks to.
#[sqlx::test]
async fn exports_that_unpack_to_millions_of_values_are_refused_holding_next_to_nothing(
    pool: PgPool,
) {
    use quell::evidence::domain::{slack, tickets};
    let day = zeros(30 * MIB);
    let bomb = zip_of(&[("users.json", b"[]"), ("ops/2026-10-21.json", &day)]);
    assert!(bomb.len() < 2 * MIB, "a small upload: {} bytes", bomb.len());
    let (read, held) = common::held_peak(|| slack::read_zip(&bomb));
    assert_eq!(
        refusal(read.unwrap_err()),
        "ops/2026-10-21.json, message 1: expected an object"
    );
    assert!(held < 4 * MIB, "reading it held {} MiB", held / MIB);
    let users = zip_of(&[("users.json", &day), ("ops/2026-10-21.json", b"[]")]);
    let (read, held) = common::held_peak(|| slack::read_zip(&users));
    assert_eq!(
        refusal(read.unwrap_err()),
        "users.json, user 1: `id` is missing"
    );
    assert!(held < 4 * MIB, "reading users.json held {} MiB", held / MIB);
    // A file larger than any day of a channel is refused before it is read.
    let huge = zip_of(&[("ops/2026-10-21.json", &zeros(64 * MIB))]);
    let (read, held) = common::held_peak(|| slack::read_zip(&huge));
    assert_eq!(
        refusal(read.unwrap_err()),
        "ops/2026-10-21.json unpacks to more than 32 MiB; export a shorter period"
    );
    assert!(held < MIB, "refusing it held {} MiB", held / MIB);
    let json = zeros(24 * MIB);
    for tracker in [tickets::Tracker::Linear, tickets::Tracker::Jira] {
        let (read, held) = common::held_peak(|| tickets::read(tracker, &json));
        assert!(
            refusal(read.unwrap_err()).starts_with("[0]: "),
            "{tracker:?}"
        );
        assert!(
            held < MIB,
            "{tracker:?}: reading it held {} MiB",
            held / MIB
        );
    }
    let depth = 100_000;
    let nested = format!(
        r#"{{"issues":[{{"key":"PAY-1","fields":{{"summary":"s","created":"2026-01-01T00:00:00Z","description":{}{}}}}}]}}"#,
        r#"{"type":"doc","content":["#.repeat(depth),
        "]}".repeat(depth)
    );
    let (read, held) =
        common::held_peak(|| tickets::read(tickets::Tracker::Jira, nested.as_bytes()));
    let why = refusal(read.unwrap_err());
    assert!(why.contains("not valid JSON (recursion limit"), "{why}");
    assert!(
        held < MIB,
        "a document nested 100 000 deep held {} MiB",
        held / MIB
    );
    // Mentions that each stand for a 200-character name: 10 MiB of `<@U1>` is not expanded
    // 160-fold, only what a message keeps.
    let users = format!(r#"[{{"id":"U1","name":"{}"}}]"#, "n".repeat(200));
    let day = format!(
        r#"[{{"type":"message","user":"U1","text":"{}","ts":"1792620840.000200"}}]"#,
        "<@U1>".repeat(2 * MIB)
    );
    let mentions = zip_of(&[
        ("users.json", users.as_bytes()),
        ("ops/2026-10-21.json", day.as_bytes()),
    ]);
    drop(day);
    let (read, held) = common::held_peak(|| slack::read_zip(&mentions));
    let read = read.unwrap();
    assert_eq!(
        read[0].text.chars().count(),
        10_000,
        "a message keeps 10,000 characters"
    );
    assert!(
        held < 24 * MIB,
        "expanding mentions held {} MiB",
        held / MIB
    );
    // A real export that holds too much text is refused before it is all kept.
    let line = format!(
        r#"{{"type":"message","user":"U1","text":"{}","ts":"1792620840.000200"}}"#,
        "retry storm ".repeat(800)
    );
    let mut big = b"[".to_vec();
    while big.len() < 20 * MIB {
        big.extend_from_slice(line.as_bytes());
        big.push(b',');
    }
    big.extend_from_slice(line.as_bytes());
    big.push(b']');
    let export = zip_of(&[("ops/2026-10-21.json", &big), ("ops/2026-10-22.json", &big)]);
    drop(big);
    let (read, held) = common::held_peak(|| slack::read_zip(&export));
    assert!(
        refusal(read.unwrap_err()).contains("more than 32 MiB of text"),
        "refused for what it keeps"
    );
    assert!(held < 40 * MIB, "reading it held {} MiB", held / MIB);
    // Through the API, four at once: each refused, naming the file and the message.
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let uri = format!("/api/v1/incidents/{key}/evidence/imports?format=slack&name=export.zip");
    let posts = (0..4).map(|_| app.upload(&uri, bomb.clone()));
    for r in futures_util::future::join_all(posts).await {
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(
            r.text.contains("message 1: expected an object"),
            "{}",
            r.text
        );
    }
}

/// A Linear CSV export of `n` tickets, each with a 1 000-byte description.
fn linear_csv(prefix: &str, n: usize) -> Vec<u8> {
    let mut csv = String::from("ID,Title,Description,Created\n");
    for i in 0..n {
        csv.push_str(&format!(
            "{prefix}-{i},Retry storm {i},{},2026-10-21 22:10\n",
            "x".repeat(1000)
        ));
    }
    csv.into_bytes()
}

/// F8: uploads had no quota; one responder stored 128 MiB in 5 s, each held a day. Now a
/// person and the installation hold at most so much at once, refused past it with 429 saying
/// how to make room, and an upload can be removed by whoever made it.
#[sqlx::test]
async fn held_uploads_count_against_a_quota_per_person_and_for_everyone(pool: PgPool) {
    let app = TestApp::with(pool, |c| {
        c.uploads = quell::state::UploadQuota {
            per_person: MIB as i64,
            total: 3 * MIB as i64 / 2,
        }
    })
    .await;
    let key = app.past_incident(30).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let uri = format!("/api/v1/incidents/{key}/evidence/imports?format=linear&name=pay.csv");
    let upload = |who: &common::Creds, body: Vec<u8>| {
        let req = Request::builder()
            .method(Method::POST)
            .uri(uri.clone())
            .header("host", "quell.test")
            .header("content-type", "application/octet-stream")
            .header(
                "authorization",
                format!("Bearer {}", who.token.as_deref().unwrap()),
            )
            .body(Body::from(body))
            .unwrap();
        app.send(req)
    };
    // Four at once: the quota is checked under a lock, so exactly one fits.
    let four = futures_util::future::join_all(
        ["PAY", "PBY", "PCY", "PDY"].map(|p| upload(&ana, linear_csv(p, 600))),
    )
    .await;
    let mut statuses: Vec<u16> = four.iter().map(|r| r.status.as_u16()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 429, 429, 429], "one of four at once fits");
    let first = four
        .into_iter()
        .find(|r| r.status == StatusCode::CREATED)
        .unwrap();
    let first_id = first.json()["id"].as_i64().unwrap();
    assert!(first.json()["bytes"].as_i64().unwrap() > 600_000);
    let second = upload(&ana, linear_csv("OPS", 600)).await;
    assert_eq!(
        second.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        second.text
    );
    assert!(
        second.text.contains("one person may hold 1 MiB") && second.text.contains("remove one"),
        "{}",
        second.text
    );
    // Someone else cannot remove it; its uploader can, and then has room again.
    let path = format!("/api/v1/incidents/{key}/evidence/imports/{first_id}");
    let r = app.call_as(&ben, Method::DELETE, &path, &[], None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = app.call_as(&ana, Method::DELETE, &path, &[], None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = app.call_as(&ana, Method::GET, &path, &[], None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let again = upload(&ana, linear_csv("OPS", 600)).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.text);
    // Everyone together: ben fits once, then the installation is full for anyone.
    let r = upload(&ben, linear_csv("BEN", 600)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = upload(&app.admin, linear_csv("ADM", 600)).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert!(
        r.text.contains("this installation holds at most"),
        "{}",
        r.text
    );
    let held: i64 = sqlx::query_scalar("select count(*) from evidence_imports")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(held, 2, "what was refused was not kept");
    // From the browser: the held upload's page offers to remove it.
    let id = again.json()["id"].as_i64().unwrap();
    let page = format!("/incidents/{key}/evidence/imports/{id}");
    let shown = app.call_as(&ana, Method::GET, &page, &[], None).await;
    assert!(shown.text.contains("Remove this upload"), "{}", shown.text);
    let r = app.form_as(&ana, &format!("{page}/remove"), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app.call_as(&ana, Method::GET, &page, &[], None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// F9: git evidence left `QUELL_GIT_ROOTS` through a `.git` file (`gitdir: …`), a `.git` link
/// or `objects/info/alternates`, and its refusals told a responder whether a path existed and
/// listed the roots. Now the repository's real git, common and object directories must all lie
/// inside the roots, and every refusal reads alike.
#[sqlx::test]
async fn git_reads_stay_inside_the_roots_and_every_refusal_reads_alike(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(30).await;
    let root = app.git_root();
    let outside = common::TempDir::new("git-outside");
    let (secret, _) = crate::evidence::repository_at(outside.path());
    let id = uuid::Uuid::new_v4();
    // A working copy whose .git is a file pointing outside.
    let gitfile = root.join(format!("gitfile-{id}"));
    std::fs::create_dir_all(gitfile.join("src")).unwrap();
    std::fs::write(
        gitfile.join(".git"),
        format!("gitdir: {}\n", secret.join(".git").display()),
    )
    .unwrap();
    // One whose .git is a link to outside.
    let linked = root.join(format!("linked-{id}"));
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(secret.join(".git"), linked.join(".git")).unwrap();
    // A bare clone whose objects are borrowed from outside (alternates).
    let borrowed = root.join(format!("borrowed-{id}.git"));
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--bare", "--shared"])
        .arg(&secret)
        .arg(&borrowed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(borrowed.join("objects/info/alternates").exists());
    // One borrowing from that one: the way out is two alternates deep.
    let clone = |from: &std::path::Path, to: &std::path::Path, shared: bool| {
        let mut git = std::process::Command::new("git");
        git.args(["clone", "-q", "--bare"]);
        if shared {
            git.arg("--shared");
        }
        let out = git.arg(from).arg(to).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    let deeper = root.join(format!("deeper-{id}.git"));
    clone(&borrowed, &deeper, true);
    // A copy of its own whose pack folder holds a link to a pack outside.
    let packed = root.join(format!("packed-{id}.git"));
    clone(&secret, &packed, false);
    let out = std::process::Command::new("git")
        .args(["-C"])
        .arg(&secret)
        .args(["repack", "-q", "-a", "-d"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let pack = std::fs::read_dir(secret.join(".git/objects/pack"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .unwrap()
        .path();
    std::os::unix::fs::symlink(&pack, packed.join("objects/pack/outside.pack")).unwrap();
    let uri = format!("/api/v1/incidents/{key}/evidence/git");
    let answer = |repository: String| {
        let app = &app;
        let uri = uri.clone();
        async move {
            let r = app
                .post(
                    &uri,
                    json!({"repository": repository, "path": "src/retry.ts"}),
                )
                .await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{repository}: {}",
                r.text
            );
            assert_eq!(r.field(), "repository");
            // The same sentence whatever the reason, the path given taken out.
            r.json()["error"]["details"]["fields"][0]["message"]
                .as_str()
                .unwrap()
                .replace(&format!("{repository:?}"), "<repository>")
        }
    };
    let mut said = std::collections::BTreeSet::new();
    for repository in [
        gitfile.display().to_string(),
        linked.display().to_string(),
        borrowed.display().to_string(),
        deeper.display().to_string(),
        packed.display().to_string(),
        secret.display().to_string(),
        "/etc".into(),
        "/no/such/folder".into(),
        root.join("no-such-repository").display().to_string(),
        root.display().to_string(),
    ] {
        let message = answer(repository).await;
        assert!(
            !message.contains(&root.display().to_string()) && !message.contains("quell-it"),
            "a refusal names no folder of the server: {message}"
        );
        said.insert(message);
    }
    assert_eq!(said.len(), 1, "every refusal reads alike: {said:?}");
}

/// F10: a disabled person's calendar feed kept working, and feed tokens were stored in clear.
#[sqlx::test]
async fn calendar_feeds_are_kept_hashed_and_end_with_their_persons_account(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let ana = app.account("ana@example.com", "responder").await;
    let made = app.form_as(&ana, "/oncall/feed", &[]).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.text);
    let at = made.text.find("/oncall/").unwrap();
    let path = made.text[at..].split('<').next().unwrap().to_owned();
    let token = path
        .trim_start_matches("/oncall/")
        .trim_end_matches(".ics")
        .to_owned();
    let nobody = common::Creds::default();
    let r = app.call_as(&nobody, Method::GET, &path, &[], None).await;
    assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    let stored: Vec<u8> = sqlx::query_scalar("select token_hash from oncall_feeds")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_ne!(stored, token.as_bytes(), "only a hash is kept");
    assert_eq!(stored.len(), 32);
    let id = account_id(&pool, "ana@example.com").await;
    change_account(&app, id, json!({"disabled": true})).await;
    let r = app.call_as(&nobody, Method::GET, &path, &[], None).await;
    assert_eq!(
        r.status,
        StatusCode::NOT_FOUND,
        "a disabled person's feed ends"
    );
}

/// F10: with `QUELL_DB_MAX_CONNECTIONS=5`, a replica answered 503 to everything once the first
/// live page opened: the engines' listeners and the live hub's held the pool's connections.
#[sqlx::test]
async fn listeners_take_no_connection_a_request_needs(pool: PgPool) {
    let small = sqlx::postgres::PgPoolOptions::new()
        .max_connections(5)
        .acquire_timeout(Duration::from_millis(750))
        .connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    let app = TestApp::with(small.clone(), |_| {}).await;
    let viewer = app.account("vic@example.com", "viewer").await;
    // The four engines of a replica listen on the same pool...
    let mut wakers = Vec::new();
    for channel in [
        "quell_timers",
        "quell_paging",
        "quell_outbox",
        "quell_reports",
    ] {
        wakers.push(quell::engine::Waker::listen(&small, channel).await);
    }
    // ... and a live page opens, starting the hub's listener.
    let mut stream = common::open_stream(&app.router, &viewer, "/incidents/events", &[]).await;
    assert_eq!(stream.status, StatusCode::OK);
    let _ = stream.next_event(Duration::from_millis(50)).await;
    for _ in 0..10 {
        let r = app
            .call_as(&viewer, Method::GET, "/api/v1/incidents", &[], None)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    drop(wakers);
}

/// F10: both bridge PUTs took a JSON list (`[]` cleared the links), and evidence took 900 KB
/// commit names.
#[sqlx::test]
async fn bodies_must_be_objects_and_evidence_sources_short(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments").await;
    let key = app.past_incident(30).await;
    let links = json!({"call_url": "https://meet.example.com/inc", "chat_url": "https://chat.example.com/c/1"});
    for path in [
        format!("/api/v1/incidents/{key}/bridge"),
        "/api/v1/services/payments/bridge".to_owned(),
    ] {
        let r = app
            .call(Method::PUT, &path, &[], Some(&links.to_string()))
            .await;
        assert!(r.status.is_success(), "{path}: {}", r.text);
        for list in ["[]", "[null, null]", "\"x\"", "42"] {
            let r = app.call(Method::PUT, &path, &[], Some(list)).await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{path} {list}: {}",
                r.text
            );
            assert_eq!(r.field(), "body");
        }
        let now = app.get(&path).await.json();
        assert_eq!(
            now["call_url"], links["call_url"],
            "{path}: nothing was cleared"
        );
    }
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/evidence"),
            json!({"kind": "code", "title": "retry.ts", "text": "x",
                   "source": {"repository": "payments", "path": "src/retry.ts", "commit": "f".repeat(900_000)}}),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        &r.text[..200.min(r.text.len())]
    );
    assert_eq!(r.field(), "source.commit");
}
