//! Queries on the incidents table. Writes take a transaction's connection so the caller can
//! append the timeline event in the same transaction.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};

use super::domain::{IncidentKey, Milestones, Severity, Status};
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;

#[derive(Debug, Clone)]
pub struct Incident {
    pub id: i64,
    pub key: IncidentKey,
    pub title: String,
    pub severity: Severity,
    /// The highest severity the incident has reached; its targets decide the SLA verdicts.
    pub peak_severity: Severity,
    pub status: Status,
    pub service_id: Option<i64>,
    pub service: Option<String>,
    pub summary: String,
    pub impact: String,
    pub started_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Kept to named teams and people (`incident_ref::db::access` says whom)
    pub restricted: bool,
}

impl Incident {
    pub fn milestones(&self) -> Milestones {
        Milestones {
            status: self.status,
            started_at: self.started_at,
            detected_at: self.detected_at,
            acknowledged_at: self.acknowledged_at,
            mitigated_at: self.mitigated_at,
            resolved_at: self.resolved_at,
        }
    }
}

struct Row {
    id: i64,
    number: i64,
    title: String,
    severity: String,
    peak_severity: String,
    status: String,
    service_id: Option<i64>,
    service: Option<String>,
    summary: String,
    impact: String,
    started_at: DateTime<Utc>,
    detected_at: DateTime<Utc>,
    acknowledged_at: Option<DateTime<Utc>>,
    mitigated_at: Option<DateTime<Utc>>,
    resolved_at: Option<DateTime<Utc>>,
    version: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    restricted: bool,
}

impl TryFrom<Row> for Incident {
    type Error = AppError;
    fn try_from(r: Row) -> AppResult<Self> {
        let bad = |e: crate::domain::DomainError| AppError::Internal(format!("{e:?}"));
        Ok(Self {
            id: r.id,
            key: IncidentKey(r.number),
            title: r.title,
            severity: Severity::parse("severity", &r.severity).map_err(bad)?,
            peak_severity: Severity::parse("peak_severity", &r.peak_severity).map_err(bad)?,
            status: Status::parse("status", &r.status).map_err(bad)?,
            service_id: r.service_id,
            service: r.service,
            summary: r.summary,
            impact: r.impact,
            started_at: r.started_at,
            detected_at: r.detected_at,
            acknowledged_at: r.acknowledged_at,
            mitigated_at: r.mitigated_at,
            resolved_at: r.resolved_at,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
            restricted: r.restricted,
        })
    }
}

fn not_found(key: IncidentKey) -> AppError {
    AppError::NotFound(format!("There is no incident {key}."))
}

pub struct NewIncident<'a> {
    /// Set only when entering a past incident under its historical number (the demo's INC-1187).
    pub number: Option<i64>,
    pub title: &'a str,
    pub severity: Severity,
    pub service_id: Option<i64>,
    pub summary: &'a str,
    pub impact: &'a str,
    pub started_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
}

