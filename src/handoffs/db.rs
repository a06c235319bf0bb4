//! Queries of hand-off notices: the open incidents a schedule's people should hear about, and
//! the claim that makes each notice once.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use super::domain::{Kind, Open, OpenIncident};
use crate::domain::IncidentKey;
use crate::error::AppResult;

/// The open incidents of the services whose escalation policies page schedule `schedule`,
/// those `viewer` may see: the worst `limit` first, and how many there are.
pub async fn open_incidents(
    e: impl PgExecutor<'_>,
    schedule: &str,
    viewer: i64,
    limit: i64,
) -> AppResult<Open> {
    let rows = sqlx::query!(
        r#"select i.number as "key!: IncidentKey", i.title, i.severity, i.status,
                  s.name as service, count(*) over () as "total!"
           from incidents i
           join services s on s.id = i.service_id
           join escalation_policies p on p.id = s.escalation_policy_id
           where i.status <> 'resolved'
             and exists (select 1 from jsonb_array_elements(p.steps) step,
                                       jsonb_array_elements(step -> 'targets') target
                         where target ->> 'schedule' = $1)
             and incident_visible(i.restricted, i.id, $2)
           order by i.severity, i.number
           limit $3"#,
        schedule,
        viewer,
        limit
    )
    .fetch_all(e)
    .await?;
    Ok(Open {
        total: rows.first().map_or(0, |r| r.total),
        listed: rows
            .into_iter()
            .map(|r| OpenIncident {
                key: r.key.to_string(),
                title: r.title,
                severity: r.severity,
                status: r.status,
                service: r.service,
            })
            .collect(),
    })
}

/// Claims notice `kind` of the hand-off at `at` in schedule `schedule_id` for `person_id`:
/// true for the one replica whose claim is new, which sends it in the same transaction.
pub async fn claim(
    e: impl PgExecutor<'_>,
    schedule_id: i64,
    at: DateTime<Utc>,
    person_id: i64,
    kind: Kind,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        r#"insert into handoff_notices (schedule_id, at, person_id, kind)
           values ($1, $2, $3, $4)
           on conflict do nothing"#,
        schedule_id,
        at,
        person_id,
        kind.as_str()
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Records how many messages a claimed notice queued.
pub async fn sent(
    e: impl PgExecutor<'_>,
    (schedule_id, at, person_id): (i64, DateTime<Utc>, i64),
    kind: Kind,
    messages: i64,
) -> AppResult<()> {
    sqlx::query!(
        r#"update handoff_notices set messages = $5
           where schedule_id = $1 and at = $2 and person_id = $3 and kind = $4"#,
        schedule_id,
        at,
        person_id,
        kind.as_str(),
        messages as i32
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Forgets notices whose hand-off is over a month past: a claim matters only while its notice
/// may still be due (the grace after a hand-off). How many went.
pub async fn purge_old(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(
        sqlx::query!("delete from handoff_notices where at < now() - interval '30 days'")
            .execute(e)
            .await?
            .rows_affected(),
    )
}
