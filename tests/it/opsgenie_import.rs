//! `quell import opsgenie` against an Opsgenie fixture server: a stand-in for Opsgenie's cloud
//! API (which cannot run here) that answers in the shapes of Opsgenie's published REST API
//! reference — `{"data", "took", "requestId"}` answers, `limit`/`offset` pagination with a
//! `paging.next` (pages of two), a 429 on the first request, `GenieKey` authentication, errors
//! as `{"message"}` — and renders each schedule's final timeline by reading its rotations, time
//! restrictions and overrides as Opsgenie documents them (every rotation's participant is on
//! call at once), minute by minute. The plan, the run through the command line, a second run
//! that changes nothing, a change in Opsgenie that updates what was made, the imported
//! schedules' on-call spans for the next four weeks against the fixture's timeline, and the
//! imported API integration's key opening an incident through Quell's Opsgenie Alert API.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::common::{TestApp, db_now};
use crate::imports::{Minutes, count, line, quell_spans, run_import, schedule_named, serve, time};

const KEY: &str = "6a1f8a0e-7c4b-4f5e-9d3a-2b1c0d9e8f7a";
const API_KEY: &str = "eb243592-faa2-4ba2-a551-1afdf565c889";
const PROMETHEUS_KEY: &str = "0c2c1d5e-4d3b-4a9f-8e7d-6c5b4a3f2e1d";

/// What the fixture holds, in Opsgenie's shapes; tests change it between imports.
struct Data {
    users: Vec<Value>,
    /// With their members (the list leaves them out)
    teams: Vec<Value>,
    /// By team id
    routing: HashMap<String, Vec<Value>>,
    /// With their rotations
    schedules: Vec<Value>,
    /// By schedule id
    overrides: HashMap<String, Vec<Value>>,
    escalations: Vec<Value>,
    /// Whole, with their keys (the list leaves them out)
    integrations: Vec<Value>,
}

#[derive(Clone)]
struct Fixture {
    data: Arc<Mutex<Data>>,
    throttle: Arc<AtomicBool>,
}

fn user(id: &str, name: &str, email: &str, zone: &str) -> Value {
    json!({
        "id": id, "username": email, "fullName": name,
        "role": {"id": "User", "name": "User"}, "skypeUsername": "", "timeZone": zone,
        "locale": "en_US", "userAddress": {"country": "", "state": "", "city": "", "line": "",
                                          "zipCode": ""},
        "createdAt": "2024-03-01T10:00:00.000Z", "blocked": false, "verified": true
    })
}

fn participant(id: &str, email: &str) -> Value {
    json!({"type": "user", "id": id, "username": email})
}

fn rotation(
    id: &str,
    name: &str,
    (start, kind, length): (&str, &str, i64),
    participants: Vec<Value>,
    restriction: Value,
) -> Value {
    let mut r = json!({
        "id": id, "name": name, "startDate": start, "type": kind, "length": length,
        "participants": participants
    });
    if !restriction.is_null() {
        r["timeRestriction"] = restriction;
    }
    r
}

fn schedule(
    id: &str,
    name: &str,
    zone: &str,
    team: Option<(&str, &str)>,
    rotations: Vec<Value>,
) -> Value {
    let mut s = json!({
        "id": id, "name": name, "description": "", "timezone": zone, "enabled": true,
        "rotations": rotations
    });
    if let Some((id, name)) = team {
        s["ownerTeam"] = json!({"id": id, "name": name});
    }
    s
}

fn rule(delay: i64, recipient: Value) -> Value {
    json!({"condition": "if-not-acked", "notifyType": "default",
           "delay": {"timeAmount": delay, "timeUnit": "minutes"}, "recipient": recipient})
}

/// The first weekday 10:00 in Tokyo at least two days after `now`.
fn a_tokyo_weekday_morning(now: DateTime<Utc>) -> DateTime<Utc> {
    let tokyo: chrono_tz::Tz = "Asia/Tokyo".parse().unwrap();
    let mut day = (now + Duration::days(2)).with_timezone(&tokyo).date_naive();
    while day.weekday().num_days_from_monday() > 4 {
        day = day.succ_opt().unwrap();
    }
    let local = day.and_hms_opt(10, 0, 0).unwrap();
    tokyo
        .from_local_datetime(&local)
        .unwrap()
        .with_timezone(&Utc)
}

