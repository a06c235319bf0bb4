//! Reading tickets from a Linear or Jira export, CSV or JSON (told apart by the first character).
//! Linear's CSV has `ID`, `Title`, `Description`, `Created`; its JSON is a list of issues (or the
//! API's `{"data":{"issues":{"nodes":[…]}}}`) with `identifier`, `title`, `description`,
//! `createdAt`. Jira's CSV has `Issue key`, `Summary`, `Description`, `Created`; its JSON is the
//! search API's `{"issues":[{"key", "fields": {"summary", "description", "created"}}]}`, the
//! description plain text or Atlassian's document format. Parsing is strict: a missing column or
//! field, a date that is not one, a key given twice is refused naming the row, and nothing is kept.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value;

use super::{MAX_ROWS, Ticket};
use crate::domain::DomainError;

/// Which tracker an export came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracker {
    Linear,
    Jira,
}

impl Tracker {
    fn name(self) -> &'static str {
        match self {
            Self::Linear => "Linear",
            Self::Jira => "Jira",
        }
    }

    /// The CSV columns holding key, title, description and creation time.
    fn columns(self) -> [&'static str; 4] {
        match self {
            Self::Linear => ["ID", "Title", "Description", "Created"],
            Self::Jira => ["Issue key", "Summary", "Description", "Created"],
        }
    }
}

fn bad(message: impl Into<String>) -> DomainError {
    DomainError::invalid("file", message)
}

/// Every ticket of an export, in the export's order.
pub fn read(tracker: Tracker, bytes: &[u8]) -> Result<Vec<Ticket>, DomainError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let tickets = match first {
        None => return Err(bad("the file is empty")),
        Some(b'[' | b'{') => read_json(tracker, bytes)?,
        Some(_) => read_csv(tracker, bytes)?,
    };
    if tickets.is_empty() {
        return Err(bad(format!(
            "the {} export holds no tickets",
            tracker.name()
        )));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (n, t) in tickets.iter().enumerate() {
        if let Some(first) = seen.insert(&t.key, n) {
            return Err(bad(format!(
                "{} appears twice (tickets {} and {})",
                t.key,
                first + 1,
                n + 1
            )));
        }
    }
    Ok(tickets)
}

/// The times trackers write: RFC 3339, Jira's `2026-10-21T22:10:00.000+0000`, and (taken as
/// UTC) `2026-10-21 22:10[:00]` and Jira's CSV `21/Oct/26 10:10 PM`.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f%z") {
        return Some(t.with_timezone(&Utc));
    }
    [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%d/%b/%y %I:%M %p",
        "%d/%b/%Y %I:%M %p",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    .map(|t| t.and_utc())
}

fn ticket(
    key: &str,
    title: &str,
    text: &str,
    created: &str,
    at: impl Fn(&str) -> DomainError,
    names: [&str; 4],
) -> Result<Ticket, DomainError> {
    let key = key.trim();
    if key.is_empty() || key.chars().count() > 100 {
        return Err(at(&format!("{} is empty or too long", names[0])));
    }
    let title = title.trim();
    if title.is_empty() {
        return Err(at(&format!("{key}: {} is empty", names[1])));
    }
    let created_at = parse_time(created).ok_or_else(|| {
        at(&format!(
            "{key}: {} {:?} is not a time (like 2026-10-21T22:10:00Z)",
            names[3],
            created.trim()
        ))
    })?;
    Ok(Ticket {
        key: key.to_owned(),
        title: title.chars().take(500).collect(),
        created_at,
        text: text.trim().chars().take(super::MAX_TEXT).collect(),
    })
}

