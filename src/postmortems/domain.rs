//! Pure rules of postmortems: the figures lines the reference document prints, Markdown
//! rendered and sanitised, the sections a person edits, the publication checks and the diff.
//! The error budget is the service's (`services::domain`), action items their own
//! (`action_items::domain`).

use chrono::{DateTime, Utc};

pub use crate::action_items::domain::{
    ACTION_TYPES, ITEM_STATUS_LABELS, ITEM_STATUSES, check_action_type, check_item_status,
    completion_by_type, item_status_label,
};
use crate::domain::{DomainError, format_minutes, grouped};
pub use crate::services::domain::{ErrorBudget, MONTH_SECS, budget_line, error_budget};
use crate::timeline::domain::Kind;

/// `part` of `whole` in whole percent (`109 400` of `352 800` → `31`); `None` for nothing.
pub fn share_percent(part: i64, whole: i64) -> Option<i64> {
    (whole > 0).then(|| (part as f64 * 100.0 / whole as f64).round() as i64)
}

/// The Impact section's failure line: `Authorization requests failed: 109 400 of 352 800 (31%)
/// between 16:02 and 16:52.`
pub fn failure_line(
    label: &str,
    failed: i64,
    total: Option<i64>,
    between: Option<(&str, &str)>,
) -> String {
    let mut s = format!("{label} failed: {}", grouped(failed));
    if let Some((total, share)) = total.and_then(|t| Some((t, share_percent(failed, t)?))) {
        s.push_str(&format!(" of {} ({share}%)", grouped(total)));
    }
    if let Some((from, to)) = between {
        s.push_str(&format!(" between {from} and {to}"));
    }
    s.push('.');
    s
}

/// `Time to detect: 5 min from first error, 2 h 2 min from the change. Time to acknowledge:
/// 9 min. Time to mitigate: 45 min from alert.`
pub fn response_line(
    detect_secs: i64,
    from_change_secs: Option<i64>,
    ack_secs: Option<i64>,
    mitigate_secs: Option<i64>,
) -> String {
    let mut s = format!(
        "Time to detect: {} from first error",
        format_minutes(detect_secs)
    );
    if let Some(c) = from_change_secs {
        s.push_str(&format!(", {} from the change", format_minutes(c)));
    }
    s.push('.');
    if let Some(a) = ack_secs {
        s.push_str(&format!(" Time to acknowledge: {}.", format_minutes(a)));
    }
    if let Some(m) = mitigate_secs {
        s.push_str(&format!(
            " Time to mitigate: {} from alert.",
            format_minutes(m)
        ));
    }
    s
}

/// HTML that went through [`render_markdown`]'s sanitiser, and so may be shown unescaped. The
/// only way to make one is that function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafeHtml(String);

impl std::fmt::Display for SafeHtml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl askama::filters::HtmlSafe for SafeHtml {}

impl SafeHtml {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Markdown as people write it, rendered to HTML that can be shown: no scripts, no event
/// handlers, no `javascript:` links (ammonia's allow-list), no images (the page's CSP would
/// block remote ones anyway), links made `noopener noreferrer`.
pub fn render_markdown(text: &str) -> SafeHtml {
    use pulldown_cmark::{Options, Parser, html};
    let mut raw = String::new();
    html::push_html(
        &mut raw,
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH),
    );
    SafeHtml(
        ammonia::Builder::default()
            .rm_tags(&["img"])
            .link_rel(Some("noopener noreferrer nofollow"))
            .clean(&raw)
            .to_string(),
    )
}

/// The text sections of a postmortem, each edited on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Summary,
    Impact,
    RootCause,
    ContributingFactors,
    Detection,
    WentWell,
    WasHard,
    GotLucky,
    Lessons,
}

