//! Pure rules of alerts: reading each sender's payload into the same event shape, and saying
//! precisely what is wrong with one that cannot be read. Nothing here deduplicates on human text:
//! dedup keys are fingerprints, `dedup_key`s, or label hashes.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::domain::shorten;

/// What an event asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Trigger,
    Acknowledge,
    Resolve,
}

/// One alert event, whatever format it came in.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertEvent {
    pub action: Action,
    /// Same key, same open alert.
    pub dedup_key: String,
    /// Same key, same incident (Alertmanager's `groupKey`; otherwise the dedup key).
    pub group_key: String,
    pub summary: String,
    pub source: String,
    /// The sender's own severity word, as given.
    pub severity: String,
    /// A JSON object of labels.
    pub labels: Value,
    /// A JSON object: annotations, custom details or metadata.
    pub details: Value,
    pub source_url: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
    /// The alert as the sender wrote it.
    pub raw: Value,
    /// The service the alert's source belongs to (a heartbeat monitor's), for when routing
    /// names none; senders' alerts have none.
    pub service_hint: Option<String>,
}

/// A deploy or configuration change (PagerDuty change event).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeEvent {
    pub summary: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub details: Value,
    pub links: Value,
    pub raw: Value,
}

/// The reasons a payload cannot be read, one sentence each.
pub type Reasons = Vec<String>;

pub const MAX_KEY_CHARS: usize = 255;
pub const MAX_SUMMARY_CHARS: usize = 1024;
const MAX_GROUP_KEY_BYTES: usize = 512;

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A long group key (Alertmanager's carry whole label sets) is stored as its hash.
fn fit_group_key(key: &str) -> String {
    if key.len() <= MAX_GROUP_KEY_BYTES {
        key.to_owned()
    } else {
        format!("sha256:{:x}", Sha256::digest(key.as_bytes()))
    }
}

/// Alertmanager's own fingerprint when a sender leaves it out: a hash of the sorted label set.
pub fn label_fingerprint(labels: &Map<String, Value>) -> String {
    let mut pairs: Vec<(&String, String)> = labels
        .iter()
        .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    pairs.sort();
    let mut h = Sha256::new();
    for (k, v) in pairs {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    format!("{:x}", h.finalize())[..16].to_owned()
}

/// RFC 3339, with Go's zero time (`0001-01-01T00:00:00Z`, "not set") read as none.
fn time(
    v: &Value,
    key: &str,
    path: &str,
    reasons: &mut Reasons,
    lenient: bool,
) -> Option<DateTime<Utc>> {
    let raw = v.get(key)?;
    let parsed = raw
        .as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc));
    match parsed {
        Some(t) if t.timestamp() <= 0 => None,
        Some(t) => Some(t),
        None if raw.is_null() || lenient => None,
        None => {
            reasons.push(format!("{path}.{key} is not an RFC 3339 time"));
            None
        }
    }
}

/// Labels as strings; Grafana and hand-written senders sometimes send numbers.
pub(super) fn string_map(
    v: Option<&Value>,
    path: &str,
    reasons: &mut Reasons,
    required: bool,
) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let s = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                (k.clone(), Value::String(s))
            })
            .collect(),
        None | Some(Value::Null) if !required => Map::new(),
        _ => {
            reasons.push(format!("{path} must be an object of strings"));
            Map::new()
        }
    }
}

