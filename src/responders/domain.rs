//! Who a person asks for by hand, checked: exactly one of a person, a schedule (whoever is on
//! call in it) or an escalation policy, and what they say to them; and how a policy asked for
//! moves through its steps.

use serde::Deserialize;

use crate::domain::DomainError;

/// Who is asked for: a person by handle, a schedule's on-call person, or an escalation policy's
/// people step by step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Person(String),
    Schedule(String),
    Policy(String),
}

impl Asked {
    /// The one target named among the three fields (as a form or a JSON body sends them; empty
    /// ones count as absent); else which field is wrong.
    pub fn from_fields(
        person: Option<&str>,
        schedule: Option<&str>,
        policy: Option<&str>,
    ) -> Result<Asked, DomainError> {
        let given = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let named = [
            ("person", given(person)),
            ("schedule", given(schedule)),
            ("policy", given(policy)),
        ];
        let mut present = named.into_iter().filter_map(|(f, v)| v.map(|v| (f, v)));
        let Some((field, name)) = present.next() else {
            return Err(DomainError::invalid(
                "person",
                "name a person, a schedule (its on-call person is paged) or an escalation policy",
            ));
        };
        if let Some((other, _)) = present.next() {
            return Err(DomainError::invalid(
                other,
                format!("name one of person, schedule or policy, not both {field} and {other}"),
            ));
        }
        if name.chars().count() > 200 {
            return Err(DomainError::invalid(field, "at most 200 characters"));
        }
        Ok(match field {
            "person" => Asked::Person(name),
            "schedule" => Asked::Schedule(name),
            _ => Asked::Policy(name),
        })
    }

    /// From a form's kind (`person`, `schedule`, `policy`) and name.
    pub fn from_choice(kind: &str, name: &str) -> Result<Asked, DomainError> {
        match kind.trim() {
            "person" => Self::from_fields(Some(name), None, None),
            "schedule" => Self::from_fields(None, Some(name), None),
            "policy" => Self::from_fields(None, None, Some(name)),
            _ => Err(DomainError::invalid(
                "kind",
                "choose a person, a schedule or an escalation policy",
            )),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Asked::Person(_) => "person",
            Asked::Schedule(_) => "schedule",
            Asked::Policy(_) => "policy",
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Asked::Person(n) | Asked::Schedule(n) | Asked::Policy(n) => n,
        }
    }
}

/// A request as the API takes it: one of `person`, `schedule` or `policy`, and a message.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AskDraft {
    /// A person's handle: they are paged
    #[serde(default)]
    pub person: Option<String>,
    /// A schedule's name: whoever is on call in it now is paged
    #[serde(default)]
    pub schedule: Option<String>,
    /// An escalation policy's name: its first step is paged now, and each next step after the
    /// step's delay until someone it paged accepts
    #[serde(default)]
    pub policy: Option<String>,
    /// What the people paged are told (up to 2,000 characters)
    #[serde(default)]
    pub message: String,
}

impl AskDraft {
    pub fn checked(&self) -> Result<(Asked, String), DomainError> {
        let asked = Asked::from_fields(
            self.person.as_deref(),
            self.schedule.as_deref(),
            self.policy.as_deref(),
        )?;
        Ok((asked, check_message(&self.message)?))
    }
}

pub fn check_message(message: &str) -> Result<String, DomainError> {
    let message = message.trim();
    if message.chars().count() > 2000 {
        return Err(DomainError::invalid("message", "at most 2,000 characters"));
    }
    if message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t')
    {
        return Err(DomainError::invalid(
            "message",
            "control characters cannot be sent",
        ));
    }
    Ok(message.to_owned())
}

/// What a page asked for by `by` says to the person paged: who asks, for what, and the step of
/// a policy (`Some((step, of, policy))`, 1-based).
pub fn page_text(by: &str, message: &str, step: Option<(usize, usize, &str)>) -> String {
    let mut s = format!("{by} asks you to help");
    if let Some((step, of, policy)) = step {
        s.push_str(&format!(" (step {step} of {of}, {policy})"));
    }
    if !message.is_empty() {
        s.push_str(": ");
        s.push_str(message);
    }
    s
}

/// When a policy request has paged step `fired` (0-based) of `steps`: the next step to page and
/// after how many minutes, or `None` when that was the last one (then the request waits for an
/// answer without paging anyone else).
pub fn after_step(fired: usize, steps: usize, delay_minutes: i64) -> Option<(usize, i64)> {
    (fired + 1 < steps).then_some((fired + 1, delay_minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(e: DomainError) -> String {
        match e {
            DomainError::Invalid { field, .. } => field,
            DomainError::Conflict(m) => panic!("{m}"),
        }
    }

    #[test]
    fn exactly_one_target_is_named() {
        assert_eq!(
            Asked::from_fields(Some(" ben "), None, Some("")).unwrap(),
            Asked::Person("ben".into())
        );
        assert_eq!(
            Asked::from_fields(None, Some("Database primary"), None).unwrap(),
            Asked::Schedule("Database primary".into())
        );
        assert_eq!(
            field(Asked::from_fields(None, None, None).unwrap_err()),
            "person"
        );
        assert_eq!(
            field(Asked::from_fields(Some("ben"), None, Some("Database")).unwrap_err()),
            "policy"
        );
        assert_eq!(
            field(Asked::from_fields(None, Some(&"x".repeat(201)), None).unwrap_err()),
            "schedule"
        );
        assert_eq!(field(Asked::from_choice("team", "db").unwrap_err()), "kind");
        assert_eq!(
            Asked::from_choice("policy", "Database").unwrap(),
            Asked::Policy("Database".into())
        );
    }

    #[test]
    fn messages_are_checked_and_said() {
        assert_eq!(
            check_message("  look at the replica \n").unwrap(),
            "look at the replica"
        );
        assert_eq!(
            field(check_message(&"a".repeat(2001)).unwrap_err()),
            "message"
        );
        assert_eq!(field(check_message("bell\u{7}").unwrap_err()), "message");
        assert_eq!(page_text("Ana", "", None), "Ana asks you to help");
        assert_eq!(
            page_text("Ana", "replica lag", Some((2, 3, "Database"))),
            "Ana asks you to help (step 2 of 3, Database): replica lag"
        );
    }

    #[test]
    fn a_policy_request_pages_each_step_once_then_waits() {
        assert_eq!(after_step(0, 3, 5), Some((1, 5)));
        assert_eq!(after_step(1, 3, 10), Some((2, 10)));
        assert_eq!(after_step(2, 3, 15), None);
        assert_eq!(after_step(0, 1, 5), None);
    }
}
