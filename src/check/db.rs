//! The checks' queries: each returns the rows that break its rule, said in a few words.

use sqlx::PgExecutor;

use crate::error::AppResult;

/// The migrations the database holds: (version, checksum, whether it succeeded); none when
/// it holds no migration table at all.
pub async fn applied(e: impl PgExecutor<'_> + Copy) -> AppResult<Vec<(i64, Vec<u8>, bool)>> {
    let exists: bool =
        sqlx::query_scalar!(r#"select to_regclass('_sqlx_migrations') is not null as "e!""#)
            .fetch_one(e)
            .await?;
    if !exists {
        return Ok(Vec::new());
    }
    Ok(
        sqlx::query!("select version, checksum, success from _sqlx_migrations order by version")
            .fetch_all(e)
            .await?
            .into_iter()
            .map(|r| (r.version, r.checksum, r.success))
            .collect(),
    )
}

/// Alert groups open more than once for one key of one integration.
pub async fn groups_open_twice(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select format('integration %s, group %s: %s open', integration_id, group_key, count(*))
                  as "line!"
           from alert_groups where closed_at is null
           group by integration_id, group_key having count(*) > 1
           order by 1"#
    )
    .fetch_all(e)
    .await?)
}

/// Deadlines with more than one pending timer, and pending timers or escalations of
/// incidents already resolved (they would fire for nothing).
pub async fn timers_not_once(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: a check of the whole database
           select line as "line!" from (
               select format('incident %s: %s pending %s timers', incident_id, count(*), kind) as line
               from sla_timers where state = 'pending'
               group by incident_id, kind having count(*) > 1
               union all
               select format('INC-%s is resolved but its %s timer is pending', i.number, t.kind)
               from sla_timers t join incidents i on i.id = t.incident_id
               where t.state = 'pending' and i.status = 'resolved'
               union all
               select format('INC-%s is resolved but its escalation is pending', i.number)
               from escalations e join incidents i on i.id = e.incident_id
               where e.state = 'pending' and i.status = 'resolved') t
           order by 1"#
    )
    .fetch_all(e)
    .await?)
}

/// People whose credit balance is not the sum of their ledger's entries.
pub async fn ledger_off(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select format('person %s: balance %s, ledger sums to %s', b.person_id, b.balance,
                         coalesce(s.total, 0)) as "line!"
           from credit_balances b
           left join (select person_id, sum(amount) as total from credit_entries
                      group by person_id) s on s.person_id = b.person_id
           where b.balance <> coalesce(s.total, 0)
           order by b.person_id"#
    )
    .fetch_all(e)
    .await?)
}

/// Action item counts (kept by triggers) that differ from the items.
pub async fn item_counts_off(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select format('%s %s: counted %s, %s items', coalesce(a.type, c.type),
                         coalesce(a.status, c.status), coalesce(c.n, 0), coalesce(a.n, 0))
                  as "line!"
           from (select type, status, count(*) as n from action_items group by type, status) a
           full join action_item_counts c on c.type = a.type and c.status = a.status
           where coalesce(a.n, 0) <> coalesce(c.n, 0)
           order by 1"#
    )
    .fetch_all(e)
    .await?)
}

/// Incidents whose alert lines (kept as alerts arrive) count other than their stored alerts and
/// those of months let go (`forgotten_alert_lines`).
pub async fn lines_off(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: a check of the whole database
           select format('INC-%s: lines count %s alerts, %s stored', i.number,
                         coalesce(l.total, 0), coalesce(a.n, 0)) as "line!"
           from incidents i
           left join (select incident_id, sum(total) as total from alert_lines
                      group by incident_id) l on l.incident_id = i.id
           left join (select incident_id, sum(n) as n
                      from (select incident_id, count(*) as n from alerts group by incident_id
                            union all
                            select incident_id, sum(total) from forgotten_alert_lines
                            group by incident_id) x
                      group by incident_id) a
                  on a.incident_id = i.id
           where coalesce(l.total, 0) <> coalesce(a.n, 0)
           order by i.number"#
    )
    .fetch_all(e)
    .await?)
}

/// This month's and next month's alert partitions, where missing: a resolved alert has nowhere
/// to go without them (every replica's engine creates three months ahead).
pub async fn months_missing(e: impl PgExecutor<'_>) -> AppResult<Vec<String>> {
    Ok(sqlx::query_scalar!(
        r#"select format('no partition %s', m) as "missing!"
           from (select format('alerts_%s', to_char(now() at time zone 'UTC'
                                                    + make_interval(months => k), 'YYYY_MM')) as m
                 from generate_series(0, 1) k) x
           where to_regclass(m) is null
           order by m"#
    )
    .fetch_all(e)
    .await?)
}
