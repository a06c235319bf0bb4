//! What makes a valid person: a name, an email and a handle to mention them by.

use serde::Deserialize;

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
