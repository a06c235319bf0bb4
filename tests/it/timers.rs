//! Persisted SLA timers and the engine: deadlines follow every change, each due timer yields
//! exactly one breach with several engines racing, and a crashed batch is finished by another.
//! The clock is PostgreSQL's: incidents are entered with past times instead of sleeping.

use crate::common;

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use common::{TestApp, ago, at};
use quell::sla::timers::fire_due;
use serde_json::json;
use sqlx::PgPool;

async fn timers(pool: &PgPool, key: &str) -> Vec<(String, DateTime<Utc>, String)> {
    let n: i64 = key.trim_start_matches("INC-").parse().unwrap();
    sqlx::query_as(
        "select t.kind, t.due_at, t.state from sla_timers t join incidents i on i.id = t.incident_id
         where i.number = $1 order by t.kind",
    )
    .bind(n)
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[sqlx::test]
async fn deadlines_follow_the_incident(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let detected = ago(10);
    let key = app.incident(json!({"title": "x", "severity": "Sev2", "started_at": detected, "detected_at": detected})).await;
    let d = at(&detected);
    let t = timers(&app.pool, &key).await;
    assert_eq!(
        t[0],
        (
            "ack".into(),
            d + chrono::Duration::minutes(30),
            "pending".into()
        )
    );
    assert_eq!(
        t[1],
        (
            "resolve".into(),
            d + chrono::Duration::hours(8),
            "pending".into()
        )
    );
    assert_eq!(
        t[2],
        (
            "update".into(),
            d + chrono::Duration::minutes(60),
            "pending".into()
        )
    );
    // Raised to Sev1: the stricter targets, from detection.
    app.post(
        &format!("/api/v1/incidents/{key}/severity"),
        json!({"severity": "Sev1", "reason": "worse"}),
    )
    .await;
    let t = timers(&app.pool, &key).await;
    assert_eq!(t[0].1, d + chrono::Duration::minutes(15));
    assert_eq!(t[2].1, d + chrono::Duration::minutes(30));
    // Acknowledged: that clock stops; an update restarts the cadence.
    app.post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    let sent = ago(2);
    app.post(
        &format!("/api/v1/incidents/{key}/updates"),
        json!({"audience": "internal", "body": "on it", "at": sent}),
    )
    .await;
    let t = timers(&app.pool, &key).await;
    assert_eq!(t[0].2, "stopped");
    assert_eq!(t[2].1, at(&sent) + chrono::Duration::minutes(30));
    // Mitigated: no more updates owed; resolved: nothing left running.
    app.post_empty(&format!("/api/v1/incidents/{key}/resolve"))
        .await;
    let states: Vec<_> = timers(&app.pool, &key)
        .await
        .into_iter()
        .map(|t| t.2)
        .collect();
    assert_eq!(states, vec!["stopped", "stopped", "stopped"]);
    // Reopened: the resolve clock runs again against the same deadline.
    app.post_empty(&format!("/api/v1/incidents/{key}/reopen"))
        .await;
    assert_eq!(timers(&app.pool, &key).await[1].2, "pending");
}

#[sqlx::test]
async fn a_due_timer_breaches_once_and_says_so_on_the_timeline(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.incident(json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    assert_eq!(
        fire_due(&app.pool, 100).await.unwrap(),
        1,
        "the ack timer (15 min) is due"
    );
    assert_eq!(fire_due(&app.pool, 100).await.unwrap(), 0);
    assert_eq!(
        count(&app.pool, "select count(*) from sla_breaches").await,
        1
    );
    let breach = app
        .timeline(&key)
        .await
        .into_iter()
        .find(|e| e["kind"] == "sla_breached")
        .unwrap();
    assert_eq!(
        breach["headline"],
        "SLA breached: not acknowledged within 15 min of detection"
    );
    assert_eq!(breach["author"], "Quell");
    // A late acknowledgement does not undo the breach, nor add another.
    app.post_empty(&format!("/api/v1/incidents/{key}/acknowledge"))
        .await;
    fire_due(&app.pool, 100).await.unwrap();
    assert_eq!(
        count(&app.pool, "select count(*) from sla_breaches").await,
        1
    );
    assert_eq!(
        app.incident_json(&key).await["sla"]["ack"]["state"],
        "breached"
    );
}

#[sqlx::test]
async fn three_engines_over_a_thousand_due_timers_breach_each_exactly_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    // A thousand Sev1 incidents detected 20 minutes ago: each ack timer is due, nothing else.
    app.open_many(1000, "Sev1", 20).await;
    let engines: Vec<_> = (0..3)
        .map(|_| {
            let pool = app.pool.clone();
            tokio::spawn(async move {
                let mut total = 0;
                loop {
                    let n = fire_due(&pool, 50).await.unwrap();
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
    assert_eq!(fired, 1000);
    assert_eq!(
        count(&app.pool, "select count(*) from sla_breaches").await,
        1000
    );
    assert_eq!(
        count(
            &app.pool,
            "select count(distinct incident_id) from sla_breaches"
        )
        .await,
        1000
    );
    assert_eq!(
        count(
            &app.pool,
            "select count(*) from timeline_events where kind = 'sla_breached'"
        )
        .await,
        1000
    );
    assert_eq!(
        count(
            &app.pool,
            "select count(*) from sla_timers where state = 'pending' and due_at <= now()"
        )
        .await,
        0
    );
}

#[sqlx::test]
async fn an_engine_that_dies_mid_batch_leaves_the_work_to_another(pool: PgPool) {
    let app = TestApp::new(pool).await;
    for _ in 0..5 {
        app.incident(json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)})).await;
    }
    // An engine claims the batch, marks it fired … and dies before committing.
    let mut dying = app.pool.acquire().await.unwrap().detach();
    sqlx::query("begin").execute(&mut dying).await.unwrap();
    let claimed: Vec<i64> = sqlx::query_scalar(
        "update sla_timers set state = 'fired' where id in
           (select id from sla_timers where state = 'pending' and due_at <= now() for update skip locked)
         returning id",
    )
    .fetch_all(&mut dying)
    .await
    .unwrap();
    assert_eq!(claimed.len(), 5);
    // While it holds them, another engine skips them rather than waiting or doubling.
    assert_eq!(fire_due(&app.pool, 100).await.unwrap(), 0);
    // The process dies: its connection closes and PostgreSQL rolls the batch back, as soon as
    // it notices. The other engine, polling as engines do, then fires all five.
    drop(dying);
    let mut fired = 0;
    for _ in 0..100 {
        fired += fire_due(&app.pool, 100).await.unwrap();
        if fired >= 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(fired, 5);
    assert_eq!(
        count(&app.pool, "select count(*) from sla_breaches").await,
        5
    );
}

#[sqlx::test]
async fn a_policy_change_moves_the_deadlines_of_open_incidents(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let detected = ago(20);
    let key = app.incident(json!({"title": "x", "severity": "Sev2", "started_at": detected, "detected_at": detected})).await;
    let body = json!({"items": [{"severity": "Sev2", "ack_target_minutes": 10, "resolve_target_minutes": 480, "update_cadence_minutes": 60}]});
    let r = app
        .call(
            Method::PUT,
            "/api/v1/severity-policies",
            &[],
            Some(&body.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        timers(&app.pool, &key).await[0].1,
        at(&detected) + chrono::Duration::minutes(10)
    );
    assert_eq!(
        fire_due(&app.pool, 100).await.unwrap(),
        1,
        "now overdue under the new policy"
    );
}

/// Waits (at most 20 s, the engine's poll interval four times over) until `sql` counts `want`.
async fn until_count(pool: &PgPool, sql: &str, want: i64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while count(pool, sql).await < want {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {want} from {sql}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[sqlx::test]
async fn the_engine_takes_a_new_connection_when_its_own_is_cut(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let engine = tokio::spawn(quell::sla::timers::run(app.pool.clone()));
    app.incident(
        json!({"title": "x", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)}),
    )
    .await;
    until_count(&app.pool, "select count(*) from sla_breaches", 1).await;
    // The engine keeps one connection between rounds: cut it, as a PostgreSQL restart or a
    // network drop would, and the next due timer still fires. (Once the engine sleeps: its
    // last statement looked for the next deadline.)
    let engines = "select count(*) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and state = 'idle' and query like 'select extract(epoch from min(due_at)%sla_timers%'";
    until_count(&app.pool, engines, 1).await;
    let cut: i64 = count(
        &app.pool,
        "select count(pg_terminate_backend(pid)) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and query like 'select extract(epoch from min(due_at)%sla_timers%'",
    )
    .await;
    assert_eq!(
        cut, 1,
        "the engine's own connection, last used to find the next deadline"
    );
    app.incident(
        json!({"title": "y", "severity": "Sev1", "started_at": ago(20), "detected_at": ago(20)}),
    )
    .await;
    until_count(&app.pool, "select count(*) from sla_breaches", 2).await;
    engine.abort();
}
