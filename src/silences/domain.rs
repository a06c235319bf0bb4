//! Pure rules of silences: matchers as Alertmanager and `amtool` write them
//! (`alertname="HighLatency", service=~"pay.*"`, `{job!="node"}`), what a silence may be (a
//! start, an end within the admin's longest length, a reason), its state at an instant, and the
//! set of active silences compiled for the alert lanes, indexed so an alert is tried only
//! against the silences that could match it.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use regex::Regex;
use serde::Serialize;

use crate::domain::DomainError;
use crate::routing::domain::Subject;

/// A matcher's comparison, as Alertmanager writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum MatchOp {
    #[serde(rename = "=")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = "=~")]
    Re,
    #[serde(rename = "!~")]
    NotRe,
}

impl MatchOp {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchOp::Eq => "=",
            MatchOp::Ne => "!=",
            MatchOp::Re => "=~",
            MatchOp::NotRe => "!~",
        }
    }
}

/// One matcher: a field (a label by its name, or `labels.x`, `annotations.x`, `summary`,
/// `severity`, `integration` … as routing reads them), a comparison and a value. A field the
/// alert lacks reads as the empty string, as in Alertmanager.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub name: String,
    pub op: MatchOp,
    pub value: String,
    regex: Option<Regex>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.op == other.op && self.value == other.value
    }
}

/// A value written in double quotes with `\"`, `\\` and `\n` escaped, as amtool prints it.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-')
}

impl Matcher {
    /// The matcher as amtool writes it: `service=~"pay.*"`.
    pub fn text(&self) -> String {
        let name = if !self.name.is_empty() && self.name.chars().all(is_name_char) {
            self.name.clone()
        } else {
            quoted(&self.name)
        };
        format!("{name}{}{}", self.op.as_str(), quoted(&self.value))
    }

    /// Whether a field's value (none: the alert lacks it) satisfies the matcher.
    pub fn holds(&self, actual: Option<&str>) -> bool {
        let actual = actual.unwrap_or("");
        match self.op {
            MatchOp::Eq => actual == self.value,
            MatchOp::Ne => actual != self.value,
            MatchOp::Re => self.regex.as_ref().is_some_and(|r| r.is_match(actual)),
            MatchOp::NotRe => self.regex.as_ref().is_none_or(|r| !r.is_match(actual)),
        }
    }

    pub fn matches(&self, s: &Subject) -> bool {
        self.holds(s.get(&self.name).as_deref())
    }

    /// Whether an alert without the field would match: a silence needs at least one matcher
    /// that does not, or it would silence nearly everything.
    fn matches_nothing_set(&self) -> bool {
        self.holds(None)
    }

    /// Builds a matcher, compiling a regular expression anchored at both ends.
    pub fn new(field: &str, name: &str, op: MatchOp, value: &str) -> Result<Self, DomainError> {
        let bad = |msg: String| DomainError::invalid(field, msg);
        if name.is_empty() || name.chars().count() > 200 {
            return Err(bad(
                "a matcher needs a label or field name (at most 200 characters)".into(),
            ));
        }
        if value.chars().count() > 1000 {
            return Err(bad(format!(
                "the value for {name} is longer than 1000 characters"
            )));
        }
        let regex = match op {
            MatchOp::Re | MatchOp::NotRe => {
                let compile = |pattern: &str| {
                    regex::RegexBuilder::new(pattern)
                        .size_limit(1 << 20)
                        .build()
                        .map_err(|e| {
                            bad(format!(
                                "{name}{}{}: not a regular expression ({e})",
                                op.as_str(),
                                quoted(value)
                            ))
                        })
                };
                // Checked alone first, so `a)|(?:.*` cannot close the anchoring group.
                compile(value)?;
                Some(compile(&format!("^(?:{value})$"))?)
            }
            MatchOp::Eq | MatchOp::Ne => None,
        };
        Ok(Self {
            name: name.to_owned(),
            op,
            value: value.to_owned(),
            regex,
        })
    }
}

