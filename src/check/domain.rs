//! What a check found, and how it is said.

/// One check's verdict: its name, whether it holds, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub name: &'static str,
    pub holds: bool,
    pub detail: String,
}

impl Finding {
    /// A check over rows that break it: it holds when there are none; the first few are named.
    pub fn over(name: &'static str, what: &str, broken: &[String]) -> Self {
        if broken.is_empty() {
            return Self {
                name,
                holds: true,
                detail: what.to_owned(),
            };
        }
        let shown: Vec<&str> = broken.iter().take(5).map(String::as_str).collect();
        let more = broken.len().saturating_sub(shown.len());
        Self {
            name,
            holds: false,
            detail: format!(
                "{} broken: {}{}",
                broken.len(),
                shown.join("; "),
                if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                }
            ),
        }
    }

    /// The line `quell check` prints.
    pub fn line(&self) -> String {
        format!(
            "{} {}: {}",
            if self.holds { "ok  " } else { "FAIL" },
            self.name,
            self.detail
        )
    }
}

/// Which of this binary's migrations (version, checksum) the database lacks, holds with another
/// checksum, or failed; and which it holds that this binary does not know (a newer Quell's).
pub fn migrations(known: &[(i64, Vec<u8>)], applied: &[(i64, Vec<u8>, bool)]) -> Vec<String> {
    let mut broken = Vec::new();
    for (version, checksum) in known {
        match applied.iter().find(|a| a.0 == *version) {
            None => broken.push(format!("{version} not applied (run quell migrate)")),
            Some((_, _, false)) => broken.push(format!("{version} failed part-way")),
            Some((_, c, _)) if c != checksum => {
                broken.push(format!("{version} applied with other contents"))
            }
            Some(_) => {}
        }
    }
    for (version, _, _) in applied {
        if !known.iter().any(|k| k.0 == *version) {
            broken.push(format!(
                "{version} is unknown to this binary (a newer Quell's?)"
            ));
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_names_the_first_rows_that_break_it() {
        let ok = Finding::over("ledger", "sums agree", &[]);
        assert!(ok.holds);
        assert_eq!(ok.line(), "ok   ledger: sums agree");
        let broken: Vec<String> = (1..=7).map(|n| format!("person {n}")).collect();
        let f = Finding::over("ledger", "sums agree", &broken);
        assert!(!f.holds);
        assert_eq!(
            f.line(),
            "FAIL ledger: 7 broken: person 1; person 2; person 3; person 4; person 5; and 2 more"
        );
    }

    #[test]
    fn migrations_missing_changed_failed_or_unknown_are_named() {
        let known = vec![(1, vec![1]), (2, vec![2]), (3, vec![3])];
        let applied = vec![(1, vec![1], true), (2, vec![9], true), (4, vec![4], true)];
        assert_eq!(
            migrations(&known, &applied),
            vec![
                "2 applied with other contents".to_owned(),
                "3 not applied (run quell migrate)".to_owned(),
                "4 is unknown to this binary (a newer Quell's?)".to_owned(),
            ]
        );
        let all = vec![(1, vec![1], true), (2, vec![2], true), (3, vec![3], true)];
        assert!(migrations(&known, &all).is_empty());
        assert_eq!(
            migrations(&known[..1], &[(1, vec![1], false)]),
            vec!["1 failed part-way".to_owned()]
        );
    }
}
