//! Giving and taking an incident role, with its rules: the person is found by handle or email,
//! giving a role to the person who holds it or clearing a role nobody holds is a conflict. The
//! incident's side (its lock, version, timeline entry and audit row) is
//! `incidents::actions::set_role`.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::db;
use super::domain::Role;
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};
use crate::people::db::Person;

/// What changed: the role went to `person` (from `previous`, if anyone), or was cleared.
pub enum Assigned {
    To {
        person: Person,
        previous: Option<String>,
    },
    Cleared {
        previous: String,
    },
}

/// Gives `role` of incident `key` to the person found by handle or email, from `at`; `None`
/// (or blank) clears it.
pub async fn set(
    conn: &mut PgConnection,
    key: IncidentKey,
    incident_id: i64,
    role: Role,
    person: Option<&str>,
    at: DateTime<Utc>,
) -> AppResult<Assigned> {
    let current = db::for_incident(&mut *conn, incident_id)
        .await?
        .into_iter()
        .find(|a| a.role == role);
    let label = role.label().to_lowercase();
    match person.map(str::trim).filter(|p| !p.is_empty()) {
        Some(who) => {
            let person = crate::people::db::find(&mut *conn, who)
                .await?
                .ok_or_else(|| {
                    AppError::invalid("person", format!("nobody has the handle or email {who:?}"))
                })?;
            if current.as_ref().is_some_and(|c| c.person.id == person.id) {
                let name = &person.name;
                return Err(AppError::Conflict(format!(
                    "{name} is already the {label}."
                )));
            }
            db::assign(&mut *conn, incident_id, role, person.id, at).await?;
            let previous = current.map(|c| c.person.name);
            Ok(Assigned::To { person, previous })
        }
        None => {
            let Some(current) = current else {
                return Err(AppError::Conflict(format!(
                    "Nobody is the {label} of {key}."
                )));
            };
            db::unassign(&mut *conn, incident_id, role).await?;
            Ok(Assigned::Cleared {
                previous: current.person.name,
            })
        }
    }
}
