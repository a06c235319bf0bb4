//! Timeline event kinds and the sentence each event reads as. Figures in a sentence (how long
//! after detection) are computed when it is shown, from the event's time and the incident's.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::domain::{DomainError, format_minutes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Opened,
    Acknowledged,
    Mitigated,
    Resolved,
    Reopened,
    SeverityChanged,
    RoleAssigned,
    RoleUnassigned,
    Edited,
    Note,
    /// Background that may predate the incident: the deploy that caused it, a traffic ramp.
    Context,
    StakeholderUpdate,
    /// Written by the timer engine when a deadline passes.
    SlaBreached,
    /// Alerts of the incident resolved by their sender (one event per batch, not per alert).
    AlertsResolved,
    /// A responder's verdict on a suspect change: suspected, ruled out, or the trigger.
    SuspectVerdict,
    /// Linked to or unlinked from a related incident (written on both).
    Related,
    /// A runbook's step checked or unchecked.
    Checklist,
    /// An escalation step fired: who was paged, how, and who could not be reached.
    Paged,
    /// The escalation stopped (acknowledged, resolved) or ran out of steps.
    Escalation,
    /// A responder said what they are looking into.
    Claimed,
    /// A claim released by its holder or someone else.
    ClaimReleased,
    /// The call or chat link set or changed.
    Bridge,
    /// Who may see the incident changed: restricted to teams and people, or opened to all.
    Access,
    /// Paging by hand: a responder asked for (and paged), a policy's next step for that
    /// request, a responder accepting, the incident reassigned.
    Responder,
}

impl Kind {
    pub const ALL: [Kind; 24] = [
        Self::Opened,
        Self::Acknowledged,
        Self::Mitigated,
        Self::Resolved,
        Self::Reopened,
        Self::SeverityChanged,
        Self::RoleAssigned,
        Self::RoleUnassigned,
        Self::Edited,
        Self::Note,
        Self::Context,
        Self::StakeholderUpdate,
        Self::SlaBreached,
        Self::AlertsResolved,
        Self::SuspectVerdict,
        Self::Related,
        Self::Checklist,
        Self::Paged,
        Self::Escalation,
        Self::Claimed,
        Self::ClaimReleased,
        Self::Bridge,
        Self::Access,
        Self::Responder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Acknowledged => "acknowledged",
            Self::Mitigated => "mitigated",
            Self::Resolved => "resolved",
            Self::Reopened => "reopened",
            Self::SeverityChanged => "severity_changed",
            Self::RoleAssigned => "role_assigned",
            Self::RoleUnassigned => "role_unassigned",
            Self::Edited => "edited",
            Self::Note => "note",
            Self::Context => "context",
            Self::StakeholderUpdate => "stakeholder_update",
            Self::SlaBreached => "sla_breached",
            Self::AlertsResolved => "alerts_resolved",
            Self::SuspectVerdict => "suspect_verdict",
            Self::Related => "related",
            Self::Checklist => "checklist",
            Self::Paged => "paged",
            Self::Escalation => "escalation",
            Self::Claimed => "claimed",
            Self::ClaimReleased => "claim_released",
            Self::Bridge => "bridge",
            Self::Access => "access",
            Self::Responder => "responder",
        }
    }

    pub fn from_db(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }

    /// The kinds a person may write directly (everything else is written by a state change).
    pub fn parse_writable(value: Option<&str>) -> Result<Self, DomainError> {
        match value.map(str::trim) {
            None | Some("") | Some("note") => Ok(Self::Note),
            Some("context") => Ok(Self::Context),
            Some(other) => Err(DomainError::invalid(
                "kind",
                format!(
                    "{other:?} cannot be written directly; use \"note\", or \"context\" for background that predates the incident"
                ),
            )),
        }
    }
}

/// Checks the text of a note.
pub fn check_note_body(body: &str) -> Result<String, DomainError> {
    let body = body.trim();
    if body.is_empty() {
        return Err(DomainError::invalid("body", "write something in the note"));
    }
    if body.chars().count() > 10_000 {
        return Err(DomainError::invalid(
            "body",
            "a note is at most 10 000 characters",
        ));
    }
    Ok(body.to_owned())
}

fn str_of<'a>(details: &'a Value, key: &str) -> &'a str {
    details.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn status_noun(status: &str) -> &str {
    match status {
        "acknowledged" => "acknowledgement",
        "mitigated" => "mitigation",
        other => other,
    }
}

