//! Queries on work-item trackers.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use super::domain::LinkRule;
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Tracker {
    pub id: i64,
    /// What a work item starts with before its number: `AB#`, `LIN-`, `JIRA-`
    pub prefix: String,
    pub name: String,
    /// An http(s) URL with `{n}` where the number goes
    pub url_template: String,
    pub updated_at: DateTime<Utc>,
}

pub async fn all(e: impl PgExecutor<'_>) -> AppResult<Vec<Tracker>> {
    Ok(sqlx::query_as!(
        Tracker,
        "select id, prefix, name, url_template, updated_at from work_item_trackers order by prefix"
    )
    .fetch_all(e)
    .await?)
}

/// The link rules, longest prefix first so `AB#` never shadows `ABC#`.
pub async fn rules(e: impl PgExecutor<'_>) -> AppResult<Vec<LinkRule>> {
    Ok(sqlx::query_as!(
        LinkRule,
        "select prefix, url_template from work_item_trackers order by length(prefix) desc, prefix"
    )
    .fetch_all(e)
    .await?)
}

fn taken(prefix: &str) -> impl FnOnce(sqlx::Error) -> AppError {
    AppError::on_unique(
        "work_item_trackers_prefix_key",
        format!("A tracker already uses the prefix {prefix:?}."),
    )
}

pub async fn insert(
    e: impl PgExecutor<'_>,
    prefix: &str,
    name: &str,
    url_template: &str,
) -> AppResult<Tracker> {
    sqlx::query_as!(
        Tracker,
        r#"insert into work_item_trackers (prefix, name, url_template) values ($1, $2, $3)
           returning id, prefix, name, url_template, updated_at"#,
        prefix,
        name,
        url_template
    )
    .fetch_one(e)
    .await
    .map_err(taken(prefix))
}

pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    prefix: &str,
    name: &str,
    url_template: &str,
) -> AppResult<Option<Tracker>> {
    sqlx::query_as!(
        Tracker,
        r#"update work_item_trackers set prefix = $2, name = $3, url_template = $4, updated_at = now()
           where id = $1 returning id, prefix, name, url_template, updated_at"#,
        id,
        prefix,
        name,
        url_template
    )
    .fetch_optional(e)
    .await
    .map_err(taken(prefix))
}

/// Removes a tracker; returns its prefix, `None` when there was none.
pub async fn delete(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        "delete from work_item_trackers where id = $1 returning prefix",
        id
    )
    .fetch_optional(e)
    .await?)
}
