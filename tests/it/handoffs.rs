//! Hand-off notices: the person coming on call and the one going off hear it once, by email
//! through a real SMTP server, with the open incidents of the services the schedule covers;
//! a reminder hours before for whoever asks; nothing for whoever turned them off — with three
//! replicas' engines racing.

use axum::http::{Method, StatusCode};
use quell::handoffs::timers::send_due;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{Creds, TestApp};
use crate::paging::{deliver, method, sender, smtp_server};

/// A schedule of one-hour shifts of `people` whose second shift began a minute ago.
async fn hourly(app: &TestApp, name: &str, people: &[&str]) {
    let start: String = sqlx::query_scalar(
        "select to_char(now() at time zone 'UTC' - interval '61 minutes', 'YYYY-MM-DD\"T\"HH24:MI:SS')",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let r = app
        .post(
            "/api/v1/schedules",
            json!({"name": name, "layers": [{"length": {"every": "hours", "hours": 1}, "start": start,
                   "time_zone": "UTC", "people": people}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

async fn prefer(app: &TestApp, who: &Creds, prefs: Value) -> crate::common::Res {
    app.call_as(
        who,
        Method::PATCH,
        "/api/v1/me/preferences",
        &[],
        Some(&prefs.to_string()),
    )
    .await
}

async fn preferences(app: &TestApp, who: &Creds) -> Value {
    let r = app
        .call_as(who, Method::GET, "/api/v1/me/preferences", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.json()
}

#[sqlx::test]
async fn hand_off_notices_arrive_once_by_email_with_the_open_incidents(pool: PgPool) {
    let smtp = smtp_server().await;
    let app = TestApp::new(pool).await;
    let mut who = std::collections::HashMap::new();
    for (handle, role) in [
        ("ana", "responder"),
        ("bob", "responder"),
        ("carl", "responder"),
        ("dana", "responder"),
        ("erin", "responder"),
        ("fay", "responder"),
        ("vic", "viewer"),
    ] {
        let creds = app.account(&format!("{handle}@example.com"), role).await;
        method(
            &app,
            handle,
            "email",
            &format!("{handle}.pager@example.com"),
        )
        .await;
        who.insert(handle, creds);
    }
    // Carl wants a reminder an hour ahead, in Berlin's time; Dana wants no notices. A zone
    // that does not exist is refused, naming the field, and changes nothing.
    let bad = prefer(&app, &who["carl"], json!({"time_zone": "Mars/Olympus"})).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert_eq!(bad.field(), "time_zone");
    let r = prefer(
        &app,
        &who["carl"],
        json!({"time_zone": "Europe/Berlin", "handoff_reminder_hours": 1}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["handoff_notices"], true);
    // A change touches only what it names.
    let r = prefer(&app, &who["dana"], json!({"time_zone": "Asia/Tokyo"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = prefer(&app, &who["dana"], json!({"handoff_notices": false})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(
        r.json(),
        json!({"time_zone": "Asia/Tokyo", "handoff_notices": false, "handoff_reminder_hours": null})
    );
    for bad in [
        json!({"handoff_reminder_hours": 49}),
        json!({"handoff_notices": "yes"}),
        json!({"time_zone": "UTC", "colour": "blue"}),
    ] {
        let r = prefer(&app, &who["dana"], bad.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            r.text
        );
    }
    assert_eq!(
        preferences(&app, &who["dana"]).await["time_zone"],
        "Asia/Tokyo"
    );
    assert_eq!(
        preferences(&app, &who["carl"]).await,
        json!({"time_zone": "Europe/Berlin", "handoff_notices": true, "handoff_reminder_hours": 1})
    );

    // Ana handed to Bob a minute ago; Carl comes on in 59 minutes. Dana handed to Erin.
    hourly(&app, "Payments primary", &["ana", "bob", "carl"]).await;
    hourly(&app, "Search", &["dana", "erin"]).await;
    // Vic only watches (a viewer is never paged): Fay hands to nobody, and Vic hears nothing.
    hourly(&app, "Ledger", &["fay", "vic"]).await;
    app.service("payments-gateway").await;
    app.policy(
        "payments-gateway",
        json!({"name": "Payments", "steps": [
                {"targets": [{"schedule": "Payments primary"}], "delay_minutes": 5}]}),
    )
    .await;
    let open = app
        .incident(
            json!({"title": "Card failures", "severity": "Sev1", "service": "payments-gateway"}),
        )
        .await;
    // Kept to Ana: Bob's notice must not name it.
    let kept = app
        .incident(json!({"title": "Zeppelin key leaked", "severity": "Sev2", "service": "payments-gateway",
                         "access": {"restricted": true, "people": ["ana"]}}))
        .await;

    // Three replicas' engines at once: each notice is claimed by one.
    let (a, b, c) = tokio::join!(
        send_due(&app.pool),
        send_due(&app.pool),
        send_due(&app.pool)
    );
    let sent: usize = [a, b, c].into_iter().map(|r| r.unwrap().0).sum();
    assert_eq!(
        sent, 5,
        "ana off, bob on, carl's reminder, erin on, fay off"
    );
    assert_eq!(send_due(&app.pool).await.unwrap().0, 0, "nothing twice");
    // The sweep forgets claims a month past, never those that may still be due.
    sqlx::query(
        "insert into handoff_notices (schedule_id, at, person_id, kind)
         select schedule_id, now() - interval '31 days', person_id, kind from handoff_notices",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    assert_eq!(quell::handoffs::db::purge_old(&app.pool).await.unwrap(), 5);
    assert_eq!(
        send_due(&app.pool).await.unwrap().0,
        0,
        "the recent claims stay"
    );
    assert_eq!(deliver(&app, &sender(Some(smtp.url.clone()))).await, 5);

    let mail = smtp.mail();
    assert_eq!(mail.len(), 5, "{mail:#?}");
    let to = |handle: &str| {
        let found: Vec<&String> = mail
            .iter()
            .filter(|m| m.contains(&format!("To: {handle}.pager@example.com")))
            .collect();
        assert_eq!(found.len(), 1, "{handle}: {mail:#?}");
        found[0].clone()
    };
    let bob = to("bob");
    assert!(
        bob.contains("Subject: You are on call for Payments primary from "),
        "{bob}"
    );
    assert!(bob.contains("taking over from ana"), "{bob}");
    assert!(
        bob.contains(&format!(
            "{open} (Sev1) Card failures [triggered, payments-gateway]"
        )),
        "{bob}"
    );
    assert!(!bob.contains(&kept) && !bob.contains("Zeppelin"), "{bob}");
    assert!(bob.contains("http://quell.test/schedules/"), "{bob}");
    let ana = to("ana");
    assert!(
        ana.contains("Subject: Your on-call shift for Payments primary ended at "),
        "{ana}"
    );
    assert!(ana.contains(": bob is on call now"), "{ana}");
    // Ana may see the restricted one: her notice lists both
    assert!(
        ana.contains("Open on the services it covers (2):") && ana.contains("Zeppelin"),
        "{ana}"
    );
    let carl = to("carl");
    assert!(
        carl.contains("Subject: Reminder: you are on call for Payments primary from "),
        "{carl}"
    );
    assert!(carl.contains(" CET"), "Berlin's time: {carl}");
    let erin = to("erin");
    assert!(erin.contains("You are on call for Search from "), "{erin}");
    assert!(erin.contains("taking over from dana"), "{erin}");
    assert!(
        erin.contains("No incidents are open on the services it covers."),
        "{erin}"
    );
    let fay = to("fay");
    assert!(
        fay.contains("Subject: Your on-call shift for Ledger ended at "),
        "{fay}"
    );
    assert!(fay.contains("nobody is on call after you"), "{fay}");
    assert!(
        !mail.iter().any(|m| m.contains("To: vic.pager@")),
        "{mail:#?}"
    );
    assert!(
        !mail.iter().any(|m| m.contains("To: dana.pager@")),
        "dana turned them off"
    );

    // The account page sets the same, and names a wrong field as the form shows it.
    let form = app
        .form_as(
            &who["dana"],
            "/account/preferences",
            &[
                ("time_zone", "Europe/Lisbon"),
                ("handoff_reminder_hours", "99"),
            ],
        )
        .await;
    assert_eq!(
        form.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        form.text
    );
    assert!(
        form.text
            .contains("Remind me</strong>: a reminder is 1 to 48 hours"),
        "{}",
        form.text
    );
    assert!(form.text.contains("value=\"99\""), "what was typed stays");
    let form = app
        .form_as(
            &who["dana"],
            "/account/preferences",
            &[
                ("time_zone", "Europe/Lisbon"),
                ("handoff_notices", "on"),
                ("handoff_reminder_hours", ""),
            ],
        )
        .await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.text);
    assert_eq!(
        preferences(&app, &who["dana"]).await,
        json!({"time_zone": "Europe/Lisbon", "handoff_notices": true, "handoff_reminder_hours": null})
    );
}
