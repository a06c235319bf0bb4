//! What makes a valid person: a name, an email and a handle to mention them by.

use serde::{Deserialize, Serialize};

use crate::domain::DomainError;

#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonDraft {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub handle: String,
}

/// An address like ana@example.com (one `@`, a dotted domain, no spaces).
pub fn check_email(email: &str) -> Result<(), DomainError> {
    let ok = email.len() <= 254
        && !email.chars().any(char::is_whitespace)
        && matches!(email.split_once('@'), Some((local, domain))
            if !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.'));
    if !ok {
        return Err(DomainError::invalid(
            "email",
            "an email address like ana@example.com is required",
        ));
    }
    Ok(())
}

impl PersonDraft {
    pub fn validated(mut self) -> Result<Self, DomainError> {
        self.name = self.name.trim().to_owned();
        self.email = self.email.trim().to_owned();
        self.handle = self.handle.trim().to_ascii_lowercase();
        if self.name.is_empty() || self.name.chars().count() > 100 {
            return Err(DomainError::invalid(
                "name",
                "a name of 1 to 100 characters is required",
            ));
        }
        check_email(&self.email)?;
        let handle_ok = !self.handle.is_empty()
            && self.handle.len() <= 40
            && self.handle.bytes().enumerate().all(|(i, b)| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || (i > 0 && matches!(b, b'.' | b'_' | b'-'))
            });
        if !handle_ok {
            return Err(DomainError::invalid(
                "handle",
                "use 1–40 lowercase letters, digits, dots, dashes or underscores (e.g. ana.ribeiro)",
            ));
        }
        Ok(self)
    }
}

/// A person's own settings: the zone their days and nights are in (on-call load counts pages
/// outside 08:00–20:00 there, and their notices speak its time), whether they hear about their
/// on-call hand-offs, and how many hours before a shift they are reminded of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Preferences {
    /// An IANA time zone, e.g. Europe/Lisbon
    #[serde(default = "utc")]
    pub time_zone: String,
    /// Hear when your on-call shift starts and ends (default on)
    #[serde(default = "yes")]
    pub handoff_notices: bool,
    /// Be reminded this many hours (1–48) before a shift starts; none: no reminder
    #[serde(default)]
    pub handoff_reminder_hours: Option<i32>,
}

fn utc() -> String {
    "UTC".to_owned()
}

fn yes() -> bool {
    true
}

impl Default for Preferences {
    fn default() -> Self {
        Self {
            time_zone: utc(),
            handoff_notices: true,
            handoff_reminder_hours: None,
        }
    }
}

impl Preferences {
    /// The zone, checked: a zone PostgreSQL and Quell both know by its IANA name.
    pub fn zone(&self) -> chrono_tz::Tz {
        self.time_zone.parse().unwrap_or(chrono_tz::UTC)
    }

    /// Checked and tidied, or the field that is wrong and why.
    pub fn validated(mut self) -> Result<Self, DomainError> {
        self.time_zone = self.time_zone.trim().to_owned();
        if self.time_zone.parse::<chrono_tz::Tz>().is_err() {
            return Err(DomainError::invalid(
                "time_zone",
                format!(
                    "{:?} is not a time zone; use an IANA name such as Europe/Lisbon or UTC",
                    self.time_zone.chars().take(64).collect::<String>()
                ),
            ));
        }
        if let Some(h) = self.handoff_reminder_hours
            && !(1..=48).contains(&h)
        {
            return Err(DomainError::invalid(
                "handoff_reminder_hours",
                "a reminder is 1 to 48 hours before the shift, or none",
            ));
        }
        Ok(self)
    }
}

/// A handle made from an email's local part: `ana.ribeiro@x` → `ana.ribeiro`.
pub fn handle_from_email(email: &str) -> String {
    let local = email
        .split('@')
        .next()
        .unwrap_or("user")
        .to_ascii_lowercase();
    let cleaned: String = local
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let cleaned = cleaned.trim_start_matches(['.', '_', '-']).to_owned();
    if cleaned.is_empty() {
        "user".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferences_name_the_wrong_field() {
        let ok = Preferences {
            time_zone: " Europe/Lisbon ".into(),
            handoff_notices: false,
            handoff_reminder_hours: Some(12),
        }
        .validated()
        .unwrap();
        assert_eq!(ok.time_zone, "Europe/Lisbon");
        assert_eq!(ok.zone(), chrono_tz::Europe::Lisbon);
        let zone = Preferences {
            time_zone: "Mars/Olympus".into(),
            ..Preferences::default()
        };
        let field = |e: DomainError| match e {
            DomainError::Invalid { field, .. } => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(zone.validated().unwrap_err()), "time_zone");
        for hours in [0, 49, -1] {
            let p = Preferences {
                handoff_reminder_hours: Some(hours),
                ..Preferences::default()
            };
            assert_eq!(field(p.validated().unwrap_err()), "handoff_reminder_hours");
        }
        let read: Preferences = serde_json::from_str("{}").unwrap();
        assert_eq!(read, Preferences::default());
    }

    #[test]
    fn handles_come_from_the_local_part() {
        assert_eq!(handle_from_email("Ana.Ribeiro@example.com"), "ana.ribeiro");
        assert_eq!(handle_from_email("a+b@example.com"), "a-b");
        assert_eq!(handle_from_email("+@example.com"), "user");
    }

    #[test]
    fn people_need_a_name_an_email_and_a_handle() {
        let ok = PersonDraft {
            name: "Ana Ribeiro".into(),
            email: "ana@example.com".into(),
            handle: "Ana".into(),
        };
        assert_eq!(ok.clone().validated().unwrap().handle, "ana");
        assert!(
            PersonDraft {
                email: "ana".into(),
                ..ok.clone()
            }
            .validated()
            .is_err()
        );
        assert!(
            PersonDraft {
                handle: "a b".into(),
                ..ok.clone()
            }
            .validated()
            .is_err()
        );
        assert!(
            PersonDraft {
                name: " ".into(),
                ..ok
            }
            .validated()
            .is_err()
        );
    }
}
