//! Queries on the services table.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use super::domain::ServiceDraft;
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Service {
    #[serde(skip)]
    pub id: i64,
    pub name: String,
    pub tier: i16,
    /// The owning team's name; empty when the service is the installation's
    pub team: String,
    /// The owning team's slug (`/teams/{slug}`)
    pub team_slug: Option<String>,
    #[serde(skip)]
    pub team_id: Option<i64>,
    pub description: String,
    pub slo_target_percent: Option<f64>,
    pub avg_requests_per_second: Option<f64>,
    /// Arrival rate at the busiest hour (req/s), for the capacity check of its changes
    pub peak_requests_per_second: Option<f64>,
    /// Latency at the busiest hour (s), for the capacity check of its changes
    pub peak_latency_seconds: Option<f64>,
    pub runbook_url: Option<String>,
    /// The services this one depends on, by name
    pub depends_on: Vec<String>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Service {
    pub fn draft(&self) -> ServiceDraft {
        ServiceDraft {
            name: self.name.clone(),
            tier: self.tier.into(),
            team: self.team_slug.clone().unwrap_or_default(),
            description: self.description.clone(),
            slo_target_percent: self.slo_target_percent,
            avg_requests_per_second: self.avg_requests_per_second,
            peak_requests_per_second: self.peak_requests_per_second,
            peak_latency_seconds: self.peak_latency_seconds,
            runbook_url: self.runbook_url.clone(),
            depends_on: Some(self.depends_on.clone()),
        }
    }
}

fn name_taken(name: &str) -> impl FnOnce(sqlx::Error) -> AppError {
    AppError::on_unique(
        "services_name_key",
        format!("A service named {name:?} already exists."),
    )
}

/// Adds the service, owned by the team `team_id` (or by nobody); its id.
pub async fn insert(
    e: impl PgExecutor<'_>,
    d: &ServiceDraft,
    team_id: Option<i64>,
) -> AppResult<i64> {
    sqlx::query_scalar!(
        r#"insert into services
               (name, tier, team_id, description, slo_target_percent, avg_requests_per_second,
                runbook_url, peak_requests_per_second, peak_latency_seconds)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           returning id"#,
        d.name,
        d.tier as i16,
        team_id,
        d.description,
        d.slo_target_percent,
        d.avg_requests_per_second,
        d.runbook_url,
        d.peak_requests_per_second,
        d.peak_latency_seconds,
    )
    .fetch_one(e)
    .await
    .map_err(name_taken(&d.name))
}

/// Writes `d` over the service `id` if it is still at `expected_version`; `false` when stale.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    d: &ServiceDraft,
    team_id: Option<i64>,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"update services
           set name = $3, tier = $4, team_id = $5, description = $6, slo_target_percent = $7,
               avg_requests_per_second = $8, runbook_url = $9, peak_requests_per_second = $10,
               peak_latency_seconds = $11, version = version + 1,
               updated_at = now()
           where id = $1 and version = $2"#,
        id,
        expected_version,
        d.name,
        d.tier as i16,
        team_id,
        d.description,
        d.slo_target_percent,
        d.avg_requests_per_second,
        d.runbook_url,
        d.peak_requests_per_second,
        d.peak_latency_seconds,
    )
    .execute(e)
    .await
    .map_err(name_taken(&d.name))?;
    Ok(done.rows_affected() == 1)
}

/// Which services [`select`] reads; every field left out matches all.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    pub name: Option<&'a str>,
    /// The owning team's slug
    pub team: Option<&'a str>,
}

/// The services the filter names, most critical tier first, with their team and dependencies.
pub async fn select(e: impl PgExecutor<'_>, f: Filter<'_>) -> AppResult<Vec<Service>> {
    Ok(sqlx::query_as!(
        Service,
        r#"select s.id, s.name, s.tier, coalesce(t.name, '') as "team!", t.slug as "team_slug?",
                  s.team_id,
                  s.description, s.slo_target_percent,
                  s.avg_requests_per_second, s.peak_requests_per_second, s.peak_latency_seconds,
                  s.runbook_url, s.version, s.created_at, s.updated_at,
                  array(select d.name from service_dependencies sd join services d on d.id = sd.depends_on_id
                        where sd.service_id = s.id order by d.name) as "depends_on!"
           from services s left join teams t on t.id = s.team_id
           where ($1::text is null or s.name = $1) and ($2::text is null or t.slug = $2)
           order by s.tier, s.name"#,
        f.name,
        f.team
    )
    .fetch_all(e)
    .await?)
}

