//! Evidence: what someone investigating an incident can inspect — code, chat, tickets, metrics —
//! each item keeping where it came from; and the rules for turning exports into it (a Slack
//! workspace export in [`slack`], Linear and Jira exports in [`tickets`]).

pub mod slack;
pub mod stream;
pub mod tickets;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::DomainError;

/// The largest file read: 25 MiB.
pub const UPLOAD_LIMIT: usize = crate::http::UPLOAD_LIMIT;
/// The most one upload may unpack to (a zip cannot expand past it): 200 MiB.
pub const UNPACKED_LIMIT: u64 = 200 * 1024 * 1024;
/// The most one file of an archive may unpack to (a day of one channel, or the list of
/// people): 32 MiB. Read a record at a time, only its longest string is ever held whole.
pub const FILE_UNPACKED_LIMIT: u64 = 32 * 1024 * 1024;
/// The most an upload's unpacking may hold beside the upload itself: what it keeps, and the
/// one file being read. The room an upload waits for counts it.
pub const UNPACK_WORK: usize = MAX_KEPT + FILE_UNPACKED_LIMIT as usize;
/// The most messages or tickets one import holds.
pub const MAX_ROWS: usize = 100_000;
/// The longest text an evidence item holds.
pub const MAX_TEXT: usize = 50_000;
/// The most text one import keeps, all its messages or tickets together: 32 MiB.
pub const MAX_KEPT: usize = 32 * 1024 * 1024;

/// What an import has kept so far, against [`MAX_KEPT`].
#[derive(Debug, Default)]
pub struct Kept(usize);

impl Kept {
    /// Counts `bytes` more, or refuses once the import would keep more than [`MAX_KEPT`].
    pub fn take(&mut self, bytes: usize) -> Result<(), DomainError> {
        self.0 += bytes;
        if self.0 > MAX_KEPT {
            return Err(DomainError::invalid(
                "file",
                format!(
                    "the export holds more than {} MiB of text; export a shorter period, or fewer channels or tickets",
                    MAX_KEPT / (1024 * 1024)
                ),
            ));
        }
        Ok(())
    }
}

/// Text from a file as it is kept: at most `max` characters, without the NULs PostgreSQL
/// cannot store (they carry nothing a reader would miss).
pub fn clean(text: &str, max: usize) -> String {
    // Sized exactly: an import keeps up to 32 MiB of these, and a string grown a character at
    // a time holds up to twice its length.
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let kept = &text[..end];
    if kept.contains(crate::domain::UNSTORABLE) {
        kept.replace(crate::domain::UNSTORABLE, "")
    } else {
        kept.to_owned()
    }
}

/// Whether a time read from a file is one worth keeping (and one PostgreSQL can store, which
/// stops at 4713 BC): the years 1900 to 9999.
pub fn storable_time(t: &DateTime<Utc>) -> bool {
    use chrono::Datelike;
    (1900..=9999).contains(&t.year())
}

/// What an evidence item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    Code,
    Chat,
    Ticket,
    RelatedIncident,
    Timeline,
    Metric,
}

/// Where an evidence item came from; which fields a kind needs is checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// code: the repository
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// code: the file's path
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// code: the commit it was read at
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// code: the language, e.g. typescript
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// chat: the channel
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// chat: who wrote it
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// chat, timeline: when
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    /// ticket, related incident: its key, e.g. PAY-184
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Source {
    /// Where the item comes from, as the pages write it: the parts it has, in order
    /// (repository, path @ commit, language, channel, author, key, when in UTC), each once.
    pub fn parts(&self) -> Vec<String> {
        let path = match (&self.path, &self.commit) {
            (Some(p), Some(c)) => Some(format!("{p} @ {c}")),
            (Some(p), None) => Some(p.clone()),
            (None, Some(c)) => Some(format!("@ {c}")),
            (None, None) => None,
        };
        [
            self.repository.clone(),
            path,
            self.language.clone(),
            self.channel.clone(),
            self.author.clone(),
            self.key.clone(),
            self.at.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
        ]
        .into_iter()
        .flatten()
        .filter(|p| !p.trim().is_empty())
        .collect()
    }
}

