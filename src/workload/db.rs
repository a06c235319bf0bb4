//! Queries of on-call load: the pages people received and the incidents they acknowledged
//! first, in a period.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use crate::error::AppResult;

/// Each page received from `from` to `to`: to whom and when its first message was delivered.
/// A page is one person's messages of one paging (one incident's step, or one request by
/// hand), however many contact methods it went to; one never delivered was not received.
pub async fn pages(
    e: impl PgExecutor<'_>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> AppResult<Vec<(i64, DateTime<Utc>)>> {
    Ok(sqlx::query!(
        r#"select person_id as "person_id!", min(delivered_at) as "at!"
           from notifications
           where event = 'incident.paged' and state = 'delivered' and person_id is not null
             and delivered_at >= $1 and delivered_at < $2
           group by person_id, incident_id, responder_request_id, created_at
           order by 2"#,
        from,
        to
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.person_id, r.at))
    .collect())
}

/// The incidents first acknowledged from `from` to `to` by a person (not an alert source):
/// who (the first acknowledgement in the audit log, which keeps who made each), when the
/// incident was detected, and when it was acknowledged — the incident's own time, which a
/// scribe may have entered after the fact, else the audit row's.
pub async fn first_acks(
    e: impl PgExecutor<'_>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> AppResult<Vec<(i64, DateTime<Utc>, DateTime<Utc>)>> {
    Ok(sqlx::query!(
        r#"select a.actor_id as "person_id!", i.detected_at,
                  coalesce(i.acknowledged_at, a.at) as "acknowledged_at!"
           from (select distinct on (target) target, actor_id, at
                 from audit_log
                 where action = 'incident.acknowledge' and outcome = 'ok'
                   and target ~ '^INC-[0-9]{1,15}$'
                 order by target, at, id) a
           join incidents i on i.number = substr(a.target, 5)::bigint
           where a.actor_id is not null
             and coalesce(i.acknowledged_at, a.at) >= $1 and coalesce(i.acknowledged_at, a.at) < $2
           order by 3"#,
        from,
        to
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.person_id, r.detected_at, r.acknowledged_at))
    .collect())
}