/// Inserts triggered incidents in one statement and returns them as stored, in their order
/// (a batch of alerts opens many at once).
pub async fn insert_many(
    e: impl PgExecutor<'_>,
    n: &[NewIncident<'_>],
) -> AppResult<Vec<Incident>> {
    let number: Vec<Option<i64>> = n.iter().map(|i| i.number).collect();
    let title: Vec<&str> = n.iter().map(|i| i.title).collect();
    let severity: Vec<&str> = n.iter().map(|i| i.severity.as_str()).collect();
    let service_id: Vec<Option<i64>> = n.iter().map(|i| i.service_id).collect();
    let summary: Vec<&str> = n.iter().map(|i| i.summary).collect();
    let impact: Vec<&str> = n.iter().map(|i| i.impact).collect();
    let started_at: Vec<DateTime<Utc>> = n.iter().map(|i| i.started_at).collect();
    let detected_at: Vec<DateTime<Utc>> = n.iter().map(|i| i.detected_at).collect();
    // The numbers are drawn first (once each: a materialized list), so each stored row is
    // matched with its opening by number.
    sqlx::query_as!(
        Row,
        r#"with t as materialized (
               select coalesce(k, nextval('incident_number_seq')) as number, ti, sev, svc, sm,
                      im, st, de, ord
               from unnest($1::int8[], $2::text[], $3::text[], $4::int8[], $5::text[],
                           $6::text[], $7::timestamptz[], $8::timestamptz[])
                    with ordinality as u(k, ti, sev, svc, sm, im, st, de, ord)),
           i as (
               insert into incidents
                   (number, title, severity, peak_severity, status, service_id, summary, impact,
                    started_at, detected_at)
               select number, ti, sev, sev, 'triggered', svc, sm, im, st, de from t order by ord
               returning id, number, title, severity, peak_severity, status, service_id, summary,
                         impact, started_at, detected_at, acknowledged_at, mitigated_at,
                         resolved_at, version, created_at, updated_at, restricted)
           select i.id as "id!", i.number as "number!", i.title as "title!",
                  i.severity as "severity!", i.peak_severity as "peak_severity!",
                  i.status as "status!", i.service_id, s.name as "service?",
                  i.summary as "summary!", i.impact as "impact!", i.started_at as "started_at!",
                  i.detected_at as "detected_at!", i.acknowledged_at, i.mitigated_at,
                  i.resolved_at, i.version as "version!", i.created_at as "created_at!",
                  i.updated_at as "updated_at!", i.restricted as "restricted!"
           from i join t on t.number = i.number left join services s on s.id = i.service_id
           order by t.ord"#,
        &number as &[Option<i64>],
        &title as &[&str],
        &severity as &[&str],
        &service_id as &[Option<i64>],
        &summary as &[&str],
        &impact as &[&str],
        &started_at,
        &detected_at,
    )
    .fetch_all(e)
    .await
    .map_err(AppError::on_unique(
        "incidents_number_key",
        "That incident number is already taken.",
    ))?
    .into_iter()
    .map(Incident::try_from)
    .collect()
}

/// Moves the key sequence past numbers entered by hand, so new incidents never collide with them.
pub async fn bump_sequence(e: impl PgExecutor<'_>) -> AppResult<()> {
    sqlx::query!(
        r#"select setval('incident_number_seq',
                         -- every incident: the highest number taken
                         greatest((select max(number) from incidents),
                                  (select last_value from incident_number_seq)))"#
    )
    .fetch_one(e)
    .await?;
    Ok(())
}

pub async fn find(e: impl PgExecutor<'_>, key: IncidentKey) -> AppResult<Option<Incident>> {
    sqlx::query_as!(
        Row,
        r#"select i.id, i.number, i.title, i.severity, i.peak_severity, i.status, i.service_id,
                  s.name as "service?", i.summary, i.impact, i.started_at, i.detected_at,
                  i.acknowledged_at, i.mitigated_at, i.resolved_at, i.version,
                  i.created_at, i.updated_at, i.restricted
           -- every incident: by its key, which the gate (incident_ref::gate) let through
           from incidents i left join services s on s.id = i.service_id
           where i.number = $1"#,
        key.0
    )
    .fetch_optional(e)
    .await?
    .map(Incident::try_from)
    .transpose()
}

/// The incident a URL names (`INC-1187`); a key that does not read as one is not found either.
pub async fn get_named(e: impl PgExecutor<'_>, raw: &str) -> AppResult<Incident> {
    let key = IncidentKey::parse(raw)
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {raw:?}.")))?;
    get(e, key).await
}

pub async fn get(e: impl PgExecutor<'_>, key: IncidentKey) -> AppResult<Incident> {
    find(e, key).await?.ok_or_else(|| not_found(key))
}

/// Reads the incident and locks its row until the transaction ends, so concurrent changes queue
/// instead of overwriting each other.
pub async fn lock(e: impl PgExecutor<'_>, key: IncidentKey) -> AppResult<Incident> {
    sqlx::query_as!(
        Row,
        r#"select i.id, i.number, i.title, i.severity, i.peak_severity, i.status, i.service_id,
                  s.name as "service?", i.summary, i.impact, i.started_at, i.detected_at,
                  i.acknowledged_at, i.mitigated_at, i.resolved_at, i.version,
                  i.created_at, i.updated_at, i.restricted
           -- every incident: by its key, which the gate (incident_ref::gate) let through
           from incidents i left join services s on s.id = i.service_id
           where i.number = $1
           for update of i"#,
        key.0
    )
    .fetch_optional(e)
    .await?
    .map(Incident::try_from)
    .transpose()?
    .ok_or_else(|| not_found(key))
}

