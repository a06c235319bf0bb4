//! Pure rules of action items: their types and statuses, and completion by type.

use crate::domain::DomainError;

/// The kinds of action item.
pub const ACTION_TYPES: [&str; 4] = ["prevent", "detect", "mitigate", "process"];

pub fn check_action_type(t: &str) -> Result<&'static str, DomainError> {
    let t = t.trim().to_ascii_lowercase();
    ACTION_TYPES
        .into_iter()
        .find(|known| *known == t)
        .ok_or_else(|| {
            DomainError::invalid(
                "type",
                format!("{t:?} is not an action type; use prevent, detect, mitigate or process"),
            )
        })
}

/// The states of an action item.
pub const ITEM_STATUSES: [&str; 4] = ["open", "in_progress", "done", "wont_do"];

pub fn check_item_status(s: &str) -> Result<String, DomainError> {
    let s = s
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '\''], "_")
        .replace("won_t", "wont");
    if ITEM_STATUSES.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(DomainError::invalid(
            "status",
            format!("{s:?} is not a status; use open, in_progress, done or wont_do"),
        ))
    }
}

/// The status filter of the action-item list: one status, `unfinished` (open or in progress),
/// or `any` (`None`: no filter).
pub fn check_status_filter(s: &str) -> Result<Option<String>, DomainError> {
    match s.trim() {
        "any" => Ok(None),
        UNFINISHED => Ok(Some(UNFINISHED.to_owned())),
        other => check_item_status(other).map(Some).map_err(|_| {
            DomainError::invalid(
                "status",
                format!(
                    "{other:?} is not a status; use open, in_progress, done, wont_do, unfinished \
                     or any"
                ),
            )
        }),
    }
}

/// The status filter for items still to do: open or in progress.
pub const UNFINISHED: &str = "unfinished";

/// Share of items done per type, for the completion rates: (type, done, all), from the number
/// of items of each (type, status).
pub fn completion_by_type<'a>(
    counts: impl IntoIterator<Item = (&'a str, &'a str, i64)>,
) -> Vec<(&'static str, usize, usize)> {
    let counts: Vec<(&str, &str, i64)> = counts.into_iter().collect();
    ACTION_TYPES
        .iter()
        .map(|t| {
            let of_type = counts.iter().filter(|(k, _, _)| k == t);
            let all: i64 = of_type.clone().map(|(_, _, n)| n).sum();
            let done: i64 = of_type
                .filter(|(_, s, _)| *s == "done")
                .map(|(_, _, n)| n)
                .sum();
            (*t, done as usize, all as usize)
        })
        .collect()
}

/// Each action-item status with the words a page shows for it.
pub const ITEM_STATUS_LABELS: [(&str, &str); 4] = [
    ("open", "open"),
    ("in_progress", "in progress"),
    ("done", "done"),
    ("wont_do", "won't do"),
];

pub fn item_status_label(status: &str) -> &'static str {
    ITEM_STATUS_LABELS
        .iter()
        .find(|(v, _)| *v == status)
        .map_or("open", |(_, l)| l)
}

/// Where a page of the action-item list ends (soonest due first, items with no due date last,
/// then by id): the last item's due date and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemCursor {
    pub due_on: Option<chrono::NaiveDate>,
    pub id: i64,
}

impl ItemCursor {
    pub fn encode(&self) -> String {
        match self.due_on {
            Some(d) => format!("{}.{}", d.format("%Y-%m-%d"), self.id),
            None => format!("none.{}", self.id),
        }
    }

    pub fn decode(text: &str) -> Option<Self> {
        let (due, id) = text.split_once('.')?;
        let due_on = match due {
            "none" => None,
            d => Some(chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()?),
        };
        Some(Self {
            due_on,
            id: id.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_filter_takes_a_status_unfinished_or_any() {
        assert_eq!(check_status_filter("any").unwrap(), None);
        assert_eq!(
            check_status_filter("unfinished").unwrap().as_deref(),
            Some("unfinished")
        );
        assert_eq!(
            check_status_filter("In progress").unwrap().as_deref(),
            Some("in_progress")
        );
        assert!(check_status_filter("later").is_err());
    }

    #[test]
    fn cursors_read_back_what_they_wrote_and_nothing_else() {
        for c in [
            ItemCursor {
                due_on: chrono::NaiveDate::from_ymd_opt(2026, 12, 1),
                id: 42,
            },
            ItemCursor {
                due_on: None,
                id: 7,
            },
        ] {
            assert_eq!(ItemCursor::decode(&c.encode()), Some(c));
        }
        for bad in ["", "42", "2026-13-01.4", "none.x", "none", "2026-12-01.4.5"] {
            assert_eq!(ItemCursor::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn statuses_types_and_completion_rates() {
        assert_eq!(check_item_status("In progress").unwrap(), "in_progress");
        assert_eq!(check_item_status("won't do").unwrap(), "wont_do");
        assert!(check_item_status("blocked").is_err());
        assert!(check_action_type("Prevent").is_ok());
        assert!(check_action_type("blame").is_err());
        let rates = completion_by_type([
            ("detect", "done", 1),
            ("detect", "open", 1),
            ("prevent", "done", 1),
        ]);
        assert_eq!(rates[0], ("prevent", 1, 1));
        assert_eq!(rates[1], ("detect", 1, 2));
    }
}