impl Section {
    pub const ALL: [Section; 9] = [
        Self::Summary,
        Self::Impact,
        Self::RootCause,
        Self::ContributingFactors,
        Self::Detection,
        Self::WentWell,
        Self::WasHard,
        Self::GotLucky,
        Self::Lessons,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Summary => "summary",
            Self::Impact => "impact",
            Self::RootCause => "root_cause",
            Self::ContributingFactors => "contributing_factors",
            Self::Detection => "detection",
            Self::WentWell => "went_well",
            Self::WasHard => "was_hard",
            Self::GotLucky => "got_lucky",
            Self::Lessons => "lessons",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Self::Summary => "Summary",
            Self::Impact => "Impact",
            Self::RootCause => "Root cause",
            Self::ContributingFactors => "Contributing factors",
            Self::Detection => "Detection",
            Self::WentWell => "What went well",
            Self::WasHard => "What was hard",
            Self::GotLucky => "Where we got lucky",
            Self::Lessons => "Lessons",
        }
    }

    pub fn parse(value: &str) -> Result<Self, DomainError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == value.trim())
            .ok_or_else(|| {
                DomainError::invalid(
                    "section",
                    format!(
                        "{value:?} is not a section; use summary, impact, root_cause, contributing_factors, detection, went_well, was_hard, got_lucky or lessons"
                    ),
                )
            })
    }
}

/// A section's text: at most 50 000 characters.
pub fn check_section_text(text: &str) -> Result<String, DomainError> {
    if text.chars().count() > 50_000 {
        return Err(DomainError::invalid(
            "text",
            "a section is at most 50 000 characters",
        ));
    }
    Ok(text.trim().replace("\r\n", "\n"))
}

/// What a postmortem still lacks before it can be published, each said as a person would:
/// a root cause, an action item with an owner and a due date, the impact figures.
pub fn missing_for_publication(
    root_cause: &str,
    items_with_owner_and_due: usize,
    failed_requests: Option<i64>,
) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if root_cause.trim().is_empty() {
        missing.push("a root cause");
    }
    if items_with_owner_and_due == 0 {
        missing.push("at least one action item with an owner and a due date");
    }
    if failed_requests.is_none() {
        missing.push("the impact figures (how many requests failed)");
    }
    missing
}

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Removed(String),
    Added(String),
}

/// A line diff (longest common subsequence) from `before` to `after`, unchanged lines kept
/// only around changes (`context` lines either side).
pub fn diff(before: &str, after: &str, context: usize) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut all = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            all.push(DiffLine::Same(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removed lines come before the lines that replace them, as diffs are read.
            all.push(DiffLine::Removed(a[i].to_owned()));
            i += 1;
        } else {
            all.push(DiffLine::Added(b[j].to_owned()));
            j += 1;
        }
    }
    let changed: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, DiffLine::Same(_)))
        .map(|(k, _)| k)
        .collect();
    all.into_iter()
        .enumerate()
        .filter(|(k, l)| {
            !matches!(l, DiffLine::Same(_)) || changed.iter().any(|c| c.abs_diff(*k) <= context)
        })
        .map(|(_, l)| l)
        .collect()
}

/// A Markdown document as it reads: headings without their `#`, links as their text (so a work
/// item that became a link is no change), table rows as their cells joined by " · " (the ruling
/// row dropped), emphasis markers gone.
pub fn readable(markdown: &str) -> String {
    let mut out = Vec::new();
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with('|')
            && t.trim_matches(|c| c == '|' || c == '-' || c == ':' || c == ' ')
                .is_empty()
        {
            continue;
        }
        let mut l = t.trim_start_matches('#').trim_start().to_owned();
        if l.starts_with('|') {
            l = l
                .trim_matches('|')
                .split(" | ")
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" · ");
        }
        // [text](url) → text
        let mut plain = String::with_capacity(l.len());
        let mut rest = l.as_str();
        while let Some(open) = rest.find('[') {
            let Some(mid) = rest[open..].find("](") else {
                break;
            };
            let Some(close) = rest[open + mid..].find(')') else {
                break;
            };
            plain.push_str(&rest[..open]);
            plain.push_str(&rest[open + 1..open + mid]);
            rest = &rest[open + mid + close + 1..];
        }
        plain.push_str(rest);
        out.push(plain.replace("**", "").replace("\\|", "|"));
    }
    out.join("\n")
}

/// A piece of a changed line: words kept, taken out or put in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Same(String),
    Removed(String),
    Added(String),
}

/// A line of a readable diff: unchanged (context), changed (with its words marked), or wholly
/// removed or added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRow {
    /// same, changed, removed or added
    pub kind: &'static str,
    pub pieces: Vec<Piece>,
}

