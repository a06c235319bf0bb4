//! Reading a Slack workspace export: the zip Slack's export tool produces (`channels.json`,
//! `users.json`, and `<channel>/<YYYY-MM-DD>.json` per channel and day), or the per-channel day
//! files on their own. Parsing is strict: a file that is not what Slack writes is refused with
//! its name, the message's position and what is wrong, and nothing is kept.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::Read;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;

use super::stream::{Field, Item, each_in};
use super::{FILE_UNPACKED_LIMIT, Kept, MAX_ROWS, Message, UNPACKED_LIMIT};
use crate::domain::DomainError;

fn bad(message: impl Into<String>) -> DomainError {
    DomainError::invalid("file", message)
}

/// Messages whose subtype is housekeeping, not conversation.
const SKIPPED: &[&str] = &[
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_join",
    "group_leave",
    "pinned_item",
    "unpinned_item",
];

/// The longest message kept, in characters.
const MESSAGE_CHARS: usize = 10_000;

/// The most people `users.json` may name.
const MAX_USERS: usize = 200_000;

/// `YYYY-MM-DD.json`, the name of a day's messages.
fn is_day_file(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok())
}

/// A profile's names, as messages and `users.json` carry them.
#[derive(Debug, Default, Deserialize)]
struct Profile {
    #[serde(default)]
    display_name: Field,
    #[serde(default)]
    real_name: Field,
}

impl Profile {
    /// The name people know them by, if the profile gives one.
    fn name(&self) -> Option<&str> {
        [&self.display_name, &self.real_name]
            .into_iter()
            .filter_map(Field::text)
            .find(|s| !s.trim().is_empty())
    }
}

fn profile_name(p: &Item<Profile>) -> Option<&str> {
    match p {
        Item::Object(p) => p.name(),
        Item::Other => None,
    }
}

/// A message of a day file: the fields read; the rest is skipped unread.
#[derive(Debug, Deserialize)]
struct RawMessage {
    #[serde(default, rename = "type")]
    kind: Field,
    #[serde(default)]
    subtype: Field,
    #[serde(default)]
    ts: Field,
    #[serde(default)]
    text: Field,
    #[serde(default)]
    user: Field,
    #[serde(default)]
    username: Field,
    #[serde(default)]
    bot_id: Field,
    #[serde(default)]
    user_profile: Item<Profile>,
}

/// A person of `users.json`.
#[derive(Debug, Deserialize)]
struct RawUser {
    #[serde(default)]
    id: Field,
    #[serde(default)]
    name: Field,
    #[serde(default)]
    real_name: Field,
    #[serde(default)]
    profile: Item<Profile>,
}

/// A zip entry read through the archive's unpacking budget: past it, reading fails and
/// `over` says why.
struct Unpacked<'a, R> {
    inner: R,
    /// What the archive may still unpack to.
    left: &'a Cell<u64>,
    /// What this file may still unpack to.
    file_left: u64,
    over: &'a Cell<Option<Over>>,
}

/// Which limit unpacking ran into.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Over {
    Archive,
    File,
}

impl<R: Read> Read for Unpacked<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)? as u64;
        let over = match (
            self.left.get().checked_sub(n),
            self.file_left.checked_sub(n),
        ) {
            (Some(left), Some(file_left)) => {
                self.left.set(left);
                self.file_left = file_left;
                return Ok(n as usize);
            }
            (None, _) => Over::Archive,
            (_, None) => Over::File,
        };
        self.over.set(Some(over));
        Err(std::io::Error::other("unpacking ran past its limit"))
    }
}

fn too_large(over: Over, name: &str) -> DomainError {
    match over {
        Over::Archive => bad(format!(
            "the archive unpacks to more than {} MiB",
            UNPACKED_LIMIT / (1024 * 1024)
        )),
        Over::File => bad(format!(
            "{name} unpacks to more than {} MiB; export a shorter period",
            FILE_UNPACKED_LIMIT / (1024 * 1024)
        )),
    }
}

/// File `i` of the archive, unpacked as it is read, within what is `left` of the budget.
fn open<'a>(
    zip: &'a mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    i: usize,
    name: &str,
    left: &'a Cell<u64>,
    over: &'a Cell<Option<Over>>,
) -> Result<impl Read + 'a, DomainError> {
    let entry = zip
        .by_index(i)
        .map_err(|e| bad(format!("{name} cannot be unpacked ({e})")))?;
    if entry.size() > FILE_UNPACKED_LIMIT {
        return Err(too_large(Over::File, name));
    }
    if entry.size() > left.get() {
        return Err(too_large(Over::Archive, name));
    }
    Ok(std::io::BufReader::new(Unpacked {
        inner: entry,
        left,
        file_left: FILE_UNPACKED_LIMIT,
        over,
    }))
}

