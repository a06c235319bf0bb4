//! `quell import pagerduty` against a PagerDuty fixture server: a stand-in for PagerDuty's
//! cloud API (which cannot run here) that answers in the shapes of PagerDuty's published REST
//! API reference and its OpenAPI examples — `limit`/`offset`/`more` pagination (pages of two,
//! so every list takes several), a 429 with `Retry-After` on the first request, `Token token=`
//! authentication — and renders each schedule's final schedule by reading its layers,
//! restrictions and overrides as PagerDuty documents them, minute by minute. The import's plan,
//! its run through the command line, a second run that changes nothing, a change in PagerDuty
//! that updates what was made, and the imported schedules' on-call spans for the next four weeks
//! against the fixture's rendering.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Datelike, Duration, FixedOffset, TimeZone, Timelike, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{TestApp, at, db_now, on_call_spans, printed};

const TOKEN: &str = "u+fixture-token-abcdef";
const KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90";

/// What the fixture holds, in PagerDuty's shapes; tests change it between imports.
struct Data {
    users: Vec<Value>,
    teams: Vec<Value>,
    /// By team id: `{"user", "role"}`
    members: HashMap<String, Vec<Value>>,
    schedules: Vec<Value>,
    /// By schedule id
    overrides: HashMap<String, Vec<Value>>,
    policies: Vec<Value>,
    services: Vec<Value>,
    integrations: Vec<Value>,
}

#[derive(Clone)]
struct Fixture {
    data: Arc<Mutex<Data>>,
    /// Answer the next request 429 (once)
    throttle: Arc<AtomicBool>,
}

fn reference(kind: &str, id: &str, summary: &str) -> Value {
    let plural = match kind {
        "user" => "users",
        "schedule" => "schedules",
        "escalation_policy" => "escalation_policies",
        "team" => "teams",
        _ => "services",
    };
    json!({
        "id": id, "type": format!("{kind}_reference"), "summary": summary,
        "self": format!("https://api.pagerduty.com/{plural}/{id}"),
        "html_url": format!("https://subdomain.pagerduty.com/{plural}/{id}"),
    })
}

fn user(id: &str, name: &str, email: &str, zone: &str) -> Value {
    json!({
        "id": id, "type": "user", "summary": name, "name": name, "email": email,
        "time_zone": zone, "color": "green", "role": "user",
        "self": format!("https://api.pagerduty.com/users/{id}"),
        "html_url": format!("https://subdomain.pagerduty.com/users/{id}"),
        "avatar_url": "https://pd-static-assets.pagerduty.com/users/blank-avatar.png",
        "description": "", "invitation_sent": false, "job_title": "Engineer",
        "contact_methods": [{"id": format!("C{id}"), "type": "email_contact_method_reference",
                              "summary": "Default"}],
        "notification_rules": [], "teams": []
    })
}

fn layer(
    id: &str,
    name: &str,
    virtual_start: &str,
    turn_seconds: i64,
    users: &[(&str, &str)],
    restrictions: Value,
) -> Value {
    json!({
        "id": id, "name": name, "start": virtual_start, "end": null,
        "rotation_virtual_start": virtual_start, "rotation_turn_length_seconds": turn_seconds,
        "users": users.iter().map(|(id, n)| json!({"user": reference("user", id, n)})).collect::<Vec<_>>(),
        "restrictions": restrictions,
        "rendered_schedule_entries": [], "rendered_coverage_percentage": null
    })
}

fn schedule(id: &str, name: &str, zone: &str, layers: Vec<Value>) -> Value {
    json!({
        "id": id, "type": "schedule", "summary": name, "name": name, "time_zone": zone,
        "description": "", "self": format!("https://api.pagerduty.com/schedules/{id}"),
        "html_url": format!("https://subdomain.pagerduty.com/schedules/{id}"),
        "escalation_policies": [], "users": [], "teams": [],
        "schedule_layers": layers
    })
}

