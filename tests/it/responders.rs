//! Paging by hand from an incident: a responder added (a person, a schedule's on-call person,
//! a policy step by step) is paged by their contact rules with a signed link, and accepting it
//! leaves the incident with whoever has it; reassigning hands the incident's escalation to
//! someone else, whose acknowledgement takes it over. Each is on the timeline, with every
//! message's delivery state; bad input changes nothing.

use axum::http::{Method, StatusCode};
use quell::paging::escalator::fire_due;
use quell::responders::timers::fire_due as fire_requests;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp};
use crate::paging::{deliver, method, paged, payments, receiver, rules, sender};

/// Dee, the database person, reached by a webhook at once and by email ten minutes later.
async fn dee(app: &TestApp) -> crate::paging::Receiver {
    app.person("Dee Database", "dee").await;
    let (hook, url) = receiver().await;
    let now = method(app, "dee", "webhook", &url).await;
    let later = method(app, "dee", "email", "dee@example.com").await;
    rules(app, "dee", &[(&now, 0), (&later, 10)]).await;
    hook
}

/// The signed link a page carries (a webhook's JSON, or a Slack message's text).
fn ack_path(body: &str) -> String {
    let base = "http://quell.test";
    body.match_indices(&format!("{base}/incidents/"))
        .map(|(at, _)| {
            body[at + base.len()..]
                .split(|c: char| c.is_whitespace() || c == '"' || c == '\\' || c == '>' || c == '|')
                .next()
                .unwrap()
        })
        .find(|p| p.contains("/respond/") || p.contains("/ack/"))
        .expect("a link")
        .to_owned()
}

async fn card_failures(app: &TestApp) -> String {
    app.incident(
        json!({"title": "Card failures", "severity": "Sev1", "service": "payments-gateway"}),
    )
    .await
}

fn headlines(timeline: &[Value], kind: &str) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| e["headline"].as_str().unwrap().to_owned())
        .collect()
}

/// A person a request paged: their name, whether they accepted, and each message's (method,
/// delivery state).
type Paged = (String, bool, Vec<(String, String)>);

fn people(request: &Value) -> Vec<Paged> {
    request["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let messages = p["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["method"].as_str().unwrap().to_owned(),
                        m["state"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            (
                p["name"].as_str().unwrap().to_owned(),
                !p["accepted_at"].is_null(),
                messages,
            )
        })
        .collect()
}

async fn requests(app: &TestApp, key: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/api/v1/incidents/{key}/responders"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()["items"].as_array().unwrap().clone()
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[sqlx::test]
async fn an_added_responder_is_paged_by_their_rules_and_accepts_without_taking_the_incident_over(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let hook = dee(&app).await;
    let key = card_failures(&app).await;
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1, "Ana is paged");
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    // The commander asks Dee to look at the database.
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/responders"),
            json!({"person": "dee", "message": "Replica lag on db-2 since 14:02?"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let made = r.json();
    assert_eq!(made["state"], "pending");
    assert_eq!(made["target_kind"], "person");
    assert_eq!(
        people(&made),
        [(
            "Dee Database".to_owned(),
            false,
            vec![
                ("webhook".to_owned(), "pending".to_owned()),
                ("email".to_owned(), "pending".to_owned())
            ]
        )]
    );
    let id = made["id"].as_i64().unwrap();

    // The webhook goes at once; the email waits its ten minutes.
    assert_eq!(deliver(&app, &sender(None)).await, 1);
    let got = hook.got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let text = &got[0].1;
    assert!(
        text.contains("admin asks you to help: Replica lag on db-2 since 14:02?"),
        "{text}"
    );
    let link = ack_path(text);
    assert!(link.contains("/respond/"), "{link}");
    let states = people(&requests(&app, &key).await[0]);
    assert_eq!(
        states[0].2,
        [
            ("webhook".to_owned(), "delivered".to_owned()),
            ("email".to_owned(), "pending".to_owned())
        ]
    );
    let timeline = app.timeline(&key).await;
    assert_eq!(
        headlines(&timeline, "responder"),
        ["admin asked Dee Database to help: Paged Dee Database"]
    );
    assert!(
        timeline
            .iter()
            .any(|e| e["body"] == "Replica lag on db-2 since 14:02?")
    );

    // The link's page, without signing in: who asks what; a GET changes nothing.
    let nobody = Creds::default();
    let page = app.call_as(&nobody, Method::GET, &link, &[], None).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(
        page.text.contains("admin asks you, Dee Database, to help"),
        "{}",
        page.text
    );
    assert!(page.text.contains("Replica lag on db-2"));
    // The link acknowledges nothing at the acknowledge address.
    let as_ack = link.replace("/respond/", "/ack/");
    let r = app.form_raw(&nobody, &as_ack, String::new(), &[]).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

    // Accepted: the email not yet sent is called off; the incident stays with admin.
    let r = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("Accepted"), "{}", r.text);
    let after = &requests(&app, &key).await[0];
    assert_eq!(after["state"], "answered");
    assert_eq!(
        people(after),
        [(
            "Dee Database".to_owned(),
            true,
            vec![
                ("webhook".to_owned(), "delivered".to_owned()),
                ("email".to_owned(), "cancelled".to_owned())
            ]
        )]
    );
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["status"], "acknowledged");
    let timeline = app.timeline(&key).await;
    assert_eq!(
        headlines(&timeline, "acknowledged").len(),
        1,
        "accepting acknowledged nothing"
    );
    assert_eq!(
        headlines(&timeline, "responder")[1],
        "Dee Database accepted admin's page and is helping"
    );
    // Once.
    let r = app.form_raw(&nobody, &link, String::new(), &[]).await;
    assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
    assert_eq!(deliver(&app, &sender(None)).await, 0);
    let accepted = count(
        &app.pool,
        "select count(*) from audit_log where action = 'incident.responder.accept'",
    )
    .await;
    assert_eq!(accepted, 1);
    assert_eq!(id, after["id"].as_i64().unwrap());
}

