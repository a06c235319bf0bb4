//! Aggregates of the response metrics.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool};

use super::domain::{GroupBy, Metric, Row};
use crate::error::AppResult;

/// Mean and median of `metric` per group, over the incidents that reached the metric's end, as
/// of the last refresh (`refreshed_at`).
pub async fn figures(
    e: impl PgExecutor<'_>,
    metric: Metric,
    group_by: GroupBy,
) -> AppResult<Vec<Row>> {
    let rows = sqlx::query!(
        r#"select grp as "grp!", incidents as "incidents!", mean_secs as "mean_secs!",
                  median_secs as "median_secs!"
           from report_figures where metric = $1 and group_by = $2
           order by grp"#,
        metric.as_str(),
        group_by.as_str()
    )
    .fetch_all(e)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Row {
            group: r.grp,
            incidents: r.incidents,
            mean_secs: r.mean_secs,
            median_secs: r.median_secs,
        })
        .collect())
}

/// When the report figures were last computed.
pub async fn refreshed_at(e: impl PgExecutor<'_>) -> AppResult<DateTime<Utc>> {
    Ok(
        sqlx::query_scalar!("select refreshed_at from report_refreshes")
            .fetch_one(e)
            .await?,
    )
}

/// Computes the report figures again if the incidents changed since the last time (their
/// number or their newest change), or `force`, or the last time is ten minutes old and any
/// incident changed in the ten minutes before it (a change committed late, stamped before the
/// newest one seen, is caught that way). One replica at a time: another that finds the lock
/// taken leaves it to the one holding it. Returns whether it refreshed.
pub async fn refresh(pool: &PgPool, force: bool) -> AppResult<bool> {
    let mut tx = crate::transaction::begin(pool).await?;
    let locked = sqlx::query_scalar!(
        r#"select pg_try_advisory_xact_lock(hashtext('quell report_figures')) as "locked!""#
    )
    .fetch_one(&mut *tx)
    .await?;
    if !locked {
        return Ok(false);
    }
    // What the incidents look like now, read once: compared with the last refresh's, and
    // recorded as what this refresh saw. Read before the refresh, a change committed while it
    // runs looks new at the next look instead of being recorded as seen and missed.
    let seen = sqlx::query!(
        r#"-- every incident: whether the figures (counts, which include restricted ones) are stale
           with now_ as (select count(*) as incidents, max(updated_at) as last_change from incidents)
           select n.incidents as "incidents!", n.last_change,
                  (r.incidents <> n.incidents
                   or r.last_change is distinct from n.last_change
                   or (r.refreshed_at < now() - interval '10 minutes'
                       and n.last_change > r.refreshed_at - interval '20 minutes')) as "stale!"
           from report_refreshes r, now_ n"#
    )
    .fetch_one(&mut *tx)
    .await?;
    if !(seen.stale || force) {
        return Ok(false);
    }
    sqlx::query!("refresh materialized view concurrently report_figures")
        .execute(&mut *tx)
        .await?;
    sqlx::query!(
        "update report_refreshes set refreshed_at = now(), incidents = $1, last_change = $2",
        seen.incidents,
        seen.last_change
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(true)
}