/// The data set: five users (one already in Quell by email), three schedules (one whose turns
/// Quell cannot keep), two policies, two services, an Events API v2 integration and an email
/// one.
fn data(now: DateTime<Utc>) -> Data {
    let users = vec![
        user(
            "PXPGF42",
            "Earline Greenholt",
            "earline@example.com",
            "America/Lima",
        ),
        user(
            "PAM4FGS",
            "Kyler Kuhn",
            "kyler@example.com",
            "Asia/Hong_Kong",
        ),
        user(
            "PANA001",
            "Ana Ribeiro",
            "ana.ribeiro@example.com",
            "Europe/Lisbon",
        ),
        user(
            "PDEV002",
            "Dev Okafor",
            "dev.okafor@example.com",
            "Asia/Kolkata",
        ),
        user("PKEPT03", "Kept Person", "kept@example.com", "UTC"),
    ];
    let p = |id: &'static str, n: &'static str| (id, n);
    // PagerDuty lists a schedule's layers highest first.
    let payments = schedule(
        "PI7DH85",
        "Payments primary",
        "Asia/Kolkata",
        vec![
            // Working hours, Monday 09:00 to Friday 17:30, a week each.
            layer(
                "PL2",
                "Layer 2",
                "2026-11-02T09:00:00+05:30",
                604_800,
                &[p("PANA001", "Ana Ribeiro"), p("PDEV002", "Dev Okafor")],
                json!([{"type": "weekly_restriction", "start_time_of_day": "09:00:00",
                        "duration_seconds": 4 * 86_400 + 8 * 3600 + 1800, "start_day_of_week": 1}]),
            ),
            // Round the clock, a day each.
            layer(
                "PL1",
                "Layer 1",
                "2026-11-01T20:00:00+05:30",
                86_400,
                &[
                    p("PXPGF42", "Earline Greenholt"),
                    p("PAM4FGS", "Kyler Kuhn"),
                    p("PKEPT03", "Kept Person"),
                ],
                json!([]),
            ),
        ],
    );
    let database = schedule(
        "PDB0001",
        "Database nights",
        "UTC",
        vec![layer(
            "PL3",
            "Nights",
            "2026-10-01T08:00:00Z",
            43_200,
            &[p("PAM4FGS", "Kyler Kuhn"), p("PDEV002", "Dev Okafor")],
            // PagerDuty's documented example hours, and an overnight window.
            json!([{"type": "daily_restriction", "start_time_of_day": "20:00:00", "duration_seconds": 43_200}]),
        )],
    );
    let odd = schedule(
        "PODD001",
        "Odd turns",
        "UTC",
        vec![layer(
            "PL4",
            "Layer 1",
            "2026-10-01T08:00:00Z",
            3605,
            &[p("PAM4FGS", "Kyler Kuhn")],
            json!([]),
        )],
    );
    let at = |d: Duration| (now + d).duration_trunc_minutes().to_rfc3339();
    // Cover that ends in ten days: Quell's layers do not end, so its rendering differs.
    let mut cover = layer(
        "PL5",
        "Cover",
        "2026-11-01T00:00:00Z",
        86_400,
        &[
            p("PXPGF42", "Earline Greenholt"),
            p("PAM4FGS", "Kyler Kuhn"),
        ],
        json!([]),
    );
    cover["end"] = json!(at(Duration::days(10)));
    let holiday = schedule("PHOL001", "Holiday cover", "UTC", vec![cover]);
    let overrides = HashMap::from([(
        "PI7DH85".to_owned(),
        vec![
            json!({"id": "PQ47DCP", "start": at(Duration::days(3)), "end": at(Duration::days(3) + Duration::hours(8)),
                   "user": reference("user", "PDEV002", "Dev Okafor")}),
            json!({"id": "PQOLD01", "start": at(-Duration::days(3)), "end": at(-Duration::days(2)),
                   "user": reference("user", "PXPGF42", "Earline Greenholt")}),
        ],
    )]);
    let rule = |delay: i64, targets: Vec<Value>| json!({"id": "R", "escalation_delay_in_minutes": delay, "targets": targets});
    let target = |kind: &str, id: &str, n: &str| {
        let mut r = reference(kind, id, n);
        r["type"] = json!(format!("{kind}_reference"));
        r
    };
    let policies = vec![
        json!({"id": "PANZZEQ", "type": "escalation_policy", "name": "Payments escalation",
               "summary": "Payments escalation", "on_call_handoff_notifications": "if_has_services",
               "escalation_rules": [
                   rule(15, vec![target("schedule", "PI7DH85", "Payments primary")]),
                   rule(30, vec![target("user", "PXPGF42", "Earline Greenholt"),
                                 target("schedule", "PDB0001", "Database nights")])],
               "services": [], "num_loops": 2,
               "teams": [reference("team", "PQ9K7I8", "Payments")]}),
        json!({"id": "PLEGACY", "type": "escalation_policy", "name": "Legacy odd",
               "summary": "Legacy odd", "escalation_rules": [
                   rule(10, vec![target("schedule", "PODD001", "Odd turns")])],
               "services": [], "num_loops": 0, "teams": []}),
    ];
    let services = vec![
        json!({"id": "PIJ90N7", "type": "service", "summary": "Payments Gateway",
               "name": "Payments Gateway", "description": "Card payments",
               "status": "active", "auto_resolve_timeout": 14400, "acknowledgement_timeout": 600,
               "alert_creation": "create_alerts_and_incidents",
               "escalation_policy": reference("escalation_policy", "PANZZEQ", "Payments escalation"),
               "integrations": [
                   {"id": "PINT001", "type": "events_api_v2_inbound_integration_reference", "summary": "Datadog"},
                   {"id": "PE1U9CH", "type": "generic_email_inbound_integration_reference", "summary": "Email"}],
               "teams": []}),
        json!({"id": "PDBSVC1", "type": "service", "summary": "Database", "name": "Database",
               "description": null, "status": "active",
               "escalation_policy": reference("escalation_policy", "PLEGACY", "Legacy odd"),
               "integrations": [], "teams": []}),
    ];
    let integrations = vec![json!({
        "id": "PINT001", "type": "events_api_v2_inbound_integration", "summary": "Datadog",
        "name": "Datadog", "integration_key": KEY,
        "service": reference("service", "PIJ90N7", "Payments Gateway"),
        "created_at": "2025-10-14T13:33:02-07:00"
    })];
    let team = json!({"id": "PQ9K7I8", "type": "team", "summary": "Payments", "name": "Payments",
                      "description": "Card payments on call",
                      "self": "https://api.pagerduty.com/teams/PQ9K7I8",
                      "html_url": "https://subdomain.pagerduty.com/teams/PQ9K7I8",
                      "default_role": "manager", "parent": null});
    let member =
        |id: &str, n: &str, role: &str| json!({"user": reference("user", id, n), "role": role});
    let members = HashMap::from([(
        "PQ9K7I8".to_owned(),
        vec![
            member("PANA001", "Ana Ribeiro", "manager"),
            member("PDEV002", "Dev Okafor", "responder"),
            member("PXPGF42", "Earline Greenholt", "observer"),
        ],
    )]);
    let mut payments = payments;
    payments["teams"] = json!([reference("team", "PQ9K7I8", "Payments")]);
    let mut services = services;
    services[0]["teams"] = json!([reference("team", "PQ9K7I8", "Payments")]);
    Data {
        users,
        teams: vec![team],
        members,
        schedules: vec![payments, database, odd, holiday],
        overrides,
        policies,
        services,
        integrations,
    }
}