/// The line an event reads as on the timeline, e.g. `Acknowledged, 9 min after detection`.
pub fn headline(
    kind: Kind,
    details: &Value,
    occurred_at: DateTime<Utc>,
    detected_at: DateTime<Utc>,
) -> String {
    let after = || format_minutes((occurred_at - detected_at).num_seconds());
    match kind {
        Kind::Opened => {
            let mut s = format!("Incident opened as {}", str_of(details, "severity"));
            if let Some(service) = details.get("service").and_then(Value::as_str) {
                s.push_str(&format!(" on {service}"));
            }
            s
        }
        Kind::Acknowledged | Kind::Mitigated | Kind::Resolved => {
            let verb = match kind {
                Kind::Acknowledged => "Acknowledged",
                Kind::Mitigated => "Marked mitigated",
                _ => "Resolved",
            };
            let mut s = format!("{verb}, {} after detection", after());
            let skipped: Vec<&str> = details
                .get("skipped")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(status_noun)
                        .collect()
                })
                .unwrap_or_default();
            if !skipped.is_empty() {
                s.push_str(&format!(
                    " ({} skipped; stamped at this time)",
                    skipped.join(" and ")
                ));
            }
            s
        }
        Kind::Reopened => "Reopened".to_owned(),
        Kind::SeverityChanged => {
            let (from, to) = (str_of(details, "from"), str_of(details, "to"));
            let verb = if to < from { "raised" } else { "lowered" };
            format!("Severity {verb} from {from} to {to}")
        }
        Kind::RoleAssigned => format!(
            "{} assigned: {}",
            str_of(details, "role_label"),
            str_of(details, "person")
        ),
        Kind::RoleUnassigned => format!(
            "{} unassigned (was {})",
            str_of(details, "role_label"),
            str_of(details, "previous")
        ),
        Kind::Edited => {
            let fields: Vec<&str> = details
                .get("changes")
                .and_then(Value::as_object)
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            format!("Edited {}", fields.join(", "))
        }
        Kind::Note => String::new(),
        Kind::Context => "Background".to_owned(),
        Kind::StakeholderUpdate => format!("Stakeholder update to {}", str_of(details, "audience")),
        Kind::SlaBreached => match str_of(details, "timer") {
            "ack" => format!(
                "SLA breached: not acknowledged within {} of detection",
                after()
            ),
            "resolve" => format!("SLA breached: not resolved within {} of detection", after()),
            _ => "SLA: a stakeholder update is overdue".to_owned(),
        },
        Kind::AlertsResolved => {
            let count = details.get("count").and_then(Value::as_i64).unwrap_or(0);
            let first = details
                .get("alerts")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str);
            match (count, first) {
                (1, Some(name)) => format!("Alert resolved: {name}"),
                (n, _) => format!("{n} alerts resolved"),
            }
        }
        Kind::Paged => paged_headline(details),
        Kind::Responder => responder_headline(details),
        Kind::Claimed => format!("Looking into: {}", str_of(details, "subject")),
        Kind::ClaimReleased => match str_of(details, "holder") {
            "?" => format!("No longer looking into: {}", str_of(details, "subject")),
            holder => format!("Released {holder}'s claim: {}", str_of(details, "subject")),
        },
        Kind::Bridge => match str_of(details, "line") {
            "?" => "Bridge removed".to_owned(),
            line => line.to_owned(),
        },
        Kind::Access => match details.get("restricted").and_then(Value::as_bool) {
            Some(true) => format!("Restricted to {}", str_of(details, "to")),
            _ => "Opened to everyone".to_owned(),
        },
        Kind::Escalation => match str_of(details, "action") {
            "exhausted" => "Escalation ended after its last step; nobody acknowledged".to_owned(),
            "escalated_now" => format!(
                "Escalated now by {}: step {} of {} ({}) is due at once, without waiting",
                str_of(details, "by"),
                details.get("step").and_then(Value::as_i64).unwrap_or(0),
                details.get("of").and_then(Value::as_i64).unwrap_or(0),
                str_of(details, "policy")
            ),
            _ => format!("Escalation stopped: {}", str_of(details, "why")),
        },
        Kind::Checklist => {
            let verb = if details.get("checked").and_then(Value::as_bool) == Some(false) {
                "unchecked"
            } else {
                "checked"
            };
            format!(
                "Runbook step {verb}: {} ({})",
                str_of(details, "step"),
                str_of(details, "runbook")
            )
        }
        Kind::Related => {
            let (other, title) = (str_of(details, "other"), str_of(details, "title"));
            if details.get("restricted").and_then(Value::as_bool) == Some(true) {
                // Written before the other incident was restricted: no longer named here.
                return match str_of(details, "action") {
                    "unlinked" => "No longer related to an incident now restricted".to_owned(),
                    _ => "Related to an incident now restricted".to_owned(),
                };
            }
            let alerts = match details.get("alerts").and_then(Value::as_i64) {
                Some(1) => "1 alert".to_owned(),
                Some(n) => format!("{n} alerts"),
                None => "its alerts".to_owned(),
            };
            match str_of(details, "action") {
                "unlinked" => format!("No longer related to {other} ({title})"),
                "merged_into" => {
                    format!("Merged into {other} ({title}) as a duplicate: {alerts} moved there")
                }
                "merged_from" => {
                    format!("{other} ({title}) merged in as a duplicate: {alerts} moved here")
                }
                "split_to" => format!("{alerts} moved out to a new incident, {other} ({title})"),
                "split_from" => format!("Split off from {other} ({title}): {alerts} moved here"),
                _ => match str_of(details, "note") {
                    "" => format!("Related to {other} ({title})"),
                    note => format!("Related to {other} ({title}): {note}"),
                },
            }
        }
        Kind::SuspectVerdict => {
            let what = match str_of(details, "verdict") {
                "confirmed_trigger" => "confirmed as the trigger",
                "ruled_out" => "ruled out",
                _ => "suspected",
            };
            format!(
                "Change {what}: {} ({} at {})",
                str_of(details, "summary"),
                str_of(details, "service"),
                str_of(details, "changed_at")
            )
        }
    }
}

