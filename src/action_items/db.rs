//! Queries on action items: a postmortem's own, and every postmortem's for the lists and the
//! people who own them.

use chrono::NaiveDate;
use sqlx::PgExecutor;

use super::domain::ItemCursor;
use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ActionItem {
    pub id: i64,
    pub number: i32,
    pub action: String,
    /// prevent, detect, mitigate or process
    #[serde(rename = "type")]
    pub kind: String,
    pub owner: Option<String>,
    pub due_on: Option<NaiveDate>,
    pub work_item: String,
    /// The work item's link, when an admin's tracker knows its prefix
    pub work_item_url: Option<String>,
    /// open, in_progress, done or wont_do
    pub status: String,
    /// Sent back when editing the item; a stale one is refused
    pub version: i32,
}

pub async fn action_items(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
) -> AppResult<Vec<ActionItem>> {
    Ok(sqlx::query_as!(
        ActionItem,
        r#"select a.id, a.number, a.action, a.type as kind, p.name as "owner?", a.due_on,
                  a.work_item, null::text as "work_item_url?", a.status, a.version
           from action_items a left join people p on p.id = a.owner_id
           where a.postmortem_id = $1 order by a.number"#,
        postmortem_id
    )
    .fetch_all(e)
    .await?)
}

pub struct NewActionItem<'a> {
    pub action: &'a str,
    pub kind: &'a str,
    pub owner_id: Option<i64>,
    pub due_on: Option<NaiveDate>,
    pub work_item: &'a str,
}

/// Adds an item numbered after the postmortem's last.
pub async fn add_action_item(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
    a: &NewActionItem<'_>,
) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"insert into action_items (postmortem_id, number, action, type, owner_id, due_on, work_item)
           values ($1, (select coalesce(max(number), 0) + 1 from action_items where postmortem_id = $1),
                   $2, $3, $4, $5, $6)
           returning number"#,
        postmortem_id,
        a.action,
        a.kind,
        a.owner_id,
        a.due_on,
        a.work_item,
    )
    .fetch_one(e)
    .await?)
}

/// An action item with its incident, for the cross-incident list.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ListedItem {
    pub id: i64,
    /// `INC-<n>` of the incident whose postmortem holds it
    #[schema(value_type = String)]
    pub incident: IncidentKey,
    pub number: i32,
    pub action: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub owner: Option<String>,
    pub owner_handle: Option<String>,
    pub due_on: Option<NaiveDate>,
    pub work_item: String,
    /// The work item's link, when an admin's tracker knows its prefix
    pub work_item_url: Option<String>,
    pub status: String,
    /// Due before today (UTC, database clock) and neither done nor won't do
    pub overdue: bool,
    /// The item's version: send it as `If-Match: "v<version>"` to edit it
    pub version: i32,
}

/// Filters of the action-item list; `None` means any.
#[derive(Debug, Default)]
pub struct ItemFilter {
    pub owner: Option<String>,
    /// One status, or `unfinished` (open or in progress)
    pub status: Option<String>,
    pub kind: Option<String>,
    pub overdue: bool,
    /// Items of incidents of the services these teams own (`teams::actions::narrowed` reads
    /// them from a slug or `mine`)
    pub teams: Option<Vec<i64>>,
}

/// One page of the action items `f` asks for — soonest due first, those with no due date last,
/// then by id — after `after`, at most `limit`; and where the next page starts, if there is one.
/// The order is the index `action_items_by_due`'s, so a page reads its own rows.
pub async fn list_items(
    e: impl PgExecutor<'_>,
    f: &ItemFilter,
    seen_by: SeenBy,
    after: Option<ItemCursor>,
    limit: i64,
) -> AppResult<(Vec<ListedItem>, Option<ItemCursor>)> {
    let rows = sqlx::query_as!(
        ListedItem,
        r#"select a.id, i.number as "incident!: IncidentKey", a.number, a.action, a.type as kind,
                  p.name as "owner?", p.handle as "owner_handle?", a.due_on, a.work_item,
                  null::text as "work_item_url?", a.status,
                  -- no due date: never overdue (a bare comparison with null is null)
                  coalesce(a.due_on < (now() at time zone 'utc')::date
                           and a.status in ('open', 'in_progress'), false) as "overdue!",
                  a.version
           from action_items a
           join postmortems pm on pm.id = a.postmortem_id
           join incidents i on i.id = pm.incident_id
           left join people p on p.id = a.owner_id
           where ($1::text is null or p.handle = $1 or lower(p.email) = lower($1))
             and ($2::text is null or a.status = $2
                  or ($2 = 'unfinished' and a.status in ('open', 'in_progress')))
             and ($3::text is null or a.type = $3)
             and (not $4 or (a.due_on < (now() at time zone 'utc')::date
                             and a.status in ('open', 'in_progress')))
             and ($5::int8 is null
                  or (coalesce(a.due_on, 'infinity'::date), a.id)
                     > (coalesce($6::date, 'infinity'::date), $5))
             and ($8::int8[] is null
                  or i.service_id in (select s.id from services s where s.team_id = any($8)))
             and incident_visible(i.restricted, i.id, $9)
           order by coalesce(a.due_on, 'infinity'::date), a.id
           limit $7"#,
        f.owner,
        f.status,
        f.kind,
        f.overdue,
        after.map(|c| c.id),
        after.and_then(|c| c.due_on),
        limit + 1,
        f.teams.as_deref(),
        seen_by.sql(),
    )
    .fetch_all(e)
    .await?;
    Ok(crate::domain::split_page(rows, limit, |r| ItemCursor {
        due_on: r.due_on,
        id: r.id,
    }))
}