#[sqlx::test]
async fn a_policy_asked_for_pages_step_by_step_once_with_three_engines_racing_until_someone_accepts(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let dee_hook = dee(&app).await;
    let (eve_hook, url) = receiver().await;
    method(&app, "eve", "slack", &url).await;
    let r = app
        .post(
            "/api/v1/escalation-policies",
            json!({"name": "Database", "steps": [
                {"targets": [{"person": "dee"}], "delay_minutes": 5},
                {"targets": [{"person": "eve"}], "delay_minutes": 10}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let key = card_failures(&app).await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/responders"),
            json!({"policy": "Database", "message": "Is the primary healthy?"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let made = r.json();
    assert_eq!(
        (made["next_step"].as_i64(), made["steps"].as_i64()),
        (Some(2), Some(2))
    );
    assert_eq!(people(&made)[0].0, "Dee Database");
    assert_eq!(
        fire_requests(&app.pool, 10).await.unwrap(),
        0,
        "step 2 waits 5 minutes"
    );

    // Nobody answers within the step's delay: three engines race, step 2 pages once.
    sqlx::query("update responder_requests set due_at = now() - interval '1 second' where state = 'pending'")
        .execute(&app.pool)
        .await
        .unwrap();
    let engines: Vec<_> = (0..3)
        .map(|_| {
            let pool = app.pool.clone();
            tokio::spawn(async move { fire_requests(&pool, 10).await.unwrap() })
        })
        .collect();
    let mut fired = 0;
    for e in engines {
        fired += e.await.unwrap();
    }
    assert_eq!(fired, 1);
    let now = &requests(&app, &key).await[0];
    assert!(now["next_step"].is_null(), "every step has paged: {now}");
    assert_eq!(now["state"], "pending");
    let names: Vec<String> = people(now).into_iter().map(|p| p.0).collect();
    assert_eq!(names, ["Dee Database", "Eve Manager"]);
    assert_eq!(
        headlines(&app.timeline(&key).await, "responder"),
        [
            "admin asked escalation policy Database to help: Paged Dee Database (step 1 of 2, Database)",
            "No answer yet to admin's page: Paged Eve Manager (step 2 of 2, Database)"
        ]
    );
    // The incident's own escalation is separate: Ana's page is the service's policy.
    fire_due(&app.pool, 10).await.unwrap();
    assert_eq!(paged(&app.timeline(&key).await).len(), 1);

    // Eve accepts by her link (step 2's text says so); Dee's later email is called off.
    assert_eq!(
        deliver(&app, &sender(None)).await,
        2,
        "Dee's webhook and Eve's slack (Ana has no contact method)"
    );
    let eve_text = eve_hook.got.lock().unwrap()[0].1.clone();
    assert!(
        eve_text
            .contains("admin asks you to help (step 2 of 2, Database): Is the primary healthy?"),
        "{eve_text}"
    );
    assert!(
        eve_text.contains(
            "Accept (you will help; it stays with whoever has it): http://quell.test/incidents/"
        ),
        "{eve_text}"
    );
    assert_eq!(dee_hook.got.lock().unwrap().len(), 1);
    let r = app
        .form_raw(&Creds::default(), &ack_path(&eve_text), String::new(), &[])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let done = &requests(&app, &key).await[0];
    assert_eq!(done["state"], "answered");
    let states = people(done);
    assert!(states[1].1, "Eve accepted");
    assert_eq!(states[0].2[1], ("email".to_owned(), "cancelled".to_owned()));
    assert_eq!(app.incident_json(&key).await["status"], "triggered");
}

#[sqlx::test]
async fn a_signed_in_responder_accepts_their_own_page_only_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    dee(&app).await;
    let dee = app.account("dee@example.com", "responder").await;
    let ben = app.account("ben@example.com", "responder").await;
    let key = card_failures(&app).await;
    let r = app
        .post(
            &format!("/api/v1/incidents/{key}/responders"),
            json!({"person": "dee@example.com"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let id = r.json()["id"].as_i64().unwrap();
    let accept = format!("/api/v1/incidents/{key}/responders/{id}/accept");
    // Ben was not paged by it.
    let r = app.call_as(&ben, Method::POST, &accept, &[], None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    // The incident page offers Dee the button; from it she accepts.
    let page = app
        .call_as(&dee, Method::GET, &format!("/incidents/{key}"), &[], None)
        .await;
    let button = format!("/incidents/{key}/responders/{id}/accept");
    assert!(page.text.contains(&button), "{}", page.text);
    let r = app.form_as(&dee, &button, &[]).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let r = app.call_as(&dee, Method::POST, &accept, &[], None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(r.text.contains("accepted request"), "{}", r.text);
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains("accepted</strong> at"), "{}", page.text);
    assert!(!page.text.contains(&button), "only Dee is offered it");
    assert_eq!(app.incident_json(&key).await["status"], "triggered");
    let r = app
        .get(&format!("/api/v1/incidents/{key}/responders/{id}/accept"))
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[sqlx::test]
async fn reassigning_hands_the_incident_over_and_the_new_persons_acknowledgement_takes_it(
    pool: PgPool,
) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    dee(&app).await;
    app.person("Quiet Person", "quiet").await;
    let (ana_hook, url) = receiver().await;
    let ana_now = method(&app, "ana", "webhook", &url).await;
    let ana_later = method(&app, "ana", "email", "ana@example.com").await;
    rules(&app, "ana", &[(&ana_now, 0), (&ana_later, 10)]).await;
    let (ben_hook, url) = receiver().await;
    method(&app, "ben", "webhook", &url).await;
    let r = app
        .post(
            "/api/v1/escalation-policies",
            json!({"name": "Database", "steps": [{"targets": [{"person": "dee"}], "delay_minutes": 5}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let key = card_failures(&app).await;
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1, "Ana is paged");
    assert_eq!(
        deliver(&app, &sender(None)).await,
        1,
        "her email waits 10 minutes"
    );
    let ana_link = ack_path(&ana_hook.got.lock().unwrap()[0].1);
    let reassign = |if_match: Option<String>, body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            let headers: Vec<(&str, &str)> = match &if_match {
                Some(v) => vec![("if-match", v.as_str())],
                None => vec![],
            };
            app.call(
                Method::POST,
                &format!("/api/v1/incidents/{key}/reassign"),
                &headers,
                Some(&body.to_string()),
            )
            .await
        }
    };

    // Triggered, handed to another policy: the old escalation's unsent email and Ana's link
    // no longer hand the incident to her.
    let r = reassign(Some("*".into()), json!({"policy": "Database"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let paging = app
        .get(&format!("/api/v1/incidents/{key}/paging"))
        .await
        .json();
    assert_eq!(paging["escalation"]["policy"], "Database");
    let ana: Vec<String> = paging["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["channel"] == "Ana Ribeiro by email")
        .map(|n| n["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ana, ["cancelled"]);
    let r = app
        .form_raw(&Creds::default(), &ana_link, String::new(), &[])
        .await;
    assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    let timeline = app.timeline(&key).await;
    assert_eq!(
        headlines(&timeline, "responder"),
        ["Reassigned to escalation policy Database by admin"]
    );
    assert_eq!(
        paged(&timeline).last().unwrap(),
        "Paged Dee Database (step 1 of 1, Database)"
    );
    // Someone nobody can reach is refused: the incident would page nobody.
    let r = reassign(Some("*".into()), json!({"person": "quiet"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("no way to be reached"), "{}", r.text);
    assert_eq!(
        app.get(&format!("/api/v1/incidents/{key}/paging"))
            .await
            .json()["escalation"]["policy"],
        "Database"
    );

    // Acknowledged, then handed to Ben: back to triggered, If-Match required.
    let r = app
        .post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let version = app.incident_json(&key).await["version"].as_i64().unwrap();
    let to_ben = json!({"person": "ben", "message": "Handing over: I am off shift"});
    let r = reassign(None, to_ben.clone()).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED, "{}", r.text);
    let r = reassign(Some(format!("\"v{}\"", version - 1)), to_ben.clone()).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let r = reassign(Some(format!("\"v{version}\"")), to_ben.clone()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let incident = r.json();
    assert_eq!(incident["status"], "triggered");
    assert!(
        !incident["acknowledged_at"].is_null(),
        "the first acknowledgement is kept"
    );
    let paging = app
        .get(&format!("/api/v1/incidents/{key}/paging"))
        .await
        .json();
    assert_eq!(paging["escalation"]["policy"], "Reassigned to Ben Okafor");
    assert_eq!(fire_due(&app.pool, 10).await.unwrap(), 1);
    let timeline = app.timeline(&key).await;
    assert_eq!(
        headlines(&timeline, "responder")[1],
        "Reassigned to Ben Okafor by admin (was acknowledged; back to triggered)"
    );
    assert!(
        timeline
            .iter()
            .any(|e| e["body"] == "Handing over: I am off shift")
    );
    assert_eq!(
        paged(&timeline).last().unwrap(),
        "Paged Ben Okafor (step 1 of 1, Reassigned to Ben Okafor)"
    );
    // Ben's link acknowledges the incident: it is his now.
    deliver(&app, &sender(None)).await;
    let text = ben_hook.got.lock().unwrap()[0].1.clone();
    let link = ack_path(&text);
    assert!(link.contains("/ack/"), "{link}");
    // Not at the address that accepts a request.
    let r = app
        .form_raw(
            &Creds::default(),
            &link.replace("/ack/", "/respond/"),
            String::new(),
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r = app
        .form_raw(&Creds::default(), &link, String::new(), &[])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let timeline = app.timeline(&key).await;
    let acks: Vec<&Value> = timeline
        .iter()
        .filter(|e| e["kind"] == "acknowledged")
        .collect();
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[1]["author"], "Ben Okafor", "{timeline:?}");

    // Bad input names the field and changes nothing; a resolved incident is nobody's to take.
    let before = app.incident_json(&key).await["version"].clone();
    for (body, field) in [
        (json!({}), "person"),
        (json!({"person": "nobody-here"}), "person"),
        (json!({"schedule": "No such rota"}), "schedule"),
        (json!({"person": "ben", "policy": "Payments"}), "policy"),
        (
            json!({"person": "ben", "message": "x".repeat(2001)}),
            "message",
        ),
    ] {
        let r = reassign(Some("*".into()), body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body} {}", r.text);
    }
    assert_eq!(app.incident_json(&key).await["version"], before);
    let r = app
        .post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = reassign(Some("*".into()), to_ben).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
}

#[sqlx::test]
async fn a_restricted_incident_is_asked_of_and_handed_only_to_people_it_is_kept_to(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    let dee_hook = dee(&app).await;
    method(&app, "ben", "email", "ben@example.com").await;
    let r = app
        .post(
            "/api/v1/escalation-policies",
            json!({"name": "Everyone", "steps": [{"targets": [{"person": "ben"}, {"person": "dee"}], "delay_minutes": 5}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(
            "/api/v1/incidents",
            json!({"title": "Credential misuse", "severity": "Sev1",
                   "access": {"restricted": true, "people": ["dee"]}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let key = r.json()["key"].as_str().unwrap().to_owned();
    let add = |body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            app.post(&format!("/api/v1/incidents/{key}/responders"), body)
                .await
        }
    };
    // Ben may not see it: asked for by name, or as the one on call, he is refused.
    let r = add(json!({"person": "ben"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text.contains("may not see this restricted incident"),
        "{}",
        r.text
    );
    let r = add(json!({"schedule": "Payments secondary"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "schedule");
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/incidents/{key}/reassign"),
            &[("if-match", "*")],
            Some(&json!({"person": "ben"}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    // A policy naming both pages only Dee; Ben is named as not paged, and hears nothing.
    let r = add(json!({"policy": "Everyone"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let names: Vec<String> = people(&r.json()).into_iter().map(|p| p.0).collect();
    assert_eq!(names, ["Dee Database"]);
    assert_eq!(
        headlines(&app.timeline(&key).await, "responder"),
        [
            "admin asked escalation policy Everyone to help: Paged Dee Database (step 1 of 1, Everyone); not paged: Ben Okafor (may not see this restricted incident)"
        ]
    );
    assert_eq!(deliver(&app, &sender(None)).await, 1, "only Dee's webhook");
    let link = ack_path(&dee_hook.got.lock().unwrap()[0].1);
    // Dee taken off who may see it: her link shows nothing of it any more.
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/incidents/{key}/access"),
            &[],
            Some(&json!({"restricted": true, "people": ["admin"]}).to_string()),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let page = app
        .call_as(&Creds::default(), Method::GET, &link, &[], None)
        .await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.text);
    assert!(!page.text.contains("Credential misuse"));
}

#[sqlx::test]
async fn bad_requests_change_nothing_and_resolving_ends_what_still_waits(pool: PgPool) {
    let app = TestApp::new(pool).await;
    payments(&app).await;
    dee(&app).await;
    method(&app, "ben", "email", "ben@example.com").await;
    app.person("Quiet Person", "quiet").await;
    let key = card_failures(&app).await;
    let add = |body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            app.post(&format!("/api/v1/incidents/{key}/responders"), body)
                .await
        }
    };
    for (body, field) in [
        (json!({}), "person"),
        (json!({"person": ""}), "person"),
        (json!({"person": "nobody-here"}), "person"),
        (json!({"schedule": "No such rota"}), "schedule"),
        (json!({"policy": "No such policy"}), "policy"),
        (
            json!({"person": "dee", "schedule": "Payments primary"}),
            "schedule",
        ),
        (
            json!({"person": "dee", "message": "x".repeat(2001)}),
            "message",
        ),
        (json!({"person": "dee", "message": "bell\u{7}"}), "message"),
        (json!({"person": "dee", "team": "db"}), "team"),
    ] {
        let r = add(body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body} {}",
            r.text
        );
        assert_eq!(r.field(), field, "{body} {}", r.text);
    }
    assert_eq!(
        count(&app.pool, "select count(*) from responder_requests").await,
        0
    );
    assert_eq!(
        count(
            &app.pool,
            "select count(*) from timeline_events where kind = 'responder'"
        )
        .await,
        0
    );

    // A person with no way to be reached: recorded, and said, not silently lost.
    let r = add(json!({"person": "quiet"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["state"], "ended");
    assert_eq!(r.json()["ended_why"], "nobody could be paged");
    let timeline = app.timeline(&key).await;
    assert_eq!(
        headlines(&timeline, "responder"),
        [
            "admin asked Quiet Person to help: Nobody paged; no way to reach Quiet Person (no contact method)"
        ]
    );

    // The schedule's on-call person (Ana, who has no contact method either) and Dee, waiting.
    let r = add(json!({"schedule": "Payments primary"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = add(json!({"person": "dee"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .post(&format!("/api/v1/incidents/{key}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let all = requests(&app, &key).await;
    assert_eq!(all[0]["state"], "ended");
    assert_eq!(all[0]["ended_why"], "the incident was resolved by admin");
    let states: Vec<String> = people(&all[0])[0].2.iter().map(|m| m.1.clone()).collect();
    assert_eq!(states, ["cancelled", "cancelled"]);
    let r = add(json!({"person": "dee"})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    // The page's form: a refusal names the field and keeps what was typed.
    let reopened = app
        .post(&format!("/api/v1/incidents/{key}/reopen"), json!({}))
        .await;
    assert_eq!(reopened.status, StatusCode::OK, "{}", reopened.text);
    let r = app
        .form(
            &format!("/incidents/{key}/responders"),
            &[
                ("kind", "person"),
                ("name", "nobody-here"),
                ("message", "db?"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text
            .contains("<strong>Person</strong>: there is no person"),
        "{}",
        r.text
    );
    assert!(r.text.contains("value=\"nobody-here\""));
    let r = app
        .form(
            &format!("/incidents/{key}/responders"),
            &[
                ("kind", "schedule"),
                ("name", "Payments secondary"),
                ("message", "db?"),
            ],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(
        page.text
            .contains("whoever is on call in Payments secondary"),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains("Ben Okafor</strong> <span class=\"muted\">(on call in Payments secondary)")
    );
}
