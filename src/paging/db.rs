//! Queries on escalation policies, escalations, and acknowledge links.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::types::Json;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::domain::{PolicyDraft, Step};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};

/// A policy as stored, with the services that point at it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StoredPolicy {
    pub id: i64,
    pub name: String,
    #[serde(skip)]
    pub team_id: Option<i64>,
    /// The owning team's slug; none: the installation's
    pub team: Option<String>,
    #[schema(value_type = Vec<Step>)]
    pub steps: Json<Vec<Step>>,
    pub repeat: i32,
    pub version: i32,
    pub services: Vec<String>,
    pub updated_at: DateTime<Utc>,
}

impl StoredPolicy {
    pub fn draft(&self) -> PolicyDraft {
        PolicyDraft {
            name: self.name.clone(),
            team: self.team.clone().unwrap_or_default(),
            steps: self.steps.0.clone(),
            repeat: self.repeat.max(0) as u32,
        }
    }
}

fn taken(name: &str) -> impl FnOnce(sqlx::Error) -> AppError {
    AppError::on_unique(
        "escalation_policies_name_key",
        format!("An escalation policy named {name:?} exists."),
    )
}

pub async fn insert(
    e: impl PgExecutor<'_>,
    d: &PolicyDraft,
    team_id: Option<i64>,
) -> AppResult<i64> {
    sqlx::query_scalar!(
        "insert into escalation_policies (name, steps, repeat, team_id) values ($1, $2, $3, $4)
         returning id",
        d.name,
        Json(&d.steps) as _,
        d.repeat as i32,
        team_id
    )
    .fetch_one(e)
    .await
    .map_err(taken(&d.name))
}

/// Replaces policy `id` if it is still at `version`; `false` when it is not.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    version: i32,
    d: &PolicyDraft,
    team_id: Option<i64>,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        "update escalation_policies set name = $3, steps = $4, repeat = $5, team_id = $6,
                version = version + 1, updated_at = now()
         where id = $1 and version = $2",
        id,
        version,
        d.name,
        Json(&d.steps) as _,
        d.repeat as i32,
        team_id
    )
    .execute(e)
    .await
    .map_err(taken(&d.name))?
    .rows_affected()
        == 1)
}

pub async fn delete(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(
        sqlx::query!("delete from escalation_policies where id = $1", id)
            .execute(e)
            .await?
            .rows_affected()
            > 0,
    )
}