/// What a paging-by-hand entry says: `Ana asked Ben Okafor to help: paged Ben Okafor`, `Ben
/// Okafor accepted Ana's page`, `Reassigned to Ben Okafor by Ana`.
fn responder_headline(details: &Value) -> String {
    let target = match str_of(details, "target_kind") {
        "schedule" => format!("whoever is on call in {}", str_of(details, "target")),
        "policy" => format!("escalation policy {}", str_of(details, "target")),
        _ => details
            .get("target_name")
            .and_then(Value::as_str)
            .unwrap_or(str_of(details, "target"))
            .to_owned(),
    };
    match str_of(details, "action") {
        "accepted" => format!(
            "{} accepted {}'s page and is helping",
            str_of(details, "person"),
            str_of(details, "asked_by")
        ),
        "reassigned" => {
            let mut s = format!("Reassigned to {target} by {}", str_of(details, "by"));
            if let Some(from) = details.get("from").and_then(Value::as_str) {
                s.push_str(&format!(" (was {from})"));
            }
            s
        }
        "next_step" => format!(
            "No answer yet to {}'s page: {}",
            str_of(details, "asked_by"),
            paged_headline(details)
        ),
        _ => format!(
            "{} asked {target} to help: {}",
            str_of(details, "by"),
            paged_headline(details)
        ),
    }
}

/// `Paged Ana Ruiz, Ben Ode and #payments (step 2 of 3, Payments); no contact method for Cy`.
fn paged_headline(details: &Value) -> String {
    let names = |key: &str| -> Vec<&str> {
        details
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.get("name").and_then(Value::as_str).or(v.as_str()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut who = names("people");
    who.extend(names("channels"));
    let mut s = match who.len() {
        0 => "Nobody paged".to_owned(),
        1 => format!("Paged {}", who[0]),
        n => format!("Paged {} and {}", who[..n - 1].join(", "), who[n - 1]),
    };
    let step = details.get("step").and_then(Value::as_i64).unwrap_or(0);
    let of = details.get("of").and_then(Value::as_i64).unwrap_or(0);
    if of > 0 {
        s.push_str(&format!(
            " (step {step} of {of}, {})",
            str_of(details, "policy")
        ));
    }
    let round = details.get("round").and_then(Value::as_i64).unwrap_or(0);
    if round > 0 {
        s.push_str(&format!(", repeat {round}"));
    }
    let unreachable = names("unreachable");
    if !unreachable.is_empty() {
        s.push_str(&format!(
            "; no way to reach {} (no contact method)",
            unreachable.join(", ")
        ));
    }
    let cannot_act = names("cannot_act");
    if !cannot_act.is_empty() {
        s.push_str(&format!(
            "; not paged: {} (cannot acknowledge: disabled, or a viewer)",
            cannot_act.join(", ")
        ));
    }
    let cannot_see = names("cannot_see");
    if !cannot_see.is_empty() {
        s.push_str(&format!(
            "; not paged: {} (may not see this restricted incident)",
            cannot_see.join(", ")
        ));
    }
    let empty = names("empty_schedules");
    if !empty.is_empty() {
        s.push_str(&format!("; nobody on call in {}", empty.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 17, h, m, 0).unwrap()
    }

    #[test]
    fn transitions_say_how_long_after_detection_and_what_was_skipped() {
        let d = json!({"from": "triggered", "to": "acknowledged", "skipped": []});
        assert_eq!(
            headline(Kind::Acknowledged, &d, t(16, 16), t(16, 7)),
            "Acknowledged, 9 min after detection"
        );
        let d = json!({"from": "triggered", "to": "resolved", "skipped": ["acknowledged", "mitigated"]});
        assert_eq!(
            headline(Kind::Resolved, &d, t(19, 40), t(16, 7)),
            "Resolved, 3 h 33 min after detection (acknowledgement and mitigation skipped; stamped at this time)"
        );
    }

    #[test]
    fn severity_changes_read_as_raised_or_lowered() {
        let up = json!({"from": "Sev2", "to": "Sev1"});
        assert_eq!(
            headline(Kind::SeverityChanged, &up, t(16, 20), t(16, 7)),
            "Severity raised from Sev2 to Sev1"
        );
        let down = json!({"from": "Sev1", "to": "Sev3"});
        assert_eq!(
            headline(Kind::SeverityChanged, &down, t(16, 20), t(16, 7)),
            "Severity lowered from Sev1 to Sev3"
        );
    }

    #[test]
    fn only_notes_and_context_are_writable() {
        assert_eq!(Kind::parse_writable(None).unwrap(), Kind::Note);
        assert_eq!(
            Kind::parse_writable(Some("context")).unwrap(),
            Kind::Context
        );
        assert!(Kind::parse_writable(Some("resolved")).is_err());
        assert!(check_note_body("   ").is_err());
    }
}