/// One piece of evidence the learner may inspect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub title: String,
    /// The code, the chat lines, the ticket's text …
    pub text: String,
    #[serde(default)]
    pub source: Source,
}

fn needs(field: &str, value: &Option<String>, what: &str) -> Result<(), DomainError> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() && v.chars().count() <= 500 => Ok(()),
        _ => Err(DomainError::invalid(
            field,
            format!("{what} is needed (at most 500 characters)"),
        )),
    }
}

impl Evidence {
    /// Checks the item, naming the field that is wrong under `at` (`evidence[2]`, or nothing).
    pub fn check(&self, at: &str) -> Result<(), DomainError> {
        let under = |f: &str| {
            if at.is_empty() {
                f.to_owned()
            } else {
                format!("{at}.{f}")
            }
        };
        check_text(&under("title"), &self.title, 200)?;
        check_text(&under("text"), &self.text, MAX_TEXT)?;
        let s = &self.source;
        let field = |f: &str| under(&format!("source.{f}"));
        for (name, value) in [
            ("repository", &s.repository),
            ("path", &s.path),
            ("commit", &s.commit),
            ("language", &s.language),
            ("channel", &s.channel),
            ("author", &s.author),
            ("key", &s.key),
        ] {
            if value.as_deref().is_some_and(|v| v.chars().count() > 500) {
                return Err(DomainError::invalid(&field(name), "at most 500 characters"));
            }
        }
        match self.kind {
            EvidenceKind::Code => {
                needs(&field("repository"), &s.repository, "the repository")?;
                needs(&field("path"), &s.path, "the file's path")?;
            }
            EvidenceKind::Chat => {
                needs(&field("channel"), &s.channel, "the channel")?;
                needs(&field("author"), &s.author, "who wrote it")?;
            }
            EvidenceKind::Ticket | EvidenceKind::RelatedIncident => {
                needs(&field("key"), &s.key, "its key")?;
            }
            EvidenceKind::Timeline | EvidenceKind::Metric => {}
        }
        Ok(())
    }
}

/// A text field of 1 to `max` characters (after trimming), else an error naming `field`.
pub fn check_text(field: &str, value: &str, max: usize) -> Result<(), DomainError> {
    let n = value.trim().chars().count();
    if n == 0 || n > max {
        return Err(DomainError::invalid(
            field,
            format!("write 1 to {max} characters"),
        ));
    }
    Ok(())
}

/// How an item reached the incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Typed or pasted by a person
    Pasted,
    /// Picked from a Slack workspace export
    Slack,
    /// Picked from a Linear export
    Linear,
    /// Picked from a Jira export
    Jira,
    /// Read from a git repository at the commit before the incident started
    Git,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pasted => "pasted",
            Self::Slack => "slack",
            Self::Linear => "linear",
            Self::Jira => "jira",
            Self::Git => "git",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "pasted" => Self::Pasted,
            "slack" => Self::Slack,
            "linear" => Self::Linear,
            "jira" => Self::Jira,
            "git" => Self::Git,
            _ => return None,
        })
    }
}

impl EvidenceKind {
    /// What a page calls it.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Code => "Code",
            Self::Chat => "Chat",
            Self::Ticket => "Ticket",
            Self::RelatedIncident => "Related incident",
            Self::Timeline => "Timeline",
            Self::Metric => "Metric",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Chat => "chat",
            Self::Ticket => "ticket",
            Self::RelatedIncident => "related_incident",
            Self::Timeline => "timeline",
            Self::Metric => "metric",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "code" => Self::Code,
            "chat" => Self::Chat,
            "ticket" => Self::Ticket,
            "related_incident" => Self::RelatedIncident,
            "timeline" => Self::Timeline,
            "metric" => Self::Metric,
            _ => return None,
        })
    }
}

/// An item a person attaches to an incident: code, chat, a ticket or a metric, checked like a
/// challenge's evidence. (Timeline excerpts and related incidents come from Quell's own records.)
pub fn check_attachable(e: &Evidence) -> Result<(), DomainError> {
    if matches!(
        e.kind,
        EvidenceKind::Timeline | EvidenceKind::RelatedIncident
    ) {
        return Err(DomainError::invalid(
            "kind",
            "attach code, chat, ticket or metric; timeline excerpts and related incidents come from the incident itself",
        ));
    }
    e.check("")
}