pub(crate) trait Minutes {
    fn duration_trunc_minutes(self) -> Self;
}

impl Minutes for DateTime<Utc> {
    fn duration_trunc_minutes(self) -> Self {
        self.with_second(0).unwrap().with_nanosecond(0).unwrap()
    }
}

pub(crate) fn time(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .to_utc()
}

fn offset_of(zone: &str, at: DateTime<Utc>) -> FixedOffset {
    use chrono::Offset;
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    tz.offset_from_utc_datetime(&at.naive_utc()).fix()
}

/// Whether a layer's restrictions let it be on call at `at`, read as PagerDuty documents them:
/// a daily restriction from a time of day for a number of seconds, a weekly one from a day and
/// time of the week, both in the schedule's zone.
fn allowed(restrictions: &[Value], local: chrono::NaiveDateTime) -> bool {
    if restrictions.is_empty() {
        return true;
    }
    let of_day = i64::from(local.num_seconds_from_midnight());
    let of_week = i64::from(local.weekday().num_days_from_monday()) * 86_400 + of_day;
    restrictions.iter().any(|r| {
        let start =
            chrono::NaiveTime::parse_from_str(r["start_time_of_day"].as_str().unwrap(), "%H:%M:%S")
                .unwrap()
                .num_seconds_from_midnight() as i64;
        let length = r["duration_seconds"].as_i64().unwrap();
        match r["type"].as_str().unwrap() {
            "daily_restriction" => (of_day - start).rem_euclid(86_400) < length,
            _ => {
                let day = r["start_day_of_week"].as_i64().unwrap() - 1;
                (of_week - day * 86_400 - start).rem_euclid(604_800) < length
            }
        }
    })
}