fn read_csv(tracker: Tracker, bytes: &[u8]) -> Result<Vec<Ticket>, DomainError> {
    let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let headers = r
        .headers()
        .map_err(|e| bad(format!("the CSV's header cannot be read ({e})")))?
        .clone();
    let cols = tracker.columns();
    // Jira repeats some column names; the first of each is the one meant.
    let index = |name: &str| headers.iter().position(|h| h.trim() == name);
    let mut at = [0usize; 4];
    for (i, name) in cols.iter().enumerate() {
        at[i] = match index(name) {
            Some(n) => n,
            None if *name == "Description" => usize::MAX,
            None => {
                return Err(bad(format!(
                    "the CSV has no {name:?} column; a {} export has {}",
                    tracker.name(),
                    cols.join(", ")
                )));
            }
        };
    }
    let mut out = Vec::new();
    for (n, record) in r.records().enumerate() {
        // Row 1 is the header.
        let row = n + 2;
        let record = record.map_err(|e| match e.kind() {
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => bad(format!(
                "row {row}: {len} fields where the header has {expected_len}"
            )),
            csv::ErrorKind::Utf8 { .. } => bad(format!("row {row}: not UTF-8 text")),
            _ => bad(format!("row {row}: {e}")),
        })?;
        if out.len() >= MAX_ROWS {
            return Err(bad(format!("more than {MAX_ROWS} tickets")));
        }
        let field = |i: usize| record.get(at[i]).unwrap_or("");
        out.push(ticket(
            field(0),
            field(1),
            field(2),
            field(3),
            |what| bad(format!("row {row}: {what}")),
            cols,
        )?);
    }
    Ok(out)
}

/// Text from Atlassian's document format: its text nodes, a line per paragraph.
fn adf_text(v: &Value, out: &mut String) {
    if let Some(t) = v.get("text").and_then(Value::as_str) {
        out.push_str(t);
    }
    if let Some(children) = v.get("content").and_then(Value::as_array) {
        for c in children {
            adf_text(c, out);
        }
    }
    let block = matches!(
        v.get("type").and_then(Value::as_str),
        Some("paragraph" | "heading" | "codeBlock" | "listItem" | "blockquote")
    );
    if block && !out.ends_with('\n') {
        out.push('\n');
    }
}