/// The data set: five users (one already in Quell by email); two teams with routing rules;
/// five schedules (business and off hours in Tokyo, twelve-hour nights in UTC, a team's own,
/// two rotations on call at once, and one rotating a team); two escalations (one paging a
/// team); four integrations (an API one, a Prometheus one, an email one, and an API one of no
/// team).
fn data(now: DateTime<Utc>) -> Data {
    let users = vec![
        user("u-ana", "Ana Lima", "ana@example.com", "Asia/Tokyo"),
        user("u-ben", "Ben Ito", "ben@example.com", "Asia/Tokyo"),
        user("u-cy", "Cy Park", "cy@example.com", "Europe/Dublin"),
        user("u-dee", "Dee Moss", "dee@example.com", "UTC"),
        user("u-eve", "Eve Stone", "eve@example.com", "America/Chicago"),
    ];
    let member = |id: &str, email: &str, role: &str| json!({"user": {"id": id, "username": email}, "role": role});
    let teams = vec![
        json!({"id": "t-platform", "name": "Platform", "description": "Platform on call",
               "members": [member("u-ana", "ana@example.com", "admin"),
                           member("u-ben", "ben@example.com", "user")]}),
        json!({"id": "t-data", "name": "Data", "description": "",
               "members": [member("u-cy", "cy@example.com", "admin")]}),
    ];
    let routing = HashMap::from([
        (
            "t-platform".to_owned(),
            vec![
                json!({"id": "rr-1", "name": "Default", "isDefault": true, "order": 1,
                       "criteria": {"type": "match-all"}, "timezone": "Asia/Tokyo",
                       "notify": {"type": "escalation", "id": "e-platform", "name": "Platform_escalation"}}),
                json!({"id": "rr-2", "name": "Database alerts", "isDefault": false, "order": 0,
                       "criteria": {"type": "match-any-condition", "conditions": [
                           {"field": "tags", "operation": "contains", "expectedValue": "db", "not": false}]},
                       "timezone": "Asia/Tokyo",
                       "notify": {"type": "schedule", "id": "s-nights", "name": "Nights_schedule"}}),
            ],
        ),
        (
            "t-data".to_owned(),
            vec![
                json!({"id": "rr-3", "name": "Default", "isDefault": true, "order": 0,
                        "criteria": {"type": "match-all"},
                        "notify": {"type": "schedule", "id": "s-data", "name": "Data_schedule"}}),
            ],
        ),
    ]);
    let weekdays: Vec<Value> = ["monday", "tuesday", "wednesday", "thursday", "friday"]
        .iter()
        .map(|d| json!({"startDay": d, "startHour": 9, "startMin": 0, "endDay": d, "endHour": 18, "endMin": 0}))
        .collect();
    let platform = schedule(
        "s-platform",
        "Platform_schedule",
        "Asia/Tokyo",
        Some(("t-platform", "Platform")),
        vec![
            // Weekdays 09:00–18:00, a week each from Monday 09:00.
            rotation(
                "r-biz",
                "Business hours",
                ("2026-11-02T00:00:00Z", "weekly", 1),
                vec![
                    participant("u-ana", "ana@example.com"),
                    participant("u-ben", "ben@example.com"),
                ],
                json!({"type": "weekday-and-time-of-day", "restrictions": weekdays}),
            ),
            // Every evening 18:00 to 09:00, a day each.
            rotation(
                "r-off",
                "Off hours",
                ("2026-11-01T09:00:00Z", "daily", 1),
                vec![
                    participant("u-cy", "cy@example.com"),
                    participant("u-dee", "dee@example.com"),
                ],
                json!({"type": "time-of-day",
                       "restriction": {"startHour": 18, "startMin": 0, "endHour": 9, "endMin": 0}}),
            ),
        ],
    );
    let nights = schedule(
        "s-nights",
        "Nights_schedule",
        "UTC",
        None,
        vec![rotation(
            "r-nights",
            "Twelve hours",
            ("2026-10-01T08:00:00Z", "hourly", 12),
            vec![
                participant("u-ben", "ben@example.com"),
                participant("u-cy", "cy@example.com"),
            ],
            Value::Null,
        )],
    );
    let data_schedule = schedule(
        "s-data",
        "Data_schedule",
        "UTC",
        Some(("t-data", "Data")),
        vec![rotation(
            "r-data",
            "Daily",
            ("2026-10-05T09:00:00Z", "daily", 1),
            vec![
                participant("u-cy", "cy@example.com"),
                participant("u-dee", "dee@example.com"),
            ],
            Value::Null,
        )],
    );
    // Two rotations on call at once: Opsgenie pages both, Quell one, so they differ.
    let overlap = schedule(
        "s-overlap",
        "Overlap_schedule",
        "UTC",
        None,
        vec![
            rotation(
                "r-o1",
                "Primary",
                ("2026-10-01T00:00:00Z", "daily", 1),
                vec![participant("u-ana", "ana@example.com")],
                Value::Null,
            ),
            rotation(
                "r-o2",
                "Shadow",
                ("2026-10-01T00:00:00Z", "daily", 1),
                vec![participant("u-eve", "eve@example.com")],
                Value::Null,
            ),
        ],
    );
    // A rotation of teams, and one with an empty turn: neither is a rota of people.
    let team_rota = schedule(
        "s-teams",
        "Team_rota",
        "UTC",
        None,
        vec![
            rotation(
                "r-t",
                "Teams",
                ("2026-10-01T00:00:00Z", "weekly", 1),
                vec![json!({"type": "team", "id": "t-data", "name": "Data"})],
                Value::Null,
            ),
            rotation(
                "r-gap",
                "Gaps",
                ("2026-10-01T00:00:00Z", "daily", 1),
                vec![
                    participant("u-ana", "ana@example.com"),
                    json!({"type": "none"}),
                ],
                Value::Null,
            ),
        ],
    );
    // Dee in two rotations at once (all day, and again in working hours): one person on call.
    let solo = schedule(
        "s-solo",
        "Solo_schedule",
        "UTC",
        None,
        vec![
            rotation(
                "r-s1",
                "Always",
                ("2026-10-01T00:00:00Z", "daily", 1),
                vec![participant("u-dee", "dee@example.com")],
                Value::Null,
            ),
            rotation(
                "r-s2",
                "Days",
                ("2026-10-01T00:00:00Z", "weekly", 2),
                vec![participant("u-dee", "dee@example.com")],
                json!({"type": "time-of-day",
                       "restriction": {"startHour": 9, "startMin": 0, "endHour": 17, "endMin": 0}}),
            ),
        ],
    );
    let iso = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let morning = a_tokyo_weekday_morning(now);
    let overrides = HashMap::from([(
        "s-platform".to_owned(),
        vec![
            json!({"alias": "cover-eve", "user": participant("u-eve", "eve@example.com"),
                   "startDate": iso(morning), "endDate": iso(morning + Duration::hours(2)),
                   "rotations": [{"id": "r-biz", "name": "Business hours"}]}),
            json!({"alias": "past", "user": participant("u-eve", "eve@example.com"),
                   "startDate": iso(now - Duration::days(5)), "endDate": iso(now - Duration::days(4)),
                   "rotations": []}),
        ],
    )]);
    let schedule_ref = |id: &str, name: &str| json!({"type": "schedule", "id": id, "name": name});
    let user_ref = |id: &str, email: &str| json!({"type": "user", "id": id, "username": email});
    let escalations = vec![
        json!({"id": "e-platform", "name": "Platform_escalation", "description": "",
               "ownerTeam": {"id": "t-platform", "name": "Platform"},
               "rules": [rule(0, schedule_ref("s-platform", "Platform_schedule")),
                         rule(5, user_ref("u-ben", "ben@example.com")),
                         rule(5, user_ref("u-eve", "eve@example.com")),
                         rule(15, schedule_ref("s-nights", "Nights_schedule"))],
               "repeat": {"waitInterval": 10, "count": 2, "resetRecipientStates": false,
                          "closeAlertAfterAll": false}}),
        json!({"id": "e-team", "name": "Everyone_escalation", "description": "",
               "rules": [rule(0, json!({"type": "team", "id": "t-data", "name": "Data"}))]}),
    ];
    let integration = |id: &str, name: &str, kind: &str, team: Option<(&str, &str)>, key: &str| {
        let mut i = json!({"id": id, "name": name, "type": kind, "enabled": true,
                           "ignoreRespondersFromPayload": false, "suppressNotifications": false,
                           "apiKey": key, "responders": [],
                           "_readOnly": ["id", "type", "apiKey"]});
        if let Some((id, name)) = team {
            i["ownerTeam"] = json!({"id": id, "name": name});
        }
        i
    };
    let integrations = vec![
        integration(
            "i-api",
            "Platform API",
            "API",
            Some(("t-platform", "Platform")),
            API_KEY,
        ),
        integration(
            "i-prom",
            "Alertmanager",
            "Prometheus",
            Some(("t-data", "Data")),
            PROMETHEUS_KEY,
        ),
        integration(
            "i-email",
            "Email",
            "Email",
            Some(("t-platform", "Platform")),
            "e1d2c3b4-a596-4877-9a8b-7c6d5e4f3a2b",
        ),
        integration(
            "i-orphan",
            "Scripts",
            "API",
            None,
            "f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f",
        ),
        integration(
            "i-cron",
            "Cron",
            "API",
            None,
            "a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d",
        ),
        // Its details answer 403: kept as listed, without its key.
        integration(
            "i-locked",
            "Locked API",
            "API",
            Some(("t-data", "Data")),
            "b0c1d2e3-f4a5-4b6c-8d7e-9f0a1b2c3d4e",
        ),
    ];
    // Scripts belongs to no team but notifies Data's; Platform API notifies Eve besides.
    let mut integrations = integrations;
    integrations[3]["responders"] = json!([{"type": "team", "id": "t-data", "name": "Data"}]);
    integrations[0]["responders"] =
        json!([{"type": "team", "id": "t-platform"}, {"type": "user", "id": "u-eve"}]);
    Data {
        users,
        teams,
        routing,
        schedules: vec![platform, nights, data_schedule, overlap, team_rota, solo],
        overrides,
        escalations,
        integrations,
    }
}

