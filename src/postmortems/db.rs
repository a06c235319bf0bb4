//! Queries on postmortems and their action items.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::PgExecutor;

use super::domain::Section;
use crate::error::AppResult;

#[derive(Debug, Clone)]
pub struct Postmortem {
    pub id: i64,
    pub incident_id: i64,
    pub status: String,
    pub impacted: String,
    pub requests_label: String,
    pub summary: String,
    pub impact: String,
    pub failed_requests: Option<i64>,
    pub total_requests: Option<i64>,
    pub root_cause: String,
    pub contributing_factors: String,
    pub detection: String,
    pub went_well: String,
    pub was_hard: String,
    pub got_lucky: String,
    pub lessons: String,
    pub timeline_event_ids: Option<Vec<i64>>,
    pub trigger_event_id: Option<i64>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub published_at: Option<DateTime<Utc>>,
}

impl Postmortem {
    pub fn section(&self, s: Section) -> &str {
        match s {
            Section::Summary => &self.summary,
            Section::Impact => &self.impact,
            Section::RootCause => &self.root_cause,
            Section::ContributingFactors => &self.contributing_factors,
            Section::Detection => &self.detection,
            Section::WentWell => &self.went_well,
            Section::WasHard => &self.was_hard,
            Section::GotLucky => &self.got_lucky,
            Section::Lessons => &self.lessons,
        }
    }
}