/// Alertmanager webhook v4, and Grafana's webhook (the same envelope, `version: "1"`, extra
/// fields) when `grafana` is set: Grafana is read leniently, missing labels, statuses and times
/// are tolerated where Alertmanager's would be refused.
pub fn parse_alertmanager(body: &Value, grafana: bool) -> Result<Vec<AlertEvent>, Reasons> {
    let mut reasons = Reasons::new();
    if !body.is_object() {
        return Err(vec!["the body must be a JSON object".into()]);
    }
    let group_key = match text(body, "groupKey") {
        Some(k) => fit_group_key(k),
        None if grafana => {
            let labels = body.get("groupLabels").cloned().unwrap_or(json!({}));
            fit_group_key(&format!("grafana:{labels}"))
        }
        None => return Err(vec!["groupKey is missing".into()]),
    };
    let envelope_status = text(body, "status");
    let common_labels = body.get("commonLabels").cloned().unwrap_or(json!({}));
    let Some(alerts) = body.get("alerts").and_then(Value::as_array) else {
        return Err(vec!["alerts must be an array".into()]);
    };
    if alerts.is_empty() {
        return Err(vec!["alerts is empty".into()]);
    }
    let mut events = Vec::with_capacity(alerts.len());
    for (i, alert) in alerts.iter().enumerate() {
        let path = format!("alerts[{i}]");
        if !alert.is_object() {
            reasons.push(format!("{path} must be an object"));
            continue;
        }
        let status = text(alert, "status").or(if grafana { envelope_status } else { None });
        let action = match status {
            Some("firing") => Action::Trigger,
            Some("resolved") => Action::Resolve,
            Some(other) => {
                reasons.push(format!(
                    "{path}.status is {other:?}; expected firing or resolved"
                ));
                continue;
            }
            None => {
                reasons.push(format!("{path}.status is missing"));
                continue;
            }
        };
        let labels = string_map(
            alert.get("labels"),
            &format!("{path}.labels"),
            &mut reasons,
            !grafana,
        );
        let annotations = string_map(
            alert.get("annotations"),
            &format!("{path}.annotations"),
            &mut reasons,
            false,
        );
        let dedup_key = match alert.get("fingerprint") {
            Some(Value::String(f)) if !f.trim().is_empty() && f.len() <= MAX_KEY_CHARS => {
                f.trim().to_owned()
            }
            None | Some(Value::Null) => label_fingerprint(&labels),
            Some(_) if grafana => label_fingerprint(&labels),
            Some(_) => {
                reasons.push(format!(
                    "{path}.fingerprint must be a string of at most 255 characters"
                ));
                continue;
            }
        };
        let starts_at = time(alert, "startsAt", &path, &mut reasons, grafana);
        let _ = time(alert, "endsAt", &path, &mut reasons, grafana);
        let label = |k: &str| {
            labels
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let summary = annotations
            .get("summary")
            .or_else(|| annotations.get("title"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .or_else(|| label("alertname"))
            .or_else(|| common_labels.get("alertname").and_then(Value::as_str))
            .or(if grafana { text(body, "title") } else { None })
            .unwrap_or("Alert");
        let summary = shorten(summary.trim(), MAX_SUMMARY_CHARS);
        let source = label("instance")
            .or_else(|| label("job"))
            .unwrap_or("")
            .to_owned();
        let severity = label("severity")
            .or_else(|| label("priority"))
            .unwrap_or("")
            .to_owned();
        // The maps move into the event; a large post is not held twice.
        let mut details = annotations;
        if grafana {
            for extra in [
                "valueString",
                "values",
                "dashboardURL",
                "panelURL",
                "silenceURL",
                "imageURL",
            ] {
                if let Some(v) = alert.get(extra).filter(|v| !v.is_null()) {
                    details.insert(extra.to_owned(), v.clone());
                }
            }
        }
        events.push(AlertEvent {
            action,
            dedup_key,
            group_key: group_key.clone(),
            summary,
            source,
            severity,
            labels: Value::Object(labels),
            details: Value::Object(details),
            source_url: text(alert, "generatorURL").map(str::to_owned),
            starts_at,
            raw: alert.clone(),
            service_hint: None,
        });
    }
    if reasons.is_empty() {
        Ok(events)
    } else {
        Err(reasons)
    }
}

const PD_SEVERITIES: [&str; 4] = ["critical", "error", "warning", "info"];

/// PagerDuty's `routing_key` alone, read before the rest of the event so that the event's
/// faults are told only to a sender whose key is right.
pub fn routing_key_of(body: &Value) -> Result<String, Reasons> {
    let mut reasons = Reasons::new();
    let key = routing_key(body, &mut reasons);
    if reasons.is_empty() {
        Ok(key)
    } else {
        Err(reasons)
    }
}

/// PagerDuty's `routing_key`: present, and 32 characters as PagerDuty's are.
fn routing_key(body: &Value, reasons: &mut Reasons) -> String {
    let key = text(body, "routing_key").unwrap_or("").to_owned();
    if key.is_empty() {
        reasons.push("'routing_key' is missing or blank".into());
    } else if key.len() != 32 {
        reasons.push("Length of 'routing_key' is incorrect (should be 32 characters)".into());
    }
    key
}

/// The event as kept: everything the sender wrote but the key, which is a credential.
fn without_key(body: &Value) -> Value {
    let mut raw = body.clone();
    if let Some(o) = raw.as_object_mut() {
        o.remove("routing_key");
    }
    raw
}

/// PagerDuty Events API v2 (`/v2/enqueue`): the routing key and the event. `fresh_dedup` is used
/// when a trigger carries no `dedup_key` (PagerDuty generates one and returns it; so do we).
/// The reasons read like PagerDuty's.
pub fn parse_pagerduty(body: &Value, fresh_dedup: &str) -> Result<(String, AlertEvent), Reasons> {
    if !body.is_object() {
        return Err(vec!["Event object is not a JSON object".into()]);
    }
    let mut reasons = Reasons::new();
    let routing_key = routing_key(body, &mut reasons);
    let action = match text(body, "event_action") {
        Some("trigger") => Some(Action::Trigger),
        Some("acknowledge") => Some(Action::Acknowledge),
        Some("resolve") => Some(Action::Resolve),
        Some(_) => {
            reasons.push(
                "'event_action' is invalid (expected trigger, acknowledge or resolve)".into(),
            );
            None
        }
        None => {
            reasons.push("'event_action' is missing or blank".into());
            None
        }
    };
    let dedup_key = match body.get("dedup_key") {
        Some(Value::String(k)) if !k.trim().is_empty() => {
            if k.chars().count() > MAX_KEY_CHARS {
                reasons.push("'dedup_key' is longer than 255 characters".into());
            }
            k.trim().to_owned()
        }
        Some(v) if !v.is_null() && !v.is_string() => {
            reasons.push("'dedup_key' must be a string".into());
            String::new()
        }
        _ if action == Some(Action::Trigger) => fresh_dedup.to_owned(),
        _ => {
            if action.is_some() {
                reasons.push("'dedup_key' is missing or blank".into());
            }
            String::new()
        }
    };
    let payload = body.get("payload");
    let mut summary = String::new();
    let mut source = String::new();
    let mut severity = String::new();
    let mut labels = Map::new();
    let mut details = json!({});
    let mut starts_at = None;
    if action == Some(Action::Trigger) {
        match payload {
            Some(p) if p.is_object() => {
                match text(p, "summary") {
                    Some(s) => summary = shorten(s, MAX_SUMMARY_CHARS),
                    None => reasons.push("'payload.summary' is missing or blank".into()),
                }
                match text(p, "source") {
                    Some(s) => source = shorten(s, MAX_KEY_CHARS),
                    None => reasons.push("'payload.source' is missing or blank".into()),
                }
                match text(p, "severity") {
                    Some(s) if PD_SEVERITIES.contains(&s) => severity = s.to_owned(),
                    Some(_) => reasons.push(
                        "'payload.severity' is invalid (expected critical, error, warning or info)"
                            .into(),
                    ),
                    None => reasons.push("'payload.severity' is missing or blank".into()),
                }
                starts_at = time(p, "timestamp", "payload", &mut reasons, false);
                for k in ["component", "group", "class"] {
                    if let Some(v) = text(p, k) {
                        labels.insert(k.to_owned(), Value::String(v.to_owned()));
                    }
                }
                details = match p.get("custom_details") {
                    None | Some(Value::Null) => json!({}),
                    Some(Value::Object(m)) => Value::Object(m.clone()),
                    Some(other) => json!({ "custom_details": other }),
                };
            }
            _ => reasons.push("'payload' is missing or is not an object".into()),
        }
    }
    let (Some(action), true) = (action, reasons.is_empty()) else {
        return Err(reasons);
    };
    let raw = without_key(body);
    Ok((
        routing_key,
        AlertEvent {
            action,
            group_key: dedup_key.clone(),
            dedup_key,
            summary,
            source,
            severity,
            labels: Value::Object(labels),
            details,
            source_url: text(body, "client_url").map(str::to_owned),
            starts_at,
            raw,
            service_hint: None,
        },
    ))
}

/// PagerDuty change events (`/v2/change/enqueue`): the routing key and the change.
pub fn parse_change(body: &Value) -> Result<(String, ChangeEvent), Reasons> {
    if !body.is_object() {
        return Err(vec!["Event object is not a JSON object".into()]);
    }
    let mut reasons = Reasons::new();
    let routing_key = routing_key(body, &mut reasons);
    let Some(p) = body.get("payload").filter(|p| p.is_object()) else {
        reasons.push("'payload' is missing or is not an object".into());
        return Err(reasons);
    };
    let summary = text(p, "summary").map(|s| shorten(s, MAX_SUMMARY_CHARS));
    if summary.is_none() {
        reasons.push("'payload.summary' is missing or blank".into());
    }
    let occurred_at = time(p, "timestamp", "payload", &mut reasons, false);
    let links = match body.get("links") {
        None | Some(Value::Null) => json!([]),
        Some(Value::Array(a)) => Value::Array(a.clone()),
        Some(_) => {
            reasons.push("'links' must be an array".into());
            json!([])
        }
    };
    let (Some(summary), true) = (summary, reasons.is_empty()) else {
        return Err(reasons);
    };
    let raw = without_key(body);
    Ok((
        routing_key,
        ChangeEvent {
            summary,
            source: text(p, "source")
                .map(|s| shorten(s, MAX_KEY_CHARS))
                .unwrap_or_default(),
            occurred_at,
            details: p
                .get("custom_details")
                .filter(|d| d.is_object())
                .cloned()
                .unwrap_or(json!({})),
            links,
            raw,
        },
    ))
}

/// Quell's own JSON format: `status` (firing, acknowledged, resolved; firing when left out),
/// `title`, `dedup_key` (generated from `fresh_dedup` when left out), `group_key`,
/// `description`, `severity`, `source`, `metadata`, `labels`, `source_url`, `started_at`.
pub fn parse_generic(body: &Value, fresh_dedup: &str) -> Result<AlertEvent, Reasons> {
    if !body.is_object() {
        return Err(vec!["the body must be a JSON object".into()]);
    }
    let mut reasons = Reasons::new();
    let action = match body.get("status").and_then(Value::as_str).map(str::trim) {
        None | Some("firing") => Action::Trigger,
        Some("acknowledged") => Action::Acknowledge,
        Some("resolved") => Action::Resolve,
        Some(other) => {
            reasons.push(format!(
                "status is {other:?}; expected firing, acknowledged or resolved"
            ));
            Action::Trigger
        }
    };
    if body
        .get("status")
        .is_some_and(|s| !s.is_string() && !s.is_null())
    {
        reasons.push("status must be a string".into());
    }
    let key = |name: &str, max: usize, reasons: &mut Reasons| match body.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= max => {
            Some(s.trim().to_owned())
        }
        Some(_) => {
            reasons.push(format!(
                "{name} must be a non-empty string of at most {max} characters"
            ));
            None
        }
    };
    let given_dedup = key("dedup_key", MAX_KEY_CHARS, &mut reasons);
    if action != Action::Trigger && given_dedup.is_none() {
        reasons.push("dedup_key is needed to acknowledge or resolve an alert".into());
    }
    let dedup_key = given_dedup.unwrap_or_else(|| fresh_dedup.to_owned());
    let group_key =
        key("group_key", MAX_GROUP_KEY_BYTES, &mut reasons).unwrap_or_else(|| dedup_key.clone());
    let title = key("title", MAX_SUMMARY_CHARS, &mut reasons);
    if action == Action::Trigger
        && title.is_none()
        && !reasons.iter().any(|r| r.starts_with("title"))
    {
        reasons.push("title is missing".into());
    }
    let mut details = match body.get("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            reasons.push("metadata must be an object".into());
            Map::new()
        }
    };
    match body.get("description") {
        None | Some(Value::Null) => {}
        Some(Value::String(d)) => {
            details.insert("description".into(), Value::String(shorten(d, 20_000)));
        }
        Some(_) => reasons.push("description must be a string".into()),
    }
    let labels = string_map(body.get("labels"), "labels", &mut reasons, false);
    let source_url = match body.get("source_url") {
        None | Some(Value::Null) => None,
        Some(Value::String(u))
            if (u.starts_with("https://") || u.starts_with("http://")) && u.len() <= 2000 =>
        {
            Some(u.clone())
        }
        Some(_) => {
            reasons.push("source_url must be an http:// or https:// URL".into());
            None
        }
    };
    let short = |name: &str, reasons: &mut Reasons| match body.get(name) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => shorten(s.trim(), MAX_KEY_CHARS),
        Some(_) => {
            reasons.push(format!("{name} must be a string"));
            String::new()
        }
    };
    let severity = short("severity", &mut reasons);
    let source = short("source", &mut reasons);
    let starts_at = time(body, "started_at", "body", &mut reasons, false);
    if !reasons.is_empty() {
        return Err(reasons);
    }
    Ok(AlertEvent {
        action,
        dedup_key,
        group_key,
        summary: title.unwrap_or_default(),
        source,
        severity,
        labels: Value::Object(labels),
        details: Value::Object(details),
        source_url,
        starts_at,
        raw: body.clone(),
        service_hint: None,
    })
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::domain::arbitrary::json;
    use proptest::prelude::*;

    /// What an accepted alert must be, whatever the payload: a dedup and group key of at most
    /// 255 characters, and text PostgreSQL can store.
    fn sound(e: &AlertEvent) -> bool {
        !e.dedup_key.is_empty()
            && e.dedup_key.chars().count() <= 255
            && !e.group_key.is_empty()
            && [
                &e.dedup_key,
                &e.group_key,
                &e.summary,
                &e.source,
                &e.severity,
            ]
            .iter()
            .all(|t| crate::domain::storable(t))
            && crate::domain::unstorable_at(&e.labels).is_none()
            && crate::domain::unstorable_at(&e.details).is_none()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Every parser takes any JSON (as the webhook hands it over) without panicking; what it
        /// accepts is sound, what it refuses comes with a reason.
        #[test]
        fn every_parser_takes_any_json(body in json(), wrapped in json()) {
            // Also as an "alerts" list, so the parsers get past their first check.
            let mut nested = serde_json::json!({ "alerts": [wrapped.clone()], "status": "firing" });
            if let (Some(o), Value::Object(extra)) = (nested.as_object_mut(), body.clone()) {
                o.extend(extra);
            }
            let (mut body, mut nested) = (body, nested);
            // As the webhook hands it over: text PostgreSQL cannot hold already stripped.
            crate::domain::strip_unstorable(&mut body);
            crate::domain::strip_unstorable(&mut nested);
            for b in [&body, &nested] {
                for grafana in [false, true] {
                    match parse_alertmanager(b, grafana) {
                        Ok(events) => prop_assert!(events.iter().all(sound)),
                        Err(reasons) => prop_assert!(!reasons.is_empty()),
                    }
                }
                match parse_pagerduty(b, "fresh-key") {
                    Ok((_, e)) => prop_assert!(sound(&e)),
                    Err(reasons) => prop_assert!(!reasons.is_empty()),
                }
                match parse_generic(b, "fresh-key") {
                    Ok(e) => prop_assert!(sound(&e)),
                    Err(reasons) => prop_assert!(!reasons.is_empty()),
                }
                if let Err(reasons) = parse_change(b) {
                    prop_assert!(!reasons.is_empty());
                }
                let _ = routing_key_of(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alertmanager_groups_read_every_alert_with_its_fingerprint() {
        let body = json!({
            "version": "4", "groupKey": "{}:{alertname=\"Http5xx\"}", "status": "firing",
            "receiver": "quell", "groupLabels": {"alertname": "Http5xx"},
            "commonLabels": {"alertname": "Http5xx"}, "commonAnnotations": {},
            "externalURL": "http://am:9093", "truncatedAlerts": 0,
            "alerts": [
                {"status": "firing", "labels": {"alertname": "Http5xx", "instance": "gw-1", "severity": "critical"},
                 "annotations": {"summary": "payments-gateway 5xx > 5% for 5 min"},
                 "startsAt": "2026-09-17T16:02:00Z", "endsAt": "0001-01-01T00:00:00Z",
                 "generatorURL": "http://prom/graph", "fingerprint": "aa11"},
                {"status": "resolved", "labels": {"alertname": "Http5xx", "instance": "gw-2"},
                 "annotations": {}, "startsAt": "2026-09-17T16:02:00Z",
                 "endsAt": "2026-09-17T16:30:00Z", "fingerprint": "bb22"}
            ]
        });
        let events = parse_alertmanager(&body, false).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].action, Action::Trigger);
        assert_eq!(events[0].dedup_key, "aa11");
        assert_eq!(events[0].summary, "payments-gateway 5xx > 5% for 5 min");
        assert_eq!(events[0].severity, "critical");
        assert_eq!(events[0].source, "gw-1");
        assert_eq!(
            events[0].starts_at.unwrap().to_rfc3339(),
            "2026-09-17T16:02:00+00:00"
        );
        assert_eq!(events[1].action, Action::Resolve);
        assert_eq!(
            events[1].summary, "Http5xx",
            "the alert name stands in for a missing summary"
        );
        assert_eq!(events[0].group_key, events[1].group_key);
    }

    #[test]
    fn broken_alertmanager_payloads_say_what_is_wrong() {
        let reasons = |b: Value| parse_alertmanager(&b, false).unwrap_err().join("; ");
        assert!(reasons(json!([])).contains("object"));
        assert!(reasons(json!({"alerts": []})).contains("groupKey"));
        assert!(reasons(json!({"groupKey": "g", "alerts": []})).contains("empty"));
        assert!(
            reasons(json!({"groupKey": "g", "alerts": [{"status": "burning", "labels": {}}]}))
                .contains("alerts[0].status")
        );
        assert!(
            reasons(json!({"groupKey": "g", "alerts": [{"status": "firing", "labels": "x"}]}))
                .contains("alerts[0].labels")
        );
        assert!(reasons(json!({"groupKey": "g", "alerts": [{"status": "firing", "labels": {}, "startsAt": "yesterday"}]})).contains("startsAt"));
    }

    #[test]
    fn grafana_is_read_leniently_with_its_extra_fields() {
        let body = json!({
            "receiver": "quell", "status": "firing", "orgId": 1, "version": "1",
            "groupKey": "{}/{}:{alertname=\"Checkout\"}", "title": "[FIRING:1] Checkout",
            "state": "alerting", "message": "…",
            "alerts": [{"status": "firing", "labels": {"alertname": "Checkout", "rate": 87},
                        "annotations": {}, "startsAt": "2026-09-17T16:02:00Z", "endsAt": "not a time",
                        "fingerprint": "c0ffee", "values": {"B": 87.5}, "valueString": "[ var='B' value=87.5 ]",
                        "dashboardURL": "http://grafana/d/1", "silenceURL": "http://grafana/s"}]
        });
        let events = parse_alertmanager(&body, true).unwrap();
        assert_eq!(events[0].dedup_key, "c0ffee");
        assert_eq!(events[0].labels["rate"], "87");
        assert_eq!(events[0].details["values"]["B"], 87.5);
        assert_eq!(events[0].details["dashboardURL"], "http://grafana/d/1");
    }

    #[test]
    fn a_missing_fingerprint_is_a_hash_of_the_labels_not_of_any_text() {
        let a = json!({"groupKey": "g", "alerts": [{"status": "firing", "labels": {"a": "1", "b": "2"}, "annotations": {"summary": "one"}}]});
        let b = json!({"groupKey": "g", "alerts": [{"status": "firing", "labels": {"b": "2", "a": "1"}, "annotations": {"summary": "two"}}]});
        assert_eq!(
            parse_alertmanager(&a, false).unwrap()[0].dedup_key,
            parse_alertmanager(&b, false).unwrap()[0].dedup_key
        );
    }

    #[test]
    fn pagerduty_events_are_read_and_refused_like_pagerduty() {
        let key = "0123456789abcdef0123456789abcdef";
        let (rk, e) = parse_pagerduty(
            &json!({
                "routing_key": key, "event_action": "trigger",
                "payload": {"summary": "DB down", "source": "db-1", "severity": "critical",
                            "component": "postgres", "custom_details": {"free_space": "1%"}}
            }),
            "generated",
        )
        .unwrap();
        assert_eq!(rk, key);
        assert_eq!(
            (e.dedup_key.as_str(), e.action),
            ("generated", Action::Trigger)
        );
        assert_eq!(e.details["free_space"], "1%");
        assert!(
            e.raw.get("routing_key").is_none(),
            "the key is never stored"
        );
        let (_, e) = parse_pagerduty(
            &json!({"routing_key": key, "event_action": "resolve", "dedup_key": "x"}),
            "g",
        )
        .unwrap();
        assert_eq!((e.dedup_key.as_str(), e.action), ("x", Action::Resolve));
        let errs = parse_pagerduty(&json!({"routing_key": key, "event_action": "resolve"}), "g")
            .unwrap_err();
        assert_eq!(errs, vec!["'dedup_key' is missing or blank"]);
        let errs = parse_pagerduty(&json!({"routing_key": "short", "event_action": "trigger", "payload": {"summary": "s", "source": "x", "severity": "bad"}}), "g").unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
    }

    #[test]
    fn generic_alerts_need_a_title_to_fire_and_a_key_to_resolve() {
        let e = parse_generic(
            &json!({"title": "Queue depth", "metadata": {"depth": 12000}, "description": "deep"}),
            "k1",
        )
        .unwrap();
        assert_eq!((e.dedup_key.as_str(), e.group_key.as_str()), ("k1", "k1"));
        assert_eq!(e.details["depth"], 12000);
        assert!(parse_generic(&json!({"metadata": {}}), "k").unwrap_err()[0].contains("title"));
        assert!(
            parse_generic(&json!({"status": "resolved"}), "k").unwrap_err()[0]
                .contains("dedup_key")
        );
        assert!(
            parse_generic(
                &json!({"title": "t", "source_url": "javascript:alert(1)"}),
                "k"
            )
            .is_err()
        );
        assert!(parse_generic(&json!({"title": "t", "status": "exploded"}), "k").is_err());
    }

    #[test]
    fn change_events_need_a_summary() {
        let key = "0123456789abcdef0123456789abcdef";
        let (_, c) = parse_change(&json!({"routing_key": key, "payload": {"summary": "Deploy v42", "timestamp": "2026-09-17T14:05:00Z", "source": "ci"}, "links": [{"href": "https://ci/42"}]})).unwrap();
        assert_eq!(c.summary, "Deploy v42");
        assert!(parse_change(&json!({"routing_key": key, "payload": {}})).is_err());
    }
}
