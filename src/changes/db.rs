//! Queries on changes.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::PgExecutor;
use uuid::Uuid;

use super::domain::{
    Capacity, CapacityCheck, ChangeCursor, ChangeKind, FailureGroup, FailureRate, ServicePeak,
    check_capacity,
};
use crate::error::AppResult;

/// A change as the API and the pages show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Change {
    pub id: i64,
    /// The changed service; null only for a sender's change that named no known service
    pub service: Option<String>,
    pub environment: String,
    /// deploy, config, feature_flag or infrastructure
    pub kind: String,
    pub summary: String,
    pub author: String,
    pub link: String,
    pub occurred_at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    /// Who reported it: `api`, or the name of the integration that sent it
    pub source: String,
    /// The capacity figures it carries, as given
    pub capacity: Option<Capacity>,
    /// Little's law on those figures (or "not checked" for a capacity change without them);
    /// null for a change that touches no capacity setting
    pub capacity_check: Option<CapacityCheck>,
}

/// A change as stored, with its service's peak figures for the capacity check.
struct ChangeRow {
    id: i64,
    service: Option<String>,
    environment: String,
    kind: String,
    summary: String,
    author: String,
    link: String,
    occurred_at: DateTime<Utc>,
    recorded_at: DateTime<Utc>,
    source: String,
    details: Value,
    capacity_limit: Option<String>,
    capacity_per_replica: Option<i64>,
    capacity_replicas: Option<i64>,
    capacity_peak_requests_per_second: Option<f64>,
    capacity_peak_latency_seconds: Option<f64>,
    service_peak_requests_per_second: Option<f64>,
    service_peak_latency_seconds: Option<f64>,
}

impl From<ChangeRow> for Change {
    fn from(r: ChangeRow) -> Self {
        let capacity = match (
            r.capacity_limit,
            r.capacity_per_replica,
            r.capacity_replicas,
        ) {
            (Some(limit), Some(per_replica), Some(replicas)) => Some(Capacity {
                limit,
                per_replica,
                replicas,
                peak_requests_per_second: r.capacity_peak_requests_per_second,
                peak_latency_seconds: r.capacity_peak_latency_seconds,
            }),
            _ => None,
        };
        let peak = ServicePeak {
            requests_per_second: r.service_peak_requests_per_second,
            latency_seconds: r.service_peak_latency_seconds,
        };
        Self {
            capacity_check: check_capacity(capacity.as_ref(), peak, &r.summary, &r.details),
            capacity,
            id: r.id,
            service: r.service,
            environment: r.environment,
            kind: r.kind,
            summary: r.summary,
            author: r.author,
            link: r.link,
            occurred_at: r.occurred_at,
            recorded_at: r.recorded_at,
            source: r.source,
        }
    }
}

pub struct NewChange<'a> {
    pub service_id: Option<i64>,
    pub environment: &'a str,
    pub kind: ChangeKind,
    pub summary: &'a str,
    pub author: &'a str,
    pub link: &'a str,
    pub occurred_at: DateTime<Utc>,
    pub details: &'a Value,
    pub capacity: Option<&'a Capacity>,
    /// The integration that sent it, and what it sent; `None` for the API.
    pub sent: Option<(Uuid, &'a Value)>,
}

pub async fn insert(e: impl PgExecutor<'_>, c: &NewChange<'_>) -> AppResult<i64> {
    let (integration_id, raw) = c.sent.map_or((None, None), |(i, r)| (Some(i), Some(r)));
    Ok(sqlx::query_scalar!(
        r#"insert into changes (service_id, environment, kind, summary, author, link, occurred_at,
                                details, integration_id, raw, capacity_limit, capacity_per_replica,
                                capacity_replicas, capacity_peak_requests_per_second,
                                capacity_peak_latency_seconds)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
           returning id"#,
        c.service_id,
        c.environment,
        c.kind.as_str(),
        c.summary,
        c.author,
        c.link,
        c.occurred_at,
        c.details,
        integration_id,
        raw,
        c.capacity.map(|k| k.limit.as_str()),
        c.capacity.map(|k| k.per_replica),
        c.capacity.map(|k| k.replicas),
        c.capacity.and_then(|k| k.peak_requests_per_second),
        c.capacity.and_then(|k| k.peak_latency_seconds),
    )
    .fetch_one(e)
    .await?)
}

/// The id of the service with this name, if there is one.
pub async fn service_id(e: impl PgExecutor<'_>, name: &str) -> AppResult<Option<i64>> {
    Ok(
        sqlx::query_scalar!("select id from services where name = $1", name)
            .fetch_optional(e)
            .await?,
    )
}

