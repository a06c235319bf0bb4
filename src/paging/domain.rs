//! Escalation policies and acknowledge links, the rules: a policy is ordered steps, each with
//! targets (people, schedules, channels) and a delay before the next step, repeated a number of
//! times; an acknowledge link is signed over the incident it belongs to. Pure, no I/O.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

use crate::domain::DomainError;

/// Who a step pages: `{"person": "ana"}`, `{"schedule": "Payments primary"}`,
/// `{"channel": "payments-slack"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Target {
    /// A person's handle
    Person(String),
    /// A schedule's name: whoever is on call when the step fires
    Schedule(String),
    /// A notification channel's name
    Channel(String),
}

impl Target {
    pub fn name(&self) -> &str {
        match self {
            Self::Person(n) | Self::Schedule(n) | Self::Channel(n) => n,
        }
    }

    /// What is missing when no such target exists.
    pub fn describe_missing(&self) -> String {
        match self {
            Self::Person(h) => format!("person with the handle {h:?}"),
            Self::Schedule(n) => format!("schedule named {n:?}"),
            Self::Channel(n) => format!("channel named {n:?}"),
        }
    }

    /// "Ana (person)", as pages show it.
    pub fn describe(&self) -> String {
        match self {
            Self::Person(n) => format!("{n} (person)"),
            Self::Schedule(n) => format!("on call in {n}"),
            Self::Channel(n) => format!("channel {n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Who is paged when the step fires
    pub targets: Vec<Target>,
    /// Minutes the step waits for an acknowledgement before the next step fires (1 to 1440)
    pub delay_minutes: u32,
}

/// A policy as written and stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyDraft {
    pub name: String,
    /// The team that owns it, by slug or name; empty: the installation's
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub team: String,
    pub steps: Vec<Step>,
    /// How many more times the steps run from the first after the last one (0 to 9)
    #[serde(default)]
    pub repeat: u32,
}

impl PolicyDraft {
    /// The draft, trimmed, or the first wrong field.
    pub fn checked(&self) -> Result<PolicyDraft, DomainError> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(DomainError::invalid("name", "1 to 100 characters"));
        }
        if self.steps.is_empty() || self.steps.len() > 10 {
            return Err(DomainError::invalid("steps", "1 to 10 steps"));
        }
        if self.repeat > 9 {
            return Err(DomainError::invalid("repeat", "0 to 9 repeats"));
        }
        let mut steps = Vec::with_capacity(self.steps.len());
        for (i, s) in self.steps.iter().enumerate() {
            if !(1..=1440).contains(&s.delay_minutes) {
                return Err(DomainError::invalid(
                    &format!("steps[{i}].delay_minutes"),
                    "1 to 1440 minutes before the next step",
                ));
            }
            if s.targets.is_empty() || s.targets.len() > 20 {
                return Err(DomainError::invalid(
                    &format!("steps[{i}].targets"),
                    "1 to 20 targets",
                ));
            }
            let mut targets: Vec<Target> = Vec::new();
            for (j, t) in s.targets.iter().enumerate() {
                let n = t.name().trim();
                if n.is_empty() || n.chars().count() > 100 {
                    return Err(DomainError::invalid(
                        &format!("steps[{i}].targets[{j}]"),
                        "a name of 1 to 100 characters",
                    ));
                }
                let t = match t {
                    Target::Person(_) => Target::Person(n.to_lowercase()),
                    Target::Schedule(_) => Target::Schedule(n.to_owned()),
                    Target::Channel(_) => Target::Channel(n.to_owned()),
                };
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
            steps.push(Step {
                targets,
                delay_minutes: s.delay_minutes,
            });
        }
        Ok(PolicyDraft {
            name: name.to_owned(),
            team: self.team.trim().to_owned(),
            steps,
            repeat: self.repeat,
        })
    }

    /// Every target with the field that names it, for checking that each exists.
    pub fn targets(&self) -> Vec<(String, &Target)> {
        self.steps
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.targets
                    .iter()
                    .enumerate()
                    .map(move |(j, t)| (format!("steps[{i}].targets[{j}]"), t))
            })
            .collect()
    }
}

