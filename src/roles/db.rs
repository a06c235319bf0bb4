//! Who holds each role on an incident now. The history of assignments is the timeline.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;

use super::domain::Role;
use crate::error::AppResult;
use crate::people::db::Person;

#[derive(Debug, Clone)]
pub struct Assignment {
    pub role: Role,
    pub person: Person,
    pub assigned_at: DateTime<Utc>,
}

pub async fn for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Assignment>> {
    let rows = sqlx::query!(
        r#"select r.role, r.assigned_at, p.id, p.name, p.email, p.handle
           from incident_roles r join people p on p.id = r.person_id
           where r.incident_id = $1"#,
        incident_id
    )
    .fetch_all(e)
    .await?;
    let mut out: Vec<Assignment> = rows
        .into_iter()
        .filter_map(|r| {
            Some(Assignment {
                role: Role::parse(&r.role).ok()?,
                assigned_at: r.assigned_at,
                person: Person {
                    id: r.id,
                    name: r.name,
                    email: r.email,
                    handle: r.handle,
                },
            })
        })
        .collect();
    out.sort_by_key(|a| Role::ALL.iter().position(|r| *r == a.role));
    Ok(out)
}

/// Assigns `role` to `person_id`, replacing whoever held it.
pub async fn assign(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    role: Role,
    person_id: i64,
    at: DateTime<Utc>,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into incident_roles (incident_id, role, person_id, assigned_at)
           values ($1, $2, $3, $4)
           on conflict (incident_id, role)
           do update set person_id = excluded.person_id, assigned_at = excluded.assigned_at"#,
        incident_id,
        role.as_str(),
        person_id,
        at
    )
    .execute(e)
    .await?;
    Ok(())
}

pub async fn unassign(e: impl PgExecutor<'_>, incident_id: i64, role: Role) -> AppResult<bool> {
    let done = sqlx::query!(
        "delete from incident_roles where incident_id = $1 and role = $2",
        incident_id,
        role.as_str()
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() > 0)
}
