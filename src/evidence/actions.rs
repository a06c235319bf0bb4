//! Attaching evidence to an incident (checked, audited), holding an uploaded export while someone
//! picks from it, and reading a file from git as it was before the incident started.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sqlx::PgConnection;

use super::db::{self, Channel, Import, Item, RowFilter};
use super::domain::{
    self, CodeAt, Evidence, Message, Origin, Ticket, slack,
    tickets::{self, Tracker},
};
use super::git;
use crate::audit::{self, Actor};
use crate::domain::DomainError;
use crate::error::{AppError, AppResult};
use crate::incidents::db::{Incident, get_named};
use crate::state::UploadQuota;

async fn one(conn: &mut PgConnection, incident: &Incident, id: i64) -> AppResult<Item> {
    db::list(&mut *conn, incident.id, Some(id))
        .await?
        .pop()
        .ok_or_else(|| AppError::NotFound(format!("{} has no evidence {id}.", incident.key)))
}

async fn store(
    conn: &mut PgConnection,
    actor: &Actor,
    incident: &Incident,
    item: &Evidence,
    origin: Origin,
) -> AppResult<Item> {
    let id = db::insert(&mut *conn, incident.id, item, origin, &actor.name).await?;
    let stored = one(conn, incident, id).await?;
    audit::created(
        conn,
        actor,
        "evidence.attach",
        &format!("{} evidence {id}", incident.key),
        &stored,
    )
    .await?;
    Ok(stored)
}

/// Attaches a pasted code snippet, chat excerpt, ticket or metric to the incident `key` names.
pub async fn attach(
    conn: &mut PgConnection,
    actor: &Actor,
    key: &str,
    item: &Evidence,
) -> AppResult<Item> {
    domain::check_attachable(item)?;
    let incident = get_named(&mut *conn, key).await?;
    store(conn, actor, &incident, item, Origin::Pasted).await
}

/// Removes item `id` from the incident.
pub async fn remove(conn: &mut PgConnection, actor: &Actor, key: &str, id: i64) -> AppResult<()> {
    let incident = get_named(&mut *conn, key).await?;
    let item = one(conn, &incident, id).await?;
    db::delete(&mut *conn, incident.id, id).await?;
    audit::deleted(
        conn,
        actor,
        "evidence.remove",
        &format!("{} evidence {id}", incident.key),
        &item,
    )
    .await
}

/// What an uploaded file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A Slack workspace export, the zip
    Slack,
    /// One channel's day files from a Slack export (`2026-10-21.json` …); name the channel
    SlackChannel,
    /// A Linear export, CSV or JSON
    Linear,
    /// A Jira export, CSV or JSON
    Jira,
}

impl Format {
    pub fn parse(value: &str) -> Result<Self, DomainError> {
        Ok(match value.trim() {
            "slack" => Self::Slack,
            "slack_channel" => Self::SlackChannel,
            "linear" => Self::Linear,
            "jira" => Self::Jira,
            _ => {
                return Err(DomainError::invalid(
                    "format",
                    "one of slack (the export's zip), slack_channel (a channel's day files), linear, jira",
                ));
            }
        })
    }

    fn stored(self) -> &'static str {
        match self {
            Self::Slack | Self::SlackChannel => "slack",
            Self::Linear => "linear",
            Self::Jira => "jira",
        }
    }
}

