//! Changes to a postmortem, each version-checked and audited in its transaction.

use chrono::NaiveDate;
use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Facts, NewActionItem, Postmortem};
use super::domain::{self, Section};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;
use crate::incidents::db::Incident;

/// The incident's postmortem for a change: started (as the empty draft the pages showed) by
/// the first edit. Reads use `db::for_incident_or_draft`, which writes nothing.
pub async fn current(conn: &mut PgConnection, i: &Incident) -> AppResult<Postmortem> {
    if let Some(pm) = db::for_incident(&mut *conn, i.id).await? {
        return Ok(pm);
    }
    db::ensure(&mut *conn, i.id).await?;
    db::for_incident(&mut *conn, i.id)
        .await?
        .ok_or_else(|| AppError::Internal("postmortem vanished".into()))
}

fn stale(pm: &Postmortem) -> AppError {
    AppError::Stale {
        current_version: pm.version,
    }
}

pub async fn edit_section(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    expected_version: i32,
    section: &str,
    text: &str,
) -> AppResult<i32> {
    let pm = current(conn, i).await?;
    let section = Section::parse(section)?;
    let text = domain::check_section_text(text)?;
    let version = db::set_section(&mut *conn, pm.id, expected_version, section, &text)
        .await?
        .ok_or_else(|| stale(&pm))?;
    audit::changed(
        conn,
        actor,
        &format!("postmortem.{}", section.as_str()),
        &i.key.to_string(),
        json!({ "text": pm.section(section) }),
        json!({ "text": text, "version": version }),
    )
    .await?;
    Ok(version)
}

pub async fn edit_facts(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    expected_version: i32,
    f: &Facts<'_>,
) -> AppResult<i32> {
    let pm = current(conn, i).await?;
    if f.impacted.chars().count() > 200
        || f.requests_label.trim().is_empty()
        || f.requests_label.chars().count() > 100
    {
        return Err(AppError::invalid(
            "requests_label",
            "name what failed in 1 to 100 characters (impacted: at most 200)",
        ));
    }
    if let (Some(failed), Some(total)) = (f.failed_requests, f.total_requests)
        && failed > total
    {
        return Err(AppError::invalid(
            "failed_requests",
            "more requests failed than were made",
        ));
    }
    if f.failed_requests.is_some_and(|n| n < 0) || f.total_requests.is_some_and(|n| n < 0) {
        return Err(AppError::invalid(
            "failed_requests",
            "counts cannot be negative",
        ));
    }
    let version = db::set_facts(&mut *conn, pm.id, expected_version, f)
        .await?
        .ok_or_else(|| stale(&pm))?;
    audit::created(
        conn,
        actor,
        "postmortem.facts",
        &i.key.to_string(),
        json!({ "impacted": f.impacted, "failed_requests": f.failed_requests,
                     "total_requests": f.total_requests, "version": version }),
    )
    .await?;
    Ok(version)
}

/// Chooses the timeline events the document shows; each must be one of the incident's.
pub async fn choose_timeline(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    expected_version: i32,
    event_ids: &[i64],
) -> AppResult<i32> {
    let pm = current(conn, i).await?;
    let events = crate::timeline::db::for_incident(&mut *conn, i.id).await?;
    if let Some(bad) = event_ids
        .iter()
        .find(|id| !events.iter().any(|e| e.id == **id))
    {
        return Err(AppError::invalid(
            "events",
            format!("event {bad} is not on this incident's timeline"),
        ));
    }
    let version = db::set_timeline(&mut *conn, pm.id, expected_version, event_ids)
        .await?
        .ok_or_else(|| stale(&pm))?;
    audit::changed(
        conn,
        actor,
        "postmortem.timeline",
        &i.key.to_string(),
        json!({ "events": pm.timeline_event_ids }),
        json!({ "events": event_ids, "version": version }),
    )
    .await?;
    Ok(version)
}

pub struct ItemDraft<'a> {
    pub action: &'a str,
    pub kind: &'a str,
    pub owner: Option<&'a str>,
    pub due_on: Option<&'a str>,
    pub work_item: &'a str,
}