/// Word-level difference of two lines (longest common subsequence over words).
fn word_pieces(before: &str, after: &str) -> Vec<Piece> {
    let a: Vec<&str> = before.split_inclusive(' ').collect();
    let b: Vec<&str> = after.split_inclusive(' ').collect();
    let lines = diff(&a.join("\n"), &b.join("\n"), usize::MAX);
    let mut pieces: Vec<Piece> = Vec::new();
    for l in lines {
        let (kind, text) = match l {
            DiffLine::Same(t) => (0, t),
            DiffLine::Removed(t) => (1, t),
            DiffLine::Added(t) => (2, t),
        };
        match (pieces.last_mut(), kind) {
            (Some(Piece::Same(s)), 0)
            | (Some(Piece::Removed(s)), 1)
            | (Some(Piece::Added(s)), 2) => s.push_str(&text),
            (_, 0) => pieces.push(Piece::Same(text)),
            (_, 1) => pieces.push(Piece::Removed(text)),
            _ => pieces.push(Piece::Added(text)),
        }
    }
    pieces
}

/// The readable texts of two versions compared line by line, a changed line shown once with its
/// changed words marked; unchanged lines kept `context` either side of a change.
pub fn readable_diff(before: &str, after: &str, context: usize) -> Vec<DiffRow> {
    let lines = diff(&readable(before), &readable(after), context);
    let mut rows = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        match &lines[k] {
            DiffLine::Same(t) => {
                rows.push(DiffRow {
                    kind: "same",
                    pieces: vec![Piece::Same(t.clone())],
                });
                k += 1;
            }
            _ => {
                // A run of removed lines, then the added lines that replace them.
                let removed: Vec<&String> = lines[k..]
                    .iter()
                    .take_while(|l| matches!(l, DiffLine::Removed(_)))
                    .map(|l| match l {
                        DiffLine::Removed(t) => t,
                        _ => unreachable!(),
                    })
                    .collect();
                let after_removed = k + removed.len();
                let added: Vec<&String> = lines[after_removed..]
                    .iter()
                    .take_while(|l| matches!(l, DiffLine::Added(_)))
                    .map(|l| match l {
                        DiffLine::Added(t) => t,
                        _ => unreachable!(),
                    })
                    .collect();
                let paired = removed.len().min(added.len());
                for n in 0..paired {
                    rows.push(DiffRow {
                        kind: "changed",
                        pieces: word_pieces(removed[n], added[n]),
                    });
                }
                for r in &removed[paired..] {
                    rows.push(DiffRow {
                        kind: "removed",
                        pieces: vec![Piece::Removed((*r).clone())],
                    });
                }
                for a in &added[paired..] {
                    rows.push(DiffRow {
                        kind: "added",
                        pieces: vec![Piece::Added((*a).clone())],
                    });
                }
                k = after_removed + added.len();
            }
        }
    }
    rows
}

/// The parts of a postmortem a reviewer can comment on: the text sections and the computed
/// figures, timeline and action items, in the document's order.
pub const COMMENT_PARTS: [(&str, &str); 12] = [
    ("summary", "Summary"),
    ("impact", "Impact"),
    ("figures", "Impact figures"),
    ("timeline", "Timeline"),
    ("root_cause", "Root cause"),
    ("contributing_factors", "Contributing factors"),
    ("detection", "Detection"),
    ("went_well", "What went well"),
    ("was_hard", "What was hard"),
    ("got_lucky", "Where we got lucky"),
    ("action_items", "Action items"),
    ("lessons", "Lessons"),
];

pub fn check_comment_part(part: &str) -> Result<&'static str, DomainError> {
    COMMENT_PARTS
        .iter()
        .find(|(p, _)| *p == part.trim())
        .map(|(p, _)| *p)
        .ok_or_else(|| {
            DomainError::invalid(
                "part",
                format!(
                    "{part:?} is not a part of the postmortem; use one of {}",
                    COMMENT_PARTS.map(|(p, _)| p).join(", ")
                ),
            )
        })
}

