//! What travels on an event stream, and the rules of replaying.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// The `NOTIFY` channel timeline entries (and entry-less changes) are announced on.
pub const CHANNEL: &str = "quell_live";

/// At most this many missed entries are replayed; a stream further behind is told to reload.
pub const REPLAY_LIMIT: i64 = 500;

/// `"<incident id> <entry id>"` as the trigger writes it; entry id 0 is a change without an
/// entry (alerts attached).
pub fn parse_payload(payload: &str) -> Option<(i64, i64)> {
    let (incident, entry) = payload.trim().split_once(' ')?;
    let incident = incident.parse().ok().filter(|n| *n > 0)?;
    let entry = entry.parse().ok().filter(|n| *n >= 0)?;
    Some((incident, entry))
}

/// The id a reconnecting client last saw: `Last-Event-ID` (which browsers send by themselves),
/// else the page's `after` (the newest entry it was rendered with). Junk is ignored.
pub fn resume_from(last_event_id: Option<&str>, after: Option<&str>) -> Option<i64> {
    let parse = |v: Option<&str>| {
        v.and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|n| *n >= 0)
    };
    parse(last_event_id).or_else(|| parse(after))
}

/// A timeline entry as a stream sends it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub incident_id: i64,
    /// `INC-1187`
    pub incident: String,
    pub kind: &'static str,
    /// The sentence the timeline shows for it (empty for a plain note)
    pub headline: String,
    pub author: String,
    pub body: String,
    pub occurred_at: DateTime<Utc>,
    /// Of an incident kept to named teams and people: a stream sends it only to them
    #[serde(skip)]
    pub restricted: bool,
}

/// What one stream is told.
#[derive(Debug, Clone, PartialEq)]
pub enum Wire {
    /// A new timeline entry; its id is the event id a reconnect resumes after.
    Entry(Entry),
    /// Something without an entry changed (alerts arrived): read the page again.
    Changed { incident_id: i64 },
    /// Too much was missed to replay: load the page again.
    Reload,
    /// The session ended (signed out, expired, password changed): the stream closes.
    Ended,
    /// Nothing happened for a while; the page knows its stream is alive.
    Ping,
}

/// How often a quiet stream says it is alive; a page that hears nothing for three of these
/// shows it may be stale.
pub const PING_SECONDS: u64 = 15;

impl Wire {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Entry(_) => "timeline",
            Self::Changed { .. } => "changed",
            Self::Reload => "reload",
            Self::Ended => "ended",
            Self::Ping => "ping",
        }
    }

    pub fn id(&self) -> Option<i64> {
        match self {
            Self::Entry(e) => Some(e.id),
            _ => None,
        }
    }

    pub fn data(&self) -> String {
        match self {
            Self::Entry(e) => serde_json::to_string(e).unwrap_or_else(|_| "{}".into()),
            Self::Changed { incident_id } => {
                serde_json::json!({ "incident_id": incident_id }).to_string()
            }
            Self::Reload => {
                serde_json::json!({ "reason": "too much changed while you were away" }).to_string()
            }
            Self::Ended => {
                serde_json::json!({ "reason": "your session ended; sign in again" }).to_string()
            }
            Self::Ping => "{}".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_two_ids() {
        assert_eq!(parse_payload("12 345"), Some((12, 345)));
        assert_eq!(parse_payload("12 0"), Some((12, 0)));
        for bad in ["", "12", "x 1", "0 1", "12 -1", "12 1 3"] {
            assert_eq!(parse_payload(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn last_event_id_wins_over_the_page_and_junk_is_ignored() {
        assert_eq!(resume_from(Some("40"), Some("12")), Some(40));
        assert_eq!(resume_from(None, Some("12")), Some(12));
        assert_eq!(resume_from(Some("junk"), Some("12")), Some(12));
        assert_eq!(resume_from(Some("-5"), None), None);
        assert_eq!(resume_from(None, None), None);
    }

    #[test]
    fn only_entries_carry_an_id() {
        let e = Entry {
            id: 7,
            incident_id: 1,
            incident: "INC-1".into(),
            kind: "note",
            headline: String::new(),
            author: "Ana".into(),
            body: "<b>hi</b>".into(),
            occurred_at: DateTime::UNIX_EPOCH,
            restricted: false,
        };
        assert_eq!(Wire::Entry(e.clone()).id(), Some(7));
        assert_eq!(Wire::Entry(e).name(), "timeline");
        assert_eq!(Wire::Reload.id(), None);
        assert_eq!(
            Wire::Changed { incident_id: 3 }.data(),
            r#"{"incident_id":3}"#
        );
    }
}
