//! Merging and splitting: an incident merged into the one it duplicates brings every alert,
//! its groups (the next alerts join the kept one), its roles and its worse severity, and is
//! resolved as a duplicate with both timelines linking them — alerts arriving for both while it
//! happens are all counted in the kept one; alerts moved out open a new incident. Both from
//! the page and the API, with If-Match.

use crate::common;
use crate::silences::{fire, paged_service};

use axum::http::{Method, StatusCode};
use common::TestApp;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn merge(app: &TestApp, key: &str, if_match: Option<&str>, body: Value) -> common::Res {
    let headers: Vec<(&str, &str)> = if_match.map(|v| ("if-match", v)).into_iter().collect();
    app.call(
        Method::POST,
        &format!("/api/v1/incidents/{key}/merge"),
        &headers,
        Some(&body.to_string()),
    )
    .await
}

async fn split(app: &TestApp, key: &str, if_match: &str, body: Value) -> common::Res {
    app.call(
        Method::POST,
        &format!("/api/v1/incidents/{key}/split"),
        &[("if-match", if_match)],
        Some(&body.to_string()),
    )
    .await
}

/// One figure about incident `key`: `sql` reads it with the incident's id as `$1`.
async fn of_incident<T>(pool: &PgPool, key: &str, sql: &str) -> T
where
    T: Send + Unpin + for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    let number: i64 = key.trim_start_matches("INC-").parse().unwrap();
    let id: i64 = sqlx::query_scalar("select id from incidents where number = $1")
        .bind(number)
        .fetch_one(pool)
        .await
        .unwrap();
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn alerts_of(pool: &PgPool, key: &str) -> i64 {
    of_incident(
        pool,
        key,
        "select count(*) from alerts where incident_id = $1",
    )
    .await
}

/// Entries whose headline or body says `what`.
fn said(timeline: &[Value], what: &str) -> usize {
    timeline
        .iter()
        .filter(|e| {
            ["headline", "body"]
                .iter()
                .any(|f| e[*f].as_str().unwrap_or("").contains(what))
        })
        .count()
}

async fn escalation(pool: &PgPool, key: &str) -> String {
    of_incident(
        pool,
        key,
        "select state from escalations where incident_id = $1",
    )
    .await
}