pub async fn find_by_name(e: impl PgExecutor<'_>, name: &str) -> AppResult<Option<Service>> {
    let only = Filter {
        name: Some(name),
        ..Filter::default()
    };
    Ok(select(e, only).await?.pop())
}

pub async fn get_by_name(e: impl PgExecutor<'_>, name: &str) -> AppResult<Service> {
    find_by_name(e, name)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no service named {name:?}.")))
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<Service>> {
    select(e, Filter::default()).await
}

/// Deletes a service that no incident refers to.
pub async fn delete(e: impl PgExecutor<'_>, id: i64, name: &str) -> AppResult<()> {
    sqlx::query!("delete from services where id = $1", id)
        .execute(e)
        .await
        .map_err(|err| match &err {
            sqlx::Error::Database(db) if db.constraint() == Some("incidents_service_fkey") => {
                AppError::Conflict(format!(
                    "The service {name:?} has incidents; it cannot be deleted."
                ))
            }
            _ => AppError::Database(err),
        })?;
    Ok(())
}

/// Failed requests recorded by the postmortems of a service's incidents detected this calendar
/// month (UTC, database clock), and how many postmortems gave a figure.
pub async fn failed_this_month(e: impl PgExecutor<'_>, service_id: i64) -> AppResult<(i64, i64)> {
    let r = sqlx::query!(
        r#"select coalesce(sum(pm.failed_requests), 0)::int8 as "failed!",
                  count(pm.failed_requests) as "counted!"
           -- every incident: a sum, which may count restricted incidents' figures
           from postmortems pm join incidents i on i.id = pm.incident_id
           where i.service_id = $1
             and i.detected_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'"#,
        service_id
    )
    .fetch_one(e)
    .await?;
    Ok((r.failed, r.counted))
}

/// One of a service's incidents, as its page lists them.
pub struct ServiceIncident {
    pub number: i64,
    pub title: String,
    pub severity: String,
    pub status: String,
    pub detected_at: DateTime<Utc>,
}

/// The service's latest incidents `seen_by` may see, in the incident list's order: open ones
/// first, then by severity, newest first.
pub async fn incidents_of(
    e: impl PgExecutor<'_>,
    service_id: i64,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<ServiceIncident>> {
    Ok(sqlx::query_as!(
        ServiceIncident,
        r#"select number, title, severity, status, detected_at from incidents
           where service_id = $1 and incident_visible(restricted, id, $3)
           order by (status = 'resolved'), severity, number desc
           limit $2"#,
        service_id,
        limit,
        seen_by.sql()
    )
    .fetch_all(e)
    .await?)
}

/// Every dependency between services, by name: (service, what it depends on).
pub async fn dependency_edges(e: impl PgExecutor<'_>) -> AppResult<Vec<(String, String)>> {
    Ok(sqlx::query!(
        r#"select s.name as service, d.name as depends_on
           from service_dependencies sd
           join services s on s.id = sd.service_id
           join services d on d.id = sd.depends_on_id"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.service, r.depends_on))
    .collect())
}

/// Holds every other change to the dependency graph back until this transaction ends, so two
/// concurrent edits cannot close a cycle between them.
pub async fn lock_dependencies(e: impl PgExecutor<'_>) -> AppResult<()> {
    sqlx::query!("select pg_advisory_xact_lock(hashtext('service_dependencies'))")
        .execute(e)
        .await?;
    Ok(())
}

/// Makes `service_id` depend on exactly the services named (which must exist); returns how many
/// of the names were found.
pub async fn set_dependencies(
    e: impl PgExecutor<'_>,
    service_id: i64,
    names: &[String],
) -> AppResult<usize> {
    let found = sqlx::query_scalar!(
        r#"with gone as (delete from service_dependencies where service_id = $1),
                added as (
                    insert into service_dependencies (service_id, depends_on_id)
                    select $1, id from services where name = any($2)
                    returning depends_on_id)
           select count(*) as "n!" from added"#,
        service_id,
        names
    )
    .fetch_one(e)
    .await?;
    Ok(found as usize)
}
