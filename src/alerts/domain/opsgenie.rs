//! Opsgenie's Alert API read into Quell's events: a create is an alert, acknowledge and close
//! act on it by alias; which alert a call names (`identifierType`), a snooze's end, and the
//! outcome each request records for its client to read back.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::formats::{Action, AlertEvent, MAX_KEY_CHARS, MAX_SUMMARY_CHARS, Reasons, string_map};
use crate::domain::shorten;

/// Opsgenie's priorities; P3 when none is given, as Opsgenie does.
const OPSGENIE_PRIORITIES: [&str; 5] = ["P1", "P2", "P3", "P4", "P5"];

/// An Opsgenie alias as a dedup key: as given, or its hash when longer than Quell keeps (an
/// alias may have 512 characters).
pub fn opsgenie_alias(alias: &str) -> String {
    let alias = alias.trim();
    if alias.chars().count() <= MAX_KEY_CHARS {
        alias.to_owned()
    } else {
        format!("sha256:{:x}", Sha256::digest(alias.as_bytes()))
    }
}

/// Opsgenie's create-alert request (`POST /v2/alerts`): `message` (required), `alias` (the
/// dedup key: the same alias while the alert is open is the same alert; none: a new one each
/// time), `description`, `responders`, `visibleTo`, `actions`, `tags`, `details`, `entity`,
/// `source`, `priority` (P1–P5, P3 when none), `user`, `note`. The priority is the sender's
/// severity word, read by routing (P1 → Sev1 … P4 and P5 → Sev4); entity, priority and tags
/// are labels rules can match; the rest is kept as details.
pub fn parse_opsgenie(body: &Value, fresh_dedup: &str) -> Result<AlertEvent, Reasons> {
    if !body.is_object() {
        return Err(vec!["The request body must be a JSON object.".into()]);
    }
    let mut reasons = Reasons::new();
    // Text longer than Quell keeps is shortened, never refused: a sender such as Alertmanager
    // lists a whole group in its description and does not retry a 422, so the page would be lost.
    let string = |name: &str, max: usize, reasons: &mut Reasons| match body.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(shorten(s.trim(), max)),
        Some(_) => {
            reasons.push(format!("{name} must be a string."));
            None
        }
    };
    let message = string("message", MAX_SUMMARY_CHARS, &mut reasons);
    if message.is_none() && !reasons.iter().any(|r| r.starts_with("message")) {
        reasons.push("Message can not be empty.".into());
    }
    // An alias is kept whole (a long one as its hash): shortened, two would become one.
    let alias = match body.get("alias") {
        Some(Value::String(a)) if !a.trim().is_empty() => Some(a.trim().to_owned()),
        None | Some(Value::Null) | Some(Value::String(_)) => None,
        Some(_) => {
            reasons.push("alias must be a string.".into());
            None
        }
    };
    let description = string("description", 15_000, &mut reasons);
    let entity = string("entity", 512, &mut reasons);
    let source = string("source", 100, &mut reasons);
    let user = string("user", 100, &mut reasons);
    let note = string("note", 25_000, &mut reasons);
    let priority = match string("priority", 10, &mut reasons).map(|p| p.to_ascii_uppercase()) {
        None => "P3".to_owned(),
        Some(p) if OPSGENIE_PRIORITIES.contains(&p.as_str()) => p,
        Some(_) => {
            reasons.push("Priority should be one of [P1, P2, P3, P4, P5].".into());
            "P3".to_owned()
        }
    };
    if body
        .get("priority")
        .is_some_and(|p| !p.is_string() && !p.is_null())
        && !reasons.iter().any(|r| r.starts_with("priority"))
    {
        reasons.push("priority must be a string.".into());
    }
    let strings = |name: &str, reasons: &mut Reasons| match body.get(name) {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(items)) if items.iter().all(Value::is_string) && items.len() <= 100 => {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(|t| shorten(t.trim(), 50))
                .collect()
        }
        Some(_) => {
            reasons.push(format!("{name} must be a list of at most 100 strings."));
            vec![]
        }
    };
    let tags = strings("tags", &mut reasons);
    let actions = strings("actions", &mut reasons);
    let detail_map = string_map(body.get("details"), "details", &mut reasons, false);
    for list in ["responders", "visibleTo"] {
        if body
            .get(list)
            .is_some_and(|v| !v.is_array() && !v.is_null())
        {
            reasons.push(format!("{list} must be a list."));
        }
    }
    let Some(message) = message else {
        return Err(reasons);
    };
    if !reasons.is_empty() {
        return Err(reasons);
    }
    let mut labels = Map::new();
    labels.insert("priority".into(), Value::String(priority.clone()));
    if let Some(e) = &entity {
        labels.insert("entity".into(), Value::String(shorten(e, MAX_KEY_CHARS)));
    }
    if !tags.is_empty() {
        labels.insert("tags".into(), Value::String(tags.join(",")));
    }
    // Its details are the alert's details, as other formats' are (rules read them by name).
    let mut details = detail_map;
    for (k, v) in [
        ("description", &description),
        ("user", &user),
        ("note", &note),
        ("entity", &entity),
    ] {
        if let Some(v) = v {
            details.insert(k.into(), Value::String(v.clone()));
        }
    }
    if !tags.is_empty() {
        details.insert("tags".into(), json!(tags));
    }
    if !actions.is_empty() {
        details.insert("actions".into(), json!(actions));
    }
    for list in ["responders", "visibleTo"] {
        if let Some(v @ Value::Array(_)) = body.get(list) {
            details.insert(list.into(), v.clone());
        }
    }
    let dedup_key = alias
        .as_deref()
        .map_or_else(|| fresh_dedup.to_owned(), opsgenie_alias);
    Ok(AlertEvent {
        action: Action::Trigger,
        group_key: dedup_key.clone(),
        dedup_key,
        summary: shorten(&message, MAX_SUMMARY_CHARS),
        source: shorten(source.as_deref().unwrap_or("opsgenie"), MAX_KEY_CHARS),
        severity: priority,
        labels: Value::Object(labels),
        details: Value::Object(details),
        source_url: None,
        starts_at: None,
        raw: body.clone(),
        service_hint: None,
    })
}

