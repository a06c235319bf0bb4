//! Queries on the routing rules: the ordered list, and its changes.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use super::domain::{self, Rule};
use crate::domain::Severity;
use crate::error::{AppError, AppResult};

/// A routing rule as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RuleRecord {
    pub id: i64,
    /// 1 for the first rule tried; the default rule is always last
    pub position: i32,
    pub name: String,
    /// Each condition as written, e.g. `labels.severity = critical`; all must hold
    pub conditions: Vec<String>,
    /// A service name or a template such as `{labels.service}`; empty for none
    pub service: String,
    /// `null`: the alert's own severity decides
    pub severity: Option<Severity>,
    /// e.g. `{labels.alertname} on {labels.service}`; empty: the alert's summary
    pub title_template: String,
    /// Fields whose shared values put alerts into one incident, e.g. `labels.service`; empty:
    /// the alerts' own group keys decide
    pub group_by: Vec<String>,
    /// How long after a group's first alert others join it (with `group_by`)
    pub group_window_minutes: i32,
    pub is_default: bool,
    #[serde(skip)]
    pub team_id: Option<i64>,
    /// The owning team's slug; none: the installation's
    pub team: Option<String>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl RuleRecord {
    /// The rule as a person would write it to make it again (its team by slug).
    pub fn draft(&self) -> domain::RuleDraft {
        domain::RuleDraft {
            name: self.name.clone(),
            conditions: self.conditions.clone(),
            service: self.service.clone(),
            severity: self.severity.map(|s| s.as_str().to_owned()),
            title_template: self.title_template.clone(),
            team: self.team.clone().unwrap_or_default(),
            group_by: self.group_by.clone(),
            group_window_minutes: Some(self.group_window_minutes),
        }
    }

    /// The rule ready to match. Stored conditions were checked when written; one that no longer
    /// parses makes its rule match nothing rather than everything.
    pub fn compile(&self) -> Option<Rule> {
        let conditions = self
            .conditions
            .iter()
            .map(|c| domain::parse_condition("conditions", c))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        Some(Rule {
            id: self.id,
            name: self.name.clone(),
            conditions,
            service: self.service.clone(),
            severity: self.severity,
            title_template: self.title_template.clone(),
            group_by: self.group_by.clone(),
            group_window_minutes: self.group_window_minutes,
        })
    }
}

/// The rules in the order they are tried.
pub fn compile_all(records: &[RuleRecord]) -> Vec<Rule> {
    records.iter().filter_map(RuleRecord::compile).collect()
}

/// The rules compiled once for as long as they stay as stored: compiling their patterns again
/// for every batch of alerts was a fifth of a storm's CPU. The caller still reads the rules for
/// each batch, so a change made through any replica routes that replica's next batch.
#[derive(Default)]
pub struct Compiled {
    from: Vec<RuleRecord>,
    rules: std::sync::Arc<Vec<Rule>>,
}

impl Compiled {
    /// The rules of `records`, compiled again only when they differ from the last ones.
    pub fn of(&mut self, records: Vec<RuleRecord>) -> std::sync::Arc<Vec<Rule>> {
        if self.from != records {
            self.rules = std::sync::Arc::new(compile_all(&records));
            self.from = records;
        }
        self.rules.clone()
    }
}

struct Row {
    id: i64,
    name: String,
    conditions: serde_json::Value,
    service: String,
    severity: Option<String>,
    title_template: String,
    group_by: Vec<String>,
    group_window_minutes: i32,
    is_default: bool,
    team_id: Option<i64>,
    team: Option<String>,
    version: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn record(position: usize, r: Row) -> RuleRecord {
    RuleRecord {
        id: r.id,
        position: position as i32 + 1,
        name: r.name,
        conditions: serde_json::from_value(r.conditions).unwrap_or_default(),
        service: r.service,
        severity: r
            .severity
            .and_then(|s| Severity::parse("severity", &s).ok()),
        title_template: r.title_template,
        group_by: r.group_by,
        group_window_minutes: r.group_window_minutes,
        is_default: r.is_default,
        team_id: r.team_id,
        team: r.team,
        version: r.version,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<RuleRecord>> {
    Ok(sqlx::query_as!(
        Row,
        r#"select r.id, r.name, r.conditions, r.service, r.severity, r.title_template,
                  r.group_by, r.group_window_minutes, r.is_default, r.team_id, t.slug as "team?", r.version, r.created_at, r.updated_at
           from routing_rules r left join teams t on t.id = r.team_id
           order by r.is_default, r.position, r.id"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .enumerate()
    .map(|(i, r)| record(i, r))
    .collect())
}

/// A rule as checked, ready to store.
pub struct Draft<'a> {
    pub name: &'a str,
    pub conditions: &'a [String],
    pub service: &'a str,
    pub severity: Option<Severity>,
    pub title_template: &'a str,
    pub group_by: &'a [String],
    pub group_window_minutes: i32,
    pub team_id: Option<i64>,
}

/// Adds a rule after every other but the default one.
pub async fn insert(e: impl PgExecutor<'_>, d: &Draft<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into routing_rules
               (position, name, conditions, service, severity, title_template, team_id,
                group_by, group_window_minutes)
           values ((select coalesce(max(position), 0) + 10 from routing_rules where not is_default),
                   $1, $2, $3, $4, $5, $6, $7, $8)
           returning id"#,
        d.name,
        serde_json::json!(d.conditions),
        d.service,
        d.severity.map(|s| s.as_str()),
        d.title_template,
        d.team_id,
        d.group_by,
        d.group_window_minutes,
    )
    .fetch_one(e)
    .await?)
}

/// Replaces a rule's fields if it is still at `expected_version`; `None` when it moved on.
/// The default rule keeps no conditions.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    d: &Draft<'_>,
) -> AppResult<Option<i32>> {
    sqlx::query_scalar!(
        r#"update routing_rules
           set name = $3, conditions = case when is_default then '[]'::jsonb else $4 end,
               service = $5, severity = $6, title_template = $7, team_id = $8,
               group_by = $9, group_window_minutes = $10, version = version + 1,
               updated_at = now()
           where id = $1 and version = $2
           returning version"#,
        id,
        expected_version,
        d.name,
        serde_json::json!(d.conditions),
        d.service,
        d.severity.map(|s| s.as_str()),
        d.title_template,
        d.team_id,
        d.group_by,
        d.group_window_minutes,
    )
    .fetch_optional(e)
    .await
    .map_err(AppError::Database)
}

pub async fn delete(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(sqlx::query!(
        "delete from routing_rules where id = $1 and not is_default",
        id
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Puts the rules in the order of `ids` (every rule but the default one, each once).
pub async fn reorder(e: impl PgExecutor<'_>, ids: &[i64]) -> AppResult<()> {
    sqlx::query!(
        r#"update routing_rules r set position = o.n * 10, updated_at = now()
           from unnest($1::int8[]) with ordinality as o(id, n)
           where r.id = o.id and not r.is_default"#,
        ids
    )
    .execute(e)
    .await?;
    Ok(())
}

/// What routing (and a silence) reads of a stored alert, as when it arrived firing.
pub fn subject_of(a: &crate::alert_store::db::Alert) -> domain::Subject<'_> {
    domain::Subject {
        labels: &a.labels,
        details: &a.details,
        summary: &a.summary,
        source: &a.source,
        severity: &a.severity,
        status: &a.status,
        integration: &a.integration,
        format: &a.integration_format,
        dedup_key: &a.dedup_key,
        group_key: &a.group_key,
    }
}