/// Every service's name, for the change form's suggestions.
pub async fn service_names(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(
        sqlx::query_scalar!("select name from services order by name")
            .fetch_all(e)
            .await?,
    )
}

/// Which changes a list shows; `None` means any.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub service: Option<String>,
    pub kind: Option<ChangeKind>,
    /// From this moment on (inclusive)
    pub from: Option<DateTime<Utc>>,
    /// Up to this moment (exclusive)
    pub until: Option<DateTime<Utc>>,
    /// This change only
    pub id: Option<i64>,
    /// The change confirmed as this incident's trigger only
    pub trigger_of: Option<i64>,
}

/// Newest first, after `after` when given.
pub async fn list(
    e: impl PgExecutor<'_>,
    f: &Filter,
    after: Option<ChangeCursor>,
    limit: i64,
) -> AppResult<Vec<Change>> {
    Ok(sqlx::query_as!(
        ChangeRow,
        r#"select c.id, s.name as "service?", c.environment, c.kind, c.summary, c.author, c.link,
                  c.occurred_at, c.recorded_at, coalesce(i.name, 'api') as "source!", c.details,
                  c.capacity_limit, c.capacity_per_replica, c.capacity_replicas,
                  c.capacity_peak_requests_per_second, c.capacity_peak_latency_seconds,
                  s.peak_requests_per_second as "service_peak_requests_per_second?",
                  s.peak_latency_seconds as "service_peak_latency_seconds?"
           from changes c
           left join services s on s.id = c.service_id
           left join integrations i on i.id = c.integration_id
           where ($1::text is null or s.name = $1)
             and ($2::text is null or c.kind = $2)
             and ($3::timestamptz is null or c.occurred_at >= $3)
             and ($4::timestamptz is null or c.occurred_at < $4)
             and ($5::timestamptz is null or (c.occurred_at, c.id) < ($5, $6))
             and ($8::bigint is null or c.id = $8)
             and ($9::bigint is null or exists (
                     select from suspect_verdicts v
                     where v.change_id = c.id and v.incident_id = $9
                       and v.verdict = 'confirmed_trigger'))
           order by c.occurred_at desc, c.id desc
           limit $7"#,
        f.service,
        f.kind.map(ChangeKind::as_str),
        f.from,
        f.until,
        after.map(|c| c.occurred_at),
        after.map_or(0, |c| c.id),
        limit,
        f.id,
        f.trigger_of,
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Change::from)
    .collect())
}

/// The service's latest changes that touch capacity (checked or not), newest first, among its
/// last 500 changes.
pub async fn capacity_changes(
    e: impl PgExecutor<'_>,
    service: &str,
    limit: usize,
) -> AppResult<Vec<Change>> {
    let filter = Filter {
        service: Some(service.to_owned()),
        ..Default::default()
    };
    let mut found = list(e, &filter, None, 500).await?;
    found.retain(|c| c.capacity_check.is_some());
    found.truncate(limit);
    Ok(found)
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<Change>> {
    let filter = Filter {
        id: Some(id),
        ..Default::default()
    };
    Ok(list(e, &filter, None, 1).await?.pop())
}

/// A change suspected of an incident, with what responders decided about it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Suspect {
    #[serde(flatten)]
    pub change: Change,
    /// suspected, ruled_out or confirmed_trigger; null until someone decides
    pub verdict: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
}

/// Where to look for an incident's suspects.
#[derive(Debug, Clone, Copy)]
pub struct SuspectScope {
    pub incident_id: i64,
    /// The incident's service; its dependencies, all the way down, are searched too.
    pub service_id: Option<i64>,
    pub started_at: DateTime<Utc>,
    pub window_hours: i64,
}

