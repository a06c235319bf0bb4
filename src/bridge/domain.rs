//! What a bridge is and when one is wanted.

use serde::{Deserialize, Serialize};

use crate::domain::DomainError;

/// Where responders meet: a call (video or phone bridge) and a chat channel. Either may be
/// missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Bridge {
    pub call_url: Option<String>,
    pub chat_url: Option<String>,
}

fn check_link(field: &str, value: Option<&str>) -> Result<Option<String>, DomainError> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let parsed = url::Url::parse(v).map_err(|_| {
        DomainError::invalid(field, format!("{v:?} is not a link; give an https:// URL"))
    })?;
    if !matches!(parsed.scheme(), "https" | "http") || parsed.host_str().is_none() {
        return Err(DomainError::invalid(
            field,
            "a bridge link starts with https:// (or http://) and names a host",
        ));
    }
    if v.len() > 2000 {
        return Err(DomainError::invalid(field, "at most 2,000 characters"));
    }
    Ok(Some(v.to_owned()))
}

impl Bridge {
    /// Both links as a person typed them: blank is none; anything else must be an http(s) URL.
    pub fn parse(call_url: Option<&str>, chat_url: Option<&str>) -> Result<Self, DomainError> {
        Ok(Self {
            call_url: check_link("call_url", call_url)?,
            chat_url: check_link("chat_url", chat_url)?,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.call_url.is_none() && self.chat_url.is_none()
    }

    /// One line for messages and the timeline: `Bridge: call <url> · chat <url>`.
    pub fn line(&self) -> Option<String> {
        let parts: Vec<String> = [("call", &self.call_url), ("chat", &self.chat_url)]
            .into_iter()
            .filter_map(|(what, url)| url.as_ref().map(|u| format!("{what} {u}")))
            .collect();
        (!parts.is_empty()).then(|| format!("Bridge: {}", parts.join(" · ")))
    }

    /// What is missing of `self` filled from `defaults`.
    pub fn or(&self, defaults: &Bridge) -> Bridge {
        Bridge {
            call_url: self.call_url.clone().or_else(|| defaults.call_url.clone()),
            chat_url: self.chat_url.clone().or_else(|| defaults.chat_url.clone()),
        }
    }
}

/// The links as an API body gives them.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Links {
    /// The call (video or phone bridge), an https:// URL; null or blank for none
    #[serde(default)]
    pub call_url: Option<String>,
    /// The chat channel, an https:// URL; null or blank for none
    #[serde(default)]
    pub chat_url: Option<String>,
}

impl Links {
    pub fn checked(&self) -> Result<Bridge, DomainError> {
        Bridge::parse(self.call_url.as_deref(), self.chat_url.as_deref())
    }
}

/// A Sev1 or Sev2 gets a bridge: Quell sets the service's defaults when it has some, and asks
/// for one on the page when it has none.
pub fn wanted(severity: crate::domain::Severity) -> bool {
    severity <= crate::domain::Severity::Sev2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Severity;

    #[test]
    fn links_are_http_urls_and_blank_is_none() {
        let b = Bridge::parse(Some(" https://meet.example.com/inc "), Some("")).unwrap();
        assert_eq!(b.call_url.as_deref(), Some("https://meet.example.com/inc"));
        assert_eq!(b.chat_url, None);
        for bad in [
            "javascript:alert(1)",
            "meet.example.com",
            "ftp://x.example",
            "https://",
        ] {
            let err = Bridge::parse(None, Some(bad)).unwrap_err();
            assert!(
                matches!(&err, DomainError::Invalid { field, .. } if field == "chat_url"),
                "{bad}: {err:?}"
            );
        }
        let long = format!("https://x.example/{}", "a".repeat(2000));
        assert!(Bridge::parse(Some(&long), None).is_err());
    }

    #[test]
    fn line_names_what_is_there() {
        assert_eq!(Bridge::default().line(), None);
        let b = Bridge {
            call_url: Some("https://meet.example/a".into()),
            chat_url: Some("https://chat.example/b".into()),
        };
        assert_eq!(
            b.line().unwrap(),
            "Bridge: call https://meet.example/a · chat https://chat.example/b"
        );
        let only_chat = Bridge {
            chat_url: Some("https://chat.example/b".into()),
            ..Bridge::default()
        };
        assert_eq!(
            only_chat.line().unwrap(),
            "Bridge: chat https://chat.example/b"
        );
    }

    #[test]
    fn defaults_fill_only_what_is_missing() {
        let mine = Bridge {
            call_url: Some("https://meet.example/mine".into()),
            chat_url: None,
        };
        let defaults = Bridge {
            call_url: Some("https://meet.example/team".into()),
            chat_url: Some("https://chat.example/team".into()),
        };
        let both = mine.or(&defaults);
        assert_eq!(both.call_url.as_deref(), Some("https://meet.example/mine"));
        assert_eq!(both.chat_url.as_deref(), Some("https://chat.example/team"));
    }

    #[test]
    fn only_sev1_and_sev2_want_a_bridge() {
        assert!(wanted(Severity::Sev1));
        assert!(wanted(Severity::Sev2));
        assert!(!wanted(Severity::Sev3));
        assert!(!wanted(Severity::Sev4));
    }
}