/// An item's fields checked: the action's length, a known type, an owner who exists, a date,
/// a short work item.
async fn checked<'a>(conn: &mut PgConnection, d: &ItemDraft<'a>) -> AppResult<NewActionItem<'a>> {
    let action = d.action.trim();
    if action.is_empty() || action.chars().count() > 2000 {
        return Err(AppError::invalid(
            "action",
            "describe the action in 1 to 2000 characters",
        ));
    }
    let kind = domain::check_action_type(d.kind)?;
    let owner_id = match d.owner.map(str::trim).filter(|o| !o.is_empty()) {
        Some(who) => Some(
            crate::people::db::find(&mut *conn, who)
                .await?
                .ok_or_else(|| {
                    AppError::invalid("owner", format!("nobody has the handle or email {who:?}"))
                })?
                .id,
        ),
        None => None,
    };
    let due_on = match d.due_on.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => Some(NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| {
            AppError::invalid(
                "due_on",
                format!("{s:?} is not a date; write it as YYYY-MM-DD, such as 2026-09-24"),
            )
        })?),
        None => None,
    };
    let work_item = d.work_item.trim();
    if work_item.chars().count() > 100 {
        return Err(AppError::invalid("work_item", "at most 100 characters"));
    }
    Ok(NewActionItem {
        action,
        kind,
        owner_id,
        due_on,
        work_item,
    })
}

pub async fn add_action_item(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    d: &ItemDraft<'_>,
) -> AppResult<i32> {
    let pm = current(conn, i).await?;
    let item = checked(conn, d).await?;
    let number = db::add_action_item(&mut *conn, pm.id, &item).await?;
    db::touch(&mut *conn, pm.id).await?;
    audit::created(
        conn,
        actor,
        "postmortem.action_item",
        &i.key.to_string(),
        json!({ "number": number, "action": item.action, "type": item.kind,
                     "due_on": item.due_on, "work_item": item.work_item }),
    )
    .await?;
    Ok(number)
}

/// A page of action items across postmortems, filtered, with their work items' links; and
/// where the next page starts.
pub async fn list_items(
    conn: &mut PgConnection,
    filter: &db::ItemFilter,
    seen_by: SeenBy,
    after: Option<crate::action_items::domain::ItemCursor>,
    limit: i64,
) -> AppResult<(
    Vec<db::ListedItem>,
    Option<crate::action_items::domain::ItemCursor>,
)> {
    let (mut items, next) = db::list_items(&mut *conn, filter, seen_by, after, limit).await?;
    let rules = crate::trackers::db::rules(&mut *conn).await?;
    for i in &mut items {
        i.work_item_url = crate::trackers::domain::link(&i.work_item, &rules);
    }
    Ok((items, next))
}

/// The item, or 404 (one of an incident `seen_by` may not see too).
pub async fn item(conn: &mut PgConnection, id: i64, seen_by: SeenBy) -> AppResult<db::ItemRow> {
    db::item(&mut *conn, id, seen_by)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no action item {id}.")))
}

/// A change to an item: fields left `None` stay as they are; `Some(None)` clears the owner or
/// the due date.
#[derive(Default)]
pub struct ItemEdit<'a> {
    pub action: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub owner: Option<Option<&'a str>>,
    pub due_on: Option<Option<&'a str>>,
    pub work_item: Option<&'a str>,
    pub status: Option<&'a str>,
}

impl ItemEdit<'_> {
    /// Whether anything but the status changes (what the document shows).
    pub fn changes_the_document(&self) -> bool {
        self.action.is_some()
            || self.kind.is_some()
            || self.owner.is_some()
            || self.due_on.is_some()
            || self.work_item.is_some()
    }
}

/// Edits the item `was` (as read by [`item`]) if it is still at `expected_version` (the
/// version read when `None`); returns its new version.
pub async fn edit_action_item(
    conn: &mut PgConnection,
    actor: &Actor,
    was: &db::ItemRow,
    expected_version: Option<i32>,
    e: &ItemEdit<'_>,
) -> AppResult<i32> {
    let id = was.id;
    let due_text = was.due_on.map(|d| d.to_string());
    let draft = ItemDraft {
        action: e.action.unwrap_or(&was.action),
        kind: e.kind.unwrap_or(&was.kind),
        owner: e.owner.unwrap_or(was.owner_handle.as_deref()),
        due_on: e.due_on.unwrap_or(due_text.as_deref()),
        work_item: e.work_item.unwrap_or(&was.work_item),
    };
    let fields = checked(conn, &draft).await?;
    let status = domain::check_item_status(e.status.unwrap_or(&was.status))?;
    let version = db::update_item(
        &mut *conn,
        id,
        expected_version.unwrap_or(was.version),
        &fields,
        &status,
    )
    .await?
    .ok_or(AppError::Stale {
        current_version: was.version,
    })?;
    if e.changes_the_document() {
        db::touch(&mut *conn, was.postmortem_id).await?;
    }
    audit::changed(
        conn,
        actor,
        "action_item.edit",
        &was.incident.to_string(),
        json!({ "id": id, "action": was.action, "type": was.kind, "owner": was.owner_handle,
                     "due_on": was.due_on, "work_item": was.work_item, "status": was.status }),
        json!({ "id": id, "action": fields.action, "type": fields.kind,
                     "owner": draft.owner, "due_on": fields.due_on, "work_item": fields.work_item,
                     "status": status, "version": version }),
    )
    .await?;
    Ok(version)
}