/// An Opsgenie acknowledge or close of the alert with `alias`: the same event a PagerDuty
/// acknowledge or resolve is.
pub fn opsgenie_update(alias: &str, action: Action, body: &Value) -> AlertEvent {
    let dedup_key = opsgenie_alias(alias);
    AlertEvent {
        action,
        group_key: dedup_key.clone(),
        dedup_key,
        summary: String::new(),
        source: String::new(),
        severity: String::new(),
        labels: json!({}),
        details: json!({}),
        source_url: None,
        starts_at: None,
        raw: body.clone(),
        service_hint: None,
    }
}

/// An Opsgenie call, by Opsgenie's own word for it (request records say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpsgenieCall {
    Create,
    Acknowledge,
    Close,
    AddNote,
    Snooze,
}

impl OpsgenieCall {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "Create",
            Self::Acknowledge => "Acknowledge",
            Self::Close => "Close",
            Self::AddNote => "AddNote",
            Self::Snooze => "Snooze",
        }
    }

    /// Whether an alert in `status` is the one a request's outcome is about: a create's is only
    /// an open one (a create that a silence held stored nothing; its alias may name an older,
    /// closed alert).
    pub fn names(self, status: &str) -> bool {
        self != Self::Create || status != "resolved"
    }

    /// What a request did, from the alert it named as it stands after it (`None`: no such
    /// alert): whether it succeeded, and the status line its client reads back.
    pub fn outcome(self, alert_status: Option<&str>) -> (bool, &'static str) {
        match (self, alert_status) {
            (Self::Create, Some(_)) => (true, "Created alert"),
            (Self::Create, None) => (
                true,
                "Alert received; a silence, a maintenance window or a routing rule held it",
            ),
            (_, None) => (false, "Alert does not exist"),
            (Self::Acknowledge | Self::Snooze, Some("resolved")) => {
                (false, "Alert is already closed")
            }
            (Self::Acknowledge, Some(_)) => (true, "Acknowledged alert"),
            (Self::Close, Some(_)) => (true, "Closed alert"),
            (Self::AddNote, Some(_)) => (true, "Added note"),
            (Self::Snooze, Some(_)) => (true, "Snoozed alert"),
        }
    }
}

/// How Quell writes an alert's number as Opsgenie's `id` and `tinyId`: `q-1791`, which no id
/// Opsgenie gave (a UUID, or a bare number for a tiny id) can be, so a script still holding
/// one names nothing rather than another alert.
pub fn opsgenie_id(number: i64) -> String {
    format!("q-{number}")
}

/// Which alert a call names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identified {
    /// Quell's alert number, written `q-<number>` as both `id` and `tinyId`
    Number(i64),
    Alias(String),
    /// An id that no alert of Quell's can have (Opsgenie's own, from before the move)
    Nothing,
}