/// Every message of a workspace export zip, each channel's in time order. Each file is read
/// straight out of the archive, a message at a time: nothing is unpacked whole, and what is
/// kept is bounded ([`Kept`]) whatever the archive unpacks to.
pub fn read_zip(bytes: &[u8]) -> Result<Vec<Message>, DomainError> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| {
        bad(format!(
            "this is not a zip archive Slack's export writes ({e})"
        ))
    })?;
    if zip.len() > 50_000 {
        return Err(bad(format!(
            "the archive holds {} files; an export of at most 50 000 can be read",
            zip.len()
        )));
    }
    // Which files to read: users.json, and the day files of each channel.
    let mut users_at = None;
    let mut days: Vec<(usize, String, String)> = Vec::new();
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| {
            bad(format!(
                "file {} of the archive cannot be read ({e})",
                i + 1
            ))
        })?;
        if entry.is_dir() {
            continue;
        }
        let name = entry
            .name()
            .map_err(|e| {
                bad(format!(
                    "file {} of the archive has an unreadable name ({e})",
                    i + 1
                ))
            })?
            .into_owned();
        if name.starts_with("__MACOSX/") {
            continue;
        }
        let parts: Vec<&str> = name.split('/').collect();
        match parts.as_slice() {
            ["users.json"] => users_at = Some(i),
            [channel, day] if is_day_file(day) && !channel.is_empty() => {
                days.push((i, (*channel).to_owned(), name.clone()))
            }
            _ => continue,
        }
        if entry.encrypted() {
            return Err(bad(format!("{name} is encrypted")));
        }
    }
    if days.is_empty() {
        return Err(bad(
            "the archive holds no channel messages; a Slack export has a folder per channel with a <YYYY-MM-DD>.json file per day",
        ));
    }
    let left = Cell::new(UNPACKED_LIMIT);
    let over = Cell::new(None);
    let unpacking = |r: Result<(), DomainError>, name: &str| match (r, over.get()) {
        (Err(_), Some(o)) => Err(too_large(o, name)),
        (r, _) => r,
    };
    let mut users = HashMap::new();
    let mut kept = Kept::default();
    if let Some(i) = users_at {
        let reader = open(&mut zip, i, "users.json", &left, &over)?;
        unpacking(read_users(reader, &mut users, &mut kept), "users.json")?;
    }
    let mut out = Vec::new();
    for (i, channel, name) in &days {
        let reader = open(&mut zip, *i, name, &left, &over)?;
        let read = read_day(
            serde_json::de::IoRead::new(reader),
            name,
            channel,
            &users,
            &mut kept,
            &mut out,
        );
        unpacking(read, name)?;
    }
    out.sort_by(|a, b| a.channel.cmp(&b.channel).then(a.at.cmp(&b.at)));
    Ok(out)
}

/// Messages of one channel from its day files (`2026-10-21.json` …), as Slack exports them.
pub fn read_channel_files(
    channel: &str,
    files: &[(String, Vec<u8>)],
) -> Result<Vec<Message>, DomainError> {
    let channel = channel.trim().trim_start_matches('#');
    if channel.is_empty() || channel.chars().count() > 80 {
        return Err(DomainError::invalid(
            "channel",
            "name the channel these files come from (1 to 80 characters)",
        ));
    }
    if files.is_empty() {
        return Err(bad("choose at least one file"));
    }
    let mut out = Vec::new();
    let mut kept = Kept::default();
    let users = HashMap::new();
    for (name, data) in files {
        read_day(
            serde_json::de::SliceRead::new(data),
            name,
            channel,
            &users,
            &mut kept,
            &mut out,
        )?;
    }
    out.sort_by_key(|m| m.at);
    Ok(out)
}

/// `users.json`: id → the name people know them by.
fn read_users(
    reader: impl Read,
    users: &mut HashMap<String, String>,
    kept: &mut Kept,
) -> Result<(), DomainError> {
    let found = each_in(
        serde_json::de::IoRead::new(reader),
        "users.json",
        &[],
        |_, n, u: Item<RawUser>| {
            let missing = || bad(format!("users.json, user {}: `id` is missing", n + 1));
            let Item::Object(u) = u else {
                return Err(missing());
            };
            let id = u.id.text().ok_or_else(missing)?;
            if users.len() >= MAX_USERS {
                return Err(bad(format!(
                    "users.json names more than {MAX_USERS} people"
                )));
            }
            let name = profile_name(&u.profile)
                .or(u.real_name.text())
                .or(u.name.text())
                .unwrap_or(id);
            let (id, name) = (super::clean(id, 200), super::clean(name, 200));
            // What the map holds counts against what an import keeps.
            kept.take(id.len() + name.len() + 64)?;
            users.insert(id, name);
            Ok(())
        },
    )?;
    if !found {
        return Err(bad("users.json: expected a list of users"));
    }
    Ok(())
}

