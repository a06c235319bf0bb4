//! Queries on runbooks and the checks of their steps.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::error::{AppError, AppResult};

/// A runbook as the API and the pages show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Runbook {
    pub id: i64,
    pub name: String,
    /// Where the full runbook lives; empty for none
    pub link: String,
    /// The service whose incidents show it (or null for a rule's)
    pub service: Option<String>,
    /// The routing rule whose incidents show it (or null for a service's)
    pub rule_id: Option<i64>,
    pub rule_name: Option<String>,
    #[serde(skip)]
    pub team_id: Option<i64>,
    /// The team that owns its service or rule (its slug), whose leads may change it
    pub team: Option<String>,
    /// The checklist, in order
    pub steps: Vec<String>,
    pub version: i32,
    pub updated_at: DateTime<Utc>,
}

impl Runbook {
    /// The runbook as a person would write it to make it again (its rule by name).
    pub fn draft(&self) -> super::domain::RunbookDraft {
        super::domain::RunbookDraft {
            name: self.name.clone(),
            link: Some(self.link.clone()).filter(|l| !l.is_empty()),
            service: self.service.clone(),
            rule_id: None,
            rule: self.rule_name.clone(),
            steps: self.steps.clone(),
        }
    }
}

/// Where a runbook is written: its owner resolved to ids.
pub struct Row<'a> {
    pub name: &'a str,
    pub link: &'a str,
    pub service_id: Option<i64>,
    pub rule_id: Option<i64>,
    pub steps: &'a [String],
}

pub async fn insert(e: impl PgExecutor<'_>, r: &Row<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into runbooks (name, link, service_id, rule_id, steps)
           values ($1, $2, $3, $4, $5) returning id"#,
        r.name,
        r.link,
        r.service_id,
        r.rule_id,
        r.steps
    )
    .fetch_one(e)
    .await?)
}

/// Writes `r` over runbook `id` if it is still at `expected_version`; `false` when stale.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    r: &Row<'_>,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"update runbooks
           set name = $3, link = $4, service_id = $5, rule_id = $6, steps = $7,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2"#,
        id,
        expected_version,
        r.name,
        r.link,
        r.service_id,
        r.rule_id,
        r.steps
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    let done = sqlx::query!("delete from runbooks where id = $1", id)
        .execute(e)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Which runbooks a list shows; `None` means any.
#[derive(Debug, Default, Clone, Copy)]
pub struct Filter<'a> {
    pub service: Option<&'a str>,
    pub rule_id: Option<i64>,
    pub id: Option<i64>,
    /// The owning team's slug
    pub team: Option<&'a str>,
}

/// Runbooks, by owner then name.
pub async fn list(e: impl PgExecutor<'_>, f: Filter<'_>) -> AppResult<Vec<Runbook>> {
    Ok(sqlx::query_as!(
        Runbook,
        r#"select b.id, b.name, b.link, s.name as "service?", b.rule_id, r.name as "rule_name?",
                  t.id as "team_id?", t.slug as "team?", b.steps, b.version, b.updated_at
           from runbooks b
           left join services s on s.id = b.service_id
           left join routing_rules r on r.id = b.rule_id
           left join teams t on t.id = coalesce(s.team_id, r.team_id)
           where ($1::text is null or s.name = $1) and ($2::bigint is null or b.rule_id = $2)
             and ($3::bigint is null or b.id = $3) and ($4::text is null or t.slug = $4)
           order by s.name nulls last, r.position, b.name, b.id"#,
        f.service,
        f.rule_id,
        f.id,
        f.team
    )
    .fetch_all(e)
    .await?)
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<Runbook> {
    let filter = Filter {
        id: Some(id),
        ..Default::default()
    };
    AppError::the_one(list(e, filter).await?, "runbook", id)
}

/// The runbooks an incident shows: its service's, and those of the rules that routed its alerts.
pub async fn for_incident(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    service_id: Option<i64>,
) -> AppResult<Vec<Runbook>> {
    Ok(sqlx::query_as!(
        Runbook,
        r#"select b.id, b.name, b.link, s.name as "service?", b.rule_id, r.name as "rule_name?",
                  t.id as "team_id?", t.slug as "team?", b.steps, b.version, b.updated_at
           from runbooks b
           left join services s on s.id = b.service_id
           left join routing_rules r on r.id = b.rule_id
           left join teams t on t.id = coalesce(s.team_id, r.team_id)
           where b.service_id = $2
              or b.rule_id in (select l.rule_id from alert_lines l where l.incident_id = $1)
           order by b.service_id nulls last, r.position, b.name, b.id"#,
        incident_id,
        service_id
    )
    .fetch_all(e)
    .await?)
}

/// A step checked on an incident.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Check {
    pub runbook_id: i64,
    pub position: i32,
    /// The step's text when it was checked
    pub step: String,
    pub checked_by: String,
    pub checked_at: DateTime<Utc>,
}

pub async fn checks(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Check>> {
    Ok(sqlx::query_as!(
        Check,
        r#"select runbook_id, position, step, checked_by, checked_at
           from checklist_checks where incident_id = $1
           order by runbook_id, position"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// Checks a step; `false` when it was checked already.
pub async fn check(e: impl PgExecutor<'_>, incident_id: i64, c: &Check) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"insert into checklist_checks (incident_id, runbook_id, position, step, checked_by, checked_at)
           values ($1, $2, $3, $4, $5, $6) on conflict do nothing"#,
        incident_id,
        c.runbook_id,
        c.position,
        c.step,
        c.checked_by,
        c.checked_at
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Unchecks a step; `false` when it was not checked.
pub async fn uncheck(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    runbook_id: i64,
    position: i32,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"delete from checklist_checks
           where incident_id = $1 and runbook_id = $2 and position = $3"#,
        incident_id,
        runbook_id,
        position
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}
