//! Queries of on-call load: the pages people received and the incidents they acknowledged
//! first, in a period.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use crate::error::AppResult;

/// Each page received from `from` to `to`: to whom and when its first message was delivered.
/// A page is one person's messages of one paging (one incident's step, or one request by
/// hand), however many contact methods it went to; one never delivered was not received. A
/// page whose first message came before `from` is not this period's, however late its others
/// (a rule waits at most a day).
pub async fn pages(
    e: impl PgExecutor<'_>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> AppResult<Vec<(i64, DateTime<Utc>)>> {
    Ok(sqlx::query!(
        r#"select person_id as "person_id!", min(delivered_at) as "at!"
           from notifications
           where event = 'incident.paged' and state = 'delivered' and person_id is not null
             and delivered_at >= $1::timestamptz - interval '1 day' and delivered_at < $2
           group by person_id, incident_id, responder_request_id, created_at
           having min(delivered_at) >= $1
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

/// The incidents acknowledged from `from` to `to` by a person (not an alert source): who —
/// the first to take it out of triggered, by acknowledging, mitigating or resolving it (the
/// audit log keeps who made each) — when the incident was detected, and when it was
/// acknowledged: the incident's own time, which a scribe may have entered after the fact. An
/// audit row is never earlier than the time it records, so rows before `from` are not read.
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
                 where action in ('incident.acknowledge', 'incident.mitigate', 'incident.resolve')
                   and outcome = 'ok' and at >= $1
                   and target ~ '^INC-[0-9]{1,15}$'
                 order by target, at, id) a
           -- every incident: counted for who acknowledged it, never named
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
