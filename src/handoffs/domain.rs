//! Hand-offs as the rules see them: where a schedule's on-call person changes, which notices
//! are due at an instant (the person coming on, the one going off, a reminder some hours
//! before), and what each says, in the reader's own time zone.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::oncall::domain::Span;

/// Where the person on call changes: who goes off (none after a gap) and who comes on (none
/// before a gap), with the end of the shift that begins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    pub at: DateTime<Utc>,
    pub off: Option<String>,
    pub on: Option<String>,
    /// When the shift beginning here ends; none when it runs past what was worked out
    pub until: Option<DateTime<Utc>>,
}

/// The hand-offs strictly inside the period `spans` were worked out for (`from`..`to`): the
/// period's own edges are where the reckoning began and stopped, not changes of person.
pub fn handoffs(spans: &[Span], from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Handoff> {
    let mut at: Vec<DateTime<Utc>> = spans
        .iter()
        .flat_map(|s| [s.from, s.to])
        .filter(|t| from < *t && *t < to)
        .collect();
    at.sort();
    at.dedup();
    at.into_iter()
        .filter_map(|t| {
            let off = spans.iter().find(|s| s.to == t).map(|s| s.person.clone());
            let starting = spans.iter().find(|s| s.from == t);
            let on = starting.map(|s| s.person.clone());
            (off != on).then(|| Handoff {
                at: t,
                off,
                on,
                until: starting.map(|s| s.to).filter(|end| *end < to),
            })
        })
        .collect()
}

/// Which notice: the shift begins, it ends, or it begins some hours from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    On,
    Off,
    Reminder,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Reminder => "reminder",
        }
    }
}

/// A notice due to a person about one hand-off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due<'a> {
    pub person: &'a str,
    pub kind: Kind,
    pub handoff: &'a Handoff,
}

/// What a person wants to hear: nothing at all, or their hand-offs and perhaps a reminder
/// this many hours ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wants {
    pub notices: bool,
    pub remind_hours: Option<i32>,
}

/// How late a notice may still go out: an engine that was down longer sends none for what it
/// missed (hearing at noon that your shift began at nine helps nobody).
pub const GRACE: Duration = Duration::minutes(10);

/// When a reminder of a shift starting `at` is due for someone who wants it `hours` ahead.
fn reminder_at(at: DateTime<Utc>, hours: i32) -> DateTime<Utc> {
    at - Duration::hours(i64::from(hours))
}

/// The notices due at `now`: each hand-off from `now - GRACE` to `now` tells the person going
/// off and the one coming on, and a shift starting later reminds its person when their hours
/// ahead fall in the same window. People who turned notices off hear nothing.
pub fn due<'a>(
    handoffs: &'a [Handoff],
    wants: impl Fn(&str) -> Wants,
    now: DateTime<Utc>,
) -> Vec<Due<'a>> {
    let recent = |t: DateTime<Utc>| now - GRACE <= t && t <= now;
    let mut due = Vec::new();
    for h in handoffs {
        let mut tell = |person: &'a Option<String>, kind: Kind, when: Option<DateTime<Utc>>| {
            if let (Some(p), Some(when)) = (person, when)
                && wants(p).notices
                && recent(when)
            {
                due.push(Due {
                    person: p,
                    kind,
                    handoff: h,
                });
            }
        };
        tell(&h.off, Kind::Off, Some(h.at));
        tell(&h.on, Kind::On, Some(h.at));
        let remind = h.on.as_deref().and_then(|p| wants(p).remind_hours);
        tell(
            &h.on,
            Kind::Reminder,
            remind.map(|r| reminder_at(h.at, r)).filter(|_| h.at > now),
        );
    }
    due
}

/// The next instant after `now` a notice may fall due, if any (the engine sleeps until then).
pub fn next_due(
    handoffs: &[Handoff],
    wants: impl Fn(&str) -> Wants,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    handoffs
        .iter()
        .flat_map(|h| {
            let remind =
                h.on.as_deref()
                    .and_then(|p| wants(p).remind_hours)
                    .map(|r| reminder_at(h.at, r));
            [Some(h.at), remind]
        })
        .flatten()
        .filter(|t| *t > now)
        .min()
}