/// Reads a double-quoted string starting after its opening quote; returns it and the rest.
fn read_quoted<'a>(field: &str, text: &'a str) -> Result<(String, &'a str), DomainError> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &text[i + 1..])),
            // As Alertmanager reads them: \" \\ and \n are escapes; any other backslash
            // stays, so a regular expression's `\.` or `\d` keeps its meaning.
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, c @ ('"' | '\\'))) => out.push(c),
                Some((_, c)) => {
                    out.push('\\');
                    out.push(c);
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    Err(DomainError::invalid(
        field,
        "a quoted value is not closed with \"",
    ))
}

/// Parses matchers as Alertmanager, `amtool silence add` and Prometheus write them: one or
/// more `name<op>value` with `=`, `!=`, `=~` or `!~`, separated by commas or spaces, values
/// bare or in double quotes, the whole optionally in braces:
/// `{alertname="HighLatency", service=~"pay.*"}` or `alertname=HighLatency severity!=info`;
/// checked as a silence's whole set of matchers (`check_matchers`).
pub fn parse_matchers(field: &str, text: &str) -> Result<Vec<Matcher>, DomainError> {
    let out = read_matchers(field, text)?;
    check_matchers(field, &out)?;
    Ok(out)
}

/// Reads matchers as [`parse_matchers`] does, without checking them as a whole (one part of a
/// silence's matchers written in several pieces).
pub fn read_matchers(field: &str, text: &str) -> Result<Vec<Matcher>, DomainError> {
    let bad = |msg: String| DomainError::invalid(field, msg);
    let mut rest = text.trim();
    if let Some(inner) = rest.strip_prefix('{') {
        rest = inner
            .trim_end()
            .strip_suffix('}')
            .ok_or_else(|| bad("an opening { has no closing }".into()))?;
    }
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        let (name, after) = if let Some(r) = rest.strip_prefix('"') {
            read_quoted(field, r)?
        } else {
            let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
            (rest[..end].to_owned(), &rest[end..])
        };
        if name.is_empty() {
            let near: String = rest.chars().take(20).collect();
            return Err(bad(format!(
                "expected a label name at {near:?}; write matchers such as alertname=\"HighLatency\" service=~\"pay.*\""
            )));
        }
        let after = after.trim_start();
        let Some((token, op)) = [
            ("=~", MatchOp::Re),
            ("!~", MatchOp::NotRe),
            ("!=", MatchOp::Ne),
            ("=", MatchOp::Eq),
        ]
        .into_iter()
        .find(|(t, _)| after.starts_with(t)) else {
            return Err(bad(format!(
                "{name} has no comparison; use =, !=, =~ or !~"
            )));
        };
        let after = after[token.len()..].trim_start();
        let (value, after) = if let Some(r) = after.strip_prefix('"') {
            read_quoted(field, r)?
        } else {
            let end = after
                .find(|c: char| c.is_whitespace() || c == ',' || c == '"')
                .unwrap_or(after.len());
            (after[..end].to_owned(), &after[end..])
        };
        if after.starts_with('"') {
            return Err(bad(format!("the value for {name} has a stray \"")));
        }
        out.push(Matcher::new(field, &name, op, &value)?);
        rest = after;
    }
    Ok(out)
}

/// What every silence's matchers must be: one to twenty, not all of them satisfied by an alert
/// that has none of their fields (`job!="x"` alone would silence almost every alert).
pub fn check_matchers(field: &str, matchers: &[Matcher]) -> Result<(), DomainError> {
    if matchers.is_empty() {
        return Err(DomainError::invalid(
            field,
            "give at least one matcher, e.g. alertname=\"HighLatency\"",
        ));
    }
    if matchers.len() > 20 {
        return Err(DomainError::invalid(field, "at most 20 matchers"));
    }
    if matchers.iter().all(Matcher::matches_nothing_set) {
        return Err(DomainError::invalid(
            field,
            "at least one matcher must need a value the alert has (these would silence almost every alert)",
        ));
    }
    Ok(())
}