/// Writes the status and stamps of a transition; returns the new version.
pub async fn set_milestones(e: impl PgExecutor<'_>, id: i64, m: &Milestones) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"update incidents
           set status = $2, acknowledged_at = $3, mitigated_at = $4, resolved_at = $5,
               version = version + 1, updated_at = now()
           where id = $1 returning version"#,
        id,
        m.status.as_str(),
        m.acknowledged_at,
        m.mitigated_at,
        m.resolved_at,
    )
    .fetch_one(e)
    .await?)
}

pub async fn set_severity(e: impl PgExecutor<'_>, id: i64, severity: Severity) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"update incidents
           set severity = $2, peak_severity = least(peak_severity, $2),
               version = version + 1, updated_at = now()
           where id = $1 returning version"#,
        id,
        severity.as_str(),
    )
    .fetch_one(e)
    .await?)
}

/// Bumps the version for changes kept in other tables (roles).
pub async fn touch(e: impl PgExecutor<'_>, id: i64) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"update incidents set version = version + 1, updated_at = now()
           where id = $1 returning version"#,
        id,
    )
    .fetch_one(e)
    .await?)
}

/// Sets who may see the incident: restricted or open to all, and the teams and people named
/// (every other grant removed); returns the new version.
pub async fn set_access(
    e: impl PgExecutor<'_>,
    id: i64,
    restricted: bool,
    teams: &[i64],
    people: &[i64],
    granted_by: &str,
) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"with gone as (
               delete from incident_access
               where incident_id = $1
                 and not (coalesce(team_id = any($3), false)
                          or coalesce(person_id = any($4), false))),
           teams as (
               insert into incident_access (incident_id, team_id, granted_by)
               select $1, t, $5 from unnest($3::int8[]) t
               on conflict do nothing),
           people as (
               insert into incident_access (incident_id, person_id, granted_by)
               select $1, p, $5 from unnest($4::int8[]) p
               on conflict do nothing)
           update incidents set restricted = $2, version = version + 1, updated_at = now()
           where id = $1 returning version"#,
        id,
        restricted,
        teams,
        people,
        granted_by,
    )
    .fetch_one(e)
    .await?)
}

pub struct Edit<'a> {
    pub title: &'a str,
    pub summary: &'a str,
    pub impact: &'a str,
    pub service_id: Option<i64>,
    pub started_at: DateTime<Utc>,
}

pub async fn update_fields(e: impl PgExecutor<'_>, id: i64, ed: &Edit<'_>) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"update incidents
           set title = $2, summary = $3, impact = $4, service_id = $5, started_at = $6,
               version = version + 1, updated_at = now()
           where id = $1 returning version"#,
        id,
        ed.title,
        ed.summary,
        ed.impact,
        ed.service_id,
        ed.started_at,
    )
    .fetch_one(e)
    .await?)
}

/// Filters of the incident list; `None` means "any".
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub statuses: Option<Vec<String>>,
    pub severities: Option<Vec<String>>,
    pub service: Option<String>,
    pub q: Option<String>,
    /// Incidents of the services these teams own (`teams::actions::narrowed` reads them from
    /// a slug or `mine`)
    pub teams: Option<Vec<i64>>,
}

impl Filter {
    /// The stretch of the list's index (resolved or not, then severity) the filter can be in:
    /// always given as ranges, never "any" as a null, so every plan — a prepared statement's
    /// generic one too — starts its walk where the wanted rows begin instead of filtering
    /// thousands of others on the way.
    fn index_bounds(&self) -> ((bool, bool), (String, String)) {
        let resolved = match &self.statuses {
            None => (false, true),
            Some(s) => {
                let any_resolved = s.iter().any(|s| s == "resolved");
                let all_resolved = s.iter().all(|s| s == "resolved");
                (all_resolved && any_resolved, any_resolved)
            }
        };
        let severities = match self.severities.as_deref() {
            Some(s) if !s.is_empty() => (
                s.iter().min().cloned().unwrap_or_default(),
                s.iter().max().cloned().unwrap_or_default(),
            ),
            _ => (
                Severity::ALL[0].as_str().to_owned(),
                Severity::ALL[Severity::ALL.len() - 1].as_str().to_owned(),
            ),
        };
        (resolved, severities)
    }
}