/// Slack's `ts`, seconds since the epoch with microseconds: `1603318200.000100`.
fn parse_ts(ts: &str) -> Option<DateTime<Utc>> {
    let (secs, micros) = ts.split_once('.').unwrap_or((ts, "0"));
    if secs.is_empty()
        || secs.len() > 12
        || micros.len() > 6
        || !secs
            .bytes()
            .chain(micros.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let micros: u32 = format!("{micros:0<6}").parse().ok()?;
    DateTime::from_timestamp(secs.parse().ok()?, micros * 1000).filter(super::storable_time)
}

fn read_day<'de>(
    json: impl serde_json::de::Read<'de>,
    name: &str,
    channel: &str,
    users: &HashMap<String, String>,
    kept: &mut Kept,
    out: &mut Vec<Message>,
) -> Result<(), DomainError> {
    let found = each_in(json, name, &[], |_, n, m: Item<RawMessage>| {
        let at = |what: &str| bad(format!("{name}, message {}: {what}", n + 1));
        let Item::Object(m) = m else {
            return Err(at("expected an object"));
        };
        let string = |field: &str, value: &Field| -> Result<Option<String>, DomainError> {
            value
                .optional(|| at(&format!("`{field}` must be text")))
                .map(|v| v.map(str::to_owned))
        };
        if let Some(kind) = string("type", &m.kind)?
            && kind != "message"
        {
            return Ok(());
        }
        if string("subtype", &m.subtype)?.is_some_and(|s| SKIPPED.contains(&s.as_str())) {
            return Ok(());
        }
        let ts = string("ts", &m.ts)?.ok_or_else(|| at("`ts` is missing"))?;
        let when = parse_ts(&ts).ok_or_else(|| {
            at(&format!(
                "`ts` {:?} is not a Slack timestamp like 1603318200.000100",
                crate::domain::shorten(&ts, 40)
            ))
        })?;
        let text = string("text", &m.text)?.unwrap_or_default();
        if text.trim().is_empty() {
            return Ok(());
        }
        let user = string("user", &m.user)?;
        let username = string("username", &m.username)?;
        let bot = string("bot_id", &m.bot_id)?;
        let author = user
            .as_deref()
            .and_then(|u| users.get(u).map(String::as_str))
            .or(profile_name(&m.user_profile))
            .or(username.as_deref())
            .or(user.as_deref())
            .or(bot.as_deref())
            .unwrap_or("unknown");
        if out.len() >= MAX_ROWS {
            return Err(bad(format!(
                "more than {MAX_ROWS} messages; export a shorter period or fewer channels"
            )));
        }
        let message = Message {
            channel: super::clean(channel, 80),
            author: super::clean(author, 200),
            at: when,
            text: super::clean(&plain(text.trim(), users, MESSAGE_CHARS), MESSAGE_CHARS),
        };
        kept.take(message.text.len() + message.author.len() + message.channel.len())?;
        out.push(message);
        Ok(())
    })?;
    if !found {
        return Err(bad(format!(
            "{name}: expected a list of messages, as Slack's day files hold"
        )));
    }
    Ok(())
}

