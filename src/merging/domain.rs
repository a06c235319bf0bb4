//! Pure rules of merging and splitting incidents: which two may merge, the severity the one
//! kept takes, which alerts a split may take and what the new incident is called.

use crate::domain::{DomainError, IncidentKey, Severity};

/// The most alerts one split moves.
pub const MAX_SPLIT: usize = 1_000;

/// An incident as a merge or split judges it.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub key: IncidentKey,
    /// triggered, acknowledged, mitigated or resolved
    pub status: &'a str,
    pub restricted: bool,
}

/// Whether `from` may merge into `into` (the one named in the field `into`); `same_access`:
/// the two are kept to the same people (or both open to everyone).
pub fn check_merge(from: Side<'_>, into: Side<'_>, same_access: bool) -> Result<(), DomainError> {
    if from.key == into.key {
        return Err(DomainError::invalid(
            "into",
            "an incident cannot merge into itself; name the incident it duplicates",
        ));
    }
    if from.status == "resolved" {
        return Err(DomainError::Conflict(format!(
            "{} is resolved already: nothing of it is still going on to merge. Link it to {} \
             as related instead.",
            from.key, into.key
        )));
    }
    if into.status == "resolved" {
        return Err(DomainError::invalid(
            "into",
            format!("{} is resolved; reopen it first to merge into it", into.key),
        ));
    }
    if from.restricted && !same_access {
        return Err(DomainError::invalid(
            "into",
            format!(
                "{} is kept to some teams and people, and {} is not kept to the same ones: its \
                 alerts and roles would be seen by others. Give {} the same access first",
                from.key, into.key, into.key
            ),
        ));
    }
    Ok(())
}

/// The severity the incident kept takes when `from` merges into it: the worse of the two, or
/// `None` when it keeps its own.
pub fn raised_severity(from: Severity, into: Severity) -> Option<Severity> {
    (from < into).then_some(from)
}

/// What a split takes: alerts by id, or whole lines of the incident page by their summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    Alerts(Vec<i64>),
    Lines(Vec<String>),
}

/// A split's choice as sent: exactly one of `alerts` (ids) and `lines` (summaries), neither
/// empty, at most [`MAX_SPLIT`] of either.
pub fn check_taken(alerts: &[i64], lines: &[String]) -> Result<Taken, DomainError> {
    match (alerts.is_empty(), lines.is_empty()) {
        (true, true) => Err(DomainError::invalid(
            "alerts",
            "choose the alerts to move out: their ids in alerts, or lines (summaries) in lines",
        )),
        (false, false) => Err(DomainError::invalid(
            "lines",
            "name the alerts by id in alerts or by line in lines, not both",
        )),
        (false, true) => {
            if alerts.len() > MAX_SPLIT {
                return Err(DomainError::invalid(
                    "alerts",
                    format!("at most {MAX_SPLIT} alerts move out at once"),
                ));
            }
            if let Some(bad) = alerts.iter().find(|id| **id <= 0) {
                return Err(DomainError::invalid(
                    "alerts",
                    format!("{bad} is not an alert id"),
                ));
            }
            let mut ids = alerts.to_vec();
            ids.sort_unstable();
            ids.dedup();
            Ok(Taken::Alerts(ids))
        }
        (true, false) => {
            if lines.len() > MAX_SPLIT {
                return Err(DomainError::invalid(
                    "lines",
                    format!("at most {MAX_SPLIT} lines move out at once"),
                ));
            }
            let mut named: Vec<String> = lines.to_vec();
            named.sort();
            named.dedup();
            Ok(Taken::Lines(named))
        }
    }
}

/// Whether the alerts found for a split may move: some of them, all of those asked for (by
/// id), and not every alert of the incident.
pub fn check_split(
    key: IncidentKey,
    asked: &Taken,
    found: usize,
    of_incident: i64,
) -> Result<(), DomainError> {
    let field = match asked {
        Taken::Alerts(_) => "alerts",
        Taken::Lines(_) => "lines",
    };
    if found == 0 {
        return Err(DomainError::invalid(
            field,
            format!("none of these is an alert of {key}"),
        ));
    }
    if let Taken::Alerts(ids) = asked
        && found < ids.len()
    {
        return Err(DomainError::invalid(
            "alerts",
            format!(
                "{} of these {} ids are not alerts of {key}",
                ids.len() - found,
                ids.len()
            ),
        ));
    }
    if found > MAX_SPLIT {
        return Err(DomainError::invalid(
            field,
            format!("those lines hold more than {MAX_SPLIT} alerts; move them out by id, in parts"),
        ));
    }
    if i64::try_from(found).unwrap_or(i64::MAX) >= of_incident {
        return Err(DomainError::invalid(
            field,
            format!(
                "that is every alert of {key}: nothing would be left in it. Change its title or \
                 service instead"
            ),
        ));
    }
    Ok(())
}

