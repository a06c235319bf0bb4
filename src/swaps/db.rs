//! Shift swaps as stored, with the people's handles and names.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;

use crate::error::AppResult;

/// A swap with who offered it, to whom, and who took it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Swap {
    pub id: i64,
    pub schedule_id: i64,
    /// The offerer's handle and name
    pub offered_by: String,
    pub offered_by_name: String,
    /// The person asked to take it (a handle); null: anyone who can
    pub offered_to: Option<String>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub message: String,
    /// offered, taken or withdrawn
    pub state: String,
    /// Who took it (a handle), and when
    pub taken_by: Option<String>,
    pub taken_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

pub struct NewSwap<'a> {
    pub schedule_id: i64,
    pub offered_by: i64,
    pub offered_to: Option<i64>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub message: &'a str,
}

pub async fn insert(e: impl PgExecutor<'_>, s: &NewSwap<'_>) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into shift_swaps (schedule_id, offered_by, offered_to, starts_at, ends_at, message)
           values ($1, $2, $3, $4, $5, $6) returning id"#,
        s.schedule_id,
        s.offered_by,
        s.offered_to,
        s.from,
        s.to,
        s.message
    )
    .fetch_one(e)
    .await?)
}

/// The swaps of a schedule (one, with `id`), open ones first, then the newest; `lock` takes
/// them for this transaction.
pub async fn list(
    e: impl PgExecutor<'_>,
    schedule_id: i64,
    id: Option<i64>,
) -> AppResult<Vec<Swap>> {
    Ok(sqlx::query_as!(
        Swap,
        r#"select w.id, w.schedule_id, o.handle as offered_by, o.name as offered_by_name,
                  t.handle as "offered_to?", w.starts_at as "from", w.ends_at as "to", w.message,
                  w.state, k.handle as "taken_by?", w.taken_at, w.created_at
           from shift_swaps w
           join people o on o.id = w.offered_by
           left join people t on t.id = w.offered_to
           left join people k on k.id = w.taken_by
           where w.schedule_id = $1 and ($2::int8 is null or w.id = $2)
           order by w.state <> 'offered', w.starts_at desc, w.id desc
           limit 200"#,
        schedule_id,
        id
    )
    .fetch_all(e)
    .await?)
}

/// Swap `id` of the schedule, locked until the transaction ends: (state, offerer id, the
/// person asked, from, to).
pub struct Locked {
    pub state: String,
    pub offered_by: i64,
    pub offered_to: Option<i64>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

pub async fn lock(e: impl PgExecutor<'_>, schedule_id: i64, id: i64) -> AppResult<Option<Locked>> {
    Ok(sqlx::query_as!(
        Locked,
        r#"select state, offered_by, offered_to, starts_at as "from", ends_at as "to"
           from shift_swaps where id = $1 and schedule_id = $2 for update"#,
        id,
        schedule_id
    )
    .fetch_optional(e)
    .await?)
}

pub async fn taken(e: impl PgExecutor<'_>, id: i64, by: i64) -> AppResult<()> {
    sqlx::query!(
        "update shift_swaps set state = 'taken', taken_by = $2, taken_at = now() where id = $1",
        id,
        by
    )
    .execute(e)
    .await?;
    Ok(())
}

pub async fn withdrawn(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        "update shift_swaps set state = 'withdrawn' where id = $1",
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Withdraws the open offers of `offered_by` in the schedule that overlap `from`..`to` (hours
/// a swap just handed over).
pub async fn withdraw_overlapping(
    e: impl PgExecutor<'_>,
    (schedule_id, offered_by): (i64, i64),
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update shift_swaps set state = 'withdrawn'
           where schedule_id = $1 and offered_by = $2 and state = 'offered'
             and starts_at < $4 and $3 < ends_at"#,
        schedule_id,
        offered_by,
        from,
        to
    )
    .execute(e)
    .await?
    .rows_affected())
}
