//! Rules shared by every capability's `domain.rs`: the error a pure rule returns, the way
//! durations and counts are written for people, which text PostgreSQL can store, and where a
//! page of a list ordered by time ends.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::fmt;

/// `Sev1` is the worst. Ordering follows the name, so `Sev1 < Sev2` means "more severe".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
pub enum Severity {
    Sev1,
    Sev2,
    Sev3,
    Sev4,
}

impl Severity {
    pub const ALL: [Severity; 4] = [Self::Sev1, Self::Sev2, Self::Sev3, Self::Sev4];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sev1 => "Sev1",
            Self::Sev2 => "Sev2",
            Self::Sev3 => "Sev3",
            Self::Sev4 => "Sev4",
        }
    }

    /// Accepts `Sev1`, `sev1`, `SEV1` and `1`.
    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase();
        let v = v.strip_prefix("sev").unwrap_or(&v);
        match v {
            "1" => Ok(Self::Sev1),
            "2" => Ok(Self::Sev2),
            "3" => Ok(Self::Sev3),
            "4" => Ok(Self::Sev4),
            _ => Err(DomainError::invalid(
                field,
                format!("{value:?} is not a severity; use Sev1 (worst), Sev2, Sev3 or Sev4"),
            )),
        }
    }

    pub fn is_more_severe_than(self, other: Severity) -> bool {
        self < other
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a rule refused. Handlers turn it into an HTTP answer: `Invalid` → 422 naming the field,
/// `Conflict` → 409 with the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainError {
    Invalid { field: String, message: String },
    Conflict(String),
}

impl DomainError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// The human key `INC-<n>`: the one place it is written. The database holds only the number;
/// a query reads a key as `i.number as "key!: IncidentKey"`, and JSON carries it as the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type)]
#[sqlx(transparent)]
pub struct IncidentKey(pub i64);

impl serde::Serialize for IncidentKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl IncidentKey {
    pub fn parse(value: &str) -> Option<Self> {
        let digits = value
            .strip_prefix("INC-")
            .or_else(|| value.strip_prefix("inc-"))?;
        Self::number(digits)
    }

    /// The key whose number is written `digits` (`184`): 1 to 15 digits, not zero.
    pub fn number(digits: &str) -> Option<Self> {
        if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().filter(|n| *n > 0).map(Self)
    }
}

impl std::fmt::Display for IncidentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "INC-{}", self.0)
    }
}

/// Rows on one page of a list that comes a page at a time (action items, postmortems), unless
/// asked for fewer or more (up to [`MAX_PAGE`]).
pub const PAGE: i64 = 100;
pub const MAX_PAGE: i64 = 500;

/// A page of `limit` rows out of `rows` (fetched with one more than asked, which tells whether
/// there is a next page), and where the next page starts: after the page's last row.
pub fn split_page<T, C>(
    mut rows: Vec<T>,
    limit: i64,
    cursor_of: impl Fn(&T) -> C,
) -> (Vec<T>, Option<C>) {
    let limit = usize::try_from(limit).unwrap_or(0);
    if rows.len() <= limit {
        return (rows, None);
    }
    rows.truncate(limit);
    let next = rows.last().map(cursor_of);
    (rows, next)
}

/// Where a page of a list ordered by a time and an id ends: the last row's time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeCursor {
    pub occurred_at: DateTime<Utc>,
    pub id: i64,
}

impl TimeCursor {
    pub fn encode(&self) -> String {
        format!("{}.{}", self.occurred_at.timestamp_micros(), self.id)
    }

    pub fn decode(text: &str) -> Option<Self> {
        let (micros, id) = text.split_once('.')?;
        Some(Self {
            occurred_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            id: id.parse().ok()?,
        })
    }
}

/// `9 min`, `2 h 2 min`, `4 h`, `3 d 2 h 5 min`. Truncates to the minute, as the reference
/// document does.
pub fn format_minutes(secs: i64) -> String {
    let sign = if secs < 0 { "−" } else { "" };
    let total = secs.unsigned_abs() / 60;
    let (d, h, m) = (total / 1440, total / 60 % 24, total % 60);
    let mut parts = Vec::new();
    if d > 0 {
        parts.push(format!("{d} d"));
    }
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 || parts.is_empty() {
        parts.push(format!("{m} min"));
    }
    format!("{sign}{}", parts.join(" "))
}

/// `text` cut into runs, each marked whether it is a date as Quell writes one
/// (`2026-09-17`, with `14:05` and `UTC` when they follow), so a page can keep each date on one
/// line: a browser would otherwise break `2026-` from `09-17`.
pub fn date_runs(text: &str) -> Vec<(bool, &str)> {
    static DATE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}(?: UTC)?)?").expect("a pattern")
    });
    let mut runs = Vec::new();
    let mut at = 0;
    for m in DATE.find_iter(text) {
        if m.start() > at {
            runs.push((false, &text[at..m.start()]));
        }
        runs.push((true, m.as_str()));
        at = m.end();
    }
    if at < text.len() {
        runs.push((false, &text[at..]));
    }
    runs
}

