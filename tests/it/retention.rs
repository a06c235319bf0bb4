//! Alert retention: alerts live in month partitions, made ahead and let go by the engine every
//! replica runs. Several replicas racing create each month once and drop each once; an incident
//! keeps its alert lines and counts after its alerts' month is let go, also through a merge;
//! an alert still firing is never let go, and still takes its next delivery.

use axum::http::{Method, StatusCode};
use serde_json::json;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::common::{TestApp, alertmanager_payload};
use quell::alert_store::db as store;
use quell::alerts::retention;

async fn scalar<T>(pool: &PgPool, sql: &str) -> T
where
    T: Send + Unpin + for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

#[sqlx::test]
async fn months_are_made_ahead_and_let_go_once_by_several_replicas(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let hook = app.integration("prometheus", "alertmanager").await;
    let labels = json!({"service": "payments-gateway", "severity": "critical"});
    let three = [("d1", "firing"), ("d2", "firing"), ("d3", "firing")];
    app.alertmanager(
        &hook,
        &alertmanager_payload("DiskFull", &three, labels.clone()),
    )
    .await;
    let two = [("d1", "resolved"), ("d2", "resolved")];
    app.alertmanager(
        &hook,
        &alertmanager_payload("DiskFull", &two, labels.clone()),
    )
    .await;
    let key = app.incident_keys().await[0].clone();
    // The two resolved 20 months ago (moved into that month's partition); the one still firing
    // was first received 30 months ago.
    let cover =
        "select alert_partitions_cover(now() - interval '20 months', now() - interval '20 months')";
    assert_eq!(scalar::<i32>(&pool, cover).await, 1);
    sqlx::raw_sql(
        "update alerts set resolved_at = now() - interval '20 months',
                           retained_from = now() - interval '20 months'
         where status = 'resolved';
         update alerts set received_at = now() - interval '30 months' where status <> 'resolved';",
    )
    .execute(&pool)
    .await
    .unwrap();
    let old: String = scalar(
        &pool,
        "select to_char((now() - interval '20 months') at time zone 'UTC', '\"alerts_\"YYYY_MM')",
    )
    .await;
    let placed: Vec<String> = sqlx::query_scalar(
        "select tableoid::regclass::text from alerts order by status, dedup_key",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(placed, ["alerts_open", &old, &old]);
    let before = store::months(&pool).await.unwrap();
    // The migration made this month and the next two; the engine keeps three ahead.
    assert_eq!(before.len(), 4, "{before:?}");
    assert_eq!(before[0], old);

    // Three replicas, each with its own pool, run their round at once.
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            PgPoolOptions::new()
                .max_connections(2)
                .connect_with((*pool.connect_options()).clone())
                .await
                .unwrap(),
        );
    }
    let rounds =
        futures_util::future::join_all(replicas.iter().map(|p| retention::round(p, Some(400))))
            .await;
    let rounds: Vec<retention::Round> = rounds.into_iter().map(|r| r.unwrap()).collect();
    let created: i32 = rounds.iter().map(|r| r.created).sum();
    let dropped: Vec<&String> = rounds.iter().flat_map(|r| &r.dropped).collect();
    assert_eq!(created, 1, "{rounds:?}");
    assert_eq!(dropped, [&old], "{rounds:?}");
    let after = store::months(&pool).await.unwrap();
    let ahead: String = scalar(
        &pool,
        "select to_char((now() + interval '3 months') at time zone 'UTC', '\"alerts_\"YYYY_MM')",
    )
    .await;
    let mut expected: Vec<String> = before[1..].to_vec();
    expected.push(ahead);
    assert_eq!(after, expected);
    // Another round finds nothing to do.
    let again = retention::round(&replicas[0], Some(400)).await.unwrap();
    assert_eq!(again, retention::Round::default());

    // The incident still counts three alerts, its line says three (one open), and the alert
    // still firing after 30 months is stored; the list holds what is stored.
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["alert_count"], 3, "{incident}");
    let id: i64 = scalar(&pool, "select id from incidents").await;
    let lines = store::lines_for_incident(&pool, id).await.unwrap();
    let counted = lines
        .iter()
        .fold((0, 0), |(t, o), l| (t + l.total, o + l.open));
    assert_eq!(counted, (3, 1), "{lines:?}");
    let listed = app.get(&format!("/api/v1/incidents/{key}/alerts")).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let listed = listed.json();
    assert_eq!(listed["total"], 3, "{listed}");
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["items"][0]["status"], "firing", "{listed}");
    assert!(quell::check::db::lines_off(&pool).await.unwrap().is_empty());

    // The firing alert takes its next delivery: no second alert, no new incident.
    app.alertmanager(
        &hook,
        &alertmanager_payload("DiskFull", &[("d3", "firing")], labels.clone()),
    )
    .await;
    assert_eq!(app.stored_alerts().await, 1);
    assert_eq!(app.incident_keys().await.len(), 1);
    let deliveries: i32 = scalar(&pool, "select deliveries from alerts").await;
    assert_eq!(deliveries, 2);

    // Merged into another incident, it brings the alerts let go in its count and lines.
    app.alertmanager(
        &hook,
        &alertmanager_payload("CpuHigh", &[("c1", "firing")], labels.clone()),
    )
    .await;
    let keys = app.incident_keys().await;
    let other = keys.iter().find(|k| **k != key).unwrap().clone();
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/incidents/{key}/merge"),
            &[("if-match", "*")],
            Some(&json!({"into": other}).to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let kept = app.incident_json(&other).await;
    assert_eq!(kept["alert_count"], 4, "{kept}");
    let kept_id: i64 = scalar(
        &pool,
        &format!(
            "select id from incidents where number = {}",
            other.trim_start_matches("INC-")
        ),
    )
    .await;
    let lines = store::lines_for_incident(&pool, kept_id).await.unwrap();
    let counted = lines
        .iter()
        .fold((0, 0), |(t, o), l| (t + l.total, o + l.open));
    assert_eq!(counted, (4, 2), "{lines:?}");
    assert!(quell::check::db::lines_off(&pool).await.unwrap().is_empty());
    for p in replicas {
        p.close().await;
    }
}

#[sqlx::test]
async fn no_retention_keeps_every_month(pool: PgPool) {
    let cover =
        "select alert_partitions_cover(now() - interval '30 months', now() - interval '30 months')";
    assert_eq!(scalar::<i32>(&pool, cover).await, 1);
    let before = store::months(&pool).await.unwrap();
    let round = retention::round(&pool, None).await.unwrap();
    assert_eq!(round.created, 1);
    assert!(round.dropped.is_empty());
    assert_eq!(store::months(&pool).await.unwrap().len(), before.len() + 1);
}
