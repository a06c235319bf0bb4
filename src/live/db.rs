//! Entries as streams send them, and the live_streams table.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::domain::Entry;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;
use crate::timeline::domain::{Kind, headline};

struct EntryRow {
    id: i64,
    incident_id: i64,
    number: i64,
    detected_at: DateTime<Utc>,
    occurred_at: DateTime<Utc>,
    kind: String,
    author: String,
    body: String,
    details: Value,
    restricted: bool,
}

fn entry(r: EntryRow) -> Option<Entry> {
    let kind = Kind::from_db(&r.kind)?;
    Some(Entry {
        id: r.id,
        incident_id: r.incident_id,
        incident: crate::domain::IncidentKey(r.number).to_string(),
        kind: kind.as_str(),
        headline: headline(kind, &r.details, r.occurred_at, r.detected_at),
        author: r.author,
        body: r.body,
        occurred_at: r.occurred_at,
        restricted: r.restricted,
    })
}

/// The entries with these ids, in id order.
pub async fn entries(e: impl PgExecutor<'_>, ids: &[i64]) -> AppResult<Vec<Entry>> {
    Ok(sqlx::query_as!(
        EntryRow,
        r#"select t.id, t.incident_id, i.number, i.detected_at, t.occurred_at, t.kind, t.author,
                  t.body, t.details, i.restricted
           -- every incident: the hub reads each new entry once for every stream, and each
           -- stream sends only what its person may see (`restricted`)
           from timeline_events t join incidents i on i.id = t.incident_id
           where t.id = any($1)
           order by t.id"#,
        ids
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .filter_map(entry)
    .collect())
}

/// Entries written after entry `after`, of one incident or of all those `seen_by` may see,
/// oldest first, at most `limit`.
pub async fn entries_after(
    e: impl PgExecutor<'_>,
    incident_id: Option<i64>,
    seen_by: SeenBy,
    after: i64,
    limit: i64,
) -> AppResult<Vec<Entry>> {
    // Two statements, so each keeps its own index plan.
    let rows = match incident_id {
        Some(id) => {
            sqlx::query_as!(
                EntryRow,
                r#"select t.id, t.incident_id, i.number, i.detected_at, t.occurred_at, t.kind,
                          t.author, t.body, t.details, i.restricted
                   from timeline_events t join incidents i on i.id = t.incident_id
                   where t.incident_id = $1 and t.id > $2
                     and incident_visible(i.restricted, i.id, $4)
                   order by t.id
                   limit $3"#,
                id,
                after,
                limit,
                seen_by.sql()
            )
            .fetch_all(e)
            .await?
        }
        None => {
            sqlx::query_as!(
                EntryRow,
                r#"select t.id, t.incident_id, i.number, i.detected_at, t.occurred_at, t.kind,
                          t.author, t.body, t.details, i.restricted
                   from timeline_events t join incidents i on i.id = t.incident_id
                   where t.id > $1 and incident_visible(i.restricted, i.id, $3)
                   order by t.id
                   limit $2"#,
                after,
                limit,
                seen_by.sql()
            )
            .fetch_all(e)
            .await?
        }
    };
    Ok(rows.into_iter().filter_map(entry).collect())
}

/// How long a stream counts without its replica renewing it.
const LEASE_SECONDS: f64 = 60.0;

/// Records an open stream unless the person already holds `limit` live ones (across every
/// replica); false when over the limit. The person's streams are counted under a lock, so
/// two opening at once cannot both squeeze in.
pub async fn open(
    conn: &mut PgConnection,
    id: Uuid,
    person_id: i64,
    session_id: &str,
    replica: Uuid,
    limit: i64,
) -> AppResult<bool> {
    sqlx::query!(
        "select pg_advisory_xact_lock(hashtext('quell_live_streams'), $1::int)",
        (person_id % i64::from(i32::MAX)) as i32
    )
    .execute(&mut *conn)
    .await?;
    let held = sqlx::query_scalar!(
        r#"select count(*) as "n!" from live_streams
           where person_id = $1 and lease_until > now()"#,
        person_id
    )
    .fetch_one(&mut *conn)
    .await?;
    if held >= limit {
        return Ok(false);
    }
    sqlx::query!(
        r#"insert into live_streams (id, person_id, session_id, epoch, replica, lease_until)
           select $1, p.id, $3, p.session_epoch, $4, now() + make_interval(secs => $5)
           from people p where p.id = $2"#,
        id,
        person_id,
        session_id,
        replica,
        LEASE_SECONDS
    )
    .execute(&mut *conn)
    .await?;
    Ok(true)
}

pub async fn close(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<()> {
    sqlx::query!("delete from live_streams where id = $1", id)
        .execute(e)
        .await?;
    Ok(())
}

pub async fn is_open(e: impl PgExecutor<'_>, id: Uuid) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select exists (select 1 from live_streams where id = $1) as "open!""#,
        id
    )
    .fetch_one(e)
    .await?)
}

/// Renews the leases of the streams this replica `holds` and forgets streams whose replica
/// stopped renewing them.
pub async fn renew(e: &mut PgConnection, replica: Uuid, holds: &[Uuid]) -> AppResult<()> {
    sqlx::query!(
        r#"update live_streams set lease_until = now() + make_interval(secs => $3)
           where replica = $1 and id = any($2)"#,
        replica,
        holds,
        LEASE_SECONDS
    )
    .execute(&mut *e)
    .await?;
    sqlx::query!("delete from live_streams where lease_until < now() - interval '1 minute'")
        .execute(&mut *e)
        .await?;
    Ok(())
}

/// Forgets this replica's rows that no stream of it `holds`: a stream whose request was cut
/// off after its row was committed but before it could remove it. Rows opened in the last two
/// seconds are left alone — their streams may have taken their slot after `holds` was read.
pub async fn forget_unheld(e: impl PgExecutor<'_>, replica: Uuid, holds: &[Uuid]) -> AppResult<()> {
    sqlx::query!(
        r#"delete from live_streams
           where replica = $1 and id <> all($2) and opened_at < now() - interval '2 seconds'"#,
        replica,
        holds
    )
    .execute(e)
    .await?;
    Ok(())
}

/// This replica's streams whose session ended (signed out, idle or older than
/// `max_age_secs`, the person disabled or their password changed), removed and returned so
/// they can be closed.
pub async fn ended(
    e: impl PgExecutor<'_>,
    replica: Uuid,
    max_age_secs: i64,
) -> AppResult<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        r#"delete from live_streams s
           where s.replica = $1
             and not exists (
               select 1 from sessions x join people p on p.id = s.person_id
               where x.id = s.session_id and x.expiry_date > now()
                 and (x.data -> 'signed_in' ->> 'at')::bigint
                     > extract(epoch from now())::bigint - $2
                 and p.disabled_at is null and p.session_epoch = s.epoch)
           returning s.id"#,
        replica,
        max_age_secs
    )
    .fetch_all(e)
    .await?)
}