/// An uploaded export: its format, its files (name and bytes), and the channel a Slack
/// channel's day files come from.
pub struct Upload {
    pub format: Format,
    pub channel: Option<String>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// What an export held, read and checked, before anything is stored.
pub struct Parsed {
    format: Format,
    file_name: String,
    messages: Vec<Message>,
    tickets: Vec<Ticket>,
}

/// The most memory reading `upload` may take, for the room it waits for: its bytes, and what
/// it may keep — a zip up to [`domain::MAX_KEPT`] of text whatever it unpacks to, plus the one
/// file being unpacked, other files no more than themselves.
pub fn work_bytes(upload: &Upload) -> usize {
    let bytes: usize = upload.files.iter().map(|(_, b)| b.len()).sum();
    match upload.format {
        Format::Slack => bytes + domain::UNPACK_WORK,
        _ => bytes * 2,
    }
}

/// Reads an upload strictly; CPU-bound, so callers run it off the async threads. An error names
/// the file, the row or message, and what is wrong.
pub fn parse(upload: Upload) -> Result<Parsed, DomainError> {
    if upload.files.is_empty() {
        return Err(DomainError::invalid("file", "choose a file to upload"));
    }
    let total: usize = upload.files.iter().map(|(_, b)| b.len()).sum();
    if total > domain::UPLOAD_LIMIT {
        return Err(DomainError::invalid(
            "file",
            format!(
                "the upload is {} MiB; at most {} MiB is read",
                total / (1024 * 1024),
                domain::UPLOAD_LIMIT / (1024 * 1024)
            ),
        ));
    }
    let single = |what: &str| -> Result<&(String, Vec<u8>), DomainError> {
        match upload.files.as_slice() {
            [one] => Ok(one),
            _ => Err(DomainError::invalid(
                "file",
                format!("upload one file: {what}"),
            )),
        }
    };
    let file_name = upload
        .files
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
        .chars()
        .take(300)
        .collect();
    let (messages, tickets) = match upload.format {
        Format::Slack => (slack::read_zip(&single("the export's zip")?.1)?, vec![]),
        Format::SlackChannel => (
            slack::read_channel_files(upload.channel.as_deref().unwrap_or(""), &upload.files)?,
            vec![],
        ),
        Format::Linear => (
            vec![],
            tickets::read(Tracker::Linear, &single("the Linear export")?.1)?,
        ),
        Format::Jira => (
            vec![],
            tickets::read(Tracker::Jira, &single("the Jira export")?.1)?,
        ),
    };
    if messages.is_empty() && tickets.is_empty() {
        return Err(DomainError::invalid(
            "file",
            "the files hold no messages with text",
        ));
    }
    Ok(Parsed {
        format: upload.format,
        file_name,
        messages,
        tickets,
    })
}

/// An export held for picking: what it is and, for Slack, its channels.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportSummary {
    #[serde(flatten)]
    pub import: Import,
    /// Slack: each channel with its number of messages and first and last times
    pub channels: Vec<Channel>,
}

/// What a held row costs beside its text (its other columns, its index entries), as the upload
/// quota counts it, so 100,000 empty tickets are not free.
const ROW_BYTES: usize = 128;

impl Parsed {
    /// Bytes it holds, as the upload quota counts them: its text, and [`ROW_BYTES`] a row.
    fn kept_bytes(&self) -> i64 {
        let messages = self
            .messages
            .iter()
            .map(|m| m.channel.len() + m.author.len() + m.text.len() + ROW_BYTES);
        let tickets = self
            .tickets
            .iter()
            .map(|t| t.key.len() + t.title.len() + t.text.len() + ROW_BYTES);
        messages.chain(tickets).sum::<usize>() as i64
    }
}

/// Holds a parsed export for the incident `key` names (forgetting exports older than a day),
/// unless it would take its uploader or everyone past their quota: 429, saying how much is
/// held and how to make room.
pub async fn hold(
    conn: &mut PgConnection,
    actor: &Actor,
    key: &str,
    parsed: &Parsed,
    quota: &UploadQuota,
) -> AppResult<ImportSummary> {
    let incident = get_named(&mut *conn, key).await?;
    db::forget_old_imports(&mut *conn).await?;
    let bytes = parsed.kept_bytes();
    let (mine, all) = db::held_bytes(conn, actor.person_id).await?;
    let mib = |b: i64| (b + (1 << 20) - 1) >> 20;
    let make_room = format!(
        "uploads are forgotten {} hours after they are made, or remove one you no longer need",
        db::IMPORT_HOURS
    );
    if actor.person_id.is_some() && mine + bytes > quota.per_person {
        return Err(AppError::LimitReached(format!(
            "you hold {} MiB of uploads and this one keeps {} MiB; one person may hold {} MiB \
             at once ({make_room})",
            mib(mine),
            mib(bytes),
            mib(quota.per_person)
        )));
    }
    if all + bytes > quota.total {
        return Err(AppError::LimitReached(format!(
            "uploads hold {} MiB and this one keeps {} MiB; this installation holds at most {} \
             MiB at once ({make_room})",
            mib(all),
            mib(bytes),
            mib(quota.total)
        )));
    }
    let holder = db::Holder {
        name: &actor.name,
        person_id: actor.person_id,
        bytes,
    };
    let id = db::insert_import(
        conn,
        incident.id,
        parsed.format.stored(),
        &parsed.file_name,
        &holder,
        &parsed.messages,
        &parsed.tickets,
    )
    .await?;
    summary(conn, &incident, id).await
}

/// Forgets upload `id` of the incident `key` names, at its uploader's word or an admin's.
pub async fn forget(
    conn: &mut PgConnection,
    actor: &Actor,
    admin: bool,
    key: &str,
    id: i64,
) -> AppResult<()> {
    let incident = get_named(&mut *conn, key).await?;
    let import = held(conn, &incident, id).await?;
    if import.person_id != actor.person_id && !admin {
        return Err(AppError::Forbidden(
            "Only whoever uploaded it, or an admin, may remove an upload.".into(),
        ));
    }
    db::delete_import(&mut *conn, incident.id, id).await?;
    audit::deleted(
        conn,
        actor,
        "evidence.upload.remove",
        &format!("{} upload {id}", incident.key),
        &import,
    )
    .await
}