/// A person's unfinished action items (open or in progress), soonest due first; only those past
/// their due date when `overdue`. For the panels that remind people of their own.
pub async fn owned_unfinished(
    e: impl PgExecutor<'_>,
    handle: &str,
    overdue: bool,
    seen_by: SeenBy,
) -> AppResult<Vec<ListedItem>> {
    Ok(sqlx::query_as!(
        ListedItem,
        r#"select a.id, i.number as "incident!: IncidentKey", a.number, a.action, a.type as kind,
                  p.name as "owner?", p.handle as "owner_handle?", a.due_on, a.work_item,
                  null::text as "work_item_url?", a.status,
                  coalesce(a.due_on < (now() at time zone 'utc')::date, false) as "overdue!",
                  a.version
           -- The person's own first (by owner, few), not the list's order by the index on due
           -- dates: walking every item in that order looking for one person's reads thousands.
           from (select a.* from action_items a
                 where a.owner_id = (select id from people where handle = $1)
                   and a.status in ('open', 'in_progress')
                   and (not $2 or a.due_on < (now() at time zone 'utc')::date)
                 order by a.due_on nulls last, a.id
                 limit 200) a
           join people p on p.id = a.owner_id
           join postmortems pm on pm.id = a.postmortem_id
           join incidents i on i.id = pm.incident_id
           where incident_visible(i.restricted, i.id, $3)
           order by a.due_on nulls last, a.id"#,
        handle,
        overdue,
        seen_by.sql(),
    )
    .fetch_all(e)
    .await?)
}

/// How many action items there are of each (type, status), for the completion rates (all of
/// them, not only the page's): the counts the database keeps as items change.
pub async fn types_and_statuses(e: impl PgExecutor<'_>) -> AppResult<Vec<(String, String, i64)>> {
    Ok(sqlx::query!(
        r#"select type, status, n from action_item_counts where n > 0 order by type, status"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.r#type, r.status, r.n))
    .collect())
}

/// An action item with the postmortem and incident it belongs to, for edits.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct ItemRow {
    pub id: i64,
    #[serde(skip)]
    pub postmortem_id: i64,
    /// `INC-<n>` of the incident whose postmortem holds it
    #[schema(value_type = String)]
    pub incident: IncidentKey,
    pub number: i32,
    pub action: String,
    /// prevent, detect, mitigate or process
    #[serde(rename = "type")]
    pub kind: String,
    /// The owner's handle
    #[serde(rename = "owner")]
    pub owner_handle: Option<String>,
    pub due_on: Option<NaiveDate>,
    pub work_item: String,
    pub status: String,
    pub version: i32,
}

/// The item `id`, if there is one `seen_by` may see.
pub async fn item(e: impl PgExecutor<'_>, id: i64, seen_by: SeenBy) -> AppResult<Option<ItemRow>> {
    Ok(sqlx::query_as!(
        ItemRow,
        r#"select a.id, a.postmortem_id, i.number as "incident!: IncidentKey", a.number, a.action,
                  a.type as kind, p.handle as "owner_handle?", a.due_on, a.work_item, a.status,
                  a.version
           from action_items a
           join postmortems pm on pm.id = a.postmortem_id
           join incidents i on i.id = pm.incident_id
           left join people p on p.id = a.owner_id
           where a.id = $1 and incident_visible(i.restricted, i.id, $2)"#,
        id,
        seen_by.sql()
    )
    .fetch_optional(e)
    .await?)
}

/// Rewrites an item if it is still at `expected_version`; returns the new version, `None`
/// when it moved on.
pub async fn update_item(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    a: &NewActionItem<'_>,
    status: &str,
) -> AppResult<Option<i32>> {
    Ok(sqlx::query_scalar!(
        r#"update action_items
           set action = $3, type = $4, owner_id = $5, due_on = $6, work_item = $7, status = $8,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        a.action,
        a.kind,
        a.owner_id,
        a.due_on,
        a.work_item,
        status,
    )
    .fetch_optional(e)
    .await?)
}

/// Removes an item if it is still at `expected_version`. Its number is not reused by the
/// others: "item 5" keeps meaning the same thing in published versions and conversations.
pub async fn delete_item(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        "delete from action_items where id = $1 and version = $2",
        id,
        expected_version
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}