/// A chat message read from an export.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Message {
    pub channel: String,
    pub author: String,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// A ticket read from an export.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Ticket {
    /// Its key, e.g. PAY-184
    pub key: String,
    pub title: String,
    pub created_at: DateTime<Utc>,
    /// Its description, possibly empty
    pub text: String,
}

/// One chat excerpt from messages of one channel, in time order: a line per message with its
/// time and author, the authors in order of first appearance, and the time of its last line
/// (what the leak guard compares with the incident's detection).
pub fn chat_excerpt(
    channel: &str,
    messages: &[Message],
    title: Option<&str>,
) -> Result<Evidence, DomainError> {
    let mut ms: Vec<&Message> = messages.iter().collect();
    if ms.is_empty() {
        return Err(DomainError::invalid(
            "messages",
            "pick at least one message",
        ));
    }
    if let Some(other) = ms.iter().find(|m| m.channel != channel) {
        return Err(DomainError::invalid(
            "messages",
            format!(
                "an excerpt comes from one channel; #{} is not #{channel}",
                other.channel
            ),
        ));
    }
    ms.sort_by_key(|m| m.at);
    let (first, last) = (ms[0].at, ms[ms.len() - 1].at);
    let one_day = first.date_naive() == last.date_naive();
    let mut authors: Vec<&str> = Vec::new();
    let mut lines = Vec::with_capacity(ms.len());
    for m in &ms {
        if !authors.contains(&m.author.as_str()) {
            authors.push(&m.author);
        }
        let when = if one_day {
            m.at.format("%H:%M:%S")
        } else {
            m.at.format("%Y-%m-%d %H:%M:%S")
        };
        lines.push(format!("[{when}] {}: {}", m.author, m.text));
    }
    let text = lines.join("\n");
    let n = text.chars().count();
    if n > MAX_TEXT {
        return Err(DomainError::invalid(
            "messages",
            format!(
                "the picked messages come to {n} characters; pick fewer (an item holds at most {MAX_TEXT})"
            ),
        ));
    }
    let title = match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => t.to_owned(),
        None if first == last => format!("#{channel}, {} UTC", first.format("%Y-%m-%d %H:%M")),
        None => format!(
            "#{channel}, {}–{} UTC",
            first.format("%Y-%m-%d %H:%M"),
            if one_day {
                last.format("%H:%M").to_string()
            } else {
                last.format("%Y-%m-%d %H:%M").to_string()
            }
        ),
    };
    let mut author = authors.join(", ");
    if author.chars().count() > 500 {
        author = format!("{} and others", authors[0]);
    }
    let e = Evidence {
        kind: EvidenceKind::Chat,
        title,
        text,
        source: Source {
            channel: Some(format!("#{channel}")),
            author: Some(author),
            at: Some(last),
            ..Default::default()
        },
    };
    e.check("")?;
    Ok(e)
}

/// A ticket as evidence: its title, then its description; dated when it was created.
pub fn ticket_evidence(t: &Ticket) -> Evidence {
    let title: String = format!("{} · {}", t.key, t.title)
        .chars()
        .take(200)
        .collect();
    let mut text = t.title.clone();
    if !t.text.trim().is_empty() {
        text.push_str("\n\n");
        text.push_str(t.text.trim());
    }
    Evidence {
        kind: EvidenceKind::Ticket,
        title,
        text: text.chars().take(MAX_TEXT).collect(),
        source: Source {
            key: Some(t.key.clone()),
            at: Some(t.created_at),
            ..Default::default()
        },
    }
}

/// The language a file's name suggests, for highlighting and for the learner.
pub fn language_of(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "Dockerfile" {
        return Some("dockerfile");
    }
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" => "python",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "swift" => "swift",
        "scala" => "scala",
        "sh" | "bash" => "shell",
        "sql" => "sql",
        "yaml" | "yml" => "yaml",
        "json" => "json",
        "toml" => "toml",
        "tf" | "hcl" => "hcl",
        "xml" => "xml",
        "md" => "markdown",
        "ini" | "conf" | "cfg" | "properties" => "config",
        _ => return None,
    })
}

