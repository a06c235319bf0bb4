//! What the dashboard reads beyond other capabilities' queries: your roles and claims, and the
//! figures of the last days (of every service, or of a team's).

use sqlx::PgExecutor;

use super::domain::Day;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

/// An open incident in which you hold a role or a claim.
#[derive(Debug, Clone)]
pub struct Mine {
    pub number: i64,
    pub title: String,
    pub severity: String,
    pub status: String,
    /// Your roles' names (`incident_commander`, …) and claims' subjects
    pub roles: Vec<String>,
    pub claims: Vec<String>,
}

pub async fn mine(e: impl PgExecutor<'_>, person_id: i64, sees: SeenBy) -> AppResult<Vec<Mine>> {
    Ok(sqlx::query_as!(
        Mine,
        r#"select i.number, i.title, i.severity, i.status,
                  coalesce(array(select r.role from incident_roles r
                                 where r.incident_id = i.id and r.person_id = $1
                                 order by r.role), '{}') as "roles!",
                  coalesce(array(select c.subject from incident_claims c
                                 where c.incident_id = i.id and c.person_id = $1
                                   and c.released_at is null and c.expires_at > now()
                                 order by c.claimed_at), '{}') as "claims!"
           from incidents i
           where i.status <> 'resolved'  -- incidents_open, however many are resolved
             and (exists (select 1 from incident_roles r
                          where r.incident_id = i.id and r.person_id = $1)
                  or exists (select 1 from incident_claims c
                             where c.incident_id = i.id and c.person_id = $1
                               and c.released_at is null and c.expires_at > now()))
             and incident_visible(i.restricted, i.id, $2)
           order by i.severity, i.detected_at desc"#,
        person_id,
        sees.sql()
    )
    .fetch_all(e)
    .await?)
}

/// The last `span` days (UTC, today included), oldest first, and the period's mean times to
/// acknowledge and resolve over its incidents — of the services `teams` own, or of all.
pub async fn last_days(
    e: impl PgExecutor<'_> + Copy,
    span: i32,
    teams: Option<&[i64]>,
) -> AppResult<(Vec<Day>, Option<f64>, Option<f64>)> {
    let days = sqlx::query!(
        r#"with days as (
             select generate_series((now() at time zone 'UTC')::date - ($1::int4 - 1),
                                    (now() at time zone 'UTC')::date, interval '1 day')::date as day),
           per_day as (
             select (detected_at at time zone 'UTC')::date as day, count(*) as opened,
                    avg(extract(epoch from acknowledged_at - detected_at))::float8 as ack_secs,
                    avg(extract(epoch from resolved_at - detected_at))::float8 as resolve_secs
             -- every incident: counts and means, which may include restricted incidents
             from incidents
             where detected_at >= ((now() at time zone 'UTC')::date - ($1::int4 - 1))::timestamp at time zone 'UTC'
               and ($2::int8[] is null
                    or service_id in (select s.id from services s where s.team_id = any($2)))
             group by 1)
           select d.day as "day!", coalesce(p.opened, 0) as "opened!", p.ack_secs, p.resolve_secs
           from days d left join per_day p on p.day = d.day
           order by d.day"#,
        span,
        teams
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| Day {
        day: r.day,
        opened: r.opened,
        ack_secs: r.ack_secs,
        resolve_secs: r.resolve_secs,
    })
    .collect();
    let period = sqlx::query!(
        r#"select avg(extract(epoch from acknowledged_at - detected_at))::float8 as ack_secs,
                  avg(extract(epoch from resolved_at - detected_at))::float8 as resolve_secs
           -- every incident: means, which may include restricted incidents
           from incidents
           where detected_at >= ((now() at time zone 'UTC')::date - ($1::int4 - 1))::timestamp at time zone 'UTC'
             and ($2::int8[] is null
                  or service_id in (select s.id from services s where s.team_id = any($2)))"#,
        span,
        teams
    )
    .fetch_one(e)
    .await?;
    Ok((days, period.ack_secs, period.resolve_secs))
}
