//! Pure rules of the public status page: a component's status and the page's, a published
//! incident's public status at any instant (from its own timestamps), its impact, and what an
//! admin or a comms lead may write. No I/O.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::DomainError;

/// How a component is, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComponentStatus {
    Operational,
    UnderMaintenance,
    DegradedPerformance,
    PartialOutage,
    MajorOutage,
}

impl ComponentStatus {
    pub const ALL: [Self; 5] = [
        Self::Operational,
        Self::UnderMaintenance,
        Self::DegradedPerformance,
        Self::PartialOutage,
        Self::MajorOutage,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Operational => "operational",
            Self::UnderMaintenance => "under_maintenance",
            Self::DegradedPerformance => "degraded_performance",
            Self::PartialOutage => "partial_outage",
            Self::MajorOutage => "major_outage",
        }
    }

    /// As a person reads it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Operational => "Operational",
            Self::UnderMaintenance => "Under maintenance",
            Self::DegradedPerformance => "Degraded performance",
            Self::PartialOutage => "Partial outage",
            Self::MajorOutage => "Major outage",
        }
    }

    /// What an incident may say of a component it affects (an outage of some degree).
    pub fn parse_affected(field: &str, text: &str) -> Result<Self, DomainError> {
        match text.trim() {
            "degraded_performance" => Ok(Self::DegradedPerformance),
            "partial_outage" => Ok(Self::PartialOutage),
            "major_outage" => Ok(Self::MajorOutage),
            other => Err(DomainError::invalid(
                field,
                format!(
                    "{other:?} is not how an incident affects a component; use degraded_performance, partial_outage or major_outage"
                ),
            )),
        }
    }

    /// Read back from the database, which only holds what [`parse_affected`] takes.
    pub fn stored(text: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or(Self::MajorOutage)
    }
}

/// Statuspage's word for how bad something is: `none`, `minor`, `major`, `critical`, or
/// `maintenance` (the page only).
pub fn indicator(worst: ComponentStatus) -> (&'static str, &'static str) {
    match worst {
        ComponentStatus::Operational => ("none", "All Systems Operational"),
        ComponentStatus::UnderMaintenance => ("maintenance", "Service Under Maintenance"),
        ComponentStatus::DegradedPerformance => ("minor", "Minor Service Outage"),
        ComponentStatus::PartialOutage => ("major", "Partial System Outage"),
        ComponentStatus::MajorOutage => ("critical", "Major System Outage"),
    }
}

/// A published incident's impact, from what it says of its components: Statuspage's `none`,
/// `minor`, `major` or `critical`.
pub fn impact(affected: &[ComponentStatus]) -> &'static str {
    match affected.iter().max() {
        None | Some(ComponentStatus::Operational | ComponentStatus::UnderMaintenance) => "none",
        Some(ComponentStatus::DegradedPerformance) => "minor",
        Some(ComponentStatus::PartialOutage) => "major",
        Some(ComponentStatus::MajorOutage) => "critical",
    }
}

/// Where a published incident stands, in Statuspage's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PublicStatus {
    Investigating,
    Monitoring,
    Resolved,
}

impl PublicStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Investigating => "investigating",
            Self::Monitoring => "monitoring",
            Self::Resolved => "resolved",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Investigating => "Investigating",
            Self::Monitoring => "Monitoring",
            Self::Resolved => "Resolved",
        }
    }

    /// At `t`, for an incident whose timeline turned as `turns` says (`mitigated`,
    /// `resolved`, `reopened`, in order): investigated until mitigated, the fix watched until
    /// resolved, resolved until reopened — so what the public read stays true when an
    /// incident is reopened later.
    pub fn at(t: DateTime<Utc>, turns: &[(&str, DateTime<Utc>)]) -> Self {
        let mut now = Self::Investigating;
        for (kind, _) in turns.iter().filter(|(_, at)| *at <= t) {
            now = match *kind {
                "mitigated" => Self::Monitoring,
                "resolved" => Self::Resolved,
                "reopened" => Self::Investigating,
                _ => now,
            };
        }
        now
    }
}

