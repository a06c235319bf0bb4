//! Responder requests, the people each paged and their answers, and the messages sent for them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::types::Json;
use sqlx::{PgConnection, PgExecutor};

use crate::error::AppResult;
use crate::paging::domain::Step;

/// One message sent for a request, as the outbox has it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Message {
    #[serde(skip)]
    pub request_id: i64,
    #[serde(skip)]
    pub person_id: i64,
    /// The contact method's label and kind
    pub method: String,
    pub kind: String,
    /// pending, delivered, failed or cancelled (called off: accepted, or the incident resolved)
    pub state: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// When it is (or was) due
    pub due_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A person a request paged, and their answer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Responder {
    #[serde(skip)]
    pub request_id: i64,
    pub person_id: i64,
    pub name: String,
    pub handle: String,
    /// The policy step (1-based) that paged them, for a policy
    pub step: Option<i32>,
    /// The schedule that had them on call, when one put them there
    pub via_schedule: Option<String>,
    pub paged_at: DateTime<Utc>,
    /// When they accepted (null: not yet)
    pub accepted_at: Option<DateTime<Utc>>,
    /// Each message sent to them for this request, with its delivery state
    pub messages: Vec<Message>,
}

/// A responder request with who it paged.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Request {
    pub id: i64,
    /// person, schedule or policy
    pub target_kind: String,
    /// The handle, schedule or policy asked for
    pub target: String,
    pub message: String,
    pub requested_by: String,
    pub requested_at: DateTime<Utc>,
    /// For a policy: its next step to page (1-based) and how many it has; null once every step
    /// has paged
    pub next_step: Option<i32>,
    pub steps: Option<i32>,
    /// When that next step pages unless someone accepts first
    pub due_at: Option<DateTime<Utc>>,
    /// pending (waiting for an answer), answered (someone accepted) or ended (nobody could be
    /// paged, or the incident was resolved)
    pub state: String,
    pub ended_at: Option<DateTime<Utc>>,
    pub ended_why: Option<String>,
    pub people: Vec<Responder>,
}

/// A request as asked, before anyone is paged.
pub struct NewRequest<'a> {
    pub incident_id: i64,
    pub target_kind: &'a str,
    pub target: &'a str,
    pub message: &'a str,
    pub requested_by: &'a str,
    /// A policy's name and steps as they are now
    pub policy: Option<(&'a str, &'a [Step])>,
}

pub async fn insert(e: impl PgExecutor<'_>, r: &NewRequest<'_>) -> AppResult<i64> {
    let (policy_name, steps) = match r.policy {
        Some((name, steps)) => (Some(name), Some(Json(steps))),
        None => (None, None),
    };
    Ok(sqlx::query_scalar!(
        r#"insert into responder_requests (incident_id, target_kind, target, message, requested_by,
                                           policy_name, steps)
           values ($1, $2, $3, $4, $5, $6, $7) returning id"#,
        r.incident_id,
        r.target_kind,
        r.target,
        r.message,
        r.requested_by,
        policy_name,
        steps as Option<Json<&[Step]>>
    )
    .fetch_one(e)
    .await?)
}

