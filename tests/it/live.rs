//! The live room: event streams across replicas, replay after a reconnect, the per-person
//! limit, streams ending with their session; working-on claims; the bridge.

use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp, open_stream};

const WAIT: Duration = Duration::from_secs(10);

async fn note(app: &TestApp, key: &str, body: &str) -> Value {
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/timeline"),
            json!({ "body": body }),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.json()
}

async fn send(
    app: &TestApp,
    who: &Creds,
    method: Method,
    uri: &str,
    body: Value,
) -> crate::common::Res {
    app.call_as(who, method, uri, &[], Some(&body.to_string()))
        .await
}

#[sqlx::test]
async fn a_note_through_the_api_reaches_a_stream_on_another_replica(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let other = app.replica();
    let mut one = open_stream(&other, &app.admin, &format!("/incidents/{key}/events"), &[]).await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(one.header_value("content-type"), "text/event-stream");
    let mut all = open_stream(&other, &app.admin, "/incidents/events", &[]).await;
    assert_eq!(all.status, StatusCode::OK);
    // Another incident's note does not reach this incident's stream, but reaches the list's.
    let elsewhere = app.past_incident(5).await;
    note(&app, &elsewhere, "elsewhere").await;

    let sent = Instant::now();
    let written = note(&app, &key, "Stripe status page is green <b>bold</b>").await;
    let e = one
        .wait_for("the note", WAIT, |e| e.event == "timeline")
        .await;
    eprintln!(
        "note reached the other replica's stream after {:?}",
        sent.elapsed()
    );
    let data = e.json();
    assert_eq!(
        data["body"], "Stripe status page is green <b>bold</b>",
        "sent as data, not HTML"
    );
    assert_eq!(data["incident"], key.as_str());
    assert_eq!(data["kind"], "note");
    assert_eq!(e.id.as_deref(), Some(written["id"].to_string().as_str()));

    // The list's stream hears every incident.
    let e = all
        .wait_for("the other incident's note", WAIT, |e| {
            e.json()["body"] == "elsewhere"
        })
        .await;
    assert_eq!(e.json()["incident"], elsewhere.as_str());
    let e = all
        .wait_for("this incident's note", WAIT, |e| {
            e.event == "timeline" && e.json()["incident"] == key.as_str()
        })
        .await;
    assert_eq!(e.json()["body"], "Stripe status page is green <b>bold</b>");
}

#[sqlx::test]
async fn alerts_arriving_tell_open_pages_to_read_again(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let hook = app.integration("prometheus", "alertmanager").await;
    let body = crate::common::alertmanager_payload("g1", &[("HighErrorRate", "firing")], json!({}));
    assert_eq!(
        app.alert("alertmanager", &hook, &body).await.status,
        StatusCode::ACCEPTED
    );
    let key = app.incident_keys().await.pop().unwrap();
    let mut stream = open_stream(
        &app.router,
        &app.admin,
        &format!("/incidents/{key}/events"),
        &[],
    )
    .await;
    let again = crate::common::alertmanager_payload(
        "g1",
        &[("HighErrorRate", "firing"), ("HighLatency", "firing")],
        json!({}),
    );
    assert_eq!(
        app.alert("alertmanager", &hook, &again).await.status,
        StatusCode::ACCEPTED
    );
    let e = stream
        .wait_for("a change", WAIT, |e| e.event == "changed")
        .await;
    assert!(
        e.id.is_none(),
        "a change without an entry moves no Last-Event-ID"
    );
    assert!(e.json()["incident_id"].is_i64());
}