/// How many days of history each component shows.
pub const HISTORY_DAYS: i64 = 90;

/// A component's last `days` days up to `today` (UTC), oldest first, each at the worst status
/// any of `spans` (an incident's impact window: first impact until resolved, and how it
/// affected the component) gave it that day.
/// Days before `since` (the component's first) have no status.
pub fn day_bars(
    (since, today): (chrono::NaiveDate, chrono::NaiveDate),
    days: i64,
    spans: &[(DateTime<Utc>, DateTime<Utc>, ComponentStatus)],
) -> Vec<(chrono::NaiveDate, Option<ComponentStatus>)> {
    (0..days)
        .rev()
        .map(|back| {
            let day = today - chrono::Duration::days(back);
            if day < since {
                return (day, None);
            }
            let from = day.and_time(chrono::NaiveTime::MIN).and_utc();
            let to = from + chrono::Duration::days(1);
            let worst = spans
                .iter()
                .filter(|(a, b, _)| *a < to && *b > from)
                .map(|(_, _, s)| *s)
                .max()
                .unwrap_or(ComponentStatus::Operational);
            (day, Some(worst))
        })
        .collect()
}

/// What is said publicly when an incident resolves, unless the comms lead says otherwise.
pub const DEFAULT_CLOSING: &str = "This incident has been resolved.";

/// A component as an admin writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentDraft {
    pub name: String,
    pub description: String,
    pub group: String,
    pub position: i32,
    /// The services it stands for, by name
    pub services: Vec<String>,
}

/// Checks a component, trimming what it says.
pub fn check_component(d: ComponentDraft) -> Result<ComponentDraft, DomainError> {
    let name = d.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(DomainError::invalid("name", "1 to 100 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(DomainError::invalid("name", "no control characters"));
    }
    let description = d.description.trim().to_owned();
    if description.chars().count() > 500 {
        return Err(DomainError::invalid(
            "description",
            "at most 500 characters",
        ));
    }
    let group = d.group.trim().to_owned();
    if group.chars().count() > 100 || group.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            "group",
            "at most 100 characters, no control characters",
        ));
    }
    if !(0..=10_000).contains(&d.position) {
        return Err(DomainError::invalid("position", "0 to 10000"));
    }
    let mut services: Vec<String> = d
        .services
        .iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    services.sort();
    services.dedup();
    Ok(ComponentDraft {
        name,
        description,
        group,
        position: d.position,
        services,
    })
}

/// A publication as the comms lead writes it: the public title, the last word said when the
/// incident resolves, and how it affects which components (by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicationDraft {
    pub title: String,
    pub closing: String,
    pub components: Vec<(i64, ComponentStatus)>,
}

/// Checks a publication: a public title (never the internal one by default: it is written
/// for the public), a closing word (the default when empty), each component once.
pub fn check_publication(d: PublicationDraft) -> Result<PublicationDraft, DomainError> {
    let title = d.title.trim().to_owned();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(DomainError::invalid(
            "title",
            "a public title of 1 to 200 characters",
        ));
    }
    if title.chars().any(char::is_control) {
        return Err(DomainError::invalid("title", "no control characters"));
    }
    let closing = match d.closing.trim() {
        "" => DEFAULT_CLOSING.to_owned(),
        c if c.chars().count() > 2000 => {
            return Err(DomainError::invalid("closing", "at most 2000 characters"));
        }
        c => c.to_owned(),
    };
    let mut seen = std::collections::HashSet::new();
    for (id, _) in &d.components {
        if !seen.insert(*id) {
            return Err(DomainError::invalid(
                "components",
                format!("component {id} is named twice"),
            ));
        }
    }
    Ok(PublicationDraft {
        title,
        closing,
        components: d.components,
    })
}

/// How long an address waits before another confirmation may be sent to it: someone typing
/// another person's address cannot fill their inbox.
pub const CONFIRM_AGAIN_AFTER_MINUTES: i64 = 60;

/// An address that did not confirm is forgotten this many days after its last confirmation
/// was sent.
pub const UNCONFIRMED_KEPT_DAYS: i64 = 7;