/// Whether a time restriction lets a rotation be on call at `local` (the schedule's wall
/// clock), read as Opsgenie documents them: a time of day every day, or from a weekday's time
/// to another's; an end before the start runs past midnight.
fn allowed(restriction: Option<&Value>, local: chrono::NaiveDateTime) -> bool {
    let Some(r) = restriction else { return true };
    let minute =
        |v: &Value, h: &str, m: &str| v[h].as_i64().unwrap() * 60 + v[m].as_i64().unwrap_or(0);
    let of_day = i64::from(local.num_seconds_from_midnight() / 60);
    let within = |from: i64, to: i64, at: i64, cycle: i64| {
        let length = (to - from).rem_euclid(cycle);
        let length = if length == 0 { cycle } else { length };
        (at - from).rem_euclid(cycle) < length
    };
    match r["type"].as_str().unwrap() {
        "time-of-day" => {
            let i = &r["restriction"];
            within(
                minute(i, "startHour", "startMin"),
                minute(i, "endHour", "endMin"),
                of_day,
                1440,
            )
        }
        _ => {
            let days = [
                "monday",
                "tuesday",
                "wednesday",
                "thursday",
                "friday",
                "saturday",
                "sunday",
            ];
            let day = |d: &Value| days.iter().position(|x| d == x).unwrap() as i64 * 1440;
            let of_week = i64::from(local.weekday().num_days_from_monday()) * 1440 + of_day;
            r["restrictions"].as_array().unwrap().iter().any(|i| {
                let from = day(&i["startDay"]) + minute(i, "startHour", "startMin");
                let to = day(&i["endDay"]) + minute(i, "endHour", "endMin");
                within(from, to, of_week, 7 * 1440)
            })
        }
    }
}

