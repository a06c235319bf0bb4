//! Reading a Slack workspace export: the zip Slack's export tool produces (`channels.json`,
//! `users.json`, and `<channel>/<YYYY-MM-DD>.json` per channel and day), or the per-channel day
//! files on their own. Parsing is strict: a file that is not what Slack writes is refused with
//! its name, the message's position and what is wrong, and nothing is kept.

use std::collections::HashMap;
use std::io::Read;

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use super::{MAX_ROWS, Message, UNPACKED_LIMIT};
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

/// `YYYY-MM-DD.json`, the name of a day's messages.
fn is_day_file(name: &str) -> bool {
    name.strip_suffix(".json")
        .is_some_and(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok())
}

/// Every message of a workspace export zip, each channel's in time order.
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
    let mut budget = UNPACKED_LIMIT;
    let mut users = HashMap::new();
    let mut days: Vec<(String, String, Vec<u8>)> = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| {
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
        let wanted = match parts.as_slice() {
            ["users.json"] => true,
            [channel, day] => is_day_file(day) && !channel.is_empty(),
            _ => false,
        };
        if !wanted {
            continue;
        }
        if entry.encrypted() {
            return Err(bad(format!("{name} is encrypted")));
        }
        if entry.size() > budget {
            return Err(bad(format!(
                "the archive unpacks to more than {} MiB",
                UNPACKED_LIMIT / (1024 * 1024)
            )));
        }
        let mut data = Vec::with_capacity(entry.size() as usize);
        (&mut entry)
            .take(budget + 1)
            .read_to_end(&mut data)
            .map_err(|e| bad(format!("{name} cannot be unpacked ({e})")))?;
        if data.len() as u64 > budget {
            return Err(bad(format!(
                "the archive unpacks to more than {} MiB",
                UNPACKED_LIMIT / (1024 * 1024)
            )));
        }
        budget -= data.len() as u64;
        match parts.as_slice() {
            ["users.json"] => users = read_users(&data)?,
            [channel, _] => days.push(((*channel).to_owned(), name.clone(), data)),
            _ => {}
        }
    }
    if days.is_empty() {
        return Err(bad(
            "the archive holds no channel messages; a Slack export has a folder per channel with a <YYYY-MM-DD>.json file per day",
        ));
    }
    let mut out = Vec::new();
    for (channel, name, data) in &days {
        read_day(name, data, channel, &users, &mut out)?;
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
    let users = HashMap::new();
    for (name, data) in files {
        read_day(name, data, channel, &users, &mut out)?;
    }
    out.sort_by_key(|m| m.at);
    Ok(out)
}

/// `users.json`: id → the name people know them by.
fn read_users(data: &[u8]) -> Result<HashMap<String, String>, DomainError> {
    let v: Value = serde_json::from_slice(data)
        .map_err(|e| bad(format!("users.json is not valid JSON ({e})")))?;
    let list = v
        .as_array()
        .ok_or_else(|| bad("users.json: expected a list of users"))?;
    let mut users = HashMap::new();
    for (n, u) in list.iter().enumerate() {
        let id = u
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("users.json, user {}: `id` is missing", n + 1)))?;
        let profile = |f: &str| {
            u.get("profile")
                .and_then(|p| p.get(f))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        };
        let name = profile("display_name")
            .or_else(|| profile("real_name"))
            .or_else(|| u.get("real_name").and_then(Value::as_str))
            .or_else(|| u.get("name").and_then(Value::as_str))
            .unwrap_or(id);
        users.insert(id.to_owned(), name.to_owned());
    }
    Ok(users)
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
    DateTime::from_timestamp(secs.parse().ok()?, micros * 1000)
}

fn read_day(
    name: &str,
    data: &[u8],
    channel: &str,
    users: &HashMap<String, String>,
    out: &mut Vec<Message>,
) -> Result<(), DomainError> {
    let v: Value =
        serde_json::from_slice(data).map_err(|e| bad(format!("{name} is not valid JSON ({e})")))?;
    let list = v.as_array().ok_or_else(|| {
        bad(format!(
            "{name}: expected a list of messages, as Slack's day files hold"
        ))
    })?;
    for (n, m) in list.iter().enumerate() {
        let at = |what: &str| bad(format!("{name}, message {}: {what}", n + 1));
        let obj = m.as_object().ok_or_else(|| at("expected an object"))?;
        let string = |field: &str| -> Result<Option<&str>, DomainError> {
            match obj.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(at(&format!("`{field}` must be text"))),
            }
        };
        if let Some(kind) = string("type")?
            && kind != "message"
        {
            continue;
        }
        if string("subtype")?.is_some_and(|s| SKIPPED.contains(&s)) {
            continue;
        }
        let ts = string("ts")?.ok_or_else(|| at("`ts` is missing"))?;
        let when = parse_ts(ts).ok_or_else(|| {
            at(&format!(
                "`ts` {ts:?} is not a Slack timestamp like 1603318200.000100"
            ))
        })?;
        let text = string("text")?.unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let profile = |f: &str| {
            obj.get("user_profile")
                .and_then(|p| p.get(f))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        };
        let user = string("user")?;
        let author = user
            .and_then(|u| users.get(u).map(String::as_str))
            .or_else(|| profile("display_name"))
            .or_else(|| profile("real_name"))
            .or(string("username")?)
            .or(user)
            .or(string("bot_id")?)
            .unwrap_or("unknown");
        if out.len() >= MAX_ROWS {
            return Err(bad(format!(
                "more than {MAX_ROWS} messages; export a shorter period or fewer channels"
            )));
        }
        out.push(Message {
            channel: channel.to_owned(),
            author: author.chars().take(200).collect(),
            at: when,
            text: plain(text, users).chars().take(10_000).collect(),
        });
    }
    Ok(())
}

/// Slack's markup as people read it: `<@U1>` → `@maria`, `<#C1|ops>` → `#ops`,
/// `<https://x|label>` → `label (https://x)`, and `&lt;` `&gt;` `&amp;` unescaped.
pub fn plain(text: &str, users: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
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