#[sqlx::test]
async fn a_reconnect_with_last_event_id_replays_what_was_missed(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let seen = note(&app, &key, "seen before the drop").await;
    let seen_id = seen["id"].to_string();
    // Written while nobody was connected.
    let missed = note(&app, &key, "missed while away").await;
    let also = note(&app, &key, "also missed").await;
    let uri = format!("/incidents/{key}/events");
    let mut back = open_stream(
        &app.router,
        &app.admin,
        &uri,
        &[("last-event-id", &seen_id)],
    )
    .await;
    let first = back.wait_for("the first missed note", WAIT, |_| true).await;
    assert_eq!(first.json()["body"], "missed while away");
    assert_eq!(first.id.as_deref(), Some(missed["id"].to_string().as_str()));
    let second = back
        .wait_for("the second missed note", WAIT, |_| true)
        .await;
    assert_eq!(second.json()["body"], "also missed");
    assert_eq!(second.id.as_deref(), Some(also["id"].to_string().as_str()));
    // Live after the replay, with nothing sent twice.
    note(&app, &key, "live again").await;
    let third = back.wait_for("the live note", WAIT, |_| true).await;
    assert_eq!(third.json()["body"], "live again");

    // A page passes the newest entry it was rendered with; junk in Last-Event-ID is ignored.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(
        page.text
            .contains(&format!(r#"data-stream="/incidents/{key}/events""#)),
        "the page names its stream"
    );
    let after = format!("{uri}?after={}", also["id"]);
    let mut fresh = open_stream(
        &app.router,
        &app.admin,
        &after,
        &[("last-event-id", "junk")],
    )
    .await;
    let e = fresh
        .wait_for("the note after the page's", WAIT, |_| true)
        .await;
    assert_eq!(e.json()["body"], "live again");
}

#[sqlx::test]
async fn streams_count_against_a_per_person_limit_across_replicas(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let settings = quell::state::LiveSettings {
        streams_per_person: 2,
        ..Default::default()
    };
    let (a, b) = (app.replica_with(settings), app.replica_with(settings));
    let uri = format!("/incidents/{key}/events");
    let first = open_stream(&a, &app.admin, &uri, &[]).await;
    let second = open_stream(&b, &app.admin, &uri, &[]).await;
    assert_eq!(
        (first.status, second.status),
        (StatusCode::OK, StatusCode::OK)
    );
    let third = open_stream(&a, &app.admin, "/incidents/events", &[]).await;
    assert_eq!(
        third.status,
        StatusCode::TOO_MANY_REQUESTS,
        "the limit holds across replicas"
    );
    // Someone else is not affected.
    let ana = app.account("ana@example.com", "viewer").await;
    assert_eq!(
        open_stream(&b, &ana, &uri, &[]).await.status,
        StatusCode::OK
    );
    // Closing one frees its place.
    drop(first);
    let deadline = Instant::now() + WAIT;
    loop {
        let again = open_stream(&a, &app.admin, &uri, &[]).await;
        if again.status == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a closed stream never freed its place"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Without a session there is no stream.
    let nobody = open_stream(&a, &Creds::default(), &uri, &[]).await;
    assert_eq!(nobody.status, StatusCode::SEE_OTHER);
}

#[sqlx::test]
async fn a_stream_ends_when_its_session_does(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let me = app.account("ana@example.com", "responder").await;
    let mut stream = open_stream(&app.router, &me, &format!("/incidents/{key}/events"), &[]).await;
    assert_eq!(stream.status, StatusCode::OK);
    let out = app.form_as(&me, "/logout", &[]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.text);
    let e = stream
        .wait_for("the end of the stream", WAIT, |e| e.event == "ended")
        .await;
    assert!(e.json()["reason"].as_str().unwrap().contains("session"));
    assert!(
        stream.next_event(Duration::from_secs(2)).await.is_none(),
        "the stream closed"
    );
    let open: i64 = sqlx::query_scalar("select count(*) from live_streams")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(open, 0, "its row went with it");
}

#[sqlx::test]
async fn claims_say_who_is_on_what_and_warn_about_the_same_lead(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let viewer = app.account("vic@example.com", "viewer").await;
    let claims = format!("/api/v1/incidents/{key}/claims");
    let mut stream = open_stream(&app.router, &ben, &format!("/incidents/{key}/events"), &[]).await;

    let r = send(
        &app,
        &ana,
        Method::POST,
        &claims,
        json!({ "subject": "processor status page" }),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mine = r.json();
    assert_eq!(mine["subject"], "processor status page");
    assert_eq!(mine["handle"], "ana");
    let e = stream
        .wait_for("the claim", WAIT, |e| e.event == "timeline")
        .await;
    assert_eq!(e.json()["headline"], "Looking into: processor status page");

    // Ben's subject is the same lead after stemming: he is told, and nothing is saved.
    let r = send(
        &app,
        &ben,
        Method::POST,
        &claims,
        json!({ "subject": "Checking the processor's status pages" }),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        msg.contains(mine["name"].as_str().unwrap()) && msg.contains("processor status page"),
        "{msg}"
    );
    assert_eq!(
        app.get(&claims).await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // A different lead is fine; so is the same one when he insists.
    let r = send(
        &app,
        &ben,
        Method::POST,
        &claims,
        json!({ "subject": "stripe webhooks" }),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = send(
        &app,
        &ben,
        Method::POST,
        &claims,
        json!({ "subject": "processor status page", "also": true }),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let bens = r.json();
    // Ana claiming her own lead again renews it instead of making another.
    let r = send(
        &app,
        &ana,
        Method::POST,
        &claims,
        json!({ "subject": "the processor status page" }),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["id"], mine["id"]);
    assert_eq!(
        app.get(&claims).await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Only the holder renews; anyone may release (named on the timeline); a released one is gone.
    let renew = format!("{claims}/{}/renew", bens["id"]);
    assert_eq!(
        send(&app, &ana, Method::POST, &renew, json!({}))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(&app, &ben, Method::POST, &renew, json!({}))
            .await
            .status,
        StatusCode::OK
    );
    let release = format!("{claims}/{}", bens["id"]);
    let r = send(&app, &ana, Method::DELETE, &release, json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["released_at"].is_string());
    assert_eq!(
        send(&app, &ana, Method::DELETE, &release, json!({}))
            .await
            .status,
        StatusCode::GONE
    );
    assert_eq!(
        send(&app, &ben, Method::POST, &renew, json!({}))
            .await
            .status,
        StatusCode::GONE
    );
    let timeline = app.timeline(&key).await;
    let released = timeline
        .iter()
        .find(|e| e["kind"] == "claim_released")
        .unwrap();
    assert!(
        released["headline"]
            .as_str()
            .unwrap()
            .starts_with("Released "),
        "{released}"
    );

    // A claim not renewed lapses.
    sqlx::query("update incident_claims set expires_at = now() - interval '1 second', claimed_at = now() - interval '1 hour'")
        .execute(&app.pool)
        .await
        .unwrap();
    assert!(
        app.get(&claims).await.json()["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Bad input names the field and saves nothing; viewers cannot claim.
    for bad in [
        json!({ "subject": "   " }),
        json!({ "subject": "x".repeat(201) }),
    ] {
        let r = send(&app, &ana, Method::POST, &claims, bad).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(r.field(), "subject");
    }
    let r = send(
        &app,
        &viewer,
        Method::POST,
        &claims,
        json!({ "subject": "dns" }),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let n: i64 = sqlx::query_scalar("select count(*) from incident_claims")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 3);
}

#[sqlx::test]
async fn the_page_asks_before_a_second_claim_on_the_same_lead(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let ana = app.account("ana@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let form = format!("/incidents/{key}/claims");
    let r = app
        .form_as(&ana, &form, &[("subject", "retry storm <script>")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app
        .call_as(&ben, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    assert!(
        page.text.contains("retry storm &#60;script&#62;"),
        "claims show, escaped"
    );
    let r = app
        .form_as(&ben, &form, &[("subject", "retry storms")])
        .await;
    assert_eq!(r.status, StatusCode::OK, "a question, not a save");
    assert!(
        r.text.contains("Claim it as well") && r.text.contains("already on this"),
        "{}",
        r.text
    );
    let n: i64 = sqlx::query_scalar("select count(*) from incident_claims")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 1);
    let r = app
        .form_as(
            &ben,
            &form,
            &[("subject", "retry storms"), ("confirm", "yes")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let n: i64 = sqlx::query_scalar("select count(*) from incident_claims")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 2);
    // Done with it, from the page.
    let id: i64 = sqlx::query_scalar("select id from incident_claims order by id desc limit 1")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let r = app
        .form_as(
            &ben,
            &format!("/incidents/{key}/claims/{id}"),
            &[("action", "release")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let r = app
        .form_as(
            &ben,
            &format!("/incidents/{key}/claims/{id}"),
            &[("action", "steal")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[sqlx::test]
async fn the_bridge_is_set_checked_defaulted_and_sent(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    // Bad links are refused naming the field; nothing is stored.
    let key = app
        .incident(
            json!({"title": "Checkout errors", "severity": "Sev3", "service": "payments-gateway"}),
        )
        .await;
    let bridge = format!("/api/v1/incidents/{key}/bridge");
    for (body, field) in [
        (json!({ "call_url": "javascript:alert(1)" }), "call_url"),
        (json!({ "chat_url": "chat.example.com/x" }), "chat_url"),
    ] {
        let r = app
            .call(Method::PUT, &bridge, &[], Some(&body.to_string()))
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(r.field(), field);
    }
    assert_eq!(
        app.get(&bridge).await.json(),
        json!({ "call_url": null, "chat_url": null })
    );
    // A Sev3 gets no bridge by itself; the service's defaults arrive when it is raised to Sev2.
    let defaults = json!({ "call_url": "https://meet.example.com/payments", "chat_url": "https://chat.example.com/payments-inc" });
    let r = app
        .call(
            Method::PUT,
            "/api/v1/services/payments-gateway/bridge",
            &[],
            Some(&defaults.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(app.get(&bridge).await.json()["call_url"], Value::Null);
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/severity"),
            json!({ "severity": "Sev2", "reason": "checkout failing" }),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    assert_eq!(app.get(&bridge).await.json(), defaults);
    // A new Sev1 of the service starts with them; the page shows them at the top.
    let sev1 = app
        .incident(
            json!({"title": "Payments down", "severity": "Sev1", "service": "payments-gateway"}),
        )
        .await;
    let view = app.incident_json(&sev1).await;
    assert_eq!(view["bridge"], defaults);
    let page = app.get(&format!("/incidents/{sev1}")).await;
    assert!(
        page.text
            .contains(r#"href="https://meet.example.com/payments""#)
            && page.text.contains("Join the call")
    );
    // Set by hand: on the timeline, and in the messages sent after.
    let mine = json!({ "call_url": "https://meet.example.com/inc-war-room", "chat_url": null });
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/incidents/{sev1}/bridge"),
            &[],
            Some(&mine.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let timeline = app.timeline(&sev1).await;
    assert!(
        timeline.iter().any(|e| e["kind"] == "bridge"
            && e["headline"] == "Bridge: call https://meet.example.com/inc-war-room"),
        "{timeline:?}"
    );
    let r = app.post("/api/v1/notification-channels", json!({"name": "ops", "kind": "slack", "url": "http://127.0.0.1:9/hook", "events": ["incident.acknowledged"]})).await;
    assert!(r.status.is_success(), "{}", r.text);
    let r = app
        .post_empty(&format!("/api/v1/incidents/{sev1}/acknowledge"))
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let line: Option<String> = sqlx::query_scalar(
        "select payload ->> 'bridge_line' from notifications order by id desc limit 1",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        line.as_deref(),
        Some("Bridge: call https://meet.example.com/inc-war-room")
    );
    // A page without a bridge on a Sev2 says so; the postmortem keeps it.
    let bare = app
        .incident(json!({"title": "Queue lag", "severity": "Sev2"}))
        .await;
    let page = app.get(&format!("/incidents/{bare}")).await;
    assert!(
        page.text.contains("has no bridge"),
        "a Sev2 without a bridge asks for one"
    );
    let pm = app.get(&format!("/incidents/{sev1}/postmortem")).await;
    assert!(
        pm.text
            .contains("call https://meet.example.com/inc-war-room"),
        "the postmortem names the bridge"
    );
}

#[sqlx::test]
async fn a_service_form_sets_the_bridge_its_major_incidents_start_with(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("search-api").await;
    let form = [
        ("name", "search-api"),
        ("tier", "2"),
        ("call_url", "meet.example.com/x"),
    ];
    let r = app.form("/services/search-api/edit", &form).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("meet.example.com/x"),
        "the form comes back as typed"
    );
    let form = [
        ("name", "search-api"),
        ("tier", "2"),
        ("call_url", "https://meet.example.com/search"),
        ("chat_url", ""),
    ];
    let r = app.form("/services/search-api/edit", &form).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let bridge = app.get("/api/v1/services/search-api/bridge").await.json();
    assert_eq!(
        bridge,
        json!({ "call_url": "https://meet.example.com/search", "chat_url": null })
    );
    let edit = app.get("/services/search-api/edit").await;
    assert!(
        edit.text
            .contains(r#"value="https://meet.example.com/search""#)
    );
    let key = app
        .incident(json!({"title": "Search down", "severity": "Sev2", "service": "search-api"}))
        .await;
    assert_eq!(
        app.incident_json(&key).await["bridge"]["call_url"],
        "https://meet.example.com/search"
    );
}

/// The part of the incident page that says who is looking into what.
fn claims_panel(page: &str) -> &str {
    let at = page.find(r#"id="claims""#).expect("the claims panel");
    let end = page[at..].find("</section>").unwrap() + at;
    &page[at..end]
}

/// Claims kept saying "lapses at …" on a resolved incident. Now they end with it, in the
/// resolve's transaction, whether a person resolves it or its alerts do: the page shows no
/// live claim and no lapsing, the API lists none, and each is recorded as released by whoever
/// resolved it.
#[sqlx::test]
async fn claims_end_when_their_incident_is_resolved(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let claim = |key: String, subject: &'static str| {
        let (app, ana) = (&app, &ana);
        async move {
            let r = send(
                app,
                ana,
                Method::POST,
                &format!("/api/v1/incidents/{key}/claims"),
                json!({ "subject": subject }),
            )
            .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        }
    };
    let released = |key: String| {
        let app = &app;
        async move {
            sqlx::query_as::<_, (bool, Option<String>)>(
                "select c.released_at is not null, c.released_by from incident_claims c
                 join incidents i on i.id = c.incident_id where i.number = $1",
            )
            .bind(key.trim_start_matches("INC-").parse::<i64>().unwrap())
            .fetch_all(&app.pool)
            .await
            .unwrap()
        }
    };

    // A responder resolves it.
    let key = app.past_incident(10).await;
    claim(key.clone(), "processor status page").await;
    let page = app
        .call_as(&ana, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    assert!(
        claims_panel(&page.text).contains("lapses"),
        "{}",
        claims_panel(&page.text)
    );
    let r = send(
        &app,
        &ana,
        Method::POST,
        &format!("/api/v1/incidents/{key}/resolve"),
        json!({}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let page = app
        .call_as(&ana, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    let panel = claims_panel(&page.text);
    assert!(
        !panel.contains("lapses") && !panel.contains("processor status page"),
        "{panel}"
    );
    assert!(!page.text.contains("data-lapses-at"), "{}", page.text);
    let listed = app.get(&format!("/api/v1/incidents/{key}/claims")).await;
    assert_eq!(listed.json()["items"], json!([]));
    let me = app
        .call_as(&ana, Method::GET, "/api/v1/me", &[], None)
        .await
        .json();
    assert_eq!(
        released(key.clone()).await,
        [(true, Some(me["name"].as_str().unwrap().to_owned()))]
    );

    // Its alerts resolve it.
    let r = app
        .post(
            "/api/v1/integrations",
            json!({"name": "am", "format": "alertmanager", "on_all_resolved": "resolve"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let j = r.json();
    let hook = crate::common::Hook {
        id: j["id"].as_str().unwrap().into(),
        key: j["key"].as_str().unwrap().into(),
        secret: None,
    };
    let firing = crate::common::alertmanager_payload("CardsDown", &[("c1", "firing")], json!({}));
    assert_eq!(
        app.alert("alertmanager", &hook, &firing).await.status,
        StatusCode::ACCEPTED
    );
    let key = app
        .incident_keys()
        .await
        .into_iter()
        .find(|k| *k != key)
        .unwrap();
    claim(key.clone(), "card network status").await;
    let quiet = crate::common::alertmanager_payload("CardsDown", &[("c1", "resolved")], json!({}));
    assert_eq!(
        app.alert("alertmanager", &hook, &quiet).await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(app.incident_json(&key).await["status"], "resolved");
    let page = app
        .call_as(&ana, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    let panel = claims_panel(&page.text);
    assert!(
        !panel.contains("lapses") && !panel.contains("card network status"),
        "{panel}"
    );
    assert_eq!(
        released(key).await,
        [(true, Some("am (alerts)".to_owned()))]
    );
}