/// Confirmations the form sends in an hour to requests from one client address, and to
/// anyone: the form cannot be made to mail a crowd of addresses (or one inbox under many
/// aliases). Past either, it answers 429 and sends nothing.
pub const CONFIRMATIONS_PER_HOUR_FROM_ONE: i64 = 5;
pub const CONFIRMATIONS_PER_HOUR: i64 = 200;

/// Checks an email address as a subscriber types it: one `@` with something on each side, a
/// dot in the domain, no spaces or brackets, at most 254 characters. Trimmed.
pub fn check_email(email: &str) -> Result<String, DomainError> {
    let email = email.trim();
    let bad = || {
        DomainError::invalid(
            "email",
            "an email address like name@example.com (at most 254 characters)",
        )
    };
    if email.is_empty() || email.len() > 254 {
        return Err(bad());
    }
    if email
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "<>()[],;:\\\"".contains(c))
    {
        return Err(bad());
    }
    let Some((local, domain)) = email.split_once('@') else {
        return Err(bad());
    };
    let labels_ok = domain
        .split('.')
        .all(|l| !l.is_empty() && !l.starts_with('-') && !l.ends_with('-'));
    if local.is_empty()
        || local.len() > 64
        || domain.contains('@')
        || !domain.contains('.')
        || !labels_ok
    {
        return Err(bad());
    }
    Ok(email.to_owned())
}

/// What one public event says to a subscriber, before their own links are added: the subject
/// (`message`), the lines of its text, and the incident's public page (`path`).
pub fn event_mail(
    page: &str,
    (title, public_id): (&str, &str),
    status: PublicStatus,
    body: &str,
    affects: &[String],
) -> serde_json::Value {
    let mut lines = vec![String::new(), body.to_owned(), String::new()];
    lines.push(format!("Status: {}", status.label()));
    if !affects.is_empty() {
        lines.push(format!("Affects: {}", affects.join(", ")));
    }
    let subject: String = format!("[{page}] {title}: {}", status.label())
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    serde_json::json!({
        "message": subject,
        "lines": lines,
        "path": format!("/status/incidents/{public_id}"),
    })
}

