//! Who holds which role.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self};
use crate::people;
use crate::roles::{self, domain::Role};
use crate::timeline::domain::Kind;

/// Assigns `role` to a person found by handle or email; `person = None` unassigns it.
pub async fn set_role(
    conn: &mut PgConnection,
    c: &Change<'_>,
    role: Role,
    person: Option<&str>,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let now = clock::now(&mut *conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
    let current = roles::db::for_incident(&mut *conn, incident.id)
        .await?
        .into_iter()
        .find(|a| a.role == role);
    let (kind, details) = match person.map(str::trim).filter(|p| !p.is_empty()) {
        Some(who) => {
            let person = people::db::find(&mut *conn, who).await?.ok_or_else(|| {
                AppError::invalid("person", format!("nobody has the handle or email {who:?}"))
            })?;
            if current.as_ref().is_some_and(|c| c.person.id == person.id) {
                return Err(AppError::Conflict(format!(
                    "{} is already the {}.",
                    person.name,
                    role.label().to_lowercase()
                )));
            }
            roles::db::assign(&mut *conn, incident.id, role, person.id, at).await?;
            (
                Kind::RoleAssigned,
                json!({
                    "role": role.as_str(), "role_label": role.label(),
                    "person": person.name, "handle": person.handle,
                    "previous": current.map(|c| c.person.name),
                }),
            )
        }
        None => {
            let Some(current) = current else {
                return Err(AppError::Conflict(format!(
                    "Nobody is the {} of {key}.",
                    role.label().to_lowercase()
                )));
            };
            roles::db::unassign(&mut *conn, incident.id, role).await?;
            (
                Kind::RoleUnassigned,
                json!({ "role": role.as_str(), "role_label": role.label(),
                        "previous": current.person.name }),
            )
        }
    };
    let version = db::touch(&mut *conn, incident.id).await?;
    let assigned = Entry {
        kind,
        at,
        body: "",
        details: details.clone(),
        version: Some(version),
    };
    append(conn, incident.id, actor, assigned).await?;
    let after = db::get(&mut *conn, key).await?;
    audit::record(
        conn,
        actor,
        &format!("incident.role.{}", role.as_str()),
        &key.to_string(),
        Some(json!({ "person": details.get("previous") })),
        Some(json!({ "person": details.get("person"), "version": after.version })),
    )
    .await?;
    Ok(after)
}
