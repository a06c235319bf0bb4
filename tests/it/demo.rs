//! The demo data: INC-1187 as the reference postmortem tells it, loaded through the same actions
//! a responder uses; loading twice changes nothing.

use crate::common;

use axum::http::StatusCode;
use common::TestApp;
use sqlx::PgPool;

#[sqlx::test]
async fn demo_inc_1187_page_lists_the_reference_times_in_order(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let r = app.get("/incidents/INC-1187").await;
    assert_eq!(r.status, StatusCode::OK);
    let html = &r.text;
    let times = [
        "14:05", "14:20", "15:40", "16:02", "16:07", "16:16", "16:20", "16:24", "16:31", "16:38",
        "16:48", "16:52", "17:22", "18:30", "19:40",
    ];
    let mut last = 0;
    for t in times {
        let pos = html[last..]
            .find(&format!(">{t}</time>"))
            .unwrap_or_else(|| panic!("{t} missing or out of order"))
            + last;
        last = pos;
    }
    for needle in [
        "Sev1",
        "resolved",
        "Ana Ribeiro",
        "Daniel Okafor",
        "Severity raised from Sev2 to Sev1",
        "Acknowledged, 9 min after detection",
        "Marked mitigated, 45 min after detection",
        "Resolved, 3 h 33 min after detection",
        "Thursday 2026-09-17",
        // Who was paged and when: Daniel, on call in the primary, at detection; stopped by his
        // acknowledgement.
        "Paged Daniel Okafor (step 1 of 3, Payments)",
        "Escalation stopped: acknowledged by Daniel Okafor",
        "Daniel Okafor by work email",
    ] {
        assert!(html.contains(needle), "{needle:?}");
    }
    // Daniel was on call then by the demo's schedule, computed from its rotation.
    let schedules = app.get("/api/v1/schedules").await.json();
    let primary = schedules["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Payments primary")
        .unwrap();
    let id = primary["id"].as_i64().unwrap();
    let then = app
        .get(&format!(
            "/api/v1/schedules/{id}/on-call?from=2026-09-17T16:07:00Z&to=2026-09-17T16:08:00Z"
        ))
        .await
        .json();
    assert_eq!(then["at_from"], "daniel");
    // The weekly rota hands off Mondays 09:00 Lisbon: 08:00 UTC in summer, 09:00 after October.
    let across = app
        .get(&format!(
            "/api/v1/schedules/{id}/on-call?from=2026-10-19T00:00:00Z&to=2026-11-03T00:00:00Z"
        ))
        .await
        .json();
    let handoffs: Vec<&str> = across["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["from"].as_str().unwrap())
        .collect();
    assert_eq!(
        handoffs,
        [
            "2026-10-19T00:00:00Z",
            "2026-10-19T08:00:00Z",
            "2026-10-26T09:00:00Z",
            "2026-11-02T09:00:00Z"
        ]
    );
}

#[sqlx::test]
async fn demo_figures_come_from_the_timestamps(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let i = app.incident_json("INC-1187").await;
    assert_eq!(i["severity"], "Sev1");
    assert_eq!(i["service"], "payments-gateway");
    assert_eq!(i["detected_at"], "2026-09-17T16:07:00Z");
    let m = &i["metrics"];
    assert_eq!(m["time_to_detect_secs"], 5 * 60);
    assert_eq!(m["time_to_acknowledge_secs"], 9 * 60);
    assert_eq!(m["time_to_mitigate_secs"], 45 * 60);
    assert_eq!(m["time_to_resolve_secs"], 3 * 3600 + 33 * 60);
    assert_eq!(
        m["duration"],
        "detection → mitigation 0:45; → resolution 3:33"
    );
    assert_eq!(i["roles"]["incident_commander"]["name"], "Ana Ribeiro");
    assert_eq!(i["roles"]["postmortem_owner"]["name"], "Daniel Okafor");
    let opened = &app
        .timeline("INC-1187")
        .await
        .into_iter()
        .find(|e| e["kind"] == "opened")
        .unwrap();
    assert_eq!(
        opened["headline"],
        "Incident opened as Sev2 on payments-gateway"
    );
}

#[sqlx::test]
async fn loading_the_demo_twice_changes_nothing_and_new_keys_follow_it(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool.clone()).await;
    let before = app.timeline("INC-1187").await.len();
    quell::demo::load(&pool).await.unwrap();
    assert_eq!(app.timeline("INC-1187").await.len(), before);
    assert_eq!(
        app.get("/api/v1/services").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // OrbitPay's checkout-api hands authorization to payments-worker, once.
    let checkout = app.get("/api/v1/services/checkout-api").await.json();
    assert_eq!(
        checkout["depends_on"],
        serde_json::json!(["payments-worker"])
    );
    assert_eq!(checkout["version"], 2, "set by the first load only");
    assert_eq!(
        app.get("/api/v1/runbooks").await.json()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let key = app
        .incident(serde_json::json!({"title": "new", "severity": "Sev3"}))
        .await;
    assert_eq!(key, "INC-1188", "after the demo's highest key, INC-1187");
}

/// OrbitPay's night is PAY-184 (INC-184), as the reference tells it: the processor's blip at
/// 22:10, found at 22:14, no deploy that day so no suspects, the code, chat and metric the
/// responders attached, and a published postmortem with its 12,400 failed authorizations.
/// INC-1187 shows payments-gateway's runbook, which now asks for the day's configuration
/// changes.
#[sqlx::test]
async fn the_orbitpay_incident_is_pay_184_with_no_suspects_and_a_published_postmortem(
    pool: PgPool,
) {
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let night = app.incident_json("INC-184").await;
    assert_eq!(night["service"], "payments-worker");
    assert_eq!(night["started_at"], "2026-08-12T22:10:00Z");
    assert_eq!(night["detected_at"], "2026-08-12T22:14:00Z");
    assert_eq!(night["mitigated_at"], "2026-08-12T22:44:00Z");
    let suspects = app
        .get("/api/v1/incidents/INC-184/suspect-changes")
        .await
        .json();
    assert!(suspects["items"].as_array().unwrap().is_empty());
    let evidence = app.get("/api/v1/incidents/INC-184/evidence").await.json();
    assert_eq!(evidence["items"].as_array().unwrap().len(), 4, "{evidence}");
    let pm = app.get("/api/v1/incidents/INC-184/postmortem").await;
    assert_eq!(pm.status, StatusCode::OK, "{}", pm.text);
    assert_eq!(pm.json()["status"], "published", "{}", pm.text);
    assert!(
        pm.text.contains("12,400 failed authorizations"),
        "{}",
        pm.text
    );
    let doc = app.get("/incidents/INC-184/postmortem").await;
    assert!(
        doc.text.contains("34 min"),
        "the impact computed: {}",
        doc.text
    );
    let page = app.get("/incidents/INC-184").await;
    assert!(page.text.contains("No changes recorded in that window"));
    let checklist = app.get("/api/v1/incidents/INC-1187/checklist").await.json();
    assert_eq!(checklist["items"][0]["runbook"]["name"], "High error rate");
    assert_eq!(
        checklist["items"][0]["items"][1]["step"],
        "Check configuration changes of the last 24 h"
    );
}

#[sqlx::test]
async fn the_demo_routing_rule_opens_a_payments_gateway_alert_as_sev2(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    quell::demo::load(&pool).await.unwrap();
    let app = TestApp::new(pool).await;
    let rules = app.get("/api/v1/routing-rules").await.json();
    assert_eq!(
        rules["items"].as_array().unwrap().len(),
        2,
        "loading twice adds the rule once"
    );
    let am = app.integration("prod-alertmanager", "alertmanager").await;
    let body = common::alertmanager_payload(
        "PaymentsGateway5xx",
        &[("pg1", "firing")],
        serde_json::json!({"service": "payments-gateway", "severity": "critical"}),
    );
    assert_eq!(
        app.alert("alertmanager", &am, &body).await.status,
        StatusCode::ACCEPTED
    );
    let key = app.incident_keys().await.pop().unwrap();
    let i = app.incident_json(&key).await;
    assert_eq!(i["severity"], "Sev2");
    assert_eq!(i["service"], "payments-gateway");
    assert_eq!(i["title"], "PaymentsGateway5xx on pg1");
}

/// What the world holds, to compare two loads.
async fn world_counts(pool: &PgPool) -> Vec<i64> {
    let mut counts = Vec::new();
    for table in [
        "incidents",
        "timeline_events",
        "alerts",
        "changes",
        "postmortems",
        "action_items",
        "stakeholder_updates",
        "incident_roles",
        "incident_claims",
        "services",
        "people",
    ] {
        let n: i64 = sqlx::query_scalar(&format!("select count(*) from {table}"))
            .fetch_one(pool)
            .await
            .unwrap();
        counts.push(n);
    }
    counts
}

#[sqlx::test]
async fn the_demo_world_is_big_varied_and_loads_once(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    quell::demo::world::load(&pool).await.unwrap();
    let first = world_counts(&pool).await;
    quell::demo::load(&pool).await.unwrap();
    quell::demo::world::load(&pool).await.unwrap();
    assert_eq!(
        world_counts(&pool).await,
        first,
        "loading twice changes nothing"
    );
    let [
        incidents,
        events,
        alerts,
        changes,
        postmortems,
        items,
        updates,
        _,
        _,
        services,
        _,
    ] = first[..]
    else {
        unreachable!()
    };
    assert!(incidents >= 150, "{incidents} incidents");
    assert!(services >= 12, "{services} services");
    // Five teams own every service, each with a lead and members.
    let teams: Vec<(String, i64, i64, i64)> = sqlx::query_as(
        r#"select t.slug,
                  (select count(*) from team_members m where m.team_id = t.id and m.role = 'lead'),
                  (select count(*) from team_members m where m.team_id = t.id and m.role = 'member'),
                  (select count(*) from services s where s.team_id = t.id)
           from teams t order by t.slug"#,
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        teams.iter().map(|t| t.0.as_str()).collect::<Vec<_>>(),
        ["checkout", "data", "fulfilment", "payments", "platform"]
    );
    assert!(
        teams.iter().all(|t| t.1 >= 1 && t.2 >= 1 && t.3 >= 1),
        "{teams:?}"
    );
    let unowned: i64 = sqlx::query_scalar("select count(*) from services where team_id is null")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(unowned, 0, "every demo service has a team");
    // Each team has its own rota, and every service pages someone through its team's policy.
    let rotas: Vec<(String, i64)> = sqlx::query_as(
        "select t.slug, (select count(*) from schedules s where s.team_id = t.id) from teams t order by t.slug",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(rotas.iter().all(|(_, n)| *n >= 1), "{rotas:?}");
    let unpaged: Vec<String> = sqlx::query_scalar(
        r#"select s.name from services s
           where s.escalation_policy_id is null
              or (select p.team_id from escalation_policies p where p.id = s.escalation_policy_id)
                 is distinct from s.team_id"#,
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(
        unpaged.is_empty(),
        "services paging nobody or another team: {unpaged:?}"
    );
    assert!(events > incidents * 5, "timelines: {events} entries");
    assert!(
        alerts > 200 && changes > 50,
        "{alerts} alerts, {changes} changes"
    );
    // Its past alerts were given their history's times: their lines were counted again.
    let app = TestApp::new(pool.clone()).await;
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, alerts);
    assert!(
        postmortems > 30 && items > 60 && updates > 20,
        "{postmortems} postmortems, {items} items, {updates} updates"
    );
    // Most Sev3 or Sev4, a few Sev1; some acknowledgements past their target; a few open.
    let by = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let sev1 = by("select count(*) from incidents where peak_severity = 'Sev1'").await;
    let minor = by("select count(*) from incidents where peak_severity in ('Sev3', 'Sev4')").await;
    assert!(sev1 >= 2 && sev1 * 10 < incidents, "{sev1} Sev1");
    assert!(
        minor * 100 / incidents >= 60,
        "{minor} minor of {incidents}"
    );
    let breached = by(
        "select count(*) from incidents i join severity_policies p on p.severity = i.peak_severity
         where i.acknowledged_at - i.detected_at > make_interval(secs => p.ack_target_secs)",
    )
    .await;
    assert!(breached >= 3, "{breached} acknowledgement breaches");
    let open = by("select count(*) from incidents where status <> 'resolved'").await;
    assert_eq!(
        open, 5,
        "the world's latest four are open, and the restricted one"
    );
    let kept = by("select count(*) from incidents where restricted and number = 999").await;
    assert_eq!(kept, 1, "one incident is kept to Payments and Tomás");
    let span = by(
        "select extract(day from max(detected_at) - min(detected_at))::int8 from incidents
         where number between 1000 and 1200",
    )
    .await;
    assert!((170..=183).contains(&span), "six months: {span} days");
    let triggers =
        by("select count(*) from suspect_verdicts where verdict = 'confirmed_trigger'").await;
    assert!(triggers > 20, "{triggers} confirmed triggers");

    // Every page has something true to show.
    let app = TestApp::new(pool).await;
    let dash = app.get("/").await;
    assert!(
        dash.text.contains("Open incidents: 5"),
        "the dashboard shows the open ones (an admin sees the restricted one)"
    );
    // Someone outside Payments does not: not on the dashboard, and its key is no incident.
    let olga = app.account("olga@example.com", "responder").await;
    let theirs = app
        .call_as(&olga, axum::http::Method::GET, "/", &[], None)
        .await;
    assert!(theirs.text.contains("Open incidents: 4"), "{}", theirs.text);
    let hidden = app
        .call_as(
            &olga,
            axum::http::Method::GET,
            "/api/v1/incidents/INC-999",
            &[],
            None,
        )
        .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    assert!(
        dash.text.matches("<rect ").count() > 30,
        "the trends have bars"
    );
    let reports = app.get("/reports").await;
    assert_eq!(reports.status, StatusCode::OK);
    let list = app.get("/incidents?status=open").await;
    assert!(list.text.contains("INC-1199") || list.text.contains("INC-1200"));
    let open_sev2 = sqlx::query_scalar::<_, i64>(
        "select number from incidents
         where status = 'acknowledged' and severity = 'Sev2' and not restricted",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let page = app.get(&format!("/incidents/INC-{open_sev2}")).await;
    assert!(
        page.text.contains("Join the call"),
        "checkout-api's Sev2 has its bridge"
    );
    assert!(
        page.text.contains("dependency dashboards"),
        "someone is on a lead"
    );
}