/// Records the people a round of pages reached (each once per request).
pub async fn add_pages(
    e: impl PgExecutor<'_>,
    request_id: i64,
    people: &[(i64, Option<String>)],
    step: Option<i32>,
) -> AppResult<()> {
    let (ids, schedules): (Vec<i64>, Vec<Option<String>>) = people.iter().cloned().unzip();
    sqlx::query!(
        r#"insert into responder_pages (request_id, person_id, step, via_schedule)
           select $1, p, $3, s from unnest($2::int8[], $4::text[]) as k(p, s)
           on conflict do nothing"#,
        request_id,
        &ids,
        step,
        &schedules as &[Option<String>]
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A policy request's next step (0-based) and when it is due (`None`: every step has paged;
/// the engines are woken when one is due).
pub async fn set_next(
    e: impl PgExecutor<'_>,
    id: i64,
    next: Option<(usize, i64)>,
) -> AppResult<()> {
    let (step, minutes) = match next {
        Some((s, m)) => (s as i32, Some(m as i32)),
        None => (0, None),
    };
    sqlx::query!(
        r#"with set as (
               update responder_requests
               set next_step = case when $3::int is null then coalesce(jsonb_array_length(steps), 0)
                                    else $2 end,
                   due_at = now() + make_interval(mins => $3)
               where id = $1 returning due_at)
           select pg_notify('quell_responders', '') from set where due_at is not null"#,
        id,
        step,
        minutes
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Ends requests still waiting because `why`; returns those ended.
pub async fn end(e: impl PgExecutor<'_>, ids: &[i64], why: &str) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"update responder_requests
           set state = 'ended', ended_at = now(), ended_why = $2, due_at = null
           where id = any($1) and state = 'pending' returning id"#,
        ids,
        why
    )
    .fetch_all(e)
    .await?)
}

/// The requests of an incident still waiting for an answer.
pub async fn waiting(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        "select id from responder_requests where incident_id = $1 and state = 'pending'",
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// A request locked for an answer, with what the timeline says of it.
pub struct Locked {
    pub id: i64,
    pub state: String,
    pub target_kind: String,
    pub target: String,
    pub requested_by: String,
}

/// Request `id` of incident `incident_id`, locked until the transaction ends.
pub async fn lock(e: impl PgExecutor<'_>, incident_id: i64, id: i64) -> AppResult<Option<Locked>> {
    Ok(sqlx::query_as!(
        Locked,
        r#"select id, state, target_kind, target, requested_by from responder_requests
           where id = $1 and incident_id = $2 for update"#,
        id,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// Whether the request has paged anyone at all.
pub async fn paged_anyone(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select exists (select 1 from responder_pages where request_id = $1) as "any!""#,
        id
    )
    .fetch_one(e)
    .await?)
}

/// Whether the request paged `person_id`, and when they accepted if they have.
pub async fn page_of(
    e: impl PgExecutor<'_>,
    id: i64,
    person_id: i64,
) -> AppResult<Option<Option<DateTime<Utc>>>> {
    Ok(sqlx::query_scalar!(
        "select accepted_at from responder_pages where request_id = $1 and person_id = $2",
        id,
        person_id
    )
    .fetch_optional(e)
    .await?)
}

/// `person_id` accepts request `id`: their answer is kept, and the request is answered.
pub async fn accept(e: &mut PgConnection, id: i64, person_id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"with page as (
               update responder_pages set accepted_at = now()
               where request_id = $1 and person_id = $2 and accepted_at is null)
           update responder_requests set state = 'answered', due_at = null
           where id = $1 and state <> 'answered'"#,
        id,
        person_id
    )
    .execute(&mut *e)
    .await?;
    Ok(())
}

/// An incident's requests, newest first, with who each paged and the messages sent to them.
pub async fn for_incident(conn: &mut PgConnection, incident_id: i64) -> AppResult<Vec<Request>> {
    let rows = sqlx::query!(
        r#"select id, target_kind, target, message, requested_by, requested_at,
                  case when steps is not null and next_step < jsonb_array_length(steps)
                       then next_step + 1 end as next_step,
                  jsonb_array_length(steps) as steps, due_at, state, ended_at, ended_why
           from responder_requests where incident_id = $1 order by id desc"#,
        incident_id
    )
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let paged = sqlx::query!(
        r#"select r.request_id, r.person_id, p.name, p.handle, r.step, r.via_schedule, r.paged_at,
                  r.accepted_at
           from responder_pages r join people p on p.id = r.person_id
           where r.request_id = any($1) order by r.paged_at, p.name"#,
        &ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let messages = sqlx::query_as!(
        Message,
        r#"select n.responder_request_id as "request_id!", n.person_id as "person_id!",
                  m.label as method, m.kind, n.state, n.attempts, n.last_error,
                  n.next_attempt_at as due_at, n.delivered_at
           from notifications n join contact_methods m on m.id = n.contact_method_id
           where n.responder_request_id = any($1) and n.person_id is not null
           order by n.next_attempt_at, n.id"#,
        &ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut people: Vec<Responder> = paged
        .into_iter()
        .map(|p| Responder {
            request_id: p.request_id,
            person_id: p.person_id,
            name: p.name,
            handle: p.handle,
            step: p.step,
            via_schedule: p.via_schedule,
            paged_at: p.paged_at,
            accepted_at: p.accepted_at,
            messages: vec![],
        })
        .collect();
    let mut requests: Vec<Request> = rows
        .into_iter()
        .map(|r| Request {
            id: r.id,
            target_kind: r.target_kind,
            target: r.target,
            message: r.message,
            requested_by: r.requested_by,
            requested_at: r.requested_at,
            next_step: r.next_step,
            steps: r.steps,
            due_at: r.due_at,
            state: r.state,
            ended_at: r.ended_at,
            ended_why: r.ended_why,
            people: vec![],
        })
        .collect();
    for p in &mut people {
        p.messages = messages
            .iter()
            .filter(|m| m.request_id == p.request_id && m.person_id == p.person_id)
            .cloned()
            .collect();
    }
    for r in &mut requests {
        r.people = people
            .iter()
            .filter(|p| p.request_id == r.id)
            .cloned()
            .collect();
    }
    Ok(requests)
}

/// A policy request whose next step is due, locked for this transaction.
pub struct Due {
    pub id: i64,
    pub incident_id: i64,
    pub policy_name: String,
    pub steps: Json<Vec<Step>>,
    pub next_step: i32,
    pub requested_by: String,
    pub message: String,
}

/// Up to `limit` incidents with a policy request due, soonest first; nothing is locked.
pub async fn due_incidents(e: impl PgExecutor<'_>, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select incident_id from responder_requests
           where state = 'pending' and due_at <= now() order by due_at limit $1"#,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Takes the due requests of `incidents` (whose rows the caller has locked first); another
/// engine skips them until this one commits.
pub async fn claim_due(e: impl PgExecutor<'_>, incidents: &[i64]) -> AppResult<Vec<Due>> {
    Ok(sqlx::query_as!(
        Due,
        r#"select id, incident_id, policy_name as "policy_name!",
                  steps as "steps!: Json<Vec<Step>>", next_step, requested_by, message
           from responder_requests
           where state = 'pending' and due_at <= now() and incident_id = any($1)
           order by due_at for update skip locked"#,
        incidents
    )
    .fetch_all(e)
    .await?)
}

/// Seconds until the next policy request step is due, if any.
pub async fn next_due_in(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(due_at) - now())::float8 from responder_requests
           where state = 'pending' and due_at is not null"#
    )
    .fetch_one(e)
    .await?)
}