/// Reads a length as amtool's `--duration` does: `2h`, `90m`, `1h30m`, `3d`, `1w`.
pub fn parse_length(field: &str, text: &str) -> Result<Duration, DomainError> {
    let bad = || {
        DomainError::invalid(
            field,
            format!(
                "{:?} is not a length; write it as 30m, 2h, 1h30m, 3d or 1w",
                text.trim()
            ),
        )
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(bad());
    }
    let mut total: i64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: i64 = number.parse().map_err(|_| bad())?;
        number.clear();
        let unit = match c {
            'w' => 7 * 86_400,
            'd' => 86_400,
            'h' => 3_600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .filter(|s| *s <= 10 * 365 * 86_400)
            .ok_or_else(bad)?;
    }
    if !number.is_empty() || total <= 0 {
        return Err(bad());
    }
    Ok(Duration::seconds(total))
}

/// The longest a silence may last when the admin has not said.
pub const DEFAULT_MAX_HOURS: i32 = 14 * 24;

/// Checks a silence's times: it ends after it starts and after now, within the longest length
/// the admin allows; a start in the past is taken as now.
pub fn check_window(
    starts_at: Option<DateTime<Utc>>,
    ends_at: DateTime<Utc>,
    now: DateTime<Utc>,
    max_hours: i32,
) -> Result<(DateTime<Utc>, DateTime<Utc>), DomainError> {
    let starts_at = starts_at.filter(|s| *s > now).unwrap_or(now);
    if ends_at <= starts_at {
        return Err(DomainError::invalid(
            "ends_at",
            "a silence ends after it starts (and after now)",
        ));
    }
    if ends_at - starts_at > Duration::hours(max_hours.into()) {
        return Err(DomainError::invalid(
            "ends_at",
            format!(
                "a silence lasts at most {}; an admin sets this limit",
                crate::domain::format_minutes(i64::from(max_hours) * 3600)
            ),
        ));
    }
    if starts_at > now + Duration::days(365) {
        return Err(DomainError::invalid(
            "starts_at",
            "a silence starts within a year",
        ));
    }
    Ok((starts_at, ends_at))
}

/// Where a silence is at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Pending,
    Active,
    Expired,
}

impl State {
    pub fn at(starts_at: DateTime<Utc>, ends_at: DateTime<Utc>, now: DateTime<Utc>) -> Self {
        if now >= ends_at {
            State::Expired
        } else if now < starts_at {
            State::Pending
        } else {
            State::Active
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Active => "active",
            State::Expired => "expired",
        }
    }
}

/// A silence ready to match.
#[derive(Debug, Clone)]
pub struct Silence {
    pub id: i64,
    pub matchers: Vec<Matcher>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

impl Silence {
    pub fn matches(&self, s: &Subject) -> bool {
        self.matchers.iter().all(|m| m.matches(s))
    }
}

/// Silences compiled for matching many alerts: each silence with an equality matcher on a
/// non-empty value is filed under that field and value, so an alert meets only the silences
/// filed under its own values (a thousand silences on different services cost an alert a few
/// lookups); the rest are tried on every alert.
#[derive(Debug, Default)]
pub struct Set {
    silences: Vec<Silence>,
    /// field → value → silences (indexes into `silences`)
    filed: HashMap<String, HashMap<String, Vec<usize>>>,
    unfiled: Vec<usize>,
}

impl Set {
    pub fn new(silences: Vec<Silence>) -> Self {
        let mut set = Set {
            silences,
            ..Default::default()
        };
        for (i, s) in set.silences.iter().enumerate() {
            match s
                .matchers
                .iter()
                .find(|m| m.op == MatchOp::Eq && !m.value.is_empty())
            {
                Some(m) => set
                    .filed
                    .entry(m.name.clone())
                    .or_default()
                    .entry(m.value.clone())
                    .or_default()
                    .push(i),
                None => set.unfiled.push(i),
            }
        }
        set
    }