/// Removes the item `was` (as read by [`item`]) if it is still at `expected_version` (the
/// version read when `None`).
pub async fn delete_action_item(
    conn: &mut PgConnection,
    actor: &Actor,
    was: &db::ItemRow,
    expected_version: Option<i32>,
) -> AppResult<()> {
    let id = was.id;
    if !db::delete_item(&mut *conn, id, expected_version.unwrap_or(was.version)).await? {
        return Err(AppError::Stale {
            current_version: was.version,
        });
    }
    db::touch(&mut *conn, was.postmortem_id).await?;
    audit::deleted(
        conn,
        actor,
        "action_item.delete",
        &was.incident.to_string(),
        json!({ "id": id, "number": was.number, "action": was.action }),
    )
    .await?;
    Ok(())
}

/// Sends a draft for review, or back to draft.
pub async fn set_review(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    to_review: bool,
) -> AppResult<()> {
    let pm = current(conn, i).await?;
    let (from, to) = if to_review {
        ("draft", "in_review")
    } else {
        ("in_review", "draft")
    };
    if pm.status != from {
        return Err(AppError::Conflict(format!(
            "The postmortem is {}; only a {} one can move to {}.",
            domain::status_label(&pm.status).to_lowercase(),
            domain::status_label(from).to_lowercase(),
            domain::status_label(to).to_lowercase()
        )));
    }
    db::set_status(&mut *conn, pm.id, to).await?;
    audit::changed(
        conn,
        actor,
        "postmortem.status",
        &i.key.to_string(),
        json!({ "status": from }),
        json!({ "status": to }),
    )
    .await
}

/// Publishes: refused, naming what is missing, unless there is a root cause, an action item
/// with an owner and a due date, and the impact figures. Freezes the document (Markdown and
/// figures, computed now) as a new published version; later edits leave it as it was.
pub async fn publish(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    now: chrono::DateTime<chrono::Utc>,
) -> AppResult<i32> {
    let pm = current(conn, i).await?;
    let items = db::action_items(&mut *conn, pm.id).await?;
    let complete = items
        .iter()
        .filter(|a| a.owner.is_some() && a.due_on.is_some())
        .count();
    let missing = domain::missing_for_publication(&pm.root_cause, complete, pm.failed_requests);
    if !missing.is_empty() {
        return Err(AppError::invalid(
            "postmortem",
            format!("Before publishing, add {}.", missing.join("; ")),
        ));
    }
    db::set_status(&mut *conn, pm.id, "published").await?;
    let doc = super::document::Document::load(conn, i, now).await?;
    let figures = json!({
        "header": doc.header.iter().map(|(k, v)| json!({ "label": k, "value": v })).collect::<Vec<_>>(),
        "impact": doc.figures(),
        "response": doc.response,
    });
    let number =
        db::publish_version(&mut *conn, pm.id, &actor.name, &doc.markdown(), &figures).await?;
    audit::changed(
        conn,
        actor,
        "postmortem.publish",
        &i.key.to_string(),
        json!({ "status": pm.status }),
        json!({ "status": "published", "version": number }),
    )
    .await?;
    Ok(number)
}

/// A reviewer's comment on a part of the postmortem; it changes nothing in the document.
pub async fn comment(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    part: &str,
    body: &str,
) -> AppResult<db::Comment> {
    let pm = current(conn, i).await?;
    let part = domain::check_comment_part(part)?;
    let body = domain::check_comment_body(body)?;
    let c = db::add_comment(&mut *conn, pm.id, part, actor.person_id, &actor.name, &body).await?;
    audit::created(
        conn,
        actor,
        "postmortem.comment",
        &i.key.to_string(),
        json!({ "id": c.id, "part": part, "body": body }),
    )
    .await?;
    Ok(c)
}

/// Marks a comment addressed.
pub async fn resolve_comment(
    conn: &mut PgConnection,
    actor: &Actor,
    i: &Incident,
    id: i64,
) -> AppResult<db::Comment> {
    let pm = current(conn, i).await?;
    let c = db::resolve_comment(&mut *conn, pm.id, id, &actor.name)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{} has no comment {id}.", i.key)))?;
    audit::created(
        conn,
        actor,
        "postmortem.comment_resolved",
        &i.key.to_string(),
        json!({ "id": id }),
    )
    .await?;
    Ok(c)
}