/// Who rotation `r` of schedule `s` has on call at `at` (a user id): an override of it (or of
/// every rotation) covering `at` while the rotation is on call, else its participant whose
/// turn it is, turns counted from its start date.
fn on_call(s: &Value, r: &Value, overrides: &[Value], at: DateTime<Utc>) -> Option<String> {
    let zone: chrono_tz::Tz = s["timezone"].as_str().unwrap().parse().unwrap();
    let local = at.with_timezone(&zone).naive_local();
    let start = time(&r["startDate"]);
    if at < start || !allowed(r.get("timeRestriction"), local) {
        return None;
    }
    let covering = overrides.iter().rev().find(|o| {
        let mine = o["rotations"]
            .as_array()
            .is_none_or(|rs| rs.is_empty() || rs.iter().any(|x| x["id"] == r["id"]));
        mine && time(&o["startDate"]) <= at && at < time(&o["endDate"])
    });
    if let Some(o) = covering {
        return Some(o["user"]["id"].as_str().unwrap().to_owned());
    }
    let unit = match r["type"].as_str().unwrap() {
        "hourly" => 3600,
        "daily" => 86_400,
        _ => 604_800,
    };
    let turn = unit * r["length"].as_i64().unwrap();
    let people = r["participants"].as_array().unwrap();
    let n = (at - start)
        .num_seconds()
        .div_euclid(turn)
        .rem_euclid(people.len() as i64) as usize;
    // A `none` turn has nobody on call; a team's turn is the team.
    people[n]["id"].as_str().map(str::to_owned)
}