pub async fn for_incident(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Option<Postmortem>> {
    Ok(sqlx::query_as!(
        Postmortem,
        r#"select id, incident_id, status, impacted, requests_label, summary, impact,
                  failed_requests, total_requests, root_cause, contributing_factors, detection,
                  went_well, was_hard, got_lucky, lessons, timeline_event_ids, trigger_event_id,
                  version, created_at, updated_at, published_at
           from postmortems where incident_id = $1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// Starts the incident's postmortem if it has none.
pub async fn ensure(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        "insert into postmortems (incident_id) values ($1) on conflict (incident_id) do nothing",
        incident_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Replaces one section's text if the postmortem is still at `expected_version`; returns the
/// new version, `None` when it moved on.
pub async fn set_section(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    section: Section,
    text: &str,
) -> AppResult<Option<i32>> {
    Ok(sqlx::query_scalar!(
        r#"update postmortems set
               summary = case when $3 = 'summary' then $4 else summary end,
               impact = case when $3 = 'impact' then $4 else impact end,
               root_cause = case when $3 = 'root_cause' then $4 else root_cause end,
               contributing_factors = case when $3 = 'contributing_factors' then $4 else contributing_factors end,
               detection = case when $3 = 'detection' then $4 else detection end,
               went_well = case when $3 = 'went_well' then $4 else went_well end,
               was_hard = case when $3 = 'was_hard' then $4 else was_hard end,
               got_lucky = case when $3 = 'got_lucky' then $4 else got_lucky end,
               lessons = case when $3 = 'lessons' then $4 else lessons end,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        section.as_str(),
        text,
    )
    .fetch_optional(e)
    .await?)
}

/// The facts the figures need: what was impacted, what failed and how much, the triggering
/// change.
pub struct Facts<'a> {
    pub impacted: &'a str,
    pub requests_label: &'a str,
    pub failed_requests: Option<i64>,
    pub total_requests: Option<i64>,
    pub trigger_event_id: Option<i64>,
}

pub async fn set_facts(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    f: &Facts<'_>,
) -> AppResult<Option<i32>> {
    Ok(sqlx::query_scalar!(
        r#"update postmortems set impacted = $3, requests_label = $4, failed_requests = $5,
               total_requests = $6, trigger_event_id = $7,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        f.impacted,
        f.requests_label,
        f.failed_requests,
        f.total_requests,
        f.trigger_event_id,
    )
    .fetch_optional(e)
    .await?)
}

/// The timeline events the document shows, in the incident's order.
pub async fn set_timeline(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    event_ids: &[i64],
) -> AppResult<Option<i32>> {
    Ok(sqlx::query_scalar!(
        r#"update postmortems set timeline_event_ids = $3, version = version + 1, updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        event_ids,
    )
    .fetch_optional(e)
    .await?)
}

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
    /// open, in_progress, done or wont_do
    pub status: String,
}

pub async fn action_items(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
) -> AppResult<Vec<ActionItem>> {
    Ok(sqlx::query_as!(
        ActionItem,
        r#"select a.id, a.number, a.action, a.type as kind, p.name as "owner?", a.due_on,
                  a.work_item, a.status
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
    pub incident: String,
    pub number: i32,
    pub action: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub owner: Option<String>,
    pub owner_handle: Option<String>,
    pub due_on: Option<NaiveDate>,
    pub work_item: String,
    pub status: String,
    /// Due before today (UTC, database clock) and neither done nor won't do
    pub overdue: bool,
}

/// Filters of the action-item list; `None` means any.
#[derive(Debug, Default)]
pub struct ItemFilter {
    pub owner: Option<String>,
    pub status: Option<String>,
    pub kind: Option<String>,
    pub overdue: bool,
}

pub async fn list_items(e: impl PgExecutor<'_>, f: &ItemFilter) -> AppResult<Vec<ListedItem>> {
    Ok(sqlx::query_as!(
        ListedItem,
        r#"select a.id, 'INC-' || i.number as "incident!", a.number, a.action, a.type as kind,
                  p.name as "owner?", p.handle as "owner_handle?", a.due_on, a.work_item, a.status,
                  (a.due_on < (now() at time zone 'utc')::date
                   and a.status in ('open', 'in_progress')) as "overdue!"
           from action_items a
           join postmortems pm on pm.id = a.postmortem_id
           join incidents i on i.id = pm.incident_id
           left join people p on p.id = a.owner_id
           where ($1::text is null or p.handle = $1 or lower(p.email) = lower($1))
             and ($2::text is null or a.status = $2)
             and ($3::text is null or a.type = $3)
             and (not $4 or (a.due_on < (now() at time zone 'utc')::date
                             and a.status in ('open', 'in_progress')))
           order by a.due_on nulls last, i.number, a.number
           limit 1000"#,
        f.owner,
        f.status,
        f.kind,
        f.overdue,
    )
    .fetch_all(e)
    .await?)
}

/// Sets an item's status; returns its incident key, `None` when there is no such item.
pub async fn set_item_status(
    e: impl PgExecutor<'_>,
    id: i64,
    status: &str,
) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"update action_items a set status = $2, updated_at = now()
           from postmortems pm join incidents i on i.id = pm.incident_id
           where a.id = $1 and pm.id = a.postmortem_id
           returning 'INC-' || i.number as "incident!""#,
        id,
        status,
    )
    .fetch_optional(e)
    .await?)
}

/// A postmortem's "Where we got lucky" section, with its incident.
pub struct NearMiss {
    pub key: String,
    pub title: String,
    pub severity: String,
    pub detected_at: DateTime<Utc>,
    pub status: String,
    pub got_lucky: String,
}

/// Every written "Where we got lucky", newest incident first.
pub async fn near_misses(e: impl PgExecutor<'_>) -> AppResult<Vec<NearMiss>> {
    Ok(sqlx::query_as!(
        NearMiss,
        r#"select 'INC-' || i.number as "key!", i.title, i.severity, i.detected_at, pm.status,
                  pm.got_lucky
           from postmortems pm join incidents i on i.id = pm.incident_id
           where pm.got_lucky <> ''
           order by i.detected_at desc
           limit 500"#
    )
    .fetch_all(e)
    .await?)
}

pub async fn set_status(e: impl PgExecutor<'_>, id: i64, status: &str) -> AppResult<()> {
    sqlx::query!(
        r#"update postmortems set status = $2, updated_at = now(),
               published_at = case when $2 = 'published' then now() else published_at end
           where id = $1"#,
        id,
        status
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A published version as frozen.
#[derive(Debug, Clone)]
pub struct Published {
    pub number: i32,
    pub published_at: DateTime<Utc>,
    pub published_by: String,
    pub markdown: String,
}

pub async fn publish_version(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
    by: &str,
    markdown: &str,
    figures: &serde_json::Value,
) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"insert into postmortem_versions (postmortem_id, number, published_by, markdown, figures)
           values ($1, (select coalesce(max(number), 0) + 1 from postmortem_versions where postmortem_id = $1),
                   $2, $3, $4)
           returning number"#,
        postmortem_id,
        by,
        markdown,
        figures,
    )
    .fetch_one(e)
    .await?)
}

pub async fn latest_version(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
) -> AppResult<Option<Published>> {
    Ok(sqlx::query_as!(
        Published,
        r#"select number, published_at, published_by, markdown from postmortem_versions
           where postmortem_id = $1 order by number desc limit 1"#,
        postmortem_id
    )
    .fetch_optional(e)
    .await?)
}

pub async fn version(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
    number: i32,
) -> AppResult<Option<Published>> {
    Ok(sqlx::query_as!(
        Published,
        r#"select number, published_at, published_by, markdown from postmortem_versions
           where postmortem_id = $1 and number = $2"#,
        postmortem_id,
        number
    )
    .fetch_optional(e)
    .await?)
}

/// Failed requests recorded by the postmortems of a service's incidents detected this calendar
/// month (UTC, database clock), and how many postmortems gave a figure.
pub async fn failed_this_month(e: impl PgExecutor<'_>, service_id: i64) -> AppResult<(i64, i64)> {
    let r = sqlx::query!(
        r#"select coalesce(sum(pm.failed_requests), 0)::int8 as "failed!",
                  count(pm.failed_requests) as "counted!"
           from postmortems pm join incidents i on i.id = pm.incident_id
           where i.service_id = $1
             and i.detected_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'"#,
        service_id
    )
    .fetch_one(e)
    .await?;
    Ok((r.failed, r.counted))
}