/// Steps as the policy form writes them, one per line: `5 | schedule: Payments primary;
/// person: ana; channel: ops` — minutes to wait, then the targets.
pub fn steps_to_lines(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| {
            let targets: Vec<String> = s
                .targets
                .iter()
                .map(|t| match t {
                    Target::Person(n) => format!("person: {n}"),
                    Target::Schedule(n) => format!("schedule: {n}"),
                    Target::Channel(n) => format!("channel: {n}"),
                })
                .collect();
            format!("{} | {}", s.delay_minutes, targets.join("; "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The steps of the form's lines (blank lines skipped); a wrong line is named as its step.
pub fn steps_from_lines(text: &str) -> Result<Vec<Step>, DomainError> {
    let mut steps = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let field = format!("steps[{}]", steps.len());
        let (minutes, targets) = line.split_once('|').ok_or_else(|| {
            DomainError::invalid(
                &field,
                "write minutes | targets, e.g. 5 | schedule: Primary",
            )
        })?;
        let delay_minutes = minutes.trim().parse::<u32>().map_err(|_| {
            DomainError::invalid(
                &format!("{field}.delay_minutes"),
                "a whole number of minutes",
            )
        })?;
        let mut parsed = Vec::new();
        for t in targets.split(';').map(str::trim).filter(|t| !t.is_empty()) {
            let (kind, name) = t.split_once(':').unwrap_or(("", t));
            let name = name.trim().to_owned();
            parsed.push(match kind.trim().to_ascii_lowercase().as_str() {
                "person" => Target::Person(name),
                "schedule" => Target::Schedule(name),
                "channel" => Target::Channel(name),
                _ => {
                    return Err(DomainError::invalid(
                        &format!("{field}.targets[{}]", parsed.len()),
                        format!("{t:?}: start with person:, schedule: or channel:"),
                    ));
                }
            });
        }
        steps.push(Step {
            targets: parsed,
            delay_minutes,
        });
    }
    Ok(steps)
}

/// Where an escalation stands: the next step to fire (0-based) and the round it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub step: usize,
    pub round: u32,
}

/// The step after `at`, or `None` when the last step of the last round has fired.
pub fn next(at: Position, steps: usize, repeat: u32) -> Option<Position> {
    if at.step + 1 < steps {
        Some(Position {
            step: at.step + 1,
            round: at.round,
        })
    } else if at.round < repeat {
        Some(Position {
            step: 0,
            round: at.round + 1,
        })
    } else {
        None
    }
}

/// How long an acknowledge link works after it is sent.
pub const ACK_LINK_HOURS: i64 = 12;

fn mac(key: &[u8], incident_key: &str, nonce: Uuid) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(format!("ack:{incident_key}:{}", nonce.simple()).as_bytes());
    mac
}

/// The token of an acknowledge link: the nonce and a signature binding it to the incident.
pub fn ack_token(key: &[u8], incident_key: &str, nonce: Uuid) -> String {
    let sig = mac(key, incident_key, nonce).finalize().into_bytes();
    format!("{}.{}", nonce.simple(), URL_SAFE_NO_PAD.encode(sig))
}

/// The nonce of `token` if it was signed with `key` for `incident_key`; `None` for a token
/// changed in any way or made for another incident.
pub fn check_ack_token(key: &[u8], incident_key: &str, token: &str) -> Option<Uuid> {
    let (nonce, sig) = token.split_once('.')?;
    let nonce = Uuid::try_parse(nonce).ok()?;
    let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
    mac(key, incident_key, nonce).verify_slice(&sig).ok()?;
    Some(nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(targets: Vec<Target>, delay: u32) -> Step {
        Step {
            targets,
            delay_minutes: delay,
        }
    }

    fn draft(steps: Vec<Step>, repeat: u32) -> PolicyDraft {
        PolicyDraft {
            name: " Payments ".into(),
            team: String::new(),
            steps,
            repeat,
        }
    }

    fn field(d: PolicyDraft) -> String {
        match d.checked().unwrap_err() {
            DomainError::Invalid { field, .. } => field,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn policies_name_the_wrong_field() {
        let ana = || Target::Person("Ana".into());
        assert_eq!(field(draft(vec![], 0)), "steps");
        assert_eq!(
            field(draft(vec![step(vec![ana()], 0)], 0)),
            "steps[0].delay_minutes"
        );
        assert_eq!(
            field(draft(vec![step(vec![ana()], 5), step(vec![], 5)], 0)),
            "steps[1].targets"
        );
        assert_eq!(
            field(draft(
                vec![step(vec![ana(), Target::Channel(" ".into())], 5)],
                0
            )),
            "steps[0].targets[1]"
        );
        assert_eq!(field(draft(vec![step(vec![ana()], 5)], 10)), "repeat");
        let ok = draft(vec![step(vec![ana(), ana()], 5)], 1)
            .checked()
            .unwrap();
        assert_eq!(ok.name, "Payments");
        assert_eq!(ok.steps[0].targets, vec![Target::Person("ana".into())]);
    }

    #[test]
    fn policies_read_as_json() {
        let d: PolicyDraft = serde_json::from_str(
            r#"{"name": "P", "steps": [{"delay_minutes": 5, "targets": [{"schedule": "Primary"}, {"person": "em"}]}]}"#,
        )
        .unwrap();
        assert_eq!(d.steps[0].targets[0], Target::Schedule("Primary".into()));
        assert_eq!(d.repeat, 0);
        assert!(
            serde_json::from_str::<PolicyDraft>(
                r#"{"name": "P", "steps": [{"delay_minutes": 5, "targets": [{"pager": "x"}]}]}"#
            )
            .is_err()
        );
    }

    #[test]
    fn escalation_walks_the_steps_then_repeats_then_ends() {
        let p = |step, round| Position { step, round };
        // (at, steps, repeat, next)
        let cases = [
            (p(0, 0), 3, 0, Some(p(1, 0))),
            (p(1, 0), 3, 0, Some(p(2, 0))),
            (p(2, 0), 3, 0, None),
            (p(2, 0), 3, 1, Some(p(0, 1))),
            (p(2, 1), 3, 1, None),
            (p(0, 0), 1, 2, Some(p(0, 1))),
            (p(0, 2), 1, 2, None),
        ];
        for (at, steps, repeat, want) in cases {
            assert_eq!(
                next(at, steps, repeat),
                want,
                "{at:?} of {steps} × {repeat}"
            );
        }
    }

    #[test]
    fn ack_tokens_are_bound_to_their_incident_and_cannot_be_changed() {
        let key = [7u8; 32];
        let nonce = Uuid::new_v4();
        let token = ack_token(&key, "INC-12", nonce);
        assert_eq!(check_ack_token(&key, "INC-12", &token), Some(nonce));
        assert_eq!(
            check_ack_token(&key, "INC-13", &token),
            None,
            "another incident"
        );
        assert_eq!(
            check_ack_token(&[8u8; 32], "INC-12", &token),
            None,
            "another key"
        );
        let other = Uuid::new_v4();
        let swapped = format!("{}{}", other.simple(), &token[32..]);
        assert_eq!(
            check_ack_token(&key, "INC-12", &swapped),
            None,
            "another nonce"
        );
        let mut cut = token.clone();
        cut.pop();
        assert_eq!(
            check_ack_token(&key, "INC-12", &cut),
            None,
            "tampered signature"
        );
        assert_eq!(check_ack_token(&key, "INC-12", "nonsense"), None);
    }

    #[test]
    fn steps_read_and_write_as_lines() {
        let text = "5 | schedule: Payments primary; person: ana\n\n15 | channel: ops";
        let steps = steps_from_lines(text).unwrap();
        assert_eq!(
            steps,
            vec![
                step(
                    vec![
                        Target::Schedule("Payments primary".into()),
                        Target::Person("ana".into())
                    ],
                    5
                ),
                step(vec![Target::Channel("ops".into())], 15),
            ]
        );
        assert_eq!(steps_to_lines(&steps), text.replace("\n\n", "\n"));
        let field = |text: &str| match steps_from_lines(text).unwrap_err() {
            DomainError::Invalid { field, .. } => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field("5 person: ana"), "steps[0]");
        assert_eq!(
            field("5 | person: ana\nsoon | person: ana"),
            "steps[1].delay_minutes"
        );
        assert_eq!(field("5 | person: ana; pager: x"), "steps[0].targets[1]");
    }
}

/// Whether an escalation may fire its next step now: it is paging (pending), and a step is
/// left — one of this round, or a repeat of the policy.
pub fn check_escalate_now(
    state: &str,
    next_step: i32,
    steps: i32,
    (round, repeat): (i32, i32),
) -> Result<(), DomainError> {
    match state {
        "pending" => {}
        "stopped" => {
            return Err(DomainError::Conflict(
                "Paging has stopped: the incident was acknowledged (or moved on). Nobody is \
                 being paged to escalate from."
                    .into(),
            ));
        }
        _ => {
            return Err(DomainError::Conflict(
                "The escalation ran through every step already; nobody is left to escalate to."
                    .into(),
            ));
        }
    }
    if next_step > steps && round >= repeat {
        return Err(DomainError::Conflict(format!(
            "Every step of the policy has paged ({steps} of {steps}); nobody is left to \
             escalate to."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod escalate_now_tests {
    use super::*;

    #[test]
    fn only_a_pending_escalation_with_a_step_left_escalates() {
        assert!(check_escalate_now("pending", 2, 3, (0, 0)).is_ok());
        assert!(
            check_escalate_now("pending", 4, 3, (0, 1)).is_ok(),
            "a repeat is left"
        );
        assert!(check_escalate_now("pending", 4, 3, (1, 1)).is_err());
        assert!(check_escalate_now("stopped", 2, 3, (0, 0)).is_err());
        assert!(check_escalate_now("exhausted", 2, 3, (0, 0)).is_err());
    }
}