#[sqlx::test]
async fn a_duplicate_merges_with_its_alerts_roles_and_severity_and_stops_paging(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alertmanager(&am, &fire("Http5xxHigh", &["w1", "w2"], "payments-gateway"))
        .await;
    app.alertmanager(
        &am,
        &fire("LatencyHigh", &["l1", "l2", "l3"], "payments-gateway"),
    )
    .await;
    let keys = app.incident_keys().await;
    let (kept, dup) = (keys[0].clone(), keys[1].clone());
    assert_eq!(escalation(&pool, &dup).await, "pending");
    // Critical alerts opened both at Sev1; the kept one was judged smaller since.
    let r = app
        .post(
            &format!("/api/v1/incidents/{kept}/severity"),
            json!({"severity": "Sev3", "reason": "only retries are slow"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .call(
            Method::PUT,
            &format!("/api/v1/incidents/{dup}/roles/scribe"),
            &[],
            Some(&json!({"person": "ben"}).to_string()),
        )
        .await;
    assert!(r.status.is_success(), "{} {}", r.status, r.text);
    let version = app.incident_json(&dup).await["version"].as_i64().unwrap();

    // Refusals change nothing: no If-Match, a stale one, itself, an unknown incident.
    let body = json!({"into": kept});
    let r = merge(&app, &dup, None, body.clone()).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_REQUIRED, "{}", r.text);
    let stale = format!("\"v{}\"", version - 1);
    let r = merge(&app, &dup, Some(&stale), body.clone()).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    let r = merge(&app, &dup, Some("*"), json!({"into": dup})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("\"into\""), "{}", r.text);
    let r = merge(&app, &dup, Some("*"), json!({"into": "INC-999999"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    let r = merge(&app, &dup, Some("*"), json!({"into": kept, "extra": 1})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(alerts_of(&pool, &dup).await, 3);
    assert_eq!(app.incident_json(&dup).await["status"], "triggered");

    let now = format!("\"v{version}\"");
    let r = merge(&app, &dup, Some(&now), body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let merged = r.json();
    assert_eq!(merged["alerts_moved"], 3, "{merged}");
    assert_eq!(merged["roles_copied"], json!(["scribe"]), "{merged}");
    assert_eq!(merged["severity"], "Sev1", "{merged}");
    let location = format!("/api/v1/incidents/{kept}");
    assert_eq!(r.header("location"), Some(location.as_str()));

    // Every alert counted in the kept one; the duplicate resolved, its paging and timers
    // stopped; both timelines link them.
    assert_eq!(alerts_of(&pool, &kept).await, 5);
    assert_eq!(alerts_of(&pool, &dup).await, 0);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 5);
    let k = app.incident_json(&kept).await;
    assert_eq!(k["alert_count"], 5, "{k}");
    assert_eq!(k["severity"], "Sev1", "{k}");
    assert_eq!(k["version"], merged["into_version"], "{k}");
    assert!(
        k["roles"].to_string().contains("ben"),
        "the scribe came along: {k}"
    );
    let d = app.incident_json(&dup).await;
    assert_eq!(d["status"], "resolved", "{d}");
    assert_eq!(escalation(&pool, &dup).await, "stopped");
    let pending: i64 = of_incident(
        &pool,
        &dup,
        "select count(*) from sla_timers where incident_id = $1 and state = 'pending'",
    )
    .await;
    assert_eq!(pending, 0, "the duplicate's SLA timers stopped");
    let dup_timeline = app.timeline(&dup).await;
    assert_eq!(said(&dup_timeline, &format!("Merged into {kept}")), 1);
    assert_eq!(
        said(&dup_timeline, &format!("Resolved as a duplicate of {kept}")),
        1
    );
    let kept_timeline = app.timeline(&kept).await;
    assert_eq!(
        said(
            &kept_timeline,
            &format!("{dup} (LatencyHigh on l1) merged in as a duplicate: 3 alerts moved here")
        ),
        1,
        "{kept_timeline:?}"
    );
    let related = app.get(&format!("/api/v1/incidents/{kept}/related")).await;
    assert!(related.text.contains(&dup), "{}", related.text);

    // The next alert of the duplicate's group joins the kept incident.
    app.alertmanager(&am, &fire("LatencyHigh", &["l4"], "payments-gateway"))
        .await;
    assert_eq!(app.incident_keys().await.len(), 2, "no new incident");
    assert_eq!(alerts_of(&pool, &kept).await, 6);

    // A resolved incident merges no more.
    let r = merge(&app, &dup, Some("*"), json!({"into": kept})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
}

#[sqlx::test]
async fn alerts_arriving_for_both_while_they_merge_are_all_counted_in_the_kept_one(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alertmanager(&am, &fire("DiskFull", &["a0"], "payments-gateway"))
        .await;
    app.alertmanager(&am, &fire("QueueDeep", &["b0"], "payments-gateway"))
        .await;
    let keys = app.incident_keys().await;
    let (kept, dup) = (keys[0].clone(), keys[1].clone());
    let send = |group: &'static str, prefix: &'static str| {
        let (app, am) = (&app, &am);
        async move {
            for n in 1..=12 {
                let fp = format!("{prefix}{n}");
                let r = app
                    .alert("alertmanager", am, &fire(group, &[&fp], "payments-gateway"))
                    .await;
                assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
            }
        }
    };
    let merging = async {
        // Once a few of the duplicate's new alerts have landed, merge while the rest arrive.
        while alerts_of(&pool, &dup).await < 4 {
            tokio::task::yield_now().await;
        }
        merge(&app, &dup, Some("*"), json!({"into": kept})).await
    };
    let ((), (), r) = tokio::join!(send("DiskFull", "a"), send("QueueDeep", "b"), merging);
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let moved = r.json()["alerts_moved"].as_i64().unwrap();
    assert!(moved >= 4, "{moved} moved");
    assert_eq!(
        app.incident_keys().await.len(),
        2,
        "no alert opened a third incident"
    );
    assert_eq!(alerts_of(&pool, &kept).await, 26, "every alert of both");
    assert_eq!(alerts_of(&pool, &dup).await, 0);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 26);
    assert_eq!(app.incident_json(&kept).await["alert_count"], 26);
}

#[sqlx::test]
async fn alerts_move_out_into_a_new_incident_from_the_page_and_the_api(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alertmanager(
        &am,
        &fire("Mixed", &["m1", "m2", "m3", "m4"], "payments-gateway"),
    )
    .await;
    let key = app.incident_keys().await[0].clone();

    // The page: the link from the incident, the lines, and a line moved out.
    let page = app.get(&format!("/incidents/{key}")).await;
    assert!(page.text.contains(&format!("/incidents/{key}/merge")));
    let page = app.get(&format!("/incidents/{key}/merge")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.text.contains("Mixed on m2"), "{}", page.text);
    let version = app.incident_json(&key).await["version"]
        .as_i64()
        .unwrap()
        .to_string();
    let r = app
        .form(
            &format!("/incidents/{key}/split"),
            &[
                ("version", &version),
                ("line", "Mixed on m2"),
                ("title", ""),
                ("severity", "Sev1"),
            ],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 2);
    let new = keys[1].clone();
    let n = app.incident_json(&new).await;
    assert_eq!(n["title"], "Mixed on m2", "{n}");
    assert_eq!(n["severity"], "Sev1");
    assert_eq!(n["service"], "payments-gateway");
    assert_eq!(
        escalation(&pool, &new).await,
        "pending",
        "a new incident pages"
    );
    assert_eq!(alerts_of(&pool, &new).await, 1);
    assert_eq!(alerts_of(&pool, &key).await, 3);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 4);
    assert_eq!(
        said(
            &app.timeline(&key).await,
            &format!("1 alert moved out to a new incident, {new}")
        ),
        1
    );
    assert_eq!(
        said(&app.timeline(&new).await, &format!("Split off from {key}")),
        1
    );
    // The moved alert resolving resolves it in its new incident.
    let resolved = common::alertmanager_payload(
        "Mixed",
        &[("m2", "resolved")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alertmanager(&am, &resolved).await;
    let open: i64 = sqlx::query_scalar(
        "select count(*) from alerts where status <> 'resolved' and dedup_key like '%m2%'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(open, 0);

    // The API, by id: refusals name the field and move nothing.
    let ids: Vec<i64> = app
        .get(&format!("/api/v1/incidents/{key}/alerts"))
        .await
        .json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    // m1 resolves: moved out alone it would open an incident for nothing.
    let m1_resolved = common::alertmanager_payload(
        "Mixed",
        &[("m1", "resolved")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alertmanager(&am, &m1_resolved).await;
    let stale = "\"v1\"";
    let r = split(&app, &key, stale, json!({"alerts": [ids[0]]})).await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    for (body, field) in [
        (json!({}), "alerts"),
        (
            json!({"alerts": [ids[0]], "lines": ["Mixed on m1"]}),
            "lines",
        ),
        (json!({"alerts": ids.clone()}), "alerts"),
        (json!({"alerts": [ids[0], 999_999]}), "alerts"),
        (json!({"lines": ["No such line"]}), "lines"),
        (json!({"lines": ["Mixed on m1"]}), "lines"),
        (json!({"alerts": [ids[1]], "severity": "Sev9"}), "severity"),
        (
            json!({"alerts": [ids[1]], "title": "x".repeat(201)}),
            "title",
        ),
    ] {
        let r = split(&app, &key, "*", body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text
        );
        assert!(
            r.text.contains(&format!("\"{field}\"")),
            "{body}: {}",
            r.text
        );
    }
    assert_eq!(app.incident_keys().await.len(), 2, "nothing opened");
    assert_eq!(alerts_of(&pool, &key).await, 3);
    let r = split(
        &app,
        &key,
        "*",
        json!({"alerts": [ids[0], ids[1]], "title": "Two of them"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["alerts_moved"], 2);
    assert_eq!(r.json()["title"], "Two of them");
    assert_eq!(alerts_of(&pool, &key).await, 1);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 4);

    // Merging from the page: a bad incident comes back naming the field; a good one goes to
    // the kept incident.
    let third = app.incident_keys().await[2].clone();
    let version = app.incident_json(&third).await["version"]
        .as_i64()
        .unwrap()
        .to_string();
    let r = app
        .form(
            &format!("/incidents/{third}/merge"),
            &[("version", &version), ("into", "nonsense")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(r.text.contains("Into"), "{}", r.text);
    let r = app
        .form(
            &format!("/incidents/{third}/merge"),
            &[("version", &version), ("into", &key)],
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.text);
    assert_eq!(alerts_of(&pool, &key).await, 3);
    assert_eq!(app.incident_json(&third).await["status"], "resolved");
}

#[sqlx::test]
async fn a_split_off_alert_resending_after_its_old_incident_resolved_stays_in_its_new_one(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    let both = fire("Replication", &["x1", "x2"], "payments-gateway");
    app.alertmanager(&am, &both).await;
    let old = app.incident_keys().await[0].clone();
    let r = split(&app, &old, "*", json!({"lines": ["Replication on x1"]})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let new = r.json()["new"].as_str().unwrap().to_owned();
    let r = app
        .post(&format!("/api/v1/incidents/{old}/resolve"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Alertmanager's repeat of the still-firing x1: no empty incident, it stays in the new one.
    app.alertmanager(&am, &fire("Replication", &["x1"], "payments-gateway"))
        .await;
    assert_eq!(
        app.incident_keys().await.len(),
        2,
        "no incident for a resend"
    );
    assert_eq!(alerts_of(&pool, &new).await, 1);
    let deliveries: i32 = of_incident(
        &pool,
        &new,
        "select deliveries from alerts where incident_id = $1",
    )
    .await;
    assert_eq!(deliveries, 2);
    // A new alert of the group opens an incident of its own, the old one being resolved.
    app.alertmanager(&am, &fire("Replication", &["x3"], "payments-gateway"))
        .await;
    let keys = app.incident_keys().await;
    assert_eq!(keys.len(), 3);
    assert_eq!(alerts_of(&pool, &keys[2]).await, 1);
    assert_eq!(app.stored_alerts_agreeing_with_lines().await, 3);
}

#[sqlx::test]
async fn a_restricted_incident_merges_only_into_one_kept_to_the_same_people(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    app.person("Ben Okafor", "ben").await;
    app.person("Ana Ribeiro", "ana").await;
    let kept_to = |who: &str| json!({"restricted": true, "people": [who]});
    let secret = |title: &str, who: &str| json!({"title": title, "severity": "Sev2", "access": kept_to(who)});
    let a = app.incident(secret("Token used from outside", "ben")).await;
    let open = app
        .incident(json!({"title": "Vault slow", "severity": "Sev3"}))
        .await;
    let anas = app.incident(secret("Odd vault reads", "ana")).await;
    let bens = app.incident(secret("Vault audit gap", "ben")).await;
    for into in [&open, &anas] {
        let r = merge(&app, &a, Some("*"), json!({"into": into})).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{into}: {}",
            r.text
        );
        assert!(r.text.contains("\"into\""), "{}", r.text);
    }
    assert_eq!(app.incident_json(&a).await["status"], "triggered");
    let r = merge(&app, &a, Some("*"), json!({"into": bens})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // Kept to the same people, each timeline names the other.
    assert_eq!(
        said(&app.timeline(&a).await, &format!("Merged into {bens}")),
        1
    );
    assert_eq!(said(&app.timeline(&bens).await, &format!("{a} (")), 1);
    // An open incident merges into a restricted one without naming it where all may read.
    let r = merge(&app, &open, Some("*"), json!({"into": anas})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let open_timeline = app.timeline(&open).await;
    assert_eq!(
        said(
            &open_timeline,
            "Resolved as a duplicate of a restricted incident"
        ),
        1
    );
    assert_eq!(said(&open_timeline, &anas), 0, "{open_timeline:?}");
}

#[sqlx::test]
async fn firing_alerts_merged_into_a_mitigated_incident_take_back_a_mitigation_its_alerts_made(
    pool: PgPool,
) {
    let app = TestApp::new(pool.clone()).await;
    let am = paged_service(&app).await;
    app.alertmanager(&am, &fire("ApiErrors", &["e1"], "payments-gateway"))
        .await;
    let by_alerts = app.incident_keys().await[0].clone();
    let resolved = common::alertmanager_payload(
        "ApiErrors",
        &[("e1", "resolved")],
        json!({"service": "payments-gateway", "severity": "critical"}),
    );
    app.alertmanager(&am, &resolved).await;
    assert_eq!(app.incident_json(&by_alerts).await["status"], "mitigated");
    let by_hand = app
        .incident(json!({"title": "Checkout slow", "severity": "Sev2"}))
        .await;
    let r = app
        .post(&format!("/api/v1/incidents/{by_hand}/mitigate"), json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for (into, group, fps) in [
        (&by_alerts, "DbErrors", ["d1", "d2"]),
        (&by_hand, "CacheErrors", ["c1", "c2"]),
    ] {
        app.alertmanager(&am, &fire(group, &fps, "payments-gateway"))
            .await;
        let dup = app.incident_keys().await.pop().unwrap();
        let r = merge(&app, &dup, Some("*"), json!({"into": into})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
    // The alerts' own mitigation is taken back; a responder's stands, saying what came.
    assert_eq!(
        app.incident_json(&by_alerts).await["status"],
        "acknowledged"
    );
    assert_eq!(app.incident_json(&by_hand).await["status"], "mitigated");
    assert_eq!(
        said(
            &app.timeline(&by_hand).await,
            "2 firing alerts came with INC-4 merged in while it is mitigated"
        ),
        1
    );
}