/// Who PagerDuty has on call at `at` (a user id): the latest override, else the highest layer
/// whose restrictions allow it, its turn counted in seconds from its virtual start.
fn on_call(s: &Value, overrides: &[Value], at: DateTime<Utc>) -> Option<String> {
    if let Some(o) = overrides
        .iter()
        .rev()
        .find(|o| time(&o["start"]) <= at && at < time(&o["end"]))
    {
        return Some(o["user"]["id"].as_str().unwrap().to_owned());
    }
    let zone = s["time_zone"].as_str().unwrap();
    let local = at.with_timezone(&offset_of(zone, at)).naive_local();
    for l in s["schedule_layers"].as_array().unwrap() {
        let start = time(&l["start"]);
        let users = l["users"].as_array().unwrap();
        let restrictions = l["restrictions"].as_array().unwrap();
        let ended = l["end"].as_str().is_some_and(|_| at >= time(&l["end"]));
        if at < start || ended || !allowed(restrictions, local) {
            continue;
        }
        let turn = l["rotation_turn_length_seconds"].as_i64().unwrap();
        let since = (at - time(&l["rotation_virtual_start"])).num_seconds();
        let n = since.div_euclid(turn).rem_euclid(users.len() as i64) as usize;
        return Some(users[n]["user"]["id"].as_str().unwrap().to_owned());
    }
    None
}