/// The final timeline between two instants: per rotation, its periods minute by minute.
fn timeline(
    s: &Value,
    overrides: &[Value],
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<Value> {
    s["rotations"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(order, r)| {
            let mut periods: Vec<(DateTime<Utc>, DateTime<Utc>, Option<String>)> = Vec::new();
            let mut at = since;
            while at < until {
                let next = (at + Duration::minutes(1)).min(until);
                let who = on_call(s, r, overrides, at);
                match periods.last_mut() {
                    Some(last) if last.2 == who => last.1 = next,
                    _ => periods.push((at, next, who)),
                }
                at = next;
            }
            let periods: Vec<Value> = periods
                .into_iter()
                .filter_map(|(from, to, who)| {
                    let who = who?;
                    Some(json!({"startDate": from.to_rfc3339(), "endDate": to.to_rfc3339(),
                                "type": "default",
                                "recipient": {"type": if who.starts_with("t-") { "team" } else { "user" },
                                              "id": who, "name": format!("{who}@example.com")}}))
                })
                .collect();
            json!({"id": r["id"], "name": r["name"], "order": order as f64 + 1.0, "periods": periods})
        })
        .collect()
}

fn answered(data: Value) -> Value {
    json!({"data": data, "took": 0.021, "requestId": "9ae63dd7-ed00-4c81-86f0-c4ffd33142c9"})
}

fn page(items: &[Value], path: &str, q: &HashMap<String, String>) -> Value {
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(20);
    let offset: usize = q.get("offset").and_then(|l| l.parse().ok()).unwrap_or(0);
    let size = limit.min(2);
    let chunk: Vec<Value> = items.iter().skip(offset).take(size).cloned().collect();
    let mut body = answered(json!(chunk));
    let mut paging =
        json!({"first": format!("https://api.opsgenie.com{path}?limit={size}&offset=0")});
    if offset + size < items.len() {
        paging["next"] = json!(format!(
            "https://api.opsgenie.com{path}?limit={size}&offset={}",
            offset + size
        ));
    }
    body["paging"] = paging;
    body["totalCount"] = json!(items.len());
    body
}

async fn answer(
    State(f): State<Fixture>,
    Path(path): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some(&format!("GenieKey {KEY}"))
    {
        let body = json!({"message": "Could not authenticate", "took": 0.0, "requestId": "r"});
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    if f.throttle.swap(false, Ordering::SeqCst) {
        let body =
            json!({"message": "You are making too many requests!", "took": 0.0, "requestId": "r"});
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            Json(body),
        )
            .into_response();
    }
    let d = f.data.lock().unwrap();
    let full = format!("/{path}");
    let parts: Vec<&str> = path.split('/').collect();
    let without = |v: &Value, field: &str| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove(field);
        v
    };
    let body = match parts[..] {
        ["v2", "users"] => page(&d.users, &full, &q),
        ["v2", "teams"] => {
            let listed: Vec<Value> = d.teams.iter().map(|t| without(t, "members")).collect();
            answered(json!(listed))
        }
        ["v2", "teams", id] => match d.teams.iter().find(|t| t["id"] == id) {
            Some(t) => answered(t.clone()),
            None => return StatusCode::NOT_FOUND.into_response(),
        },
        ["v2", "teams", id, "routing-rules"] => {
            answered(json!(d.routing.get(id).cloned().unwrap_or_default()))
        }
        ["v2", "schedules"] => {
            let expanded = q.get("expand").is_some_and(|e| e == "rotation");
            let listed: Vec<Value> = d
                .schedules
                .iter()
                .map(|s| {
                    if expanded {
                        s.clone()
                    } else {
                        without(s, "rotations")
                    }
                })
                .collect();
            answered(json!(listed))
        }
        ["v2", "schedules", id, "overrides"] => {
            answered(json!(d.overrides.get(id).cloned().unwrap_or_default()))
        }
        ["v2", "schedules", id, "timeline"] => {
            let Some(s) = d.schedules.iter().find(|s| s["id"] == id) else {
                return StatusCode::NOT_FOUND.into_response();
            };
            let since = time(&json!(q["date"]));
            let days: i64 = q["interval"].parse().unwrap();
            assert_eq!(q["intervalUnit"], "days");
            let until = since + Duration::days(days);
            let overrides = d.overrides.get(id).cloned().unwrap_or_default();
            let rotations = timeline(s, &overrides, since, until);
            answered(json!({
                "_parent": {"id": s["id"], "name": s["name"], "enabled": true},
                "startDate": since.to_rfc3339(), "endDate": until.to_rfc3339(),
                "finalTimeline": {"rotations": rotations}
            }))
        }
        ["v2", "escalations"] => answered(json!(d.escalations)),
        ["v2", "integrations"] => {
            let listed: Vec<Value> = d
                .integrations
                .iter()
                .map(|i| {
                    json!({"id": i["id"], "name": i["name"], "enabled": i["enabled"],
                           "type": i["type"], "teamId": i["ownerTeam"]["id"], "version": "v2"})
                })
                .collect();
            page(&listed, &full, &q)
        }
        ["v2", "integrations", "i-locked"] => {
            let body = json!({"message": "Forbidden", "took": 0.0, "requestId": "r"});
            return (StatusCode::FORBIDDEN, Json(body)).into_response();
        }
        ["v2", "integrations", id] => match d.integrations.iter().find(|i| i["id"] == id) {
            Some(i) => answered(i.clone()),
            None => return StatusCode::NOT_FOUND.into_response(),
        },
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    Json(body).into_response()
}

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

async fn command(pool: &PgPool, base: &str, apply: bool) -> String {
    run_import(pool, ("opsgenie", base), apply, ("OPSGENIE_API_KEY", KEY)).await
}

/// Opsgenie's spans of schedule `id` over four weeks from `from` (its final timeline as the
/// fixture renders it, every rotation's periods in order of start), by the handles the import
/// gave its users.
fn opsgenie_spans(
    f: &Fixture,
    id: &str,
    from: DateTime<Utc>,
) -> Vec<(String, DateTime<Utc>, DateTime<Utc>)> {
    let d = f.data.lock().unwrap();
    let s = d.schedules.iter().find(|s| s["id"] == id).unwrap();
    let overrides = d.overrides.get(id).cloned().unwrap_or_default();
    let mut periods: Vec<(String, DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    for r in timeline(s, &overrides, from, from + Duration::days(28)) {
        for p in r["periods"].as_array().unwrap() {
            let who = p["recipient"]["id"]
                .as_str()
                .unwrap()
                .trim_start_matches("u-");
            periods.push((who.to_owned(), time(&p["startDate"]), time(&p["endDate"])));
        }
    }
    periods.sort_by_key(|p| (p.1, p.2));
    // One person's periods back to back, or at once in two rotations, are one span of them on
    // call, as Quell writes it.
    let mut out: Vec<(String, DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    for p in periods {
        match out.last_mut() {
            Some(last) if last.0 == p.0 && p.1 <= last.2 => last.2 = last.2.max(p.2),
            _ => out.push(p),
        }
    }
    out
}

#[sqlx::test]
async fn an_opsgenie_account_is_planned_imported_and_imported_again_without_change(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    // Someone already in Quell is linked by email, not made twice.
    app.person("Dee Moss", "dee").await;
    let now = db_now(&pool).await.duration_trunc_minutes();
    let (base, f) = fixture(now).await;
    let people = count(&pool, "people").await;

    // The plan names every object and what it becomes; nothing changes.
    let plan = command(&pool, &base, false).await;
    assert!(
        plan.starts_with("Opsgenie import plan (dry run: nothing changed)"),
        "{plan}"
    );
    for (verb, name) in [
        ("create", "ana"),
        ("create", "ben"),
        ("create", "cy"),
        ("create", "eve"),
        ("link", "dee"),
        ("create", "Platform"),
        ("create", "Data"),
        ("create", "Platform_schedule"),
        ("create", "Nights_schedule"),
        ("create", "Data_schedule"),
        ("skip", "Overlap_schedule"),
        ("skip", "Team_rota"),
        ("create", "Platform_escalation"),
        ("skip", "Everyone_escalation"),
        ("create", "platform"),
        ("create", "data"),
        ("create", "platform: Platform API"),
        ("create", "data: Alertmanager"),
        ("create", "data: Scripts"),
        ("create", "Solo_schedule"),
        ("skip", "data: Locked API"),
        ("skip", "Email"),
        ("skip", "Cron"),
    ] {
        line(&plan, verb, name);
    }
    for said in [
        "matches Opsgenie's own rendering",
        "where two are on call at once Opsgenie pages both",
        "differs from Opsgenie's own rendering",
        "are on call at once in Opsgenie",
        "rotates a participant of type \"team\"",
        "rotates an empty turn (none)",
        "Opsgenie did not give its key",
        "integration \"Platform API\" also notifies 1 other responder(s)",
        "covers rotation(s) Business hours only in Opsgenie",
        "1 routing rule(s) with conditions are not imported",
        "notifies schedule \"Data_schedule\" directly",
        "Email integrations are not imported",
        "belongs to no team",
        "rate limit turned 1 requests away",
    ] {
        assert!(plan.contains(said), "{said}:\n{plan}");
    }
    assert_eq!(count(&pool, "people").await, people);
    assert_eq!(count(&pool, "schedules").await, 0);
    assert_eq!(count(&pool, "imported_objects").await, 0);

    // The run does what the plan said.
    let done = command(&pool, &base, true).await;
    assert!(
        done.starts_with(
            "Opsgenie import done: 16 to create, 0 to update, 0 unchanged, 1 linked, 6 skipped"
        ),
        "{done}"
    );
    assert_eq!(count(&pool, "people").await, people + 4);
    assert_eq!(count(&pool, "schedules").await, 4);

    // Who is on call for the next four weeks is who Opsgenie's timeline says.
    for (id, name) in [
        ("s-platform", "Platform_schedule"),
        ("s-nights", "Nights_schedule"),
        ("s-data", "Data_schedule"),
        ("s-solo", "Solo_schedule"),
    ] {
        let ours = quell_spans(&app, name, now).await;
        let theirs = opsgenie_spans(&f, id, now);
        // Dee, in both of the solo schedule's rotations, is on call throughout.
        let throughout = vec![("dee".to_owned(), now, now + Duration::days(28))];
        assert!(ours.len() > 20 || ours == throughout, "{name}: {ours:?}");
        assert_eq!(ours, theirs, "{name}");
    }
    // Eve covers a weekday morning in Tokyo.
    let morning = a_tokyo_weekday_morning(now);
    let platform = quell_spans(&app, "Platform_schedule", now).await;
    assert!(
        platform.contains(&("eve".to_owned(), morning, morning + Duration::hours(2))),
        "{platform:?}"
    );

    // The team and its lead; the team owns its schedule, escalation and service.
    let team = app.get("/api/v1/teams/platform").await.json();
    let members = team["members"].to_string();
    assert!(
        members.contains("\"ana\"") && members.contains("lead"),
        "{members}"
    );
    assert_eq!(
        schedule_named(&app, "Platform_schedule").await["team"],
        "platform"
    );

    // The escalation's rules, whose delays count from the alert, are steps that wait for the
    // next: the schedule at once, Ben and Eve after 5 minutes, the nights after 15; twice more.
    let policies = app.get("/api/v1/escalation-policies").await.json();
    let policy = policies["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Platform_escalation")
        .unwrap_or_else(|| panic!("{policies}"))
        .clone();
    let steps: Vec<(String, u64)> = policy["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["targets"].to_string(),
                s["delay_minutes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(steps.len(), 3, "{policy}");
    assert!(
        steps[0].0.contains("Platform_schedule") && steps[0].1 == 5,
        "{steps:?}"
    );
    assert!(
        steps[1].0.contains("ben") && steps[1].0.contains("eve") && steps[1].1 == 10,
        "{steps:?}"
    );
    assert!(
        steps[2].0.contains("Nights_schedule") && steps[2].1 == 10,
        "{steps:?}"
    );
    assert_eq!(policy["repeat"], 2, "{policy}");

    // The API integration keeps its key: a sender of Opsgenie's Alert API reaches the team's
    // service, paged through its escalation.
    let r = app
        .hook(
            "/v2/alerts",
            &[("authorization", &format!("GenieKey {API_KEY}"))],
            &json!({"message": "Disk full on db-1", "alias": "disk-db-1", "priority": "P1"})
                .to_string(),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let key = app.incident_keys().await.pop().unwrap();
    let incident = app.incident_json(&key).await;
    assert_eq!(incident["service"], "platform", "{incident}");

    // Again: nothing changes.
    let again = command(&pool, &base, true).await;
    assert!(
        again.starts_with(
            "Opsgenie import done: 0 to create, 0 to update, 17 unchanged, 0 linked, 6 skipped"
        ),
        "{again}"
    );
    assert_eq!(count(&pool, "schedules").await, 4);
    assert_eq!(count(&pool, "integrations").await, 3);

    // Cy leaves the nights rotation in Opsgenie: the next run updates that schedule alone.
    {
        let mut d = f.data.lock().unwrap();
        let nights = d
            .schedules
            .iter_mut()
            .find(|s| s["id"] == "s-nights")
            .unwrap();
        nights["rotations"][0]["participants"] = json!([
            participant("u-ben", "ben@example.com"),
            participant("u-eve", "eve@example.com")
        ]);
    }
    let changed = command(&pool, &base, true).await;
    assert!(
        changed.starts_with("Opsgenie import done: 0 to create, 1 to update, 16 unchanged"),
        "{changed}"
    );
    line(&changed, "update", "Nights_schedule");
    let ours = quell_spans(&app, "Nights_schedule", now).await;
    assert_eq!(ours, opsgenie_spans(&f, "s-nights", now));
    assert!(!ours.iter().any(|(p, _, _)| p == "cy"));
}

#[sqlx::test]
async fn an_admin_imports_from_opsgenie_on_the_page_and_a_wrong_key_is_told(pool: PgPool) {
    let app = TestApp::new(pool.clone()).await;
    // Quell already has a service named as the Data team's would be: that service is not
    // imported, nor are the integrations that would reach it.
    app.service("data").await;
    let now = db_now(&pool).await.duration_trunc_minutes();
    let (base, _f) = fixture(now).await;
    let fields = |key: &'static str, apply: &'static str| {
        [
            ("vendor", "opsgenie"),
            ("token", key),
            ("api_url", base.as_str()),
            ("apply", apply),
        ]
    };
    let plan = app.form("/admin/import", &fields(KEY, "")).await;
    assert_eq!(plan.status, StatusCode::OK, "{}", plan.text);
    assert!(plan.text.contains("From Opsgenie"), "{}", plan.text);
    assert!(
        plan.text
            .contains("14 to create, 0 to update, 0 unchanged, 0 linked, 9 skipped"),
        "{}",
        plan.text
    );
    assert!(
        plan.text
            .contains("its service is not imported, so nothing says where its alerts go"),
        "{}",
        plan.text
    );
    assert!(
        !plan.text.contains(KEY) && !plan.text.contains(API_KEY),
        "no key is shown"
    );
    assert_eq!(count(&pool, "schedules").await, 0);

    let done = app.form("/admin/import", &fields(KEY, "on")).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    assert!(done.text.contains("<h2>Imported</h2>"), "{}", done.text);
    assert_eq!(count(&pool, "schedules").await, 4);
    let audited: i64 = sqlx::query_scalar(
        "select count(*) from audit_log where action = 'schedule.create' and actor_id is not null",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(audited, 4);

    // A wrong key is told in Opsgenie's words, and changes nothing.
    let wrong = app
        .form("/admin/import", &fields("not-the-key", "on"))
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        wrong.text.contains("401") && wrong.text.contains("Could not authenticate"),
        "{}",
        wrong.text
    );
    // A vendor Quell does not import from is refused.
    let other = app
        .form(
            "/admin/import",
            &[
                ("vendor", "victorops"),
                ("token", KEY),
                ("api_url", base.as_str()),
            ],
        )
        .await;
    assert_eq!(
        other.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        other.text
    );
    assert_eq!(count(&pool, "schedules").await, 4);
}