/// A split opens an incident for alerts still firing: one of only resolved alerts would page
/// for nothing and never resolve by itself.
pub fn check_firing(asked: &Taken, chosen_open: i64) -> Result<(), DomainError> {
    if chosen_open > 0 {
        return Ok(());
    }
    let field = match asked {
        Taken::Alerts(_) => "alerts",
        Taken::Lines(_) => "lines",
    };
    Err(DomainError::invalid(
        field,
        "none of these alerts is firing: a new incident for them would page for nothing",
    ))
}

/// The new incident's title: the one given, or the first alert's summary.
pub fn split_title(given: &str, first_summary: &str) -> String {
    match given.trim() {
        "" => crate::domain::shorten(first_summary.trim(), 200),
        title => title.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(n: i64, status: &str, restricted: bool) -> Side<'_> {
        Side {
            key: IncidentKey(n),
            status,
            restricted,
        }
    }

    fn field(e: DomainError) -> String {
        match e {
            DomainError::Invalid { field, .. } => field,
            DomainError::Conflict(m) => format!("conflict: {m}"),
        }
    }

    #[test]
    fn only_an_open_incident_merges_into_another_open_one_kept_to_the_same_people() {
        let open = |n| side(n, "acknowledged", false);
        assert!(check_merge(open(2), open(1), true).is_ok());
        assert_eq!(
            field(check_merge(open(1), open(1), true).unwrap_err()),
            "into"
        );
        let done = check_merge(side(2, "resolved", false), open(1), true).unwrap_err();
        assert!(field(done).starts_with("conflict"));
        assert_eq!(
            field(check_merge(open(2), side(1, "resolved", false), true).unwrap_err()),
            "into"
        );
        // A restricted one merges only into one kept to the same people; an open one may
        // merge into a restricted one.
        let secret = side(2, "triggered", true);
        assert_eq!(
            field(check_merge(secret, open(1), false).unwrap_err()),
            "into"
        );
        assert!(check_merge(open(1), secret, false).is_ok());
        let other = side(3, "mitigated", true);
        assert_eq!(
            field(check_merge(secret, other, false).unwrap_err()),
            "into"
        );
        assert!(check_merge(secret, other, true).is_ok());
    }

    #[test]
    fn the_kept_incident_takes_the_worse_severity() {
        assert_eq!(
            raised_severity(Severity::Sev1, Severity::Sev3),
            Some(Severity::Sev1)
        );
        assert_eq!(raised_severity(Severity::Sev3, Severity::Sev2), None);
        assert_eq!(raised_severity(Severity::Sev2, Severity::Sev2), None);
    }

    #[test]
    fn a_split_names_alerts_or_lines_and_never_takes_everything() {
        let k = IncidentKey(7);
        assert_eq!(field(check_taken(&[], &[]).unwrap_err()), "alerts");
        assert_eq!(
            field(check_taken(&[1], &["x".into()]).unwrap_err()),
            "lines"
        );
        assert_eq!(field(check_taken(&[0], &[]).unwrap_err()), "alerts");
        assert_eq!(
            check_taken(&[3, 1, 3], &[]).unwrap(),
            Taken::Alerts(vec![1, 3])
        );
        let too_many: Vec<i64> = (1..=1_001).collect();
        assert_eq!(field(check_taken(&too_many, &[]).unwrap_err()), "alerts");
        let two = Taken::Alerts(vec![1, 2]);
        assert!(check_split(k, &two, 2, 5).is_ok());
        assert_eq!(field(check_split(k, &two, 0, 5).unwrap_err()), "alerts");
        assert_eq!(field(check_split(k, &two, 1, 5).unwrap_err()), "alerts");
        assert_eq!(field(check_split(k, &two, 2, 2).unwrap_err()), "alerts");
        let line = Taken::Lines(vec!["Disk full".into()]);
        assert_eq!(field(check_split(k, &line, 4, 4).unwrap_err()), "lines");
        assert!(check_split(k, &line, 3, 4).is_ok());
        assert_eq!(field(check_firing(&line, 0).unwrap_err()), "lines");
        assert!(check_firing(&two, 1).is_ok());
    }

    #[test]
    fn a_split_is_called_what_it_is_given_or_its_first_alert() {
        assert_eq!(split_title("  Cache ", "Disk full"), "Cache");
        assert_eq!(split_title("", " Disk full "), "Disk full");
        assert_eq!(split_title("", &"x".repeat(300)).chars().count(), 200);
    }
}