/// Every policy by name, or the one `id` names.
pub async fn list(e: impl PgExecutor<'_>, id: Option<i64>) -> AppResult<Vec<StoredPolicy>> {
    Ok(sqlx::query_as!(
        StoredPolicy,
        r#"select p.id, p.name, p.team_id, t.slug as "team?",
                  p.steps as "steps: Json<Vec<Step>>", p.repeat, p.version,
                  coalesce(array(select s.name from services s
                                 where s.escalation_policy_id = p.id order by s.name),
                           '{}') as "services!",
                  p.updated_at
           from escalation_policies p left join teams t on t.id = p.team_id
           where $1::bigint is null or p.id = $1 order by p.name"#,
        id
    )
    .fetch_all(e)
    .await?)
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<StoredPolicy> {
    AppError::the_one(list(e, Some(id)).await?, "escalation policy", id)
}

/// Points service `name` at policy `policy_id` (or at none); `false` when there is no such
/// service.
pub async fn assign(
    e: impl PgExecutor<'_>,
    service: &str,
    policy_id: Option<i64>,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        "update services set escalation_policy_id = $2, updated_at = now() where name = $1",
        service,
        policy_id
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Services and the policy each points at (none for some).
pub struct ServicePolicy {
    pub service: String,
    pub policy_id: Option<i64>,
}

pub async fn service_policies(e: impl PgExecutor<'_>) -> AppResult<Vec<ServicePolicy>> {
    Ok(sqlx::query_as!(
        ServicePolicy,
        "select name as service, escalation_policy_id as policy_id from services order by name"
    )
    .fetch_all(e)
    .await?)
}

/// A run that starts again (reopened, a snooze ended, reassigned) pages every step again: the
/// steps the last run fired are forgotten first.
async fn forget_steps(e: impl PgExecutor<'_>, incident_ids: &[i64]) -> AppResult<()> {
    sqlx::query!(
        "delete from escalation_steps where incident_id = any($1)",
        incident_ids
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Starts the escalation of each incident whose service points at a policy (again from its
/// first step, if one ran before), with a copy of the policy's steps, and wakes the
/// escalators when any started.
pub async fn start_for_services(
    conn: &mut PgConnection,
    incident_ids: &[i64],
    service_ids: &[i64],
) -> AppResult<()> {
    forget_steps(&mut *conn, incident_ids).await?;
    sqlx::query!(
        r#"with started as (
               insert into escalations (incident_id, policy_id, policy_name, steps, repeat, due_at)
               select k.i, p.id, p.name, p.steps, p.repeat, now()
               from unnest($1::int8[], $2::int8[]) as k(i, s)
               join services sv on sv.id = k.s
               join escalation_policies p on p.id = sv.escalation_policy_id
               order by k.i
               on conflict (incident_id) do update
               set policy_id = excluded.policy_id, policy_name = excluded.policy_name,
                   steps = excluded.steps, repeat = excluded.repeat, step = 0, round = 0,
                   state = 'pending', due_at = now(), started_at = now(), stopped_at = null,
                   updated_at = now()
               returning incident_id)
           select pg_notify('quell_paging', '') where exists (select from started)"#,
        incident_ids,
        service_ids,
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Runs the incident's escalation again from its first step with `steps` (named `name`, of
/// policy `policy_id` if it is one), replacing the one it had, and wakes the escalators.
pub async fn start_with(
    conn: &mut PgConnection,
    incident_id: i64,
    (policy_id, name): (Option<i64>, &str),
    steps: &[Step],
    repeat: i32,
) -> AppResult<()> {
    forget_steps(&mut *conn, &[incident_id]).await?;
    sqlx::query!(
        r#"with started as (
               insert into escalations (incident_id, policy_id, policy_name, steps, repeat, due_at)
               values ($1, $2, $3, $4, $5, now())
               on conflict (incident_id) do update
               set policy_id = excluded.policy_id, policy_name = excluded.policy_name,
                   steps = excluded.steps, repeat = excluded.repeat, step = 0, round = 0,
                   state = 'pending', due_at = now(), started_at = now(), stopped_at = null,
                   updated_at = now()
               returning incident_id)
           select pg_notify('quell_paging', '') from started"#,
        incident_id,
        policy_id,
        name,
        Json(steps) as Json<&[Step]>,
        repeat
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Makes a pending escalation's next step due now and wakes the engines; false when it was
/// not pending or is due already (pressed twice before an engine fired it).
pub async fn due_now(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"with due as (
               update escalations set due_at = now(), updated_at = now()
               where incident_id = $1 and state = 'pending' and due_at > now()
               returning incident_id)
           select pg_notify('quell_paging', '') is not null as "done!" from due"#,
        incident_id
    )
    .fetch_optional(e)
    .await?
    .is_some())
}

/// Stops a pending escalation; returns its policy's name when one was stopped.
pub async fn stop(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"update escalations set state = 'stopped', stopped_at = now(), updated_at = now()
           where incident_id = $1 and state = 'pending' returning policy_name"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// An escalation whose next step is due, locked for this transaction.
pub struct Due {
    pub incident_id: i64,
    pub policy_name: String,
    pub steps: Json<Vec<Step>>,
    pub repeat: i32,
    pub step: i32,
    pub round: i32,
    /// Seconds past its due time when claimed
    pub late_secs: f64,
}

/// Up to `limit` incidents whose escalation is due, soonest first; nothing is locked.
pub async fn due_incidents(e: impl PgExecutor<'_>, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select incident_id from escalations where state = 'pending' and due_at <= now()
           order by due_at limit $1"#,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Takes the due escalations of `incidents` (whose rows the caller has locked first); others'
/// engines skip them until this one commits.
pub async fn claim_due(e: impl PgExecutor<'_>, incidents: &[i64]) -> AppResult<Vec<Due>> {
    Ok(sqlx::query_as!(
        Due,
        r#"select incident_id, policy_name, steps as "steps: Json<Vec<Step>>", repeat, step, round,
                  -- late from its due time, or from its scheduling when that came after
                  extract(epoch from now() - greatest(due_at, updated_at))::float8
                      as "late_secs!"
           from escalations
           where state = 'pending' and due_at <= now() and incident_id = any($1)
           order by due_at for update skip locked"#,
        incidents
    )
    .fetch_all(e)
    .await?)
}

/// Records that step `step` of round `round` fired; `false` if it already had.
pub async fn log_step(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    round: i32,
    step: i32,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        r#"insert into escalation_steps (incident_id, round, step) values ($1, $2, $3)
           on conflict do nothing"#,
        incident_id,
        round,
        step
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Moves an escalation to its next step, due in `delay_minutes`, or ends it (`None`).
pub async fn advance(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    next: Option<(i32, i32)>,
    delay_minutes: i32,
) -> AppResult<()> {
    let (step, round) = next.unwrap_or((-1, -1));
    sqlx::query!(
        r#"update escalations
           set step = case when $2 >= 0 then $2 else step end,
               round = case when $3 >= 0 then $3 else round end,
               state = case when $2 >= 0 then 'pending' else 'done' end,
               due_at = case when $2 >= 0 then now() + make_interval(mins => $4) else due_at end,
               updated_at = now()
           where incident_id = $1"#,
        incident_id,
        step,
        round,
        delay_minutes
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Seconds until the earliest pending step, if any.
pub async fn next_due_in(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(due_at) - now())::float8
           from escalations where state = 'pending'"#
    )
    .fetch_one(e)
    .await?)
}

/// An incident's escalation, as its page shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Escalation {
    pub policy: String,
    /// pending, stopped or done
    pub state: String,
    /// The next step (1-based) while pending
    pub next_step: i32,
    pub steps: i32,
    pub round: i32,
    pub repeat: i32,
    pub due_at: DateTime<Utc>,
    pub started_at: DateTime<Utc>,
    pub stopped_at: Option<DateTime<Utc>>,
}

pub async fn escalation(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Option<Escalation>> {
    Ok(sqlx::query_as!(
        Escalation,
        r#"select policy_name as policy, state, step + 1 as "next_step!",
                  jsonb_array_length(steps) as "steps!", round, repeat, due_at, started_at,
                  stopped_at
           from escalations where incident_id = $1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// Stores link `nonce` to incident `incident_id` for `person_id`, accepting responder request
/// `request` (instead of acknowledging the incident) when given.
pub async fn insert_link(
    e: impl PgExecutor<'_>,
    (nonce, incident_id, request): (Uuid, i64, Option<i64>),
    person_id: i64,
    hours: i64,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into ack_links (nonce, incident_id, person_id, expires_at, request_id)
           values ($1, $2, $3, now() + make_interval(hours => $4::int), $5)"#,
        nonce,
        incident_id,
        person_id,
        hours as i32,
        request
    )
    .execute(e)
    .await?;
    Ok(())
}

/// An acknowledge link as stored, with its person.
pub struct Link {
    pub incident_id: i64,
    pub person_id: i64,
    /// The responder request it accepts; `None` for a link that acknowledges the incident
    pub request_id: Option<i64>,
    pub person: String,
    pub expired: bool,
    pub used_at: Option<DateTime<Utc>>,
}

/// The link `nonce`, locked until the transaction ends (so it is used at most once).
pub async fn link(e: impl PgExecutor<'_>, nonce: Uuid) -> AppResult<Option<Link>> {
    Ok(sqlx::query_as!(
        Link,
        r#"select l.incident_id, l.person_id, l.request_id, p.name as person,
                  l.expires_at <= now() as "expired!", l.used_at
           from ack_links l join people p on p.id = l.person_id
           where l.nonce = $1 for update of l"#,
        nonce
    )
    .fetch_optional(e)
    .await?)
}

pub async fn use_link(e: impl PgExecutor<'_>, nonce: Uuid) -> AppResult<()> {
    sqlx::query!(
        "update ack_links set used_at = now() where nonce = $1",
        nonce
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Ends the incident's unused acknowledge links (its page was handed to someone else); links
/// that accept a responder's request stay.
pub async fn expire_links(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update ack_links set expires_at = now()
           where incident_id = $1 and request_id is null and used_at is null
             and expires_at > now()"#,
        incident_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Forgets links expired a week ago.
pub async fn purge_links(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(
        sqlx::query!("delete from ack_links where expires_at < now() - interval '7 days'")
            .execute(e)
            .await?
            .rows_affected(),
    )
}

/// Writes the record of a page sent in the past (an import, the demo's history): the
/// escalation as it ended, its first step fired at `fired_at`, and the message delivered to
/// `method_id` a few seconds later.
pub struct PastPage<'a> {
    pub incident_id: i64,
    pub policy: &'a StoredPolicy,
    pub fired_at: DateTime<Utc>,
    pub stopped_at: DateTime<Utc>,
    pub person_id: i64,
    pub method_id: i64,
    pub payload: &'a serde_json::Value,
}

pub async fn record_past_page(conn: &mut PgConnection, p: &PastPage<'_>) -> AppResult<()> {
    sqlx::query!(
        r#"insert into escalations (incident_id, policy_id, policy_name, steps, repeat, step,
                                    round, state, due_at, started_at, stopped_at)
           values ($1, $2, $3, $4, $5, 1, 0, 'stopped', $6, $7, $8)
           on conflict (incident_id) do nothing"#,
        p.incident_id,
        p.policy.id,
        p.policy.name,
        Json(&p.policy.steps.0) as _,
        p.policy.repeat,
        p.fired_at
            + chrono::Duration::minutes(
                p.policy
                    .steps
                    .0
                    .first()
                    .map_or(0, |s| s.delay_minutes as i64)
            ),
        p.fired_at,
        p.stopped_at
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"insert into escalation_steps (incident_id, round, step, fired_at) values ($1, 0, 0, $2)
           on conflict do nothing"#,
        p.incident_id,
        p.fired_at
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"insert into notifications (contact_method_id, person_id, incident_id, event, payload,
                                      state, attempts, next_attempt_at, delivered_at, created_at)
           values ($1, $2, $3, 'incident.paged', $4, 'delivered', 1, $5::timestamptz,
                   $5::timestamptz + interval '2 seconds', $5::timestamptz)"#,
        p.method_id,
        p.person_id,
        p.incident_id,
        p.payload,
        p.fired_at
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// An incident the demo's history pages for: a service's incidents detected since `since`
/// whose escalation never fired a step, acknowledged, oldest first.
pub struct Unpaged {
    pub id: i64,
    pub key: IncidentKey,
    pub title: String,
    pub severity: String,
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: DateTime<Utc>,
}

pub async fn unpaged_since(
    e: impl PgExecutor<'_>,
    service: &str,
    since: DateTime<Utc>,
) -> AppResult<Vec<Unpaged>> {
    Ok(sqlx::query_as!(
        Unpaged,
        r#"select i.id, i.number as "key: IncidentKey", i.title, i.severity, i.detected_at,
                  i.acknowledged_at as "acknowledged_at!"
           -- every incident: the demo's history, written before anyone asks
           from incidents i join services s on s.id = i.service_id
           where s.name = $1 and i.detected_at >= $2 and i.acknowledged_at is not null
             and not exists (select 1 from escalation_steps st where st.incident_id = i.id)
           order by i.detected_at"#,
        service,
        since
    )
    .fetch_all(e)
    .await?)
}