fn read_json(tracker: Tracker, bytes: &[u8]) -> Result<Vec<Ticket>, DomainError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("the file is not valid JSON ({e})")))?;
    let (list, path) = match (&v, tracker) {
        (Value::Array(a), _) => (a, ""),
        (Value::Object(_), Tracker::Linear) => {
            if let Some(a) = v.pointer("/data/issues/nodes").and_then(Value::as_array) {
                (a, "data.issues.nodes")
            } else if let Some(a) = v.get("issues").and_then(Value::as_array) {
                (a, "issues")
            } else {
                return Err(bad(
                    "expected a list of Linear issues, or the API's {\"data\":{\"issues\":{\"nodes\":[…]}}}",
                ));
            }
        }
        (Value::Object(_), Tracker::Jira) => match v.get("issues").and_then(Value::as_array) {
            Some(a) => (a, "issues"),
            None => {
                return Err(bad(
                    "expected Jira's search result, {\"issues\":[…]}, or a list of issues",
                ));
            }
        },
        _ => return Err(bad("expected a list of issues")),
    };
    let mut out = Vec::new();
    for (n, issue) in list.iter().enumerate() {
        let here = if path.is_empty() {
            format!("[{n}]")
        } else {
            format!("{path}[{n}]")
        };
        let at = |what: &str| bad(format!("{here}: {what}"));
        if out.len() >= MAX_ROWS {
            return Err(bad(format!("more than {MAX_ROWS} tickets")));
        }
        let (fields, prefix) = match tracker {
            Tracker::Linear => (issue, ""),
            Tracker::Jira => (
                issue
                    .get("fields")
                    .filter(|f| f.is_object())
                    .ok_or_else(|| at("`fields` is missing"))?,
                "fields.",
            ),
        };
        let string = |obj: &Value, name: &str, shown: &str| -> Result<String, DomainError> {
            match obj.get(name) {
                Some(Value::String(s)) => Ok(s.clone()),
                None | Some(Value::Null) => Err(at(&format!("`{shown}` is missing"))),
                Some(_) => Err(at(&format!("`{shown}` must be text"))),
            }
        };
        let (key, title, created, text) = match tracker {
            Tracker::Linear => (
                string(issue, "identifier", "identifier")?,
                string(fields, "title", "title")?,
                string(fields, "createdAt", "createdAt")?,
                match fields.get("description") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err(at("`description` must be text")),
                },
            ),
            Tracker::Jira => (
                string(issue, "key", "key")?,
                string(fields, "summary", &format!("{prefix}summary"))?,
                string(fields, "created", &format!("{prefix}created"))?,
                match fields.get("description") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(doc @ Value::Object(_)) => {
                        let mut s = String::new();
                        adf_text(doc, &mut s);
                        s
                    }
                    Some(_) => {
                        return Err(at(&format!(
                            "`{prefix}description` must be text or a document"
                        )));
                    }
                },
            ),
        };
        let names = match tracker {
            Tracker::Linear => ["identifier", "title", "description", "createdAt"],
            Tracker::Jira => ["key", "summary", "description", "created"],
        };
        out.push(ticket(&key, &title, &text, &created, at, names)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(e: DomainError) -> String {
        match e {
            DomainError::Invalid { message, .. } => message,
            DomainError::Conflict(m) => m,
        }
    }

    #[test]
    fn linear_csv_and_json_read_the_same_tickets() {
        let csv = "ID,Team,Title,Description,Status,Created\n\
                   PAY-184,Payments,Retry storm after processor timeout,\"Retries piled up,\nall at once\",Done,2026-09-14T10:00:00.000Z\n\
                   PAY-247,Payments,Dedupe scheduled retries,,Todo,2026-10-22 09:30\n";
        let t = read(Tracker::Linear, csv.as_bytes()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].key, "PAY-184");
        assert_eq!(t[0].text, "Retries piled up,\nall at once");
        assert_eq!(t[1].created_at.to_rfc3339(), "2026-10-22T09:30:00+00:00");
        let json = r#"{"data":{"issues":{"nodes":[{"identifier":"PAY-184","title":"Retry storm after processor timeout","description":null,"createdAt":"2026-09-14T10:00:00.000Z"}]}}}"#;
        let j = read(Tracker::Linear, json.as_bytes()).unwrap();
        assert_eq!(j[0].key, "PAY-184");
        assert_eq!(j[0].created_at, t[0].created_at);
    }

    #[test]
    fn jira_csv_and_json_read_with_their_own_names_and_dates() {
        let csv = "\u{feff}Summary,Issue key,Issue id,Created,Labels,Labels,Description\n\
                   Checkout 5xx,PAY-184,10001,14/Sep/26 10:00 AM,a,b,Processor timeouts\n";
        let t = read(Tracker::Jira, csv.as_bytes()).unwrap();
        assert_eq!(t[0].key, "PAY-184");
        assert_eq!(t[0].created_at.to_rfc3339(), "2026-09-14T10:00:00+00:00");
        let json = r#"{"issues":[{"key":"PAY-184","fields":{"summary":"Checkout 5xx","created":"2026-09-14T12:00:00.000+0200",
            "description":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Processor "},{"type":"text","text":"timeouts"}]},{"type":"paragraph","content":[{"type":"text","text":"Second line"}]}]}}}]}"#;
        let j = read(Tracker::Jira, json.as_bytes()).unwrap();
        assert_eq!(j[0].created_at, t[0].created_at);
        assert_eq!(j[0].text, "Processor timeouts\nSecond line");
    }

    #[test]
    fn malformed_exports_name_what_is_wrong() {
        let cases: [(Tracker, &str, &str); 8] = [
            (Tracker::Jira, "", "the file is empty"),
            (
                Tracker::Jira,
                "Summary,Created\nx,2026-01-01 00:00\n",
                "the CSV has no \"Issue key\" column; a Jira export has Issue key, Summary, Description, Created",
            ),
            (
                Tracker::Linear,
                "ID,Title,Created\nPAY-1,Works,2026-01-01 00:00\nPAY-2,Broken,last tuesday\n",
                "row 3: PAY-2: Created \"last tuesday\" is not a time (like 2026-10-21T22:10:00Z)",
            ),
            (
                Tracker::Linear,
                "ID,Title,Created\nPAY-1,One,2026-01-01 00:00\nPAY-1,Again,2026-01-02 00:00\n",
                "PAY-1 appears twice (tickets 1 and 2)",
            ),
            (
                Tracker::Linear,
                "ID,Title,Created\nPAY-1,One,2026-01-01 00:00,extra\n",
                "row 2: 4 fields where the header has 3",
            ),
            (
                Tracker::Jira,
                r#"{"issues":[{"key":"PAY-1","fields":{"created":"2026-01-01T00:00:00Z"}}]}"#,
                "issues[0]: `fields.summary` is missing",
            ),
            (
                Tracker::Linear,
                r#"[{"identifier":"PAY-1","title":"x","createdAt":42}]"#,
                "[0]: `createdAt` must be text",
            ),
            (
                Tracker::Jira,
                "{\"issues\": [",
                "the file is not valid JSON",
            ),
        ];
        for (tracker, file, expected) in cases {
            let got = message(read(tracker, file.as_bytes()).unwrap_err());
            assert!(got.starts_with(expected), "{file:?}: {got}");
        }
    }
}