/// Slack's markup as people read it: `<@U1>` → `@maria`, `<#C1|ops>` → `#ops`,
/// `<https://x|label>` → `label (https://x)`, and `&lt;` `&gt;` `&amp;` unescaped; read no
/// further than `max` characters of `text`, and written no longer than about that (a mention
/// of five bytes may stand for a 200-character name).
pub fn plain(text: &str, users: &HashMap<String, String>, max: usize) -> String {
    let text = &text[..text.char_indices().nth(max).map_or(text.len(), |(i, _)| i)];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        if out.len() >= max * 4 {
            rest = "";
            break;
        }
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (target, label) = match inner.split_once('|') {
            Some((t, l)) => (t, Some(l)),
            None => (inner, None),
        };
        if let Some(id) = target.strip_prefix('@') {
            out.push('@');
            out.push_str(label.or(users.get(id).map(String::as_str)).unwrap_or(id));
        } else if let Some(id) = target.strip_prefix('#') {
            out.push('#');
            out.push_str(label.unwrap_or(id));
        } else if let Some(special) = target.strip_prefix('!') {
            out.push('@');
            out.push_str(label.unwrap_or(special));
        } else {
            match label {
                Some(l) => out.push_str(&format!("{l} ({target})")),
                None => out.push_str(target),
            }
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, body) in files {
            w.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(body.as_bytes()).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn a_workspace_export_reads_channels_users_and_markup() {
        let zip = zip_of(&[
            ("channels.json", r#"[{"id":"C1","name":"payments-oncall"}]"#),
            (
                "users.json",
                r#"[{"id":"U1","name":"maria","profile":{"real_name":"Maria Lopez","display_name":""}}]"#,
            ),
            (
                "payments-oncall/2026-10-21.json",
                r#"[{"type":"message","user":"U1","text":"<!here> retries look weird &gt; 10k, see <https://grafana.example/d/1|the dashboard>","ts":"1792620840.000200"},
                    {"type":"message","subtype":"channel_join","user":"U2","text":"<@U2> has joined","ts":"1792620000.000100"},
                    {"type":"message","user":"U2","user_profile":{"real_name":"Sam"},"text":"<@U1> on it","ts":"1792620900.000000"}]"#,
            ),
            ("integration_logs.json", "[]"),
        ]);
        let ms = read_zip(&zip).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[0].channel, "payments-oncall");
        assert_eq!(ms[0].author, "Maria Lopez");
        assert_eq!(
            ms[0].text,
            "@here retries look weird > 10k, see the dashboard (https://grafana.example/d/1)"
        );
        assert_eq!(ms[0].at.to_rfc3339(), "2026-10-21T22:14:00.000200+00:00");
        assert_eq!(ms[1].author, "Sam");
        assert_eq!(ms[1].text, "@Maria Lopez on it");
    }

    #[test]
    fn malformed_exports_are_refused_naming_the_file_and_message() {
        let msg = |e: DomainError| match e {
            DomainError::Invalid { message, .. } => message,
            DomainError::Conflict(m) => m,
        };
        assert!(msg(read_zip(b"not a zip").unwrap_err()).contains("not a zip"));
        let no_days = zip_of(&[("channels.json", "[]")]);
        assert!(msg(read_zip(&no_days).unwrap_err()).contains("no channel messages"));
        let bad_ts = zip_of(&[(
            "ops/2026-10-21.json",
            r#"[{"type":"message","text":"a","ts":"1792620840.1"},{"type":"message","text":"b","ts":"yesterday"}]"#,
        )]);
        assert_eq!(
            msg(read_zip(&bad_ts).unwrap_err()),
            "ops/2026-10-21.json, message 2: `ts` \"yesterday\" is not a Slack timestamp like 1603318200.000100"
        );
        let not_list = zip_of(&[("ops/2026-10-21.json", r#"{"messages":[]}"#)]);
        assert!(msg(read_zip(&not_list).unwrap_err()).contains("expected a list of messages"));
        let wrong_type = [(
            "2026-10-21.json".to_owned(),
            br#"[{"ts":"1.0","text":5}]"#.to_vec(),
        )];
        assert_eq!(
            msg(read_channel_files("ops", &wrong_type).unwrap_err()),
            "2026-10-21.json, message 1: `text` must be text"
        );
        match read_channel_files(" ", &wrong_type).unwrap_err() {
            DomainError::Invalid { field, .. } => assert_eq!(field, "channel"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nuls_in_messages_are_dropped() {
        let files = [(
            "2026-10-21.json".to_owned(),
            br#"[{"type":"message","user":"U\u0000","text":"ret\u0000ry","ts":"1792620840.000000"}]"#
                .to_vec(),
        )];
        let ms = read_channel_files("ops", &files).unwrap();
        assert_eq!((ms[0].author.as_str(), ms[0].text.as_str()), ("U", "retry"));
    }

    #[test]
    fn per_channel_files_need_the_channel_and_read_in_time_order() {
        let files = [
            (
                "2026-10-22.json".to_owned(),
                br#"[{"type":"message","user":"U9","text":"later","ts":"1792700000.000000"}]"#
                    .to_vec(),
            ),
            (
                "2026-10-21.json".to_owned(),
                br#"[{"type":"message","username":"alertbot","text":"earlier","ts":"1792620840.000000"}]"#
                    .to_vec(),
            ),
        ];
        let ms = read_channel_files("#ops", &files).unwrap();
        assert_eq!(
            ms.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
            ["earlier", "later"]
        );
        assert_eq!(ms[0].channel, "ops");
        assert_eq!(ms[0].author, "alertbot");
        assert_eq!(ms[1].author, "U9");
    }
}