/// Position in the list order (open first, then by severity, newest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub resolved: bool,
    pub severity: Severity,
    pub number: i64,
}

impl Cursor {
    pub fn of(i: &Incident) -> Self {
        Self {
            resolved: i.status == Status::Resolved,
            severity: i.severity,
            number: i.key.0,
        }
    }

    pub fn encode(&self) -> String {
        format!(
            "{}.{}.{}",
            u8::from(self.resolved),
            self.severity,
            self.number
        )
    }

    pub fn decode(s: &str) -> Option<Self> {
        let mut parts = s.split('.');
        let resolved = match parts.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        let severity = Severity::parse("cursor", parts.next()?).ok()?;
        let number = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some(Self {
            resolved,
            severity,
            number,
        })
    }
}

/// One page of the list and the cursor of the page after it, if there is one.
pub async fn page(
    e: impl PgExecutor<'_>,
    f: &Filter,
    viewer: SeenBy,
    after: Option<Cursor>,
    limit: i64,
) -> AppResult<(Vec<Incident>, Option<Cursor>)> {
    // One row more than asked tells whether there is a next page.
    let rows = list(e, f, viewer, after, limit + 1).await?;
    Ok(crate::domain::split_page(rows, limit, Cursor::of))
}

/// `limit` rows of the list after `after`, of the incidents `viewer` may see.
pub async fn list(
    e: impl PgExecutor<'_>,
    f: &Filter,
    viewer: SeenBy,
    after: Option<Cursor>,
    limit: i64,
) -> AppResult<Vec<Incident>> {
    let q = f.q.as_deref().map(|q| {
        format!(
            "%{}%",
            q.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        )
    });
    // Someone who types `inc-1187` means the incident too, written as its key is written
    // (`INC-0012` is text to look for, not INC-12).
    let typed_key = f.q.as_deref().and_then(|q| {
        let text = q.trim().to_ascii_uppercase();
        IncidentKey::parse(&text)
            .filter(|k| k.to_string() == text)
            .map(|k| k.0)
    });
    let (resolved, severities) = f.index_bounds();
    sqlx::query_as!(
        Row,
        r#"select i.id, i.number, i.title, i.severity, i.peak_severity, i.status, i.service_id,
                  s.name as "service?", i.summary, i.impact, i.started_at, i.detected_at,
                  i.acknowledged_at, i.mitigated_at, i.resolved_at, i.version,
                  i.created_at, i.updated_at, i.restricted
           from incidents i left join services s on s.id = i.service_id
           where ($1::text[] is null or i.status = any($1))
             -- The same filters said as ranges of the list's index (`Filter::index_bounds`):
             -- without resolved incidents the walk stops where the open ones end instead of
             -- reading years of resolved ones; resolved Sev2 ones start at resolved Sev2.
             and (i.status = 'resolved') between $11::bool and $10::bool
             and i.severity between $12 and $13
             and ($2::text[] is null or i.severity = any($2))
             and ($3::text is null or s.name = $3)
             and ($4::text is null or i.title ilike $4 or i.summary ilike $4
                  or i.impact ilike $4 or i.number = $5)
             and ($6::bool is null
                  or ((i.status = 'resolved'), i.severity, -i.number) > ($6, $7, -$8::bigint))
             and ($14::int8[] is null or s.team_id = any($14))
             and incident_visible(i.restricted, i.id, $15)
           order by (i.status = 'resolved'), i.severity, i.number desc
           limit $9"#,
        f.statuses.as_deref(),
        f.severities.as_deref(),
        f.service.as_deref(),
        q,
        typed_key,
        after.map(|c| c.resolved),
        after.map(|c| c.severity.as_str()),
        after.map(|c| c.number),
        limit,
        resolved.1,
        resolved.0,
        severities.0,
        severities.1,
        f.teams.as_deref(),
        viewer.sql(),
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Incident::try_from)
    .collect()
}