/// Reads `identifier` as `identifierType` says (`id` when none, as Opsgenie does).
pub fn opsgenie_identifier(identifier: &str, kind: Option<&str>) -> Result<Identified, String> {
    let identifier = identifier.trim();
    if identifier.is_empty() {
        return Err("Identifier can not be empty.".into());
    }
    if identifier.chars().any(char::is_control) {
        return Err("Identifier can not contain control characters.".into());
    }
    match kind.unwrap_or("id") {
        "alias" => Ok(Identified::Alias(opsgenie_alias(identifier))),
        "id" | "tiny" => Ok(identifier
            .strip_prefix("q-")
            .and_then(|n| n.parse::<i64>().ok())
            .filter(|n| *n > 0)
            .map_or(Identified::Nothing, Identified::Number)),
        other => Err(format!(
            "identifierType should be one of [id, tiny, alias]; not {other:?}."
        )),
    }
}

/// An Opsgenie snooze (`POST /v2/alerts/{identifier}/snooze`): until `endTime`, a time after
/// `now` at most a week ahead; in whole minutes from now, rounded up.
pub fn opsgenie_snooze(body: &Value, now: DateTime<Utc>) -> Result<i64, String> {
    let Some(end) = body.get("endTime") else {
        return Err("endTime can not be empty.".into());
    };
    // A time without an offset (Python's isoformat() of a naive datetime) is UTC.
    let end = end
        .as_str()
        .map(str::trim)
        .and_then(|t| {
            DateTime::parse_from_rfc3339(t)
                .map(|t| t.with_timezone(&Utc))
                .ok()
                .or_else(|| {
                    chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
                        .ok()
                        .map(|t| t.and_utc())
                })
        })
        .ok_or("endTime should be a date and time such as 2027-01-05T14:30:00Z.")?;
    let seconds = (end - now).num_seconds();
    if seconds <= 0 {
        return Err("endTime should be in the future.".into());
    }
    let minutes = (seconds + 59) / 60;
    if minutes > 10_080 {
        return Err("endTime should be at most a week ahead.".into());
    }
    Ok(minutes)
}

/// Who did an update and their note (`user`, `note`, `source`), as a line of the timeline.
pub fn opsgenie_note(body: &Value) -> Option<String> {
    let text = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let note = text("note")?;
    let by = match (text("user"), text("source")) {
        (Some(u), Some(s)) => format!("{u} ({s})"),
        (Some(u), None) => u.to_owned(),
        (None, Some(s)) => s.to_owned(),
        (None, None) => "Opsgenie API".to_owned(),
    };
    Some(shorten(&format!("{by}: {note}"), 10_000))
}

#[cfg(test)]
mod tests {
    use super::super::formats::*;
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn opsgenie_alerts_are_read_as_opsgenie_writes_them() {
        let body = json!({"message": "Disk full", "alias": "db-7/disk", "priority": "P2",
                          "tags": ["db", "disk"], "entity": "db-7", "details": {"mount": "/var"},
                          "description": "91%", "actions": ["Clean"], "source": "zabbix",
                          "responders": [{"name": "NOC", "type": "team"}]});
        let e = parse_opsgenie(&body, "fresh").unwrap();
        assert_eq!(e.action, Action::Trigger);
        assert_eq!(
            (e.dedup_key.as_str(), e.group_key.as_str()),
            ("db-7/disk", "db-7/disk")
        );
        assert_eq!(
            (e.summary.as_str(), e.severity.as_str(), e.source.as_str()),
            ("Disk full", "P2", "zabbix")
        );
        assert_eq!(
            e.labels,
            json!({"priority": "P2", "entity": "db-7", "tags": "db,disk"})
        );
        assert_eq!(e.details["mount"], "/var");
        assert_eq!(e.details["description"], "91%");
        assert_eq!(e.details["responders"][0]["name"], "NOC");
        // No alias: a fresh key; no priority: P3; no source: opsgenie.
        let e = parse_opsgenie(&json!({"message": "m", "priority": "p4"}), "fresh").unwrap();
        assert_eq!(e.severity, "P4", "read as Opsgenie's P4");
        let e = parse_opsgenie(&json!({"message": "m"}), "fresh").unwrap();
        assert_eq!(
            (e.dedup_key.as_str(), e.severity.as_str(), e.source.as_str()),
            ("fresh", "P3", "opsgenie")
        );
        // Long text is shortened, never refused (a sender would drop the page).
        let group = "firing alert\n".repeat(2_000);
        let e = parse_opsgenie(&json!({"message": group, "description": group}), "f").unwrap();
        assert!(e.summary.chars().count() <= MAX_SUMMARY_CHARS);
        assert!(e.details["description"].as_str().unwrap().chars().count() <= 15_000);
        // An alias longer than Quell keeps is its hash, the same each time.
        let long = "a".repeat(400);
        let e = parse_opsgenie(&json!({"message": "m", "alias": long}), "fresh").unwrap();
        assert!(e.dedup_key.starts_with("sha256:"));
        assert_eq!(
            opsgenie_update(&long, Action::Resolve, &json!({})).dedup_key,
            e.dedup_key
        );
        let bad = parse_opsgenie(
            &json!({"priority": "P0", "tags": "x", "details": [], "visibleTo": {}}),
            "f",
        )
        .unwrap_err();
        assert_eq!(
            bad,
            vec![
                "Message can not be empty.",
                "Priority should be one of [P1, P2, P3, P4, P5].",
                "tags must be a list of at most 100 strings.",
                "details must be an object of strings",
                "visibleTo must be a list."
            ]
        );
    }