/// How wide `text` is drawn at `font` pixels (or SVG units), over-estimated so a chart that
/// leaves this much room never clips it: digits and most letters take at most 0.62 of the
/// size in the sans-serif fonts browsers pick, wide letters (m, w, M, W) 0.9, a space 0.32.
pub fn text_width(text: &str, font: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            ' ' => 0.32,
            'm' | 'w' | 'M' | 'W' | '−' | '—' => 0.9,
            'i' | 'l' | 'j' | '.' | ',' | ':' | '\'' | '|' => 0.32,
            c if c.is_ascii_uppercase() => 0.72,
            _ => 0.62,
        })
        .sum::<f64>()
        * font
}

/// `0:45`, `3:33`, `27:05`: hours and minutes, as the postmortem header writes a duration.
pub fn format_hmm(secs: i64) -> String {
    let total = secs.max(0) / 60;
    format!("{}:{:02}", total / 60, total % 60)
}

/// A count with spaces between thousands, as the reference writes them: `109 400`.
pub fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    if n < 0 { format!("−{out}") } else { out }
}

/// An approximate count kept to its first three digits, rounded down: 155 520 → `155 000`.
pub fn about(n: f64) -> String {
    let n = n.max(0.0).floor() as i64;
    let digits = n.to_string().len() as u32;
    let unit = 10_i64.pow(digits.saturating_sub(3));
    grouped(n / unit * unit)
}

/// A percentage without trailing zeros: 99.9 → `99.9%`, 99.95 → `99.95%`, 99 → `99%`.
pub fn percent(p: f64) -> String {
    format!("{}%", decimal(p))
}