/// The open incidents a notice lists: the first few, worst first, and how many there are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Open {
    pub listed: Vec<OpenIncident>,
    pub total: i64,
}

/// An open incident as a notice lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenIncident {
    pub key: String,
    pub title: String,
    pub severity: String,
    pub status: String,
    pub service: String,
}

/// An instant as the reader reads it: `Mon 7 Dec 09:00 CET`.
pub fn local(t: DateTime<Utc>, zone: Tz) -> String {
    t.with_timezone(&zone)
        .format("%a %-d %b %H:%M %Z")
        .to_string()
}

/// A notice's words: its subject line, then its lines (the open incidents).
pub fn words(
    d: &Due<'_>,
    schedule: &str,
    name_of: impl Fn(&str) -> String,
    open: &Open,
    zone: Tz,
) -> (String, Vec<String>) {
    let incidents = &open.listed;
    let h = d.handoff;
    let until = h
        .until
        .map(|u| format!(" until {}", local(u, zone)))
        .unwrap_or_default();
    let subject = match d.kind {
        Kind::On => {
            let from = h
                .off
                .as_deref()
                .map(|p| format!(", taking over from {}", name_of(p)))
                .unwrap_or_default();
            format!(
                "You are on call for {schedule} from {}{until}{from}",
                local(h.at, zone)
            )
        }
        Kind::Off => match h.on.as_deref() {
            Some(p) => format!(
                "Your on-call shift for {schedule} ended at {}: {} is on call now",
                local(h.at, zone),
                name_of(p)
            ),
            None => format!(
                "Your on-call shift for {schedule} ended at {}: nobody is on call after you",
                local(h.at, zone)
            ),
        },
        Kind::Reminder => format!(
            "Reminder: you are on call for {schedule} from {}{until}",
            local(h.at, zone)
        ),
    };
    let mut lines = Vec::with_capacity(incidents.len() + 1);
    if incidents.is_empty() {
        lines.push("No incidents are open on the services it covers.".to_owned());
    } else {
        lines.push(if open.total > incidents.len() as i64 {
            format!(
                "Open on the services it covers ({}; the worst {} here):",
                open.total,
                incidents.len()
            )
        } else {
            format!("Open on the services it covers ({}):", open.total)
        });
        for i in incidents {
            lines.push(format!(
                "{} ({}) {} [{}, {}]",
                i.key, i.severity, i.title, i.status, i.service
            ));
        }
    }
    (subject, lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 7, h, m, 0).unwrap()
    }

    fn span(p: &str, from: DateTime<Utc>, to: DateTime<Utc>) -> Span {
        Span {
            person: p.into(),
            from,
            to,
        }
    }

    fn spans() -> Vec<Span> {
        // ana 06–09, bob 09–12, a gap, carl 14–18 (the reckoning from 06 to 18)
        vec![
            span("ana", t(6, 0), t(9, 0)),
            span("bob", t(9, 0), t(12, 0)),
            span("carl", t(14, 0), t(18, 0)),
        ]
    }

    #[test]
    fn hand_offs_are_where_the_person_changes_gaps_included() {
        let h = handoffs(&spans(), t(6, 0), t(18, 0));
        let seen: Vec<_> = h
            .iter()
            .map(|h| (h.at, h.off.as_deref(), h.on.as_deref(), h.until))
            .collect();
        assert_eq!(
            seen,
            vec![
                (t(9, 0), Some("ana"), Some("bob"), Some(t(12, 0))),
                (t(12, 0), Some("bob"), None, None),
                // carl's shift runs to the end of the reckoning: its end is not known
                (t(14, 0), None, Some("carl"), None),
            ]
        );
    }

    fn everyone(_: &str) -> Wants {
        Wants {
            notices: true,
            remind_hours: None,
        }
    }

    #[test]
    fn notices_are_due_from_the_hand_off_until_the_grace_runs_out() {
        let h = handoffs(&spans(), t(6, 0), t(18, 0));
        let kinds = |now| {
            due(&h, everyone, now)
                .iter()
                .map(|d| (d.person, d.kind))
                .collect::<Vec<_>>()
        };
        assert!(kinds(t(8, 59)).is_empty());
        assert_eq!(kinds(t(9, 0)), vec![("ana", Kind::Off), ("bob", Kind::On)]);
        assert_eq!(kinds(t(9, 10)).len(), 2);
        // later than the grace: missed, not sent late
        assert!(kinds(t(9, 11)).is_empty());
        assert_eq!(kinds(t(12, 5)), vec![("bob", Kind::Off)]);
        assert_eq!(kinds(t(14, 0)), vec![("carl", Kind::On)]);
        assert_eq!(next_due(&h, everyone, t(9, 0)), Some(t(12, 0)));
        assert_eq!(next_due(&h, everyone, t(14, 0)), None);
    }

    #[test]
    fn reminders_come_hours_ahead_and_only_to_who_wants_them() {
        let h = handoffs(&spans(), t(6, 0), t(18, 0));
        let wants = |p: &str| Wants {
            notices: p != "ana",
            remind_hours: (p == "carl").then_some(3),
        };
        let at = |now| {
            due(&h, wants, now)
                .iter()
                .map(|d| (d.person, d.kind, d.handoff.at))
                .collect::<Vec<_>>()
        };
        // ana turned notices off: bob alone hears of 09:00
        assert_eq!(at(t(9, 0)), vec![("bob", Kind::On, t(9, 0))]);
        // carl is reminded at 11:00 of 14:00, and that is the next instant after 09:00 too
        assert_eq!(at(t(11, 0)), vec![("carl", Kind::Reminder, t(14, 0))]);
        assert_eq!(next_due(&h, wants, t(9, 0)), Some(t(11, 0)));
        assert_eq!(at(t(14, 0)), vec![("carl", Kind::On, t(14, 0))]);
    }

    #[test]
    fn words_speak_the_readers_zone_and_list_the_open_incidents() {
        let h = handoffs(&spans(), t(6, 0), t(18, 0));
        let name = |p: &str| format!("{p} (name)");
        let on = Due {
            person: "bob",
            kind: Kind::On,
            handoff: &h[0],
        };
        let listed = vec![OpenIncident {
            key: "INC-7".into(),
            title: "Checkout errors".into(),
            severity: "SEV2".into(),
            status: "triggered".into(),
            service: "checkout".into(),
        }];
        let open = Open { listed, total: 1 };
        let (subject, lines) = words(&on, "Payments", name, &open, chrono_tz::Europe::Berlin);
        assert_eq!(
            subject,
            "You are on call for Payments from Mon 7 Dec 10:00 CET until Mon 7 Dec 13:00 CET, taking over from ana (name)"
        );
        assert_eq!(
            lines,
            vec![
                "Open on the services it covers (1):",
                "INC-7 (SEV2) Checkout errors [triggered, checkout]"
            ]
        );
        let off = Due {
            person: "bob",
            kind: Kind::Off,
            handoff: &h[1],
        };
        let (subject, lines) = words(&off, "Payments", name, &Open::default(), chrono_tz::UTC);
        assert_eq!(
            subject,
            "Your on-call shift for Payments ended at Mon 7 Dec 12:00 UTC: nobody is on call after you"
        );
        assert_eq!(
            lines,
            vec!["No incidents are open on the services it covers."]
        );
        let many = Open {
            total: 57,
            ..open.clone()
        };
        let (_, lines) = words(&on, "Payments", name, &many, chrono_tz::UTC);
        assert_eq!(
            lines[0],
            "Open on the services it covers (57; the worst 1 here):"
        );
    }
}