/// The message asking an address to confirm its subscription (`path`: the confirm page).
pub fn confirmation_mail(page: &str, token: &str) -> serde_json::Value {
    serde_json::json!({
        "message": format!("Confirm your subscription to {page}"),
        "lines": [
            "",
            format!("Someone, we hope you, asked for email about incidents on {page}."),
            "Open the link below and press Confirm to start receiving them.",
            "If it was not you, ignore this message: nothing will be sent.",
        ],
        "path": format!("/status/subscription/{token}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn an_address_is_checked_as_typed() {
        assert_eq!(
            check_email("  ana@example.com ").unwrap(),
            "ana@example.com"
        );
        assert_eq!(
            check_email("a.b+status@mail.example.co.uk").unwrap(),
            "a.b+status@mail.example.co.uk"
        );
        for bad in [
            "",
            "ana",
            "ana@",
            "@example.com",
            "ana@localhost",
            "ana@@example.com",
            "ana@exa mple.com",
            "Ana <ana@example.com>",
            "ana@example.com,eve@example.com",
            "ana@-x.com",
            "ana@x..com",
        ] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
        assert!(check_email(&format!("{}@example.com", "a".repeat(65))).is_err());
    }

    #[test]
    fn a_subscriber_reads_the_update_with_its_status_and_components() {
        let m = event_mail(
            "Acme status",
            ("Card payments failing", "abc123"),
            PublicStatus::Monitoring,
            "We found the cause.",
            &["Card payments".into()],
        );
        assert_eq!(
            m["message"],
            "[Acme status] Card payments failing: Monitoring"
        );
        assert_eq!(m["path"], "/status/incidents/abc123");
        let lines: Vec<&str> = m["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!(lines.contains(&"We found the cause."));
        assert!(lines.contains(&"Affects: Card payments"));
        // A title cannot carry a line break into the subject.
        let m = event_mail("P", ("a\nBcc: x", "id"), PublicStatus::Resolved, "b", &[]);
        assert!(!m["message"].as_str().unwrap().contains('\n'));
    }

    #[test]
    fn the_worst_component_says_how_the_page_is() {
        use ComponentStatus::*;
        assert_eq!(indicator(Operational).1, "All Systems Operational");
        assert_eq!(indicator(MajorOutage).0, "critical");
        assert!(UnderMaintenance < DegradedPerformance && PartialOutage < MajorOutage);
        assert_eq!(impact(&[]), "none");
        assert_eq!(impact(&[DegradedPerformance, PartialOutage]), "major");
        assert!(ComponentStatus::parse_affected("s", "operational").is_err());
        assert_eq!(
            ComponentStatus::parse_affected("s", "partial_outage").unwrap(),
            PartialOutage
        );
    }

    #[test]
    fn a_published_incident_is_investigated_then_monitored_then_resolved() {
        let t = |m: i64| Utc.timestamp_opt(1_800_000_000 + m * 60, 0).unwrap();
        let turns = [
            ("mitigated", t(30)),
            ("resolved", t(90)),
            ("reopened", t(120)),
        ];
        assert_eq!(PublicStatus::at(t(10), &turns), PublicStatus::Investigating);
        assert_eq!(PublicStatus::at(t(30), &turns), PublicStatus::Monitoring);
        assert_eq!(PublicStatus::at(t(95), &turns), PublicStatus::Resolved);
        // Reopened later: what was said in between keeps the status it had then.
        assert_eq!(
            PublicStatus::at(t(125), &turns),
            PublicStatus::Investigating
        );
        assert_eq!(PublicStatus::at(t(95), &[]), PublicStatus::Investigating);
    }

    #[test]
    fn each_day_shows_the_worst_impact_that_touched_it() {
        use ComponentStatus::*;
        let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 5).unwrap();
        let at = |d: u32, h: u32| Utc.with_ymd_and_hms(2026, 12, d, h, 0, 0).unwrap();
        // Across midnight on the 3rd, and a worse one on the 4th.
        let spans = [
            (at(2, 22), at(3, 2), DegradedPerformance),
            (at(4, 10), at(4, 11), MajorOutage),
            (at(4, 12), at(4, 13), PartialOutage),
        ];
        let first = chrono::NaiveDate::from_ymd_opt(2026, 12, 2).unwrap();
        let bars = day_bars((first, today), 5, &spans);
        let statuses: Vec<Option<ComponentStatus>> = bars.iter().map(|b| b.1).collect();
        assert_eq!(
            statuses,
            vec![
                None,
                Some(DegradedPerformance),
                Some(DegradedPerformance),
                Some(MajorOutage),
                Some(Operational)
            ]
        );
        assert_eq!(bars[0].0.to_string(), "2026-12-01");
        // An impact ending exactly at midnight does not touch the next day.
        let edge = [(at(1, 12), at(2, 0), PartialOutage)];
        let long_ago = chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
        assert_eq!(
            day_bars((long_ago, today), 5, &edge)[1].1,
            Some(Operational)
        );
    }

    fn field(e: DomainError) -> String {
        match e {
            DomainError::Invalid { field, .. } => field,
            DomainError::Conflict(c) => c,
        }
    }

    #[test]
    fn a_publication_needs_a_public_title_and_names_each_component_once() {
        let d = |title: &str, components| PublicationDraft {
            title: title.into(),
            closing: String::new(),
            components,
        };
        let ok = check_publication(d(" Checkout errors ", vec![])).unwrap();
        assert_eq!(ok.title, "Checkout errors");
        assert_eq!(ok.closing, DEFAULT_CLOSING);
        assert_eq!(
            field(check_publication(d("  ", vec![])).unwrap_err()),
            "title"
        );
        let twice = vec![
            (1, ComponentStatus::MajorOutage),
            (1, ComponentStatus::PartialOutage),
        ];
        assert_eq!(
            field(check_publication(d("x", twice)).unwrap_err()),
            "components"
        );
    }
}