/// Locks incidents in id order, so that resolving alerts and a responder's changes to the same
/// incident take turns instead of deadlocking. `for update`, not `for no key update`: a firing
/// batch's new alert holds a key-share lock on its incident (the foreign key) until it commits,
/// and only `for update` waits for it — so a resolution counts every alert added before it,
/// and never mitigates an incident whose new alert it could not see yet.
pub async fn lock_incidents(conn: &mut PgConnection, ids: &[i64]) -> AppResult<()> {
    sqlx::query!(
        r#"-- every incident: a lock for the alert path and changes
           select id from incidents where id = any($1) order by id for update"#,
        ids
    )
    .fetch_all(conn)
    .await?;
    Ok(())
}

/// An incident as the alert path needs it.
pub struct IncidentState {
    pub id: i64,
    pub key: IncidentKey,
    pub severity: Severity,
    pub status: Status,
}

pub async fn incident_states(
    conn: &mut PgConnection,
    ids: &[i64],
) -> AppResult<Vec<IncidentState>> {
    sqlx::query!(
        r#"-- every incident: the alert path's
           select id, number, severity, status from incidents where id = any($1)"#,
        ids
    )
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|r| {
        let bad =
            |e: crate::domain::DomainError| crate::error::AppError::Internal(format!("{e:?}"));
        Ok(IncidentState {
            id: r.id,
            key: IncidentKey(r.number),
            severity: Severity::parse("severity", &r.severity).map_err(bad)?,
            status: Status::parse("status", &r.status).map_err(bad)?,
        })
    })
    .collect()
}

/// Puts the incident aside until `minutes` from now (a snooze again replaces the last one).
pub async fn snooze(
    e: impl PgExecutor<'_>,
    id: i64,
    minutes: i64,
    by: &str,
    note: &str,
) -> AppResult<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(
        r#"insert into incident_snoozes (incident_id, until, snoozed_by, note)
           values ($1, now() + make_interval(mins => $2::int4), $3, $4)
           on conflict (incident_id) do update
           set until = excluded.until, snoozed_by = excluded.snoozed_by, note = excluded.note,
               created_at = now(), ended_at = null
           returning until"#,
        id,
        i32::try_from(minutes).unwrap_or(i32::MAX),
        by,
        note,
    )
    .fetch_one(e)
    .await?)
}

/// Until when the incident is snoozed, if it is (only an acknowledged incident is).
pub async fn snoozed_until(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        r#"select s.until from incident_snoozes s join incidents i on i.id = s.incident_id
           where s.incident_id = $1 and s.ended_at is null
             and i.status = 'acknowledged' -- every incident: the caller has read this one"#,
        id
    )
    .fetch_optional(e)
    .await?)
}

/// Ends the incident's snooze now, if one is running (`by`: the person who ended it early;
/// none when the incident moved on); returns when it would have ended.
pub async fn end_snooze(
    e: impl PgExecutor<'_>,
    id: i64,
    by: Option<&str>,
) -> AppResult<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        r#"update incident_snoozes set ended_at = now(), ended_by = $2
           where incident_id = $1 and ended_at is null returning until"#,
        id,
        by
    )
    .fetch_optional(e)
    .await?)
}

/// Puts a due snooze whose wake failed a minute on, so the others due wake meanwhile.
pub async fn postpone_snooze(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update incident_snoozes set until = now() + interval '1 minute'
           where incident_id = $1 and ended_at is null"#,
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The incidents of up to `limit` snoozes due, in id order, for the engine to lock first.
pub async fn snoozes_due(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select incident_id from (
               select incident_id from incident_snoozes
               where ended_at is null and until <= now()
               order by until limit $1) d
           order by 1"#,
        limit
    )
    .fetch_all(conn)
    .await?)
}

/// Ends the due snoozes of these incidents (claimed `SKIP LOCKED`: one replica wakes each).
pub async fn end_snoozes(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"update incident_snoozes s set ended_at = now()
           where s.incident_id in (
               select incident_id from incident_snoozes
               where incident_id = any($1) and ended_at is null and until <= now()
               for update skip locked)
           returning s.incident_id"#,
        incidents
    )
    .fetch_all(conn)
    .await?)
}

/// Seconds until the next snooze ends.
pub async fn next_snooze(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(until) - now())::float8 from incident_snoozes
           where ended_at is null"#
    )
    .fetch_one(e)
    .await?)
}