/// The changes to the incident's service and everything it depends on made in the window before
/// its start, and any change a verdict was given on; unranked.
pub async fn suspects(e: impl PgExecutor<'_>, s: &SuspectScope) -> AppResult<Vec<Suspect>> {
    Ok(sqlx::query!(
        r#"with recursive scope(id) as (
               select $2::bigint where $2::bigint is not null
               union
               select sd.depends_on_id from service_dependencies sd join scope on sd.service_id = scope.id
           )
           select c.id, s.name as "service?", c.environment, c.kind, c.summary, c.author, c.link,
                  c.occurred_at, c.recorded_at, coalesce(i.name, 'api') as "source!", c.details,
                  c.capacity_limit, c.capacity_per_replica, c.capacity_replicas,
                  c.capacity_peak_requests_per_second, c.capacity_peak_latency_seconds,
                  s.peak_requests_per_second as "service_peak_requests_per_second?",
                  s.peak_latency_seconds as "service_peak_latency_seconds?",
                  v.verdict as "verdict?", v.decided_by as "decided_by?", v.decided_at as "decided_at?"
           from changes c
           left join services s on s.id = c.service_id
           left join integrations i on i.id = c.integration_id
           left join suspect_verdicts v on v.incident_id = $1 and v.change_id = c.id
           where v.change_id is not null
              or (c.service_id in (select id from scope)
                  and c.occurred_at <= $3
                  and c.occurred_at > $3 - make_interval(hours => $4))"#,
        s.incident_id,
        s.service_id,
        s.started_at,
        s.window_hours as i32,
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| Suspect {
        change: ChangeRow {
            id: r.id,
            service: r.service,
            environment: r.environment,
            kind: r.kind,
            summary: r.summary,
            author: r.author,
            link: r.link,
            occurred_at: r.occurred_at,
            recorded_at: r.recorded_at,
            source: r.source,
            details: r.details,
            capacity_limit: r.capacity_limit,
            capacity_per_replica: r.capacity_per_replica,
            capacity_replicas: r.capacity_replicas,
            capacity_peak_requests_per_second: r.capacity_peak_requests_per_second,
            capacity_peak_latency_seconds: r.capacity_peak_latency_seconds,
            service_peak_requests_per_second: r.service_peak_requests_per_second,
            service_peak_latency_seconds: r.service_peak_latency_seconds,
        }
        .into(),
        verdict: r.verdict,
        decided_by: r.decided_by,
        decided_at: r.decided_at,
    })
    .collect())
}

/// Records a verdict on a change for an incident (replacing an earlier one). A second confirmed
/// trigger for the incident is refused by the database's unique index: 409.
pub struct NewVerdict<'a> {
    pub incident_id: i64,
    pub change_id: i64,
    pub verdict: &'a str,
    pub decided_by: &'a str,
    pub decided_at: DateTime<Utc>,
}

pub async fn set_verdict(e: impl PgExecutor<'_>, v: &NewVerdict<'_>) -> AppResult<()> {
    sqlx::query!(
        r#"insert into suspect_verdicts (incident_id, change_id, verdict, decided_by, decided_at)
           values ($1, $2, $3, $4, $5)
           on conflict (incident_id, change_id)
           do update set verdict = excluded.verdict, decided_by = excluded.decided_by,
                         decided_at = excluded.decided_at"#,
        v.incident_id,
        v.change_id,
        v.verdict,
        v.decided_by,
        v.decided_at
    )
    .execute(e)
    .await
    .map_err(crate::error::AppError::on_unique(
        "suspect_verdicts_one_trigger",
        "Another change is already confirmed as this incident's trigger; rule it out first.",
    ))?;
    Ok(())
}

/// The change confirmed as the incident's trigger, if any.
pub async fn confirmed_trigger(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Option<Change>> {
    let filter = Filter {
        trigger_of: Some(incident_id),
        ..Default::default()
    };
    Ok(list(e, &filter, None, 1).await?.pop())
}

/// Changes made in `[from, until)` (either open) per group, and how many of them were confirmed as
/// an incident's trigger; one service's only when `service` is given.
pub async fn failure_rates(
    e: impl PgExecutor<'_>,
    group: FailureGroup,
    service: Option<&str>,
    from: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
) -> AppResult<Vec<FailureRate>> {
    Ok(sqlx::query!(
        r#"select case $1::text
                      when 'service' then coalesce(s.name, '(no service)')
                      else to_char(date_trunc('month', c.occurred_at at time zone 'UTC'), 'YYYY-MM')
                  end as "grp!",
                  count(*) as "changes!",
                  count(*) filter (where exists (
                      select from suspect_verdicts v
                      where v.change_id = c.id and v.verdict = 'confirmed_trigger')) as "failed!"
           from changes c left join services s on s.id = c.service_id
           where ($2::text is null or s.name = $2)
             and ($3::timestamptz is null or c.occurred_at >= $3)
             and ($4::timestamptz is null or c.occurred_at < $4)
           group by 1 order by 1"#,
        group.as_str(),
        service,
        from,
        until
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| FailureRate::new(r.grp, r.changes, r.failed))
    .collect())
}
