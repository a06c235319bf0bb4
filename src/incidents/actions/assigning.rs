//! Who holds which role.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self};
use crate::error::AppResult;
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self};
use crate::roles::{self, actions::Assigned, domain::Role};
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
    let now = c.clock(conn).await?;
    let at = domain::check_at(c.at, incident.started_at, now)?;
    let (kind, details) =
        match roles::actions::set(conn, key, incident.id, role, person, at).await? {
            Assigned::To { person, previous } => (
                Kind::RoleAssigned,
                json!({
                    "role": role.as_str(), "role_label": role.label(),
                    "person": person.name, "handle": person.handle, "previous": previous,
                }),
            ),
            Assigned::Cleared { previous } => (
                Kind::RoleUnassigned,
                json!({ "role": role.as_str(), "role_label": role.label(), "previous": previous }),
            ),
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
    audit::changed(
        conn,
        actor,
        &format!("incident.role.{}", role.as_str()),
        &key.to_string(),
        json!({ "person": details.get("previous") }),
        json!({ "person": details.get("person"), "version": after.version }),
    )
    .await?;
    Ok(after)
}