/// The export `id` held for the incident, or 404 (also once it has been forgotten).
async fn held(conn: &mut PgConnection, incident: &Incident, id: i64) -> AppResult<Import> {
    db::get_import(&mut *conn, incident.id, id)
        .await?
        .ok_or_else(|| {
            AppError::NotFound(format!(
                "{} has no upload {id}; uploads are kept for {} hours.",
                incident.key,
                db::IMPORT_HOURS
            ))
        })
}

/// The export `id` held for the incident with its channels, or 404.
pub async fn summary(
    conn: &mut PgConnection,
    incident: &Incident,
    id: i64,
) -> AppResult<ImportSummary> {
    let import = held(conn, incident, id).await?;
    let channels = db::channels(&mut *conn, id).await?;
    Ok(ImportSummary { import, channels })
}

/// What to attach from a held export.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Pick {
    /// The numbers (`n`) of the messages or tickets to attach
    pub rows: Vec<i32>,
    /// Slack: the excerpt's title (default: the channel and the times)
    #[serde(default)]
    pub title: Option<String>,
}

/// Attaches the picked messages as one chat excerpt, or each picked ticket as a ticket.
pub async fn pick(
    conn: &mut PgConnection,
    actor: &Actor,
    key: &str,
    import_id: i64,
    p: &Pick,
) -> AppResult<Vec<Item>> {
    if p.rows.is_empty() || p.rows.len() > 2000 {
        return Err(AppError::invalid(
            "rows",
            "pick 1 to 2000 messages or tickets",
        ));
    }
    let incident = get_named(&mut *conn, key).await?;
    let held = held(conn, &incident, import_id).await?;
    let rows = db::rows(
        &mut *conn,
        import_id,
        &RowFilter {
            ns: Some(&p.rows),
            limit: 2000,
            ..Default::default()
        },
    )
    .await?;
    if let Some(missing) = p.rows.iter().find(|n| !rows.iter().any(|r| r.n == **n)) {
        return Err(AppError::invalid(
            "rows",
            format!("the upload has no row {missing}"),
        ));
    }
    let mut out = Vec::new();
    if held.format == "slack" {
        let messages: Vec<Message> = rows.iter().map(db::Row::message).collect();
        let item = domain::chat_excerpt(&messages[0].channel, &messages, p.title.as_deref())?;
        out.push(store(conn, actor, &incident, &item, Origin::Slack).await?);
    } else {
        let origin = if held.format == "jira" {
            Origin::Jira
        } else {
            Origin::Linear
        };
        for r in &rows {
            let item = domain::ticket_evidence(&r.ticket());
            out.push(store(conn, actor, &incident, &item, origin).await?);
        }
    }
    Ok(out)
}

/// A file to read from git.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GitRead {
    /// The repository's folder on this server (a working copy or a bare mirror)
    pub repository: String,
    /// The file's path inside it, e.g. src/retry.ts
    pub path: String,
    /// The branch or tag whose history is read (default: HEAD)
    #[serde(default)]
    pub reference: Option<String>,
    /// Lines to keep, like 10-40 (default: all)
    #[serde(default)]
    pub lines: Option<String>,
    /// The language (default: from the file's name)
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

/// Reads `r.path` as it was at the last commit before `incident` started (blocking, off the
/// async threads).
pub async fn read_git(
    roots: Vec<PathBuf>,
    incident: &Incident,
    r: GitRead,
) -> AppResult<(git::FileAt, GitRead)> {
    let before = incident.started_at;
    tokio::task::spawn_blocking(move || {
        git::read_before(
            &roots,
            &r.repository,
            r.reference.as_deref(),
            &r.path,
            before,
        )
        .map(|f| (f, r))
    })
    .await
    .map_err(|e| AppError::Internal(format!("reading git stopped: {e}")))?
    .map_err(AppError::from)
}

/// Attaches what [`read_git`] read.
pub async fn attach_git(
    conn: &mut PgConnection,
    actor: &Actor,
    key: &str,
    file: &git::FileAt,
    r: &GitRead,
) -> AppResult<Item> {
    let incident = get_named(&mut *conn, key).await?;
    let item = domain::code_evidence(&CodeAt {
        repository: &file.repository,
        path: r.path.trim(),
        commit: &file.commit,
        committed_at: file.committed_at,
        content: &file.content,
        lines: r.lines.as_deref(),
        language: r.language.as_deref(),
        title: r.title.as_deref(),
    })?;
    store(conn, actor, &incident, &item, Origin::Git).await
}