/// A review comment: 1 to 4000 characters.
pub fn check_comment_body(body: &str) -> Result<String, DomainError> {
    let body = body.trim().replace("\r\n", "\n");
    if body.is_empty() || body.chars().count() > 4000 {
        return Err(DomainError::invalid(
            "body",
            "write the comment in 1 to 4000 characters",
        ));
    }
    Ok(body)
}

/// `9 minutes`, `1 minute`, `2 hours 2 minutes`, `1 hour`, `3 days 2 hours`: a duration in
/// words, for prose. Truncates to the minute like the header's figures.
pub fn format_minutes_long(secs: i64) -> String {
    let total = secs.max(0) / 60;
    let (d, h, m) = (total / 1440, total / 60 % 24, total % 60);
    let unit = |n: i64, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut parts = Vec::new();
    if d > 0 {
        parts.push(unit(d, "day"));
    }
    if h > 0 {
        parts.push(unit(h, "hour"));
    }
    if m > 0 || parts.is_empty() {
        parts.push(unit(m, "minute"));
    }
    parts.join(" ")
}

/// The figures a written section may cite by name, e.g. `{failed_share} of authorization
/// requests failed for {impact_duration}` → `31% of authorization requests failed for 50
/// minutes`: each is computed from the incident and the postmortem's facts.
pub const PROSE_FIGURES: [(&str, &str); 16] = [
    ("change_at", "the triggering change, HH:MM UTC"),
    ("started_at", "first customer impact, HH:MM UTC"),
    ("detected_at", "detection, HH:MM UTC"),
    ("acknowledged_at", "acknowledgement, HH:MM UTC"),
    ("mitigated_at", "mitigation, HH:MM UTC"),
    ("resolved_at", "resolution, HH:MM UTC"),
    ("time_to_detect", "first impact → detection"),
    ("time_to_acknowledge", "detection → acknowledgement"),
    ("time_to_mitigate", "detection → mitigation"),
    ("time_to_resolve", "detection → resolution"),
    ("impact_duration", "first impact → mitigation"),
    ("from_change", "the triggering change → detection"),
    ("failed_requests", "failed requests"),
    ("total_requests", "requests in the impact window"),
    ("failed_share", "failed ÷ all requests"),
    ("budget_consumed", "share of the monthly error budget used"),
];

/// Replaces each `{name}` of a known figure with its value; unknown names, and figures not
/// known yet, stay as written so the writer sees what is missing.
pub fn fill_figures(text: &str, values: &[(&str, String)]) -> String {
    crate::domain::fill_placeholders(text, |name| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    })
}

/// A timeline event as the document's Timeline words it.
pub struct EventLine<'a> {
    pub kind: Kind,
    pub details: &'a serde_json::Value,
    pub body: &'a str,
    pub occurred_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
    /// For a stakeholder update: which one it was (1 for the first).
    pub update_number: usize,
    /// The headline the incident's own timeline shows, for the kinds worded the same way.
    pub headline: String,
}

fn text_of<'a>(details: &'a serde_json::Value, key: &str) -> &'a str {
    details
        .get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("?")
}

/// `First`, `Second` … `Tenth`, then `11th`.
pub fn ordinal(n: usize) -> String {
    const WORDS: [&str; 10] = [
        "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth",
        "Tenth",
    ];
    match n {
        1..=10 => WORDS[n - 1].to_owned(),
        _ => {
            let suffix = match (n % 10, n % 100) {
                (_, 11..=13) => "th",
                (1, _) => "st",
                (2, _) => "nd",
                (3, _) => "rd",
                _ => "th",
            };
            format!("{n}{suffix}")
        }
    }
}