/// A number to at most three decimals, without trailing zeros: 1.2 → `1.2`, 120.0 → `120`.
pub fn decimal(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Replaces each `{name}` in `text` with what `value_of(name)` gives; a name it gives nothing for
/// stays as written, braces and all. Shared by routing's title templates and the postmortem's
/// cited figures.
pub fn fill_placeholders(text: &str, value_of: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let filled = after
            .find('}')
            .and_then(|close| value_of(&after[..close]).map(|v| (v, close)));
        match filled {
            Some((value, close)) => {
                out.push_str(&value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` cut to at most `max` characters, the last of them `…` when anything was cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        text.chars().take(max.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// The one character PostgreSQL cannot store in `text` or `jsonb`: NUL (U+0000). Every other
/// Unicode scalar value is fine, and Rust strings hold nothing else (no lone surrogates).
pub const UNSTORABLE: char = '\0';

/// Why a person's text was refused, for the field it was typed into.
pub const UNSTORABLE_MESSAGE: &str =
    "contains a NUL character (\\u0000), which cannot be stored; remove it";

/// Whether PostgreSQL can store `text`.
pub fn storable(text: &str) -> bool {
    !text.contains(UNSTORABLE)
}

/// The path of the first string or key in `value` that PostgreSQL cannot store — `title`,
/// `metadata.region`, `items[2].body` — or `None` when all of it can be stored.
pub fn unstorable_at(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    fn join(path: &str, key: &str) -> String {
        let key = key.replace(UNSTORABLE, "");
        if path.is_empty() {
            key
        } else {
            format!("{path}.{key}")
        }
    }
    fn walk(value: &Value, path: &str) -> Option<String> {
        match value {
            Value::String(s) if !storable(s) => Some(if path.is_empty() {
                "body".into()
            } else {
                path.into()
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, &format!("{path}[{i}]"))),
            Value::Object(map) => map.iter().find_map(|(k, v)| {
                let here = join(path, k);
                if storable(k) {
                    walk(v, &here)
                } else {
                    Some(here)
                }
            }),
            _ => None,
        }
    }
    walk(value, "")
}

/// Removes what PostgreSQL cannot store from every string and key of `value`. For alerts, where
/// a NUL carries no meaning and refusing would lose the alert; keys that become equal keep the
/// last value.
pub fn strip_unstorable(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) if !storable(s) => s.retain(|c| c != UNSTORABLE),
        Value::Array(items) => items.iter_mut().for_each(strip_unstorable),
        Value::Object(map) if map.keys().any(|k| !storable(k)) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                strip_unstorable(&mut v);
                map.insert(k.replace(UNSTORABLE, ""), v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(strip_unstorable),
        _ => {}
    }
}

/// Generators for the property tests of every capability's rules (test builds only).
#[cfg(test)]
pub mod arbitrary {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// Text as senders and people write it at their worst: any characters, markup, NUL,
    /// right-to-left marks, placeholders, long runs.
    pub fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => any::<String>(),
            1 => prop::sample::select(vec![
                "", " ", "\u{0}", "<script>alert(1)</script>", "\u{202e}x", "{labels.service}",
                "Sev1", "critical", "firing", "resolved", "2026-09-17T16:07:00Z", "0001-01-01T00:00:00Z",
                "labels.service = payments", "labels.alertname =~ .*5xx.*", "[x](javascript:alert(1))",
            ])
            .prop_map(str::to_owned),
            1 => "[a-z_.]{0,12} ?(=|!=|=~|!~|>|<) ?[a-zA-Z0-9.*()|^$ ]{0,16}",
        ]
    }

    /// Any JSON value, nested a few levels, with keys senders use among random ones.
    pub fn json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            2 => prop::sample::select(vec![
                "alerts", "status", "labels", "annotations", "fingerprint", "startsAt", "endsAt",
                "groupKey", "commonLabels", "alertname", "routing_key", "event_action", "dedup_key",
                "payload", "summary", "source", "severity", "title", "message", "version",
            ])
            .prop_map(str::to_owned),
            1 => any::<String>(),
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_told_apart_from_the_text_around_them() {
        assert_eq!(
            date_runs("deploy (payments-gateway at 2026-09-17 14:05 UTC) went out"),
            [
                (false, "deploy (payments-gateway at "),
                (true, "2026-09-17 14:05 UTC"),
                (false, ") went out")
            ]
        );
        assert_eq!(date_runs("2026-12-02"), [(true, "2026-12-02")]);
        assert_eq!(date_runs("no date here"), [(false, "no date here")]);
        assert!(date_runs("").is_empty());
    }

    #[test]
    fn a_page_says_where_the_next_starts_only_when_there_is_one() {
        assert_eq!(split_page(vec![1, 2, 3], 2, |n| *n), (vec![1, 2], Some(2)));
        assert_eq!(split_page(vec![1, 2], 2, |n| *n), (vec![1, 2], None));
        assert_eq!(split_page(Vec::<i32>::new(), 2, |n| *n), (vec![], None));
    }

    #[test]
    fn placeholders_are_filled_and_unknown_ones_stay() {
        let value_of = |name: &str| (name == "a").then(|| "1".to_owned());
        assert_eq!(
            fill_placeholders("{a} and {b} {a", value_of),
            "1 and {b} {a"
        );
        assert_eq!(fill_placeholders("{{a}}", value_of), "{1}");
    }

    #[test]
    fn shortened_text_keeps_its_length_limit_and_says_it_was_cut() {
        assert_eq!(shorten("payments", 8), "payments");
        assert_eq!(shorten("payments-gateway", 8), "payment…");
        assert_eq!(shorten("日本語のテキスト", 4), "日本語…");
    }

    #[test]
    fn the_first_unstorable_text_is_named_by_its_path() {
        use serde_json::json;
        assert_eq!(unstorable_at(&json!({"title": "ok", "n": 1})), None);
        assert_eq!(
            unstorable_at(&json!({"title": "a\u{0}b"})).as_deref(),
            Some("title")
        );
        assert_eq!(
            unstorable_at(&json!({"metadata": {"region": "eu\u{0}"}})).as_deref(),
            Some("metadata.region")
        );
        assert_eq!(
            unstorable_at(&json!({"items": ["x", {"body": "\u{0}"}]})).as_deref(),
            Some("items[1].body")
        );
        assert_eq!(
            unstorable_at(&json!({"la\u{0}bel": 1})).as_deref(),
            Some("label")
        );
        assert_eq!(unstorable_at(&json!("\u{0}")).as_deref(), Some("body"));
    }

    #[test]
    fn stripping_leaves_storable_text_everywhere() {
        use serde_json::json;
        let mut v = json!({"a\u{0}": ["x\u{0}y", {"k": "\u{0}"}], "n": 2, "e": "é😀"});
        strip_unstorable(&mut v);
        assert_eq!(v, json!({"a": ["xy", {"k": ""}], "n": 2, "e": "é😀"}));
        assert_eq!(unstorable_at(&v), None);
    }

    #[test]
    fn minutes_read_like_the_reference_document() {
        assert_eq!(format_minutes(9 * 60), "9 min");
        assert_eq!(format_minutes(9 * 60 + 59), "9 min");
        assert_eq!(format_minutes(2 * 3600 + 2 * 60), "2 h 2 min");
        assert_eq!(format_minutes(4 * 3600), "4 h");
        assert_eq!(format_minutes(3 * 86400 + 5 * 60), "3 d 5 min");
        assert_eq!(format_minutes(0), "0 min");
        assert_eq!(format_minutes(-120), "−2 min");
    }

    #[test]
    fn hours_and_minutes_like_the_postmortem_header() {
        assert_eq!(format_hmm(45 * 60), "0:45");
        assert_eq!(format_hmm(3 * 3600 + 33 * 60), "3:33");
        assert_eq!(format_hmm(27 * 3600 + 5 * 60), "27:05");
    }
}
