//! What a claim's subject may be, and when two subjects are the same lead.

use std::collections::BTreeSet;

use rust_stemmers::{Algorithm, Stemmer};

use crate::domain::DomainError;

/// How long a claim holds without renewal, unless configured otherwise.
pub const DEFAULT_MINUTES: i64 = 30;

pub const MAX_SUBJECT: usize = 200;

/// A subject as typed: trimmed, one line, 1–200 characters.
pub fn check_subject(subject: &str) -> Result<String, DomainError> {
    let s = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.is_empty() {
        return Err(DomainError::invalid(
            "subject",
            "say what you are looking into, e.g. \"processor status page\"",
        ));
    }
    if s.chars().count() > MAX_SUBJECT {
        return Err(DomainError::invalid(
            "subject",
            format!("at most {MAX_SUBJECT} characters"),
        ));
    }
    if !crate::domain::storable(&s) {
        return Err(DomainError::invalid(
            "subject",
            "contains a character that cannot be stored",
        ));
    }
    Ok(s)
}

/// Words that say how someone works on a lead rather than which lead it is.
const NOT_THE_LEAD: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "to",
    "in",
    "into",
    "on",
    "at",
    "for",
    "and",
    "or",
    "is",
    "are",
    "it",
    "its",
    "this",
    "that",
    "with",
    "by",
    "from",
    "s",
    "i",
    "im",
    "m",
    "we",
    "my",
    "our",
    "look",
    "looking",
    "check",
    "checking",
    "investigate",
    "investigating",
    "digging",
    "dig",
    "reading",
    "read",
    "review",
    "reviewing",
    "working",
    "work",
    "whether",
    "if",
    "why",
    "what",
    "now",
];

/// The lead a subject names, as stems: `Checking the processor's status page` and
/// `processor status pages` both give {page, processor, status}.
pub fn lead(subject: &str) -> BTreeSet<String> {
    let stemmer = Stemmer::create(Algorithm::English);
    subject
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !NOT_THE_LEAD.contains(&w.as_str()))
        .map(|w| stemmer.stem(&w).into_owned())
        .collect()
}

/// Two subjects name the same lead when at least two thirds of the shorter one's words (after
/// stemming) are in the other: `database` and `database failover` are; `stripe webhooks` and
/// `stripe status page` are not.
pub fn same_lead(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let shorter = a.len().min(b.len());
    if shorter == 0 {
        return false;
    }
    let shared = a.intersection(b).count();
    shared * 3 >= shorter * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_one_trimmed_line() {
        assert_eq!(
            check_subject("  processor\n status   page ").unwrap(),
            "processor status page"
        );
        for bad in ["", "   \n\t", &"x".repeat(201)] {
            let err = check_subject(bad).unwrap_err();
            assert!(matches!(err, DomainError::Invalid { ref field, .. } if field == "subject"));
        }
        assert!(check_subject("nul\u{0}byte").is_err());
    }

    #[test]
    fn same_lead_after_stemming_and_dropping_how() {
        let cases = [
            (
                "processor status page",
                "Checking the processor's status page",
                true,
            ),
            ("processor status page", "processor status pages", true),
            ("database", "database failover", true),
            ("retry storm from checkout", "checkout retries", true),
            ("stripe webhooks", "stripe status page", false),
            ("DNS", "database", false),
            ("looking into it", "checking", false),
        ];
        for (a, b, same) in cases {
            assert_eq!(same_lead(&lead(a), &lead(b)), same, "{a:?} vs {b:?}");
            assert_eq!(same_lead(&lead(b), &lead(a)), same, "{b:?} vs {a:?}");
        }
    }
}
