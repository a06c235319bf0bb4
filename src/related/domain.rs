//! Pure rules of related incidents: naming the other incident, the note, and the words a
//! suggestion search looks for.

use crate::domain::{DomainError, IncidentKey};

/// The longest note a link keeps.
pub const MAX_NOTE_CHARS: usize = 1000;

/// How many suggestions the incident page offers.
pub const SUGGESTIONS: i64 = 5;

/// The other incident as a person names it: `INC-184`, `inc-184` or `184`.
pub fn other_incident(field: &str, value: &str) -> Result<IncidentKey, DomainError> {
    let v = value.trim();
    let key = if v.bytes().all(|b| b.is_ascii_digit()) {
        IncidentKey::number(v)
    } else {
        IncidentKey::parse(v)
    };
    key.ok_or_else(|| {
        DomainError::invalid(
            field,
            format!("{v:?} is not an incident; name it as INC-<number>, e.g. INC-184"),
        )
    })
}

/// The note of a link: trimmed, at most 1000 characters (may be empty).
pub fn check_note(note: &str) -> Result<String, DomainError> {
    let note = note.trim();
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(DomainError::invalid(
            "note",
            format!("at most {MAX_NOTE_CHARS} characters"),
        ));
    }
    Ok(note.to_owned())
}

/// An incident cannot be related to itself.
pub fn check_pair(this: IncidentKey, other: IncidentKey) -> Result<(), DomainError> {
    if this == other {
        return Err(DomainError::invalid(
            "incident",
            format!("{this} cannot be related to itself"),
        ));
    }
    Ok(())
}

/// The words of an incident's title and summary as a PostgreSQL `to_tsquery` that matches any
/// of them: `checkout | hangs | merchants`. Only letters and digits pass (so nothing the text
/// holds can be read as query syntax); words shorter than three characters are dropped, and at
/// most 30 distinct words are kept. `None` when no word is left.
pub fn search_terms(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 3
            && w.chars().any(char::is_alphabetic)
            && !words.contains(&w)
            && words.len() < 30
        {
            words.push(w);
        }
    }
    (!words.is_empty()).then(|| words.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_incident_is_named_by_key_or_number() {
        assert_eq!(
            other_incident("incident", " INC-184 ").unwrap(),
            IncidentKey(184)
        );
        assert_eq!(other_incident("incident", "184").unwrap(), IncidentKey(184));
        assert_eq!(other_incident("incident", "inc-7").unwrap(), IncidentKey(7));
        for bad in ["", "PAY-184", "INC-", "INC-0", "-3"] {
            assert!(
                matches!(other_incident("incident", bad), Err(DomainError::Invalid { field, .. }) if field == "incident"),
                "{bad:?}"
            );
        }
        assert!(check_pair(IncidentKey(1), IncidentKey(1)).is_err());
        assert!(check_pair(IncidentKey(1), IncidentKey(2)).is_ok());
    }

    #[test]
    fn notes_are_trimmed_and_bounded() {
        assert_eq!(check_note("  same retry path ").unwrap(), "same retry path");
        assert!(check_note(&"x".repeat(1001)).is_err());
    }

    #[test]
    fn search_terms_keep_words_only() {
        assert_eq!(
            search_terms("Checkout hangs, then fails: p99 9s (checkout) & 'x' | !").as_deref(),
            Some("checkout | hangs | then | fails | p99")
        );
        assert_eq!(search_terms("a b 12 ::"), None);
        assert_eq!(
            search_terms(&"word ".repeat(100)).as_deref(),
            Some("word"),
            "distinct"
        );
    }
}