/// Lines `from`–`to` (1-based, inclusive) of `text`, from a spec like `10-40` or `12`; all of
/// it when the spec is blank.
pub fn pick_lines(text: &str, spec: Option<&str>) -> Result<String, DomainError> {
    let spec = spec.map(str::trim).unwrap_or("");
    if spec.is_empty() {
        return Ok(text.to_owned());
    }
    let bad = || DomainError::invalid("lines", "a line or a range of lines, like 12 or 10-40");
    let (a, b) = spec.split_once('-').unwrap_or((spec, spec));
    let (a, b): (usize, usize) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    let count = text.lines().count();
    if a == 0 || b < a {
        return Err(bad());
    }
    if a > count {
        return Err(DomainError::invalid(
            "lines",
            format!("the file has {count} lines; line {a} is past its end"),
        ));
    }
    Ok(text
        .lines()
        .skip(a - 1)
        .take(b.min(count) - a + 1)
        .collect::<Vec<_>>()
        .join("\n"))
}

/// What a file read from git at a commit becomes.
pub struct CodeAt<'a> {
    pub repository: &'a str,
    pub path: &'a str,
    pub commit: &'a str,
    pub committed_at: DateTime<Utc>,
    pub content: &'a str,
    pub lines: Option<&'a str>,
    pub language: Option<&'a str>,
    pub title: Option<&'a str>,
}

/// A code item from a file as it was at a commit: the lines asked for, the language from the
/// file's name unless given, dated by the commit.
pub fn code_evidence(c: &CodeAt) -> Result<Evidence, DomainError> {
    let text = pick_lines(c.content, c.lines)?;
    let n = text.chars().count();
    if n > MAX_TEXT {
        return Err(DomainError::invalid(
            "lines",
            format!("that is {n} characters; pick lines that come to at most {MAX_TEXT}"),
        ));
    }
    if text.trim().is_empty() {
        return Err(DomainError::invalid("lines", "those lines are empty"));
    }
    let short = &c.commit[..c.commit.len().min(10)];
    let title = match c.title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => t.to_owned(),
        None => match c.lines.map(str::trim).filter(|l| !l.is_empty()) {
            Some(l) => format!("{} (lines {l}) at {short}", c.path),
            None => format!("{} at {short}", c.path),
        },
    };
    let e = Evidence {
        kind: EvidenceKind::Code,
        title: title.chars().take(200).collect(),
        text,
        source: Source {
            repository: Some(c.repository.to_owned()),
            path: Some(c.path.to_owned()),
            commit: Some(c.commit.to_owned()),
            language: c
                .language
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .or_else(|| language_of(c.path).map(str::to_owned)),
            at: Some(c.committed_at),
            ..Default::default()
        },
    };
    e.check("")?;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the parts an item has, joined once each: a timeline entry with only a time read
    /// "· 14:05 UTC", its separator before nothing.
    #[test]
    fn a_source_reads_only_the_parts_it_has() {
        let at = DateTime::parse_from_rfc3339("2026-09-24T14:05:00Z")
            .unwrap()
            .to_utc();
        let timeline = Source {
            at: Some(at),
            ..Default::default()
        };
        assert_eq!(timeline.parts(), ["2026-09-24 14:05 UTC"]);
        let code = Source {
            repository: Some("orbitpay/payments-worker".into()),
            path: Some("src/retry/retryQueue.ts".into()),
            commit: Some("4e1c2aa".into()),
            ..Default::default()
        };
        assert_eq!(
            code.parts(),
            [
                "orbitpay/payments-worker",
                "src/retry/retryQueue.ts @ 4e1c2aa"
            ]
        );
        let chat = Source {
            channel: Some("#payments-oncall".into()),
            author: Some("maya".into()),
            at: Some(at),
            ..Default::default()
        };
        assert_eq!(
            chat.parts().join(" · "),
            "#payments-oncall · maya · 2026-09-24 14:05 UTC"
        );
    }
}
