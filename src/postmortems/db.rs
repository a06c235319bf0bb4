//! Queries on postmortems: sections, facts, versions, comments, the managers' list. Action
//! items are queried in `action_items::db` (re-exported here for the postmortem's own use).

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::PgExecutor;

use super::domain::Section;
use crate::domain::{IncidentKey, TimeCursor};
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

pub use crate::action_items::db::{
    ActionItem, ItemFilter, ItemRow, ListedItem, NewActionItem, action_items, add_action_item,
    delete_item, item, list_items, types_and_statuses, update_item,
};

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
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub published_at: Option<DateTime<Utc>>,
}

impl Postmortem {
    /// The postmortem an incident has before anyone edits it: the row [`ensure`] would insert,
    /// with the table's defaults, not stored (its id, 0, is no row's). Its version is the one the
    /// row starts at, so a form rendered from it edits the row its first edit creates.
    pub fn unsaved_draft(incident_id: i64, now: DateTime<Utc>) -> Self {
        Self {
            id: 0,
            incident_id,
            status: "draft".into(),
            impacted: String::new(),
            requests_label: "Requests".into(),
            summary: String::new(),
            impact: String::new(),
            failed_requests: None,
            total_requests: None,
            root_cause: String::new(),
            contributing_factors: String::new(),
            detection: String::new(),
            went_well: String::new(),
            was_hard: String::new(),
            got_lucky: String::new(),
            lessons: String::new(),
            timeline_event_ids: None,
            version: 1,
            created_at: now,
            updated_at: now,
            published_at: None,
        }
    }

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
                  went_well, was_hard, got_lucky, lessons, timeline_event_ids,
                  version, created_at, updated_at, published_at
           from postmortems where incident_id = $1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// The incident's postmortem as stored, or — before anyone has edited it — the empty draft it
/// will start as. Reading writes nothing.
pub async fn for_incident_or_draft(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    now: DateTime<Utc>,
) -> AppResult<Postmortem> {
    Ok(for_incident(e, incident_id)
        .await?
        .unwrap_or_else(|| Postmortem::unsaved_draft(incident_id, now)))
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

/// The facts the figures need: what was impacted, what failed and how much. (The triggering
/// change is the incident's confirmed suspect: `changes::db::confirmed_trigger`.)
pub struct Facts<'a> {
    pub impacted: &'a str,
    pub requests_label: &'a str,
    pub failed_requests: Option<i64>,
    pub total_requests: Option<i64>,
}

pub async fn set_facts(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    f: &Facts<'_>,
) -> AppResult<Option<i32>> {
    Ok(sqlx::query_scalar!(
        r#"update postmortems set impacted = $3, requests_label = $4, failed_requests = $5,
               total_requests = $6,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        f.impacted,
        f.requests_label,
        f.failed_requests,
        f.total_requests,
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

/// Marks the postmortem's document as changed (an action item was added, edited or removed),
/// so a published one says "edited after publication".
pub async fn touch(e: impl PgExecutor<'_>, postmortem_id: i64) -> AppResult<()> {
    sqlx::query!(
        "update postmortems set updated_at = now() where id = $1",
        postmortem_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A postmortem's "Where we got lucky" section, with its incident.
pub struct NearMiss {
    pub key: IncidentKey,
    pub title: String,
    pub severity: String,
    pub detected_at: DateTime<Utc>,
    pub status: String,
    pub got_lucky: String,
}

/// Every written "Where we got lucky" of an incident `seen_by` sees, newest incident first.
pub async fn near_misses(e: impl PgExecutor<'_>, seen_by: SeenBy) -> AppResult<Vec<NearMiss>> {
    Ok(sqlx::query_as!(
        NearMiss,
        r#"select i.number as "key!: IncidentKey", i.title, i.severity, i.detected_at, pm.status,
                  pm.got_lucky
           from postmortems pm join incidents i on i.id = pm.incident_id
           where pm.got_lucky <> '' and incident_visible(i.restricted, i.id, $1)
           order by i.detected_at desc
           limit 500"#,
        seen_by.sql()
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

/// A published version without its text: what lists of versions show.
#[derive(Debug, Clone)]
pub struct VersionInfo {
    pub number: i32,
    pub published_at: DateTime<Utc>,
    pub published_by: String,
}

/// Every published version, newest first.
pub async fn versions(e: impl PgExecutor<'_>, postmortem_id: i64) -> AppResult<Vec<VersionInfo>> {
    Ok(sqlx::query_as!(
        VersionInfo,
        r#"select number, published_at, published_by from postmortem_versions
           where postmortem_id = $1 order by number desc"#,
        postmortem_id
    )
    .fetch_all(e)
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

/// A reviewer's comment on a part of a postmortem.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Comment {
    pub id: i64,
    /// The part commented on: a section's name, `figures`, `timeline` or `action_items`
    pub part: String,
    pub author: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub resolved_by: Option<String>,
}

/// A postmortem's comments, oldest first.
pub async fn comments(e: impl PgExecutor<'_>, postmortem_id: i64) -> AppResult<Vec<Comment>> {
    Ok(sqlx::query_as!(
        Comment,
        r#"select id, part, author_name as author, body, created_at, resolved_at, resolved_by
           from postmortem_comments where postmortem_id = $1 order by created_at, id"#,
        postmortem_id
    )
    .fetch_all(e)
    .await?)
}

pub async fn add_comment(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
    part: &str,
    author_id: Option<i64>,
    author: &str,
    body: &str,
) -> AppResult<Comment> {
    Ok(sqlx::query_as!(
        Comment,
        r#"insert into postmortem_comments (postmortem_id, part, author_id, author_name, body)
           values ($1, $2, $3, $4, $5)
           returning id, part, author_name as author, body, created_at, resolved_at, resolved_by"#,
        postmortem_id,
        part,
        author_id,
        author,
        body
    )
    .fetch_one(e)
    .await?)
}

/// Marks a comment of this postmortem resolved (once); `None` when there is no such comment.
pub async fn resolve_comment(
    e: impl PgExecutor<'_>,
    postmortem_id: i64,
    id: i64,
    by: &str,
) -> AppResult<Option<Comment>> {
    Ok(sqlx::query_as!(
        Comment,
        r#"update postmortem_comments
           set resolved_at = coalesce(resolved_at, now()), resolved_by = coalesce(resolved_by, $3)
           where id = $2 and postmortem_id = $1
           returning id, part, author_name as author, body, created_at, resolved_at, resolved_by"#,
        postmortem_id,
        id,
        by
    )
    .fetch_optional(e)
    .await?)
}

/// Filters of the postmortem list; `None` means any.
#[derive(Debug, Default)]
pub struct PostmortemFilter {
    pub status: Option<String>,
    pub service: Option<String>,
    pub severity: Option<String>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub open_items: bool,
    /// Of incidents of the services these teams own
    pub teams: Option<Vec<i64>>,
}

/// A postmortem as the managers' list shows it.
#[derive(Debug, Clone)]
pub struct ListedPostmortem {
    pub id: i64,
    pub key: IncidentKey,
    pub title: String,
    pub service: Option<String>,
    pub slo_target_percent: Option<f64>,
    pub avg_requests_per_second: Option<f64>,
    pub severity: String,
    pub detected_at: DateTime<Utc>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub status: String,
    pub published_at: Option<DateTime<Utc>>,
    pub owner: Option<String>,
    pub failed_requests: Option<i64>,
    pub items: i64,
    pub open_items: i64,
    pub overdue_items: i64,
}

/// A page of the postmortems matching the filter, newest incident first, after `after`, at most
/// `limit`; and where the next page starts, if there is one. The period is on the incident's
/// detection date (UTC), both ends included.
pub async fn list(
    pool: &sqlx::PgPool,
    f: &PostmortemFilter,
    seen_by: SeenBy,
    after: Option<TimeCursor>,
    limit: i64,
) -> AppResult<(Vec<ListedPostmortem>, Option<TimeCursor>)> {
    // The page is chosen first (postmortems and their incidents alone, newest first) and only
    // its rows are joined to the rest. The usual view — the published ones, or all, unfiltered
    // otherwise — runs on the statement's kept generic plan, which walks the incidents' index
    // newest first and stops after a page (planned from the tables' statistics, it sorts the
    // postmortems instead where they are few). Another filter may match few rows (drafts, one
    // service's Sev1s in a month), which that walk would look for through the whole history,
    // so such a list is planned for its values each time (`crate::plans`).
    let mut tx = crate::transaction::begin(pool).await?;
    let filtered = f.status.as_deref().is_some_and(|s| s != "published")
        || f.service.is_some()
        || f.severity.is_some()
        || f.from.is_some()
        || f.to.is_some()
        || f.open_items
        || f.teams.is_some();
    if filtered {
        crate::plans::for_the_values(&mut tx).await?;
    }
    let rows = sqlx::query_as!(
        ListedPostmortem,
        r#"with page as materialized (
               select pm.id, pm.incident_id, pm.status, pm.published_at, pm.failed_requests,
                      i.detected_at
               from postmortems pm
               join incidents i on i.id = pm.incident_id
               where ($1::text is null or pm.status = $1)
                 and ($2::text is null or i.service_id = (select id from services where name = $2))
                 and ($3::text is null or i.peak_severity = $3)
                 and ($4::date is null or i.detected_at >= $4::date::timestamp at time zone 'utc')
                 and ($5::date is null or i.detected_at < ($5::date + 1)::timestamp at time zone 'utc')
                 and (not $6 or exists (
                     select from action_items a
                     where a.postmortem_id = pm.id and a.status in ('open', 'in_progress')))
                 and ($7::int8 is null or (i.detected_at, pm.id) < ($8::timestamptz, $7))
                 and incident_visible(i.restricted, i.id, $10)
                 and ($11::int8[] is null
                      or i.service_id in (select s.id from services s where s.team_id = any($11)))
               order by i.detected_at desc, pm.id desc
               limit $9)
           select pm.id, i.number as "key!: IncidentKey", i.title, s.name as "service?",
                  s.slo_target_percent as "slo_target_percent?",
                  s.avg_requests_per_second as "avg_requests_per_second?",
                  i.peak_severity as severity, i.detected_at, i.mitigated_at, i.resolved_at,
                  pm.status, pm.published_at, owner.name as "owner?", pm.failed_requests,
                  coalesce(items.all_items, 0) as "items!",
                  coalesce(items.open_items, 0) as "open_items!",
                  coalesce(items.overdue_items, 0) as "overdue_items!"
           from page pm
           join incidents i on i.id = pm.incident_id
           left join services s on s.id = i.service_id
           left join incident_roles r on r.incident_id = i.id and r.role = 'postmortem_owner'
           left join people owner on owner.id = r.person_id
           left join lateral (
               select count(*) as all_items,
                      count(*) filter (where a.status in ('open', 'in_progress')) as open_items,
                      count(*) filter (where a.status in ('open', 'in_progress')
                                         and a.due_on < (now() at time zone 'utc')::date) as overdue_items
               from action_items a where a.postmortem_id = pm.id
           ) items on true
           order by pm.detected_at desc, pm.id desc"#,
        f.status,
        f.service,
        f.severity,
        f.from,
        f.to,
        f.open_items,
        after.map(|c| c.id),
        after.map(|c| c.occurred_at),
        limit + 1,
        seen_by.sql(),
        f.teams.as_deref(),
    )
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(crate::domain::split_page(rows, limit, |r| TimeCursor {
        occurred_at: r.detected_at,
        id: r.id,
    }))
}