/// The final schedule between two instants, minute by minute, as rendered entries.
fn final_schedule(
    s: &Value,
    overrides: &[Value],
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<Value> {
    let mut entries: Vec<(DateTime<Utc>, DateTime<Utc>, Option<String>)> = Vec::new();
    let mut at = since.duration_trunc_minutes();
    while at < until {
        let next = at + Duration::minutes(1);
        let who = on_call(s, overrides, at);
        let from = at.max(since);
        match entries.last_mut() {
            Some(last) if last.2 == who => last.1 = next.min(until),
            _ => entries.push((from, next.min(until), who)),
        }
        at = next;
    }
    entries
        .into_iter()
        .filter_map(|(from, to, who)| {
            let who = who?;
            Some(json!({"start": from.to_rfc3339(), "end": to.to_rfc3339(),
                        "user": reference("user", &who, "")}))
        })
        .collect()
}

fn page(items: &[Value], key: &str, q: &HashMap<String, String>) -> Value {
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(25);
    let offset: usize = q.get("offset").and_then(|l| l.parse().ok()).unwrap_or(0);
    // Pages of at most two, so that every list takes several requests.
    let size = limit.min(2);
    let chunk: Vec<Value> = items.iter().skip(offset).take(size).cloned().collect();
    json!({ key: chunk, "limit": size, "offset": offset,
            "more": offset + size < items.len(), "total": null })
}

async fn answer(
    State(f): State<Fixture>,
    Path(path): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some(&format!("Token token={TOKEN}"))
    {
        let body = json!({"error": {"message": "Unauthorized", "code": 2006}});
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    if f.throttle.swap(false, Ordering::SeqCst) {
        let body = json!({"error": {"message": "Rate Limit Exceeded", "code": 2020}});
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            Json(body),
        )
            .into_response();
    }
    let d = f.data.lock().unwrap();
    let parts: Vec<&str> = path.split('/').collect();
    let body = match parts[..] {
        ["users"] => page(&d.users, "users", &q),
        ["teams"] => page(&d.teams, "teams", &q),
        ["teams", id, "members"] => {
            let members = d.members.get(id).cloned().unwrap_or_default();
            page(&members, "members", &q)
        }
        ["schedules"] => {
            let listed: Vec<Value> = d
                .schedules
                .iter()
                .map(|s| {
                    let mut s = s.clone();
                    s.as_object_mut().unwrap().remove("schedule_layers");
                    s
                })
                .collect();
            page(&listed, "schedules", &q)
        }
        ["schedules", id] => {
            let Some(s) = d.schedules.iter().find(|s| s["id"] == id) else {
                return StatusCode::NOT_FOUND.into_response();
            };
            let mut s = s.clone();
            let overrides = d.overrides.get(id).cloned().unwrap_or_default();
            let window = q
                .get("since")
                .zip(q.get("until"))
                .map(|(a, b)| (time(&json!(a)), time(&json!(b))));
            let entries = match window {
                Some((since, until)) => final_schedule(&s, &overrides, since, until),
                None => vec![],
            };
            s["final_schedule"] = json!({"name": "Final Schedule", "rendered_schedule_entries": entries,
                                         "rendered_coverage_percentage": null});
            s["overrides_subschedule"] = json!({"name": "Overrides", "rendered_schedule_entries": [],
                                                "rendered_coverage_percentage": 0});
            json!({ "schedule": s })
        }
        ["schedules", id, "overrides"] => {
            let (since, until) = (time(&json!(q["since"])), time(&json!(q["until"])));
            let overrides: Vec<Value> = d
                .overrides
                .get(id)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|o| time(&o["end"]) > since && time(&o["start"]) < until)
                .collect();
            json!({ "overrides": overrides })
        }
        ["escalation_policies"] => page(&d.policies, "escalation_policies", &q),
        ["services"] => page(&d.services, "services", &q),
        ["services", _, "integrations", id] => {
            match d.integrations.iter().find(|i| i["id"] == id) {
                Some(i) => json!({ "integration": i }),
                None => return StatusCode::NOT_FOUND.into_response(),
            }
        }
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    Json(body).into_response()
}

/// Starts the fixture server; its address and its data.
async fn fixture(now: DateTime<Utc>) -> (String, Fixture) {
    let f = Fixture {
        data: Arc::new(Mutex::new(data(now))),
        throttle: Arc::new(AtomicBool::new(true)),
    };
    let app = Router::new()
        .route("/{*path}", get(answer))
        .with_state(f.clone());
    (serve(app).await, f)
}

/// Serves a vendor's fixture on a port of its own; its address.
pub(crate) async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// An instant `hours` before now (after, when negative), as RFC 3339.
fn ago_iso(hours: i64) -> String {
    (Utc::now() - Duration::hours(hours))
        .duration_trunc_minutes()
        .to_rfc3339()
}

/// Runs `quell import pagerduty` as a person would, against this test's database.
async fn command(pool: &PgPool, base: &str, apply: bool) -> String {
    let token = ("PAGERDUTY_API_TOKEN", TOKEN);
    run_import(pool, ("pagerduty", base), apply, token).await
}

/// Runs `quell import <vendor> --api-url <base>` as a person would, against this test's
/// database, with the key in the environment variable `env`.
pub(crate) async fn run_import(
    pool: &PgPool,
    (vendor, base): (&str, &str),
    apply: bool,
    env: (&str, &str),
) -> String {
    let database: String = sqlx::query_scalar("select current_database()")
        .fetch_one(pool)
        .await
        .unwrap();
    let mut url = url::Url::parse(&std::env::var("DATABASE_URL").unwrap()).unwrap();
    url.set_path(&database);
    let mut args = vec!["import", vendor, "--api-url", base];
    if apply {
        args.push("--apply");
    }
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_quell"))
        .args(&args)
        .env("DATABASE_URL", url.as_str())
        .env(env.0, env.1)
        .output()
        .await
        .unwrap();
    printed(out)
}

/// The plan's line that does `verb` to the object called exactly `name` in Quell.
pub(crate) fn line<'a>(plan: &'a str, verb: &str, name: &str) -> &'a str {
    plan.lines()
        .find(|l| {
            let called = l.split(" ← ").next().unwrap_or_default();
            l.starts_with(verb) && called.chars().skip(28).collect::<String>().trim() == name
        })
        .unwrap_or_else(|| panic!("no {verb} {name} in:\n{plan}"))
}

pub(crate) async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(&format!("select count(*) from {table}"))
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Quell's schedule `name`, as its API shows it.
pub(crate) async fn schedule_named(app: &TestApp, name: &str) -> Value {
    let list = app.get("/api/v1/schedules").await.json();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no schedule {name}: {list}"))
        .clone()
}

