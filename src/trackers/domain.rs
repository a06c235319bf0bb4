//! Pure rules of work-item trackers: what a prefix and a link template may be, and the link a
//! work item gets.

use crate::domain::DomainError;

/// A tracker as the link rule needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRule {
    pub prefix: String,
    pub url_template: String,
}

/// `AB#`, `LIN-`, `JIRA-`: a letter, up to 19 letters, digits or `_`, then `#` or `-`.
pub fn check_prefix(raw: &str) -> Result<String, DomainError> {
    let p = raw.trim();
    let letters_ok = p.strip_suffix(['#', '-']).is_some_and(|head| {
        head.len() <= 20
            && head.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if letters_ok {
        Ok(p.to_owned())
    } else {
        Err(DomainError::invalid(
            "prefix",
            format!(
                "{p:?} is not a work-item prefix; write the letters before the number and the # or - after them, such as AB# or JIRA-"
            ),
        ))
    }
}

/// An http(s) URL with `{n}` where the number goes, at most 500 characters.
pub fn check_template(raw: &str) -> Result<String, DomainError> {
    let t = raw.trim();
    let scheme_ok = t.starts_with("https://") || t.starts_with("http://");
    if !scheme_ok || !t.contains("{n}") || t.len() > 500 || t.chars().any(char::is_whitespace) {
        return Err(DomainError::invalid(
            "url_template",
            "an http(s) URL without spaces, with {n} where the work item's number goes, such as https://dev.azure.com/org/project/_workitems/edit/{n}",
        ));
    }
    Ok(t.to_owned())
}

pub fn check_name(raw: &str) -> Result<String, DomainError> {
    let n = raw.trim();
    if n.is_empty() || n.chars().count() > 100 {
        return Err(DomainError::invalid("name", "1 to 100 characters"));
    }
    Ok(n.to_owned())
}

/// The link of a work item such as `AB#2311`: the first tracker whose prefix it starts with
/// (ignoring case) followed only by digits. `None` when no tracker knows it.
pub fn link(work_item: &str, rules: &[LinkRule]) -> Option<String> {
    let w = work_item.trim();
    rules.iter().find_map(|r| {
        let head = w.get(..r.prefix.len())?;
        let number = &w[r.prefix.len()..];
        (head.eq_ignore_ascii_case(&r.prefix)
            && !number.is_empty()
            && number.len() <= 20
            && number.chars().all(|c| c.is_ascii_digit()))
        .then(|| r.url_template.replace("{n}", number))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Vec<LinkRule> {
        vec![
            LinkRule {
                prefix: "AB#".into(),
                url_template: "https://dev.azure.com/orbitpay/payments/_workitems/edit/{n}".into(),
            },
            LinkRule {
                prefix: "JIRA-".into(),
                url_template: "https://orbitpay.atlassian.net/browse/JIRA-{n}".into(),
            },
        ]
    }

    #[test]
    fn work_items_of_known_trackers_become_links() {
        assert_eq!(
            link("AB#2311", &rules()).as_deref(),
            Some("https://dev.azure.com/orbitpay/payments/_workitems/edit/2311")
        );
        assert_eq!(
            link(" jira-42 ", &rules()).as_deref(),
            Some("https://orbitpay.atlassian.net/browse/JIRA-42")
        );
    }

    #[test]
    fn anything_else_stays_text() {
        for w in [
            "",
            "AB#",
            "AB#12x",
            "AB#1\"onmouseover=",
            "LIN-7",
            "AB 2311",
            "ÅB#1",
            "AB#1/../x",
        ] {
            assert_eq!(link(w, &rules()), None, "{w:?}");
        }
    }

    #[test]
    fn prefixes_and_templates_are_checked() {
        for ok in ["AB#", "LIN-", "JIRA-", "a_1#"] {
            assert!(check_prefix(ok).is_ok(), "{ok}");
        }
        for bad in ["", "#", "AB", "1AB#", "A B#", "AB##", "<b>#", "Å#", "ABÅ"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
        assert!(check_template("https://linear.app/acme/issue/LIN-{n}").is_ok());
        for bad in [
            "javascript:alert(1)//{n}",
            "https://example.com/no-number",
            "ftp://x/{n}",
            "https://x/{n} y",
        ] {
            assert!(check_template(bad).is_err(), "{bad}");
        }
    }
}
