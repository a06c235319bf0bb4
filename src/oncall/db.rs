//! Queries on schedules.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use sqlx::types::Json;

use super::domain::{LayerDoc, OverrideDoc, ScheduleDraft};
use crate::error::{AppError, AppResult};

/// A schedule as stored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StoredSchedule {
    pub id: i64,
    pub name: String,
    #[serde(skip)]
    pub team_id: Option<i64>,
    /// The owning team's slug; none: the installation's
    pub team: Option<String>,
    #[schema(value_type = Vec<LayerDoc>)]
    pub layers: Json<Vec<LayerDoc>>,
    #[schema(value_type = Vec<OverrideDoc>)]
    pub overrides: Json<Vec<OverrideDoc>>,
    pub version: i32,
    pub updated_at: DateTime<Utc>,
}

impl StoredSchedule {
    pub fn draft(&self) -> ScheduleDraft {
        ScheduleDraft {
            name: self.name.clone(),
            team: self.team.clone().unwrap_or_default(),
            layers: self.layers.0.clone(),
            overrides: self.overrides.0.clone(),
        }
    }
}

fn taken(name: &str) -> impl FnOnce(sqlx::Error) -> AppError {
    AppError::on_unique(
        "schedules_name_key",
        format!("A schedule named {name:?} exists."),
    )
}

pub async fn insert(
    e: impl PgExecutor<'_>,
    d: &ScheduleDraft,
    team_id: Option<i64>,
) -> AppResult<i64> {
    sqlx::query_scalar!(
        "insert into schedules (name, layers, overrides, team_id) values ($1, $2, $3, $4)
         returning id",
        d.name.trim(),
        Json(&d.layers) as _,
        Json(&d.overrides) as _,
        team_id
    )
    .fetch_one(e)
    .await
    .map_err(taken(&d.name))
}

/// Replaces schedule `id` if it is still at `version`; `false` when it is not.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    version: i32,
    d: &ScheduleDraft,
    team_id: Option<i64>,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        "update schedules set name = $3, layers = $4, overrides = $5, team_id = $6,
                version = version + 1, updated_at = now()
         where id = $1 and version = $2",
        id,
        version,
        d.name.trim(),
        Json(&d.layers) as _,
        Json(&d.overrides) as _,
        team_id
    )
    .execute(e)
    .await
    .map_err(taken(&d.name))?
    .rows_affected()
        == 1)
}

/// Every schedule by name, or the one `id` names.
pub async fn list(e: impl PgExecutor<'_>, id: Option<i64>) -> AppResult<Vec<StoredSchedule>> {
    Ok(sqlx::query_as!(
        StoredSchedule,
        r#"select s.id, s.name, s.team_id, t.slug as "team?",
                  s.layers as "layers: Json<Vec<LayerDoc>>",
                  s.overrides as "overrides: Json<Vec<OverrideDoc>>", s.version, s.updated_at
           from schedules s left join teams t on t.id = s.team_id
           where $1::bigint is null or s.id = $1 order by s.name"#,
        id
    )
    .fetch_all(e)
    .await?)
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<StoredSchedule> {
    AppError::the_one(list(e, Some(id)).await?, "schedule", id)
}

/// Locks schedule `id` until the transaction ends (a change built on what it holds now).
pub async fn lock(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!("select id from schedules where id = $1 for update", id)
        .fetch_optional(e)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no schedule {id}.")))?;
    Ok(())
}

/// Stores the hash of a fresh feed token for `person_id` unless they have a feed already (or
/// `reset` replaces it); whether the fresh one is now theirs.
pub async fn make_feed(
    e: impl PgExecutor<'_>,
    person_id: i64,
    fresh_hash: &[u8],
    reset: bool,
) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"insert into oncall_feeds (person_id, token_hash) values ($1, $2)
           on conflict (person_id) do update
           set token_hash = case when $3 then excluded.token_hash else oncall_feeds.token_hash end,
               created_at = case when $3 then now() else oncall_feeds.created_at end
           returning token_hash = $2 as "made!""#,
        person_id,
        fresh_hash,
        reset
    )
    .fetch_one(e)
    .await?)
}

/// When `person_id` made their calendar feed, if they did.
pub async fn feed_made_at(
    e: impl PgExecutor<'_>,
    person_id: i64,
) -> AppResult<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        "select created_at from oncall_feeds where person_id = $1",
        person_id
    )
    .fetch_optional(e)
    .await?)
}

/// The handle whose feed `token_hash` is, while their account is enabled.
pub async fn feed_owner(e: impl PgExecutor<'_>, token_hash: &[u8]) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"select p.handle from oncall_feeds f join people p on p.id = f.person_id
           where f.token_hash = $1 and p.disabled_at is null"#,
        token_hash
    )
    .fetch_optional(e)
    .await?)
}