    #[test]
    fn calls_name_alerts_by_number_or_alias_and_say_what_became_of_them() {
        assert_eq!(
            opsgenie_identifier("q-42", None),
            Ok(Identified::Number(42))
        );
        assert_eq!(
            opsgenie_identifier(" q-42 ", Some("tiny")),
            Ok(Identified::Number(42))
        );
        assert_eq!(opsgenie_id(42), "q-42");
        // Opsgenie's own tiny ids from before the move are bare numbers: they name nothing.
        assert_eq!(
            opsgenie_identifier("1791", Some("tiny")),
            Ok(Identified::Nothing)
        );
        assert!(opsgenie_identifier("a\0b", Some("alias")).is_err());
        assert_eq!(
            opsgenie_identifier("70413a06-38d6-4c85-92b8-5ebc900d42e2", Some("id")),
            Ok(Identified::Nothing)
        );
        assert_eq!(
            opsgenie_identifier("q--3", Some("id")),
            Ok(Identified::Nothing)
        );
        assert_eq!(
            opsgenie_identifier("db-7/disk", Some("alias")),
            Ok(Identified::Alias("db-7/disk".into()))
        );
        assert!(
            opsgenie_identifier("x", Some("name"))
                .unwrap_err()
                .contains("identifierType")
        );
        assert!(opsgenie_identifier(" ", Some("alias")).is_err());
        use OpsgenieCall::*;
        assert_eq!(Create.outcome(Some("firing")), (true, "Created alert"));
        assert!(Create.outcome(None).0, "a held alert was still received");
        assert!(!Create.names("resolved") && Create.names("firing") && Close.names("resolved"));
        for call in [Acknowledge, Close, AddNote, Snooze] {
            assert_eq!(call.outcome(None), (false, "Alert does not exist"));
        }
        assert!(!Acknowledge.outcome(Some("resolved")).0);
        assert!(!Snooze.outcome(Some("resolved")).0);
        assert!(Close.outcome(Some("resolved")).0);
        assert!(AddNote.outcome(Some("resolved")).0);
        assert_eq!(Acknowledge.as_str(), "Acknowledge");
    }

    #[test]
    fn a_snooze_ends_in_the_future_within_a_week() {
        let now = Utc.with_ymd_and_hms(2027, 1, 5, 12, 0, 0).unwrap();
        let at = |t: &str| opsgenie_snooze(&json!({ "endTime": t }), now);
        assert_eq!(at("2027-01-05T12:30:00Z"), Ok(30));
        assert_eq!(at("2027-01-05T12:30:01Z"), Ok(31));
        assert_eq!(at("2027-01-05T12:45:00.123456"), Ok(45), "no offset: UTC");
        assert_eq!(
            at("2027-01-05T13:00:00+01:00").unwrap_err(),
            "endTime should be in the future."
        );
        assert!(at("2027-01-13T12:00:00Z").unwrap_err().contains("week"));
        assert!(at("tomorrow").unwrap_err().contains("endTime"));
        assert!(
            opsgenie_snooze(&json!({}), now)
                .unwrap_err()
                .contains("empty")
        );
        assert_eq!(
            opsgenie_note(&json!({"user": "Monitoring Script", "note": "restarting"})),
            Some("Monitoring Script: restarting".into())
        );
        assert_eq!(opsgenie_note(&json!({"user": "x"})), None);
        assert_eq!(
            opsgenie_note(&json!({"note": "n", "source": "cron"})),
            Some("cron: n".into())
        );
    }
}
