//! Reading tickets from a Linear or Jira export, CSV or JSON (told apart by the first character).
//! Linear's CSV has `ID`, `Title`, `Description`, `Created`; its JSON is a list of issues (or the
//! API's `{"data":{"issues":{"nodes":[…]}}}`) with `identifier`, `title`, `description`,
//! `createdAt`. Jira's CSV has `Issue key`, `Summary`, `Description`, `Created`; its JSON is the
//! search API's `{"issues":[{"key", "fields": {"summary", "description", "created"}}]}`, the
//! description plain text or Atlassian's document format. Parsing is strict: a missing column or
//! field, a date that is not one, a key given twice is refused naming the row, and nothing is kept.

use std::collections::HashMap;
use std::fmt;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::stream::{Field, Item, each_in, scalars_are};
use super::{Kept, MAX_ROWS, Ticket};
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
    let key = super::clean(key.trim(), 101);
    let key = key.trim();
    if key.is_empty() || key.chars().count() > 100 {
        return Err(at(&format!("{} is empty or too long", names[0])));
    }
    let title = super::clean(title, 500);
    let title = title.trim();
    if title.is_empty() {
        return Err(at(&format!("{key}: {} is empty", names[1])));
    }
    let created_at = parse_time(created)
        .filter(super::storable_time)
        .ok_or_else(|| {
        at(&format!(
            "{key}: {} {:?} is not a time of the years 1900 to 9999 (like 2026-10-21T22:10:00Z)",
            names[3],
            crate::domain::shorten(created.trim(), 40)
        ))
    })?;
    Ok(Ticket {
        key: key.to_owned(),
        title: title.to_owned(),
        created_at,
        text: super::clean(text.trim(), super::MAX_TEXT),
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

/// A Linear issue as its export writes it: the fields read; the rest is skipped unread.
#[derive(Debug, Deserialize)]
struct LinearIssue {
    #[serde(default)]
    identifier: Field,
    #[serde(default)]
    title: Field,
    #[serde(default, rename = "createdAt")]
    created_at: Field,
    #[serde(default)]
    description: Field,
}

/// A Jira issue of the search API's answer.
#[derive(Debug, Deserialize)]
struct JiraIssue {
    #[serde(default)]
    key: Field,
    #[serde(default)]
    fields: Item<JiraFields>,
}

#[derive(Debug, Deserialize)]
struct JiraFields {
    #[serde(default)]
    summary: Field,
    #[serde(default)]
    created: Field,
    #[serde(default)]
    description: Description,
}

/// A Jira description: plain text, or Atlassian's document format read down to its text.
#[derive(Debug, Default)]
enum Description {
    #[default]
    None,
    Text(String),
    Other,
}

impl<'de> Deserialize<'de> for Description {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Description;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("text or a document")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Description, E> {
                Ok(Description::Text(v.to_owned()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Description, E> {
                Ok(Description::None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Description, E> {
                Ok(Description::None)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Description, A::Error> {
                let mut text = String::new();
                AdfText(&mut text).visit_map(map)?;
                Ok(Description::Text(text))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Description, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Description::Other)
            }
            scalars_are!(@number Description::Other);
        }
        d.deserialize_any(V)
    }
}

/// Text from a node of Atlassian's document format, as it is read: its text nodes, a line per
/// paragraph, at most [`super::MAX_TEXT`] characters kept.
struct AdfText<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for AdfText<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AdfText<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a document node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut block = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "text" => {
                    if let Field::Text(t) = map.next_value::<Field>()?
                        && self.0.len() < super::MAX_TEXT * 4
                    {
                        self.0.push_str(&t);
                    }
                }
                "content" => map.next_value_seed(AdfChildren(&mut *self.0))?,
                "type" => {
                    block = matches!(
                        map.next_value::<Field>()?.text(),
                        Some("paragraph" | "heading" | "codeBlock" | "listItem" | "blockquote")
                    )
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if block && !self.0.ends_with('\n') {
            self.0.push('\n');
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    scalars_are!(());
}

/// A node's `content`: each child read for its text.
struct AdfChildren<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for AdfChildren<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AdfChildren<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of nodes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(AdfText(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    scalars_are!(());
}

fn read_json(tracker: Tracker, bytes: &[u8]) -> Result<Vec<Ticket>, DomainError> {
    let mut out = Vec::new();
    let mut kept = Kept::default();
    let mut push = |out: &mut Vec<Ticket>, t: Ticket| -> Result<(), DomainError> {
        if out.len() >= MAX_ROWS {
            return Err(bad(format!("more than {MAX_ROWS} tickets")));
        }
        kept.take(t.key.len() + t.title.len() + t.text.len())?;
        out.push(t);
        Ok(())
    };
    let here = |path: &str, n: usize| {
        if path.is_empty() {
            format!("[{n}]")
        } else {
            format!("{path}[{n}]")
        }
    };
    let required = |at: &dyn Fn(&str) -> DomainError, f: &Field, shown: &str| match f {
        Field::Text(s) => Ok(s.clone()),
        Field::Null => Err(at(&format!("`{shown}` is missing"))),
        Field::Other => Err(at(&format!("`{shown}` must be text"))),
    };
    let json = serde_json::de::SliceRead::new(bytes);
    let found = match tracker {
        Tracker::Linear => each_in(
            json,
            "the file",
            &[&["data", "issues", "nodes"], &["issues"]],
            |path, n, issue: Item<LinearIssue>| {
                let where_ = here(path, n);
                let at = |what: &str| bad(format!("{where_}: {what}"));
                let Item::Object(i) = issue else {
                    return Err(at("`identifier` is missing"));
                };
                let description = match &i.description {
                    Field::Null => String::new(),
                    Field::Text(s) => s.clone(),
                    Field::Other => return Err(at("`description` must be text")),
                };
                let t = ticket(
                    &required(&at, &i.identifier, "identifier")?,
                    &required(&at, &i.title, "title")?,
                    &description,
                    &required(&at, &i.created_at, "createdAt")?,
                    at,
                    ["identifier", "title", "description", "createdAt"],
                )?;
                push(&mut out, t)
            },
        )?,
        Tracker::Jira => each_in(
            json,
            "the file",
            &[&["issues"]],
            |path, n, issue: Item<JiraIssue>| {
                let where_ = here(path, n);
                let at = |what: &str| bad(format!("{where_}: {what}"));
                let Item::Object(i) = issue else {
                    return Err(at("`key` is missing"));
                };
                let Item::Object(f) = &i.fields else {
                    return Err(at("`fields` is missing"));
                };
                let description = match &f.description {
                    Description::None => String::new(),
                    Description::Text(s) => s.clone(),
                    Description::Other => {
                        return Err(at("`fields.description` must be text or a document"));
                    }
                };
                let t = ticket(
                    &required(&at, &i.key, "key")?,
                    &required(&at, &f.summary, "fields.summary")?,
                    &description,
                    &required(&at, &f.created, "fields.created")?,
                    at,
                    ["key", "summary", "description", "created"],
                )?;
                push(&mut out, t)
            },
        )?,
    };
    if !found {
        return Err(bad(match tracker {
            Tracker::Linear => {
                "expected a list of Linear issues, or the API's {\"data\":{\"issues\":{\"nodes\":[…]}}}"
            }
            Tracker::Jira => "expected Jira's search result, {\"issues\":[…]}, or a list of issues",
        }));
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
    fn nuls_are_dropped_and_times_postgresql_cannot_store_are_refused() {
        let csv = "ID,Title,Description,Created\nPAY-1,Re\u{0}try,Pi\u{0}led up,2026-01-01 00:00\n";
        let t = read(Tracker::Linear, csv.as_bytes()).unwrap();
        assert_eq!(
            (t[0].title.as_str(), t[0].text.as_str()),
            ("Retry", "Piled up")
        );
        for created in [
            "-5000-01-01 00:00",
            "+20000-01-01 00:00",
            "1066-10-14 09:00",
        ] {
            let csv = format!("ID,Title,Created\nPAY-1,Old,{created}\n");
            let got = message(read(Tracker::Linear, csv.as_bytes()).unwrap_err());
            assert!(got.contains("years 1900 to 9999"), "{created}: {got}");
        }
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
                "row 3: PAY-2: Created \"last tuesday\" is not a time of the years 1900 to 9999 (like 2026-10-21T22:10:00Z)",
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