    pub fn is_empty(&self) -> bool {
        self.silences.is_empty()
    }

    pub fn len(&self) -> usize {
        self.silences.len()
    }

    /// The first (lowest id) silence active at `now` that matches the alert.
    pub fn silencing(&self, s: &Subject, now: DateTime<Utc>) -> Option<i64> {
        if self.silences.is_empty() {
            return None;
        }
        let mut best: Option<i64> = None;
        let mut consider = |i: usize| {
            let silence = &self.silences[i];
            if silence.starts_at <= now
                && now < silence.ends_at
                && best.is_none_or(|b| silence.id < b)
                && silence.matches(s)
            {
                best = Some(silence.id);
            }
        };
        for (field, by_value) in &self.filed {
            if let Some(value) = s.get(field)
                && let Some(found) = by_value.get(&value)
            {
                found.iter().copied().for_each(&mut consider);
            }
        }
        self.unfiled.iter().copied().for_each(&mut consider);
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subject<'a>(labels: &'a serde_json::Value, details: &'a serde_json::Value) -> Subject<'a> {
        Subject {
            labels,
            details,
            summary: "Checkout latency high",
            source: "prometheus",
            severity: "critical",
            status: "firing",
            integration: "alertmanager",
            format: "alertmanager",
            dedup_key: "k",
            group_key: "g",
        }
    }

    fn texts(ms: &[Matcher]) -> Vec<String> {
        ms.iter().map(Matcher::text).collect()
    }

    #[test]
    fn amtool_and_alertmanager_text_is_read() {
        let ms = parse_matchers(
            "matchers",
            r#"alertname=HighLatency service=~"pay.*" severity!="info""#,
        )
        .unwrap();
        assert_eq!(
            texts(&ms),
            [
                r#"alertname="HighLatency""#,
                r#"service=~"pay.*""#,
                r#"severity!="info""#
            ]
        );
        let braces =
            parse_matchers("m", r#"{alertname="HighLatency", job !~ "node|blackbox"}"#).unwrap();
        assert_eq!(
            texts(&braces),
            [r#"alertname="HighLatency""#, r#"job!~"node|blackbox""#]
        );
        let escaped = parse_matchers("m", r#"summary="say \"hi\"\\ok""#).unwrap();
        assert_eq!(escaped[0].value, r#"say "hi"\ok"#);
        // Other backslashes stay, as in Alertmanager: a regular expression keeps its escapes.
        let re = parse_matchers("m", r#"host=~"db\.example\.com" job=~"web\d+""#).unwrap();
        assert_eq!(
            (re[0].value.as_str(), re[1].value.as_str()),
            (r"db\.example\.com", r"web\d+")
        );
        assert_eq!(
            texts(&re),
            [r#"host=~"db\\.example\\.com""#, r#"job=~"web\\d+""#]
        );
        let again = parse_matchers("m", &texts(&re).join(" ")).unwrap();
        assert_eq!(again, re);
        // Written back and read again, a matcher is the same.
        let again = parse_matchers("m", &texts(&escaped).join(" ")).unwrap();
        assert_eq!(again, escaped);
        let dotted = parse_matchers("m", "labels.app.kubernetes.io/name=api").unwrap();
        assert_eq!(dotted[0].name, "labels.app.kubernetes.io/name");
    }

    #[test]
    fn bad_text_names_what_is_wrong() {
        for (text, says) in [
            ("", "at least one matcher"),
            ("alertname", "no comparison"),
            ("alertname=\"open", "not closed"),
            ("{alertname=x", "no closing"),
            ("=x", "expected a label name"),
            ("job!=node", "would silence almost every alert"),
            ("job=~\"(\"", "not a regular expression"),
            ("job=~\"a)|(?:.*\"", "not a regular expression"),
        ] {
            let err = format!("{:?}", parse_matchers("matchers", text).unwrap_err());
            assert!(err.contains(says), "{text:?} gave {err:?}");
            assert!(err.contains("matchers"), "{err}");
        }
    }

    #[test]
    fn matchers_hold_as_in_alertmanager() {
        let labels = json!({"alertname": "HighLatency", "service": "payments-gateway"});
        let details = json!({"runbook": "r"});
        let s = subject(&labels, &details);
        let yes = |t: &str| {
            parse_matchers("m", t)
                .unwrap()
                .iter()
                .all(|m| m.matches(&s))
        };
        assert!(yes("alertname=HighLatency"));
        assert!(yes("service=~pay.*"));
        assert!(!yes("service=~pay")); // anchored
        assert!(yes("alertname=HighLatency team!=web"));
        assert!(yes("alertname=HighLatency team=\"\"")); // a missing label is empty
        assert!(!yes("alertname=HighLatency service!~\"pay.*\""));
        assert!(yes("annotations.runbook=r"));
        assert!(yes("integration=alertmanager"));
    }

    #[test]
    fn lengths_read_as_amtool_writes_them() {
        assert_eq!(parse_length("d", "2h").unwrap(), Duration::hours(2));
        assert_eq!(parse_length("d", "1h30m").unwrap(), Duration::minutes(90));
        assert_eq!(parse_length("d", "1w").unwrap(), Duration::days(7));
        for bad in ["", "2", "h", "2x", "-1h", "0m", "99999999999w"] {
            assert!(parse_length("duration", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn windows_end_after_they_start_within_the_limit() {
        let now = DateTime::parse_from_rfc3339("2026-12-03T10:00:00Z")
            .unwrap()
            .to_utc();
        let (s, e) = check_window(None, now + Duration::hours(2), now, 24).unwrap();
        assert_eq!((s, e), (now, now + Duration::hours(2)));
        // A start in the past is now.
        let (s, _) = check_window(
            Some(now - Duration::hours(1)),
            now + Duration::hours(1),
            now,
            24,
        )
        .unwrap();
        assert_eq!(s, now);
        assert!(check_window(None, now, now, 24).is_err());
        let long = check_window(None, now + Duration::hours(25), now, 24).unwrap_err();
        assert!(format!("{long:?}").contains("at most"), "{long:?}");
        assert_eq!(State::at(now, now + Duration::hours(1), now), State::Active);
        assert_eq!(
            State::at(now + Duration::hours(1), now + Duration::hours(2), now),
            State::Pending
        );
        assert_eq!(
            State::at(now - Duration::hours(2), now, now),
            State::Expired
        );
    }

    #[test]
    fn a_set_finds_the_lowest_active_silence_through_its_index() {
        let now = DateTime::parse_from_rfc3339("2026-12-03T10:00:00Z")
            .unwrap()
            .to_utc();
        let silence = |id: i64, text: &str, from: i64, to: i64| Silence {
            id,
            matchers: parse_matchers("m", text).unwrap(),
            starts_at: now + Duration::hours(from),
            ends_at: now + Duration::hours(to),
        };
        let mut all: Vec<Silence> = (0..1000)
            .map(|n| silence(100 + n, &format!("service=svc-{n}"), -1, 1))
            .collect();
        all.push(silence(
            7,
            "alertname=HighLatency service=payments-gateway",
            -1,
            1,
        ));
        all.push(silence(5, "service=~\"pay.*\"", -1, 1));
        all.push(silence(3, "service=payments-gateway", 1, 2)); // not yet
        let set = Set::new(all);
        let labels = json!({"alertname": "HighLatency", "service": "payments-gateway"});
        let details = json!({});
        assert_eq!(set.silencing(&subject(&labels, &details), now), Some(5));
        let other = json!({"alertname": "Disk", "service": "svc-42"});
        assert_eq!(set.silencing(&subject(&other, &details), now), Some(142));
        let none = json!({"alertname": "Disk", "service": "search"});
        assert_eq!(set.silencing(&subject(&none, &details), now), None);
        assert_eq!(
            set.silencing(&subject(&other, &details), now + Duration::hours(1)),
            None
        );
    }
}