/// Quell's spans of schedule `name` over four weeks from `from`, as (handle, from, to).
pub(crate) async fn quell_spans(
    app: &TestApp,
    name: &str,
    from: DateTime<Utc>,
) -> Vec<(String, DateTime<Utc>, DateTime<Utc>)> {
    let id = schedule_named(app, name).await["id"].as_i64().unwrap();
    let to = from + Duration::days(28);
    on_call_spans(app, id, from, to)
        .await
        .into_iter()
        .map(|(person, from, to)| (person, at(&from), at(&to)))
        .collect()
}

/// PagerDuty's spans of the same schedule over the same weeks (its final schedule as the
/// fixture renders it), with people by the handles the import gave them.
fn pagerduty_spans(
    f: &Fixture,
    id: &str,
    from: DateTime<Utc>,
    handles: &HashMap<&str, &str>,
) -> Vec<(String, DateTime<Utc>, DateTime<Utc>)> {
    let d = f.data.lock().unwrap();
    let s = d.schedules.iter().find(|s| s["id"] == id).unwrap();
    let overrides = d.overrides.get(id).cloned().unwrap_or_default();
    let mut out: Vec<(String, DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    for e in final_schedule(s, &overrides, from, from + Duration::days(28)) {
        let who = handles[e["user"]["id"].as_str().unwrap()].to_owned();
        out.push((who, time(&e["start"]), time(&e["end"])));
    }
    out
}

#[sqlx::test]
async fn a_pagerduty_account_is_planned_imported_and_imported_again_without_change(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    // Someone already in Quell is linked by email, not made twice.
    app.person("Kept Person", "kept").await;
    let now = db_now(&pool).await;
    let now = now.with_nanosecond(0).unwrap();
    let (base, f) = fixture(now).await;
    let people = count(&pool, "people").await;

    // The plan names every object and what it becomes; nothing changes.
    let plan = command(&pool, &base, false).await;
    assert!(
        plan.starts_with("PagerDuty import plan (dry run: nothing changed)"),
        "{plan}"
    );
    assert!(
        plan.contains("Nothing was changed. Run again with --apply"),
        "{plan}"
    );
    for (verb, name) in [
        ("create", "earline"),
        ("create", "kyler"),
        ("create", "ana.ribeiro"),
        ("create", "dev.okafor"),
        ("link", "kept"),
        ("create", "Payments"),
        ("create", "Payments primary"),
        ("create", "Database nights"),
        ("skip", "Odd turns"),
        ("skip", "Holiday cover"),
        ("create", "Payments escalation"),
        ("skip", "Legacy odd"),
        ("create", "payments-gateway"),
        ("create", "database"),
        ("create", "payments-gateway: Datadog"),
    ] {
        line(&plan, verb, name);
    }
    assert!(
        plan.contains("3605 seconds; Quell's shifts are whole hours"),
        "{plan}"
    );
    assert!(plan.contains("matches PagerDuty's own rendering"), "{plan}");
    // A schedule whose rendering differs is named with where, and not imported.
    assert!(plan.contains("layer \"Cover\" ends at"), "{plan}");
    assert!(
        plan.contains("not imported unless differences are accepted"),
        "{plan}"
    );
    assert!(plan.contains("1 integration(s) of other kinds"), "{plan}");
    assert!(plan.contains("rate limit turned 1 requests away"), "{plan}");
    assert_eq!(count(&pool, "people").await, people);
    assert_eq!(count(&pool, "schedules").await, 0);
    assert_eq!(count(&pool, "imported_objects").await, 0);

    // The run does what the plan said.
    let done = command(&pool, &base, true).await;
    assert!(
        done.starts_with(
            "PagerDuty import done: 11 to create, 0 to update, 0 unchanged, 1 linked, 3 skipped"
        ),
        "{done}"
    );
    assert_eq!(count(&pool, "people").await, people + 4);
    assert_eq!(count(&pool, "schedules").await, 2);

    // Who is on call for the next four weeks is who PagerDuty says.
    let handles: HashMap<&str, &str> = HashMap::from([
        ("PXPGF42", "earline"),
        ("PAM4FGS", "kyler"),
        ("PANA001", "ana.ribeiro"),
        ("PDEV002", "dev.okafor"),
        ("PKEPT03", "kept"),
    ]);
    for (id, name) in [
        ("PI7DH85", "Payments primary"),
        ("PDB0001", "Database nights"),
    ] {
        let ours = quell_spans(&app, name, now).await;
        let theirs = pagerduty_spans(&f, id, now, &handles);
        assert!(ours.len() > 20, "{name}: {ours:?}");
        assert_eq!(ours, theirs, "{name}");
    }
    // The team, its members (PagerDuty's manager leads), and what it owns.
    let team = app.get("/api/v1/teams/payments").await;
    assert_eq!(team.status, StatusCode::OK, "{}", team.text);
    let roles: Vec<(String, String)> = team.json()["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["handle"].as_str().unwrap().to_owned(),
                m["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (handle, role) in [
        ("ana.ribeiro", "lead"),
        ("dev.okafor", "member"),
        ("earline", "member"),
    ] {
        assert!(
            roles.contains(&(handle.to_owned(), role.to_owned())),
            "{roles:?}"
        );
    }
    assert_eq!(
        schedule_named(&app, "Payments primary").await["team"],
        "payments"
    );
    assert_eq!(
        schedule_named(&app, "Database nights").await["team"],
        Value::Null
    );

    // The override ahead is Dev's; the one past is not imported.
    let payments = schedule_named(&app, "Payments primary").await;
    let three = (now + Duration::days(3)).duration_trunc_minutes();
    assert_eq!(
        payments["overrides"].as_array().unwrap().len(),
        1,
        "{payments}"
    );
    assert_eq!(payments["overrides"][0]["with"], "dev.okafor");
    assert_eq!(time(&payments["overrides"][0]["from"]), three);

    // The policy pages the imported schedules; the service is paged through it; an Events v2
    // sender keeps its key.
    let policies = app.get("/api/v1/escalation-policies").await.json();
    let text = policies.to_string();
    assert!(
        text.contains("Payments escalation") && text.contains("Database nights"),
        "{text}"
    );
    let r = app
        .hook(
            "/v2/enqueue",
            &[],
            &json!({"routing_key": KEY, "event_action": "trigger",
                    "payload": {"summary": "Card declines over 5%", "source": "datadog", "severity": "critical"}})
            .to_string(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let key = app.incident_keys().await.pop().unwrap();
    assert_eq!(app.incident_json(&key).await["service"], "payments-gateway");

    // Again: nothing changes.
    let again = command(&pool, &base, true).await;
    assert!(
        again.starts_with(
            "PagerDuty import done: 0 to create, 0 to update, 12 unchanged, 0 linked, 3 skipped"
        ),
        "{again}"
    );
    assert_eq!(count(&pool, "people").await, people + 4);
    assert_eq!(count(&pool, "schedules").await, 2);
    assert_eq!(count(&pool, "integrations").await, 1);

    // Someone changes the payments rota in Quell: the import leaves it alone from then on.
    let mine = schedule_named(&app, "Payments primary").await;
    let edited = json!({"name": "Payments primary", "layers": mine["layers"],
                        "overrides": [{"from": ago_iso(-20), "to": ago_iso(-21), "with": "kyler"}]});
    let path = format!("/api/v1/schedules/{}", mine["id"]);
    let etag = format!("\"v{}\"", mine["version"]);
    let r = app
        .call_as(
            &app.admin,
            axum::http::Method::PUT,
            &path,
            &[("if-match", &etag)],
            Some(&edited.to_string()),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let left = command(&pool, &base, true).await;
    let kept = line(&left, "skip", "Payments primary");
    assert!(
        left.contains("changed in Quell since the import made it"),
        "{left}"
    );
    assert!(kept.contains("Payments primary"));
    let after = app.get(&path).await.json();
    assert_eq!(after["overrides"][0]["with"], "kyler", "the edit stays");

    // Dev leaves the nights rota in PagerDuty, and the database service is renamed: the next
    // run updates those alone.
    {
        let mut d = f.data.lock().unwrap();
        let nights = d
            .schedules
            .iter_mut()
            .find(|s| s["id"] == "PDB0001")
            .unwrap();
        nights["schedule_layers"][0]["users"] = json!([{"user": reference("user", "PAM4FGS", "Kyler Kuhn")},
                                                       {"user": reference("user", "PXPGF42", "Earline Greenholt")}]);
    }
    {
        let mut d = f.data.lock().unwrap();
        let db = d
            .services
            .iter_mut()
            .find(|s| s["id"] == "PDBSVC1")
            .unwrap();
        db["name"] = json!("Database Primary");
    }
    let changed = command(&pool, &base, true).await;
    assert!(
        changed.starts_with("PagerDuty import done: 0 to create, 2 to update, 9 unchanged"),
        "{changed}"
    );
    line(&changed, "update", "Database nights");
    line(&changed, "update", "database-primary");
    let services = app.get("/api/v1/services").await.text;
    assert!(
        services.contains("\"database-primary\"") && !services.contains("\"database\""),
        "{services}"
    );
    let ours = quell_spans(&app, "Database nights", now).await;
    assert_eq!(ours, pagerduty_spans(&f, "PDB0001", now, &handles));
    assert!(!ours.iter().any(|(p, _, _)| p == "dev.okafor"));
}

#[sqlx::test]
async fn a_wrong_token_is_told_and_nothing_changes(pool: PgPool) {
    let now = db_now(&pool).await;
    let (base, _f) = fixture(now).await;
    let actor = quell::audit::Actor::system("test");
    let apply = quell::imports::actions::Options {
        apply: true,
        ..Default::default()
    };
    let err = quell::imports::actions::pagerduty(&pool, &actor, (&base, "wrong"), apply)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
    assert!(err.to_string().contains("wrong or revoked"), "{err}");
    assert_eq!(count(&pool, "imported_objects").await, 0);
    assert_eq!(count(&pool, "people").await, 0);
}

#[sqlx::test]
async fn an_admin_sees_the_plan_and_imports_from_the_page(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    let now = db_now(&pool).await;
    let (base, _f) = fixture(now).await;

    let page = app.get("/admin/import").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text.contains("https://api.pagerduty.com"),
        "{}",
        page.text
    );
    let fields = |apply: &'static str| {
        [
            ("vendor", "pagerduty"),
            ("token", TOKEN),
            ("api_url", base.as_str()),
            ("apply", apply),
        ]
    };
    let plan = app.form("/admin/import", &fields("")).await;
    assert_eq!(plan.status, StatusCode::OK, "{}", plan.text);
    assert!(
        plan.text.contains("The plan (nothing was changed)"),
        "{}",
        plan.text
    );
    assert!(
        plan.text
            .contains("12 to create, 0 to update, 0 unchanged, 0 linked, 3 skipped"),
        "{}",
        plan.text
    );
    assert!(plan.text.contains("Payments primary") && plan.text.contains("matches PagerDuty"));
    assert!(!plan.text.contains(TOKEN), "the key is never shown back");
    assert_eq!(count(&pool, "schedules").await, 0);

    // Accepting the differences takes the holiday cover too.
    let mut accepting = fields("on").to_vec();
    accepting.push(("accept_differences", "on"));
    let done = app.form("/admin/import", &accepting).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("<h2>Imported</h2>"), "{}", done.text);
    assert!(done.text.contains("13 to create"), "{}", done.text);
    assert_eq!(count(&pool, "schedules").await, 3);
    // Who did it is in the audit log.
    let audited: i64 = sqlx::query_scalar(
        "select count(*) from audit_log where action = 'schedule.create' and actor_id is not null",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(audited, 3);

    // A wrong key, an address inside the network: said, nothing changed.
    let wrong = app
        .form(
            "/admin/import",
            &[
                ("vendor", "pagerduty"),
                ("token", "nope"),
                ("api_url", base.as_str()),
                ("apply", "on"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        wrong.text.contains("401") && wrong.text.contains("wrong or revoked"),
        "{}",
        wrong.text
    );
    let inside = app
        .form(
            "/admin/import",
            &[
                ("vendor", "pagerduty"),
                ("token", TOKEN),
                ("api_url", "http://10.1.2.3/"),
                ("apply", "on"),
            ],
        )
        .await;
    assert_eq!(inside.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        inside.text.contains("inside this network"),
        "{}",
        inside.text
    );
    assert_eq!(count(&pool, "schedules").await, 3);
    // Only admins.
    let responder = app.account("rin@example.com", "responder").await;
    let r = app
        .form_as(&responder, "/admin/import", &fields("on"))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}
