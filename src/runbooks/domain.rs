//! What makes a valid runbook: a name, an http(s) link or none, one owner (a service or a
//! routing rule) and at most 50 steps of at most 300 characters.

use serde::{Deserialize, Serialize};

use crate::domain::DomainError;

pub const MAX_STEPS: usize = 50;
const MAX_STEP_CHARS: usize = 300;

/// A runbook as a person or a script submits it, before checking.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunbookDraft {
    /// e.g. `High error rate`
    pub name: String,
    /// Where the full runbook lives (http or https)
    #[serde(default)]
    pub link: Option<String>,
    /// The service whose incidents show it, by name; or give `rule` or `rule_id`
    #[serde(default)]
    pub service: Option<String>,
    /// The routing rule whose incidents show it, by id; or give `service` or `rule`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<i64>,
    /// The routing rule whose incidents show it, by name (one rule must have it); or give
    /// `service` or `rule_id`
    #[serde(default)]
    pub rule: Option<String>,
    /// The checklist, in order
    #[serde(default)]
    pub steps: Vec<String>,
}

/// Whose incidents show a runbook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    Service(String),
    Rule(i64),
    /// A routing rule by its name
    RuleNamed(String),
}

/// A runbook that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRunbook {
    pub name: String,
    pub link: String,
    pub owner: Owner,
    pub steps: Vec<String>,
}

impl RunbookDraft {
    pub fn checked(&self) -> Result<CheckedRunbook, DomainError> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(DomainError::invalid(
                "name",
                "name the runbook in 1 to 100 characters, e.g. High error rate",
            ));
        }
        let link = self.link.as_deref().unwrap_or_default().trim();
        if !link.is_empty()
            && (!(link.starts_with("https://") || link.starts_with("http://"))
                || link.len() > 2000
                || link.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(DomainError::invalid(
                "link",
                "an http:// or https:// address without spaces, at most 2000 characters",
            ));
        }
        let service = self
            .service
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let rule = self
            .rule
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let owner = match (service, self.rule_id, rule) {
            (Some(s), None, None) => Owner::Service(s.to_owned()),
            (None, Some(r), None) => Owner::Rule(r),
            (None, None, Some(r)) => Owner::RuleNamed(r.to_owned()),
            _ => {
                return Err(DomainError::invalid(
                    "service",
                    "give one owner: a service, or a routing rule (by rule name or rule_id)",
                ));
            }
        };
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        if steps.len() > MAX_STEPS {
            return Err(DomainError::invalid(
                "steps",
                format!("at most {MAX_STEPS} steps"),
            ));
        }
        if let Some(n) = steps
            .iter()
            .position(|s| s.chars().count() > MAX_STEP_CHARS)
        {
            return Err(DomainError::invalid(
                &format!("steps[{n}]"),
                format!("a step is at most {MAX_STEP_CHARS} characters"),
            ));
        }
        Ok(CheckedRunbook {
            name: name.to_owned(),
            link: link.to_owned(),
            owner,
            steps,
        })
    }
}

/// The steps as a form's text area holds them: one per line.
pub fn steps_from_lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> RunbookDraft {
        RunbookDraft {
            name: " High error rate ".into(),
            link: Some("https://runbooks.example.com/pg/5xx".into()),
            service: Some("payments-gateway".into()),
            steps: vec![
                " Check configuration changes of the last 24 h ".into(),
                "".into(),
                "Roll back".into(),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn a_runbook_has_a_name_one_owner_and_trimmed_steps() {
        let r = draft().checked().unwrap();
        assert_eq!(r.name, "High error rate");
        assert_eq!(r.owner, Owner::Service("payments-gateway".into()));
        assert_eq!(
            r.steps,
            ["Check configuration changes of the last 24 h", "Roll back"]
        );
        let field = |d: RunbookDraft| match d.checked() {
            Err(DomainError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(RunbookDraft {
                name: " ".into(),
                ..draft()
            }),
            "name"
        );
        assert_eq!(
            field(RunbookDraft {
                link: Some("ftp://x".into()),
                ..draft()
            }),
            "link"
        );
        assert_eq!(
            field(RunbookDraft {
                rule_id: Some(1),
                ..draft()
            }),
            "service"
        );
        assert_eq!(
            field(RunbookDraft {
                service: None,
                ..draft()
            }),
            "service"
        );
        assert_eq!(
            field(RunbookDraft {
                steps: vec!["ok".into(), "x".repeat(301)],
                ..draft()
            }),
            "steps[1]"
        );
        assert_eq!(
            field(RunbookDraft {
                steps: vec!["s".into(); 51],
                ..draft()
            }),
            "steps"
        );
        assert_eq!(
            RunbookDraft {
                service: None,
                rule_id: Some(7),
                ..draft()
            }
            .checked()
            .unwrap()
            .owner,
            Owner::Rule(7)
        );
        assert_eq!(
            RunbookDraft {
                service: None,
                rule: Some(" Payments alerts ".into()),
                ..draft()
            }
            .checked()
            .unwrap()
            .owner,
            Owner::RuleNamed("Payments alerts".into())
        );
        assert_eq!(
            field(RunbookDraft {
                service: None,
                rule_id: Some(7),
                rule: Some("Payments alerts".into()),
                ..draft()
            }),
            "service"
        );
    }

    #[test]
    fn form_steps_are_one_per_line() {
        assert_eq!(steps_from_lines("a\r\nb\n\nc"), ["a", "b", "", "c"]);
    }
}