/// The document's wording of one event, as the reference writes it: what was written, then
/// what the event did, with its figure computed —
/// `Primary on call acknowledges (9 min)`, `Raised to Sev1 (checkout failing …)`,
/// `Error rate under 0.5%; incident marked Mitigated`, `First stakeholder update sent`.
pub fn event_line(e: &EventLine) -> String {
    let body = e.body.trim();
    let with = |fallback: String, joined: &str| {
        if body.is_empty() {
            fallback
        } else {
            format!("{body}{joined}")
        }
    };
    let since = format_minutes((e.occurred_at - e.detected_at).num_seconds());
    match e.kind {
        Kind::Opened => with(
            format!("Incident opened as {}", text_of(e.details, "severity")),
            &format!(" as {}", text_of(e.details, "severity")),
        ),
        Kind::Acknowledged => with(format!("Acknowledged ({since})"), &format!(" ({since})")),
        Kind::Mitigated => with(
            format!("Incident marked Mitigated ({since} after detection)"),
            "; incident marked Mitigated",
        ),
        Kind::Resolved => with("Incident Resolved".to_owned(), "; incident Resolved"),
        Kind::SeverityChanged => {
            let (from, to) = (text_of(e.details, "from"), text_of(e.details, "to"));
            let verb = if to < from { "Raised" } else { "Lowered" };
            if body.is_empty() {
                format!("{verb} to {to}")
            } else {
                format!("{verb} to {to} ({body})")
            }
        }
        Kind::StakeholderUpdate => format!("{} stakeholder update sent", ordinal(e.update_number)),
        _ if !body.is_empty() => body.to_owned(),
        _ => e.headline.clone(),
    }
}

/// Who took a role, as a line of the document says it: the commander by name (`IC Ana
/// Ribeiro`), the other roles by name of role (`comms lead`).
pub fn role_phrase(details: &serde_json::Value) -> String {
    match text_of(details, "role") {
        "incident_commander" => format!("IC {}", text_of(details, "person")),
        _ => text_of(details, "role_label").to_lowercase(),
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The document's lines: events of the same minute become one line, in the order they
/// happened, roles assigned in that minute said once (`IC Ana Ribeiro, comms lead and scribe
/// assigned`). Input: (`HH:MM`, text, role phrase when the event assigned a role).
pub fn merge_minutes(events: Vec<(String, String, Option<String>)>) -> Vec<(String, String)> {
    /// One minute's line being gathered: its parts in order, and the roles assigned in it
    /// (said together where the first of them happened).
    struct Minute {
        time: String,
        parts: Vec<String>,
        roles: Vec<String>,
        roles_at: Option<usize>,
    }
    let mut minutes: Vec<Minute> = Vec::new();
    for (time, text, role) in events {
        if minutes.last().is_none_or(|m| m.time != time) {
            minutes.push(Minute {
                time,
                parts: Vec::new(),
                roles: Vec::new(),
                roles_at: None,
            });
        }
        let m = minutes.last_mut().expect("pushed above");
        match role {
            Some(r) => {
                if m.roles_at.is_none() {
                    m.roles_at = Some(m.parts.len());
                    m.parts.push(String::new());
                }
                m.roles.push(r);
            }
            None => m.parts.push(text),
        }
    }
    minutes
        .into_iter()
        .map(|mut m| {
            if let Some(at) = m.roles_at {
                m.parts[at] = format!("{} assigned", and_list(&m.roles));
            }
            let parts: Vec<String> = m
                .parts
                .into_iter()
                .enumerate()
                .map(|(n, p)| if n == 0 { p } else { clause(&p) })
                .collect();
            (m.time, parts.join("; "))
        })
        .collect()
}

/// A sentence joined after a semicolon: `Bridge opened` → `bridge opened`, while names and
/// acronyms (`Ana Ribeiro took over`, `IC Ana …`, `DNS failed`) keep their capitals.
fn clause(sentence: &str) -> String {
    let mut words = sentence.split(' ');
    let first = words.next().unwrap_or_default();
    let second_is_lower = words
        .next()
        .is_none_or(|w| w.chars().next().is_none_or(|c| !c.is_uppercase()));
    let mut chars = first.chars();
    let plain_word = chars.next().is_some_and(char::is_uppercase)
        && first.chars().count() > 1
        && chars.all(char::is_lowercase);
    if plain_word && second_is_lower {
        let mut c = sentence.chars();
        let head = c
            .next()
            .map(|h| h.to_lowercase().to_string())
            .unwrap_or_default();
        head + c.as_str()
    } else {
        sentence.to_owned()
    }
}

/// The status as the header shows it.
pub fn status_label(status: &str) -> &'static str {
    match status {
        "published" => "Published",
        "in_review" => "In review",
        _ => "Draft",
    }
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests;
