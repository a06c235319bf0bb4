//! Alerts as Opsgenie's Alert API names and shows them: one alert of an integration by its
//! number (Opsgenie's `id` and `tinyId`) or its alias (the dedup key), and the requests the API
//! answered 202 to, whose outcome a client reads back (`opsgenie_requests`).

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::error::AppResult;

/// How a call names an alert.
#[derive(Debug, Clone, Copy)]
pub enum NamedAlert<'a> {
    /// Quell's alert number, which is Opsgenie's `id` and `tinyId` alike
    Number(i64),
    /// The dedup key
    Alias(&'a str),
}

/// One alert of an integration, with what Opsgenie's API shows of it.
#[derive(Debug, Clone)]
pub struct OpsgenieAlert {
    pub id: i64,
    pub integration_id: Uuid,
    pub integration_name: String,
    pub incident_id: i64,
    pub dedup_key: String,
    pub status: String,
    pub summary: String,
    pub source: String,
    pub labels: Value,
    pub details: Value,
    pub raw: Value,
    pub received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
    pub deliveries: i32,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Until when its incident is snoozed, while it is
    pub snoozed_until: Option<DateTime<Utc>>,
}

/// The alert `named` of integration `integration_id`; by alias, the open one, else the latest.
/// Another integration's alerts are never found.
pub async fn opsgenie_alert(
    conn: &mut PgConnection,
    integration_id: Uuid,
    named: NamedAlert<'_>,
) -> AppResult<Option<OpsgenieAlert>> {
    let number = match named {
        NamedAlert::Number(n) => n,
        NamedAlert::Alias(alias) => {
            let found = sqlx::query_scalar!(
                r#"select coalesce(
                       (select id from alerts where integration_id = $1 and dedup_key = $2
                          and status <> 'resolved' and retained_from = 'infinity'),
                       (select id from alerts where integration_id = $1 and dedup_key = $2
                        order by received_at desc, id desc limit 1)) as "id?""#,
                integration_id,
                alias
            )
            .fetch_one(&mut *conn)
            .await?;
            match found {
                Some(id) => id,
                None => return Ok(None),
            }
        }
    };
    Ok(sqlx::query_as!(
        OpsgenieAlert,
        r#"select a.id, a.integration_id, i.name as integration_name, a.incident_id, a.dedup_key,
                  a.status, a.summary, a.source, a.labels, a.details, a.raw, a.received_at,
                  a.last_received_at, a.deliveries, a.resolved_at,
                  (select s.until from incident_snoozes s
                   where s.incident_id = a.incident_id and s.ended_at is null
                     and s.until > now()) as snoozed_until
           from alerts a join integrations i on i.id = a.integration_id
           where a.id = $1 and a.integration_id = $2"#,
        number,
        integration_id
    )
    .fetch_optional(conn)
    .await?)
}

/// What became of one request the API answered 202 to.
#[derive(Debug, Clone)]
pub struct OpsgenieRequest {
    pub request_id: Uuid,
    pub integration_id: Uuid,
    /// Opsgenie's word: Create, Acknowledge, Close, AddNote, Snooze
    pub action: String,
    pub alias: String,
    pub alert_id: Option<i64>,
    pub success: bool,
    pub status: String,
    pub processed_at: DateTime<Utc>,
}

/// A request to record: the alert is looked up by alias when `alert_id` is `None`.
#[derive(Debug, Clone)]
pub struct NewRequest<'a> {
    pub request_id: Uuid,
    pub integration_id: Uuid,
    pub action: &'a str,
    pub alias: &'a str,
}

/// The alert each request names by alias as it stands now (the open one, else the latest), as
/// `(alert number, status)`, in the order given.
pub async fn alerts_by_alias(
    conn: &mut PgConnection,
    requests: &[NewRequest<'_>],
) -> AppResult<Vec<Option<(i64, String)>>> {
    let integrations: Vec<Uuid> = requests.iter().map(|r| r.integration_id).collect();
    let aliases: Vec<&str> = requests.iter().map(|r| r.alias).collect();
    let rows = sqlx::query!(
        r#"select r.n as "n!", a.id as "id?", a.status as "status?"
           from unnest($1::uuid[], $2::text[]) with ordinality as r(integration_id, alias, n)
           left join lateral (
               (select id, status from alerts
                where integration_id = r.integration_id and dedup_key = r.alias
                  and status <> 'resolved' and retained_from = 'infinity')
               union all
               (select id, status from alerts
                where integration_id = r.integration_id and dedup_key = r.alias
                order by received_at desc, id desc limit 1)
               limit 1) a on true
           order by r.n"#,
        &integrations,
        &aliases as &[&str]
    )
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.id.zip(r.status)).collect())
}

/// Records what became of requests, each with its alert (if any), success and status line.
/// A request id seen before keeps its first record.
pub async fn record_requests(
    conn: &mut PgConnection,
    done: &[(NewRequest<'_>, Option<i64>, bool, &str)],
) -> AppResult<()> {
    let ids: Vec<Uuid> = done.iter().map(|d| d.0.request_id).collect();
    let integrations: Vec<Uuid> = done.iter().map(|d| d.0.integration_id).collect();
    let actions: Vec<&str> = done.iter().map(|d| d.0.action).collect();
    let aliases: Vec<&str> = done.iter().map(|d| d.0.alias).collect();
    let alerts: Vec<Option<i64>> = done.iter().map(|d| d.1).collect();
    let successes: Vec<bool> = done.iter().map(|d| d.2).collect();
    let statuses: Vec<&str> = done.iter().map(|d| d.3).collect();
    sqlx::query!(
        r#"insert into opsgenie_requests (request_id, integration_id, action, alias, alert_id,
                                          success, status)
           select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int8[],
                                $6::bool[], $7::text[])
           on conflict (request_id) do nothing"#,
        &ids,
        &integrations,
        &actions as &[&str],
        &aliases as &[&str],
        &alerts as &[Option<i64>],
        &successes,
        &statuses as &[&str],
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A request of integration `integration_id` (another integration's requests are not found).
pub async fn opsgenie_request(
    e: impl PgExecutor<'_>,
    integration_id: Uuid,
    request_id: Uuid,
) -> AppResult<Option<OpsgenieRequest>> {
    Ok(sqlx::query_as!(
        OpsgenieRequest,
        r#"select request_id, integration_id, action, alias, alert_id, success, status,
                  processed_at
           from opsgenie_requests where request_id = $1 and integration_id = $2"#,
        request_id,
        integration_id
    )
    .fetch_optional(e)
    .await?)
}

/// Forgets requests over a week old.
pub async fn purge_requests(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(
        sqlx::query!(
            "delete from opsgenie_requests where processed_at < now() - interval '7 days'"
        )
        .execute(e)
        .await?
        .rows_affected(),
    )
}
