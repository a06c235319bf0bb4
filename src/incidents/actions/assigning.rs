//! Who holds which role.

use super::shared::*;
use serde_json::{Value, json};
use sqlx::PgConnection;

use crate::audit::{self};
use crate::error::AppResult;
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{self};
use crate::notify::domain::Event;
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

/// Reassigns the incident to `asked` (a person, a schedule's on-call person, or an escalation
/// policy) with `message`: an acknowledged one steps back to triggered, keeping its first
/// acknowledgement for the acknowledge SLA; its escalation runs again with the new target in
/// place of the old (whose pages not yet sent are called off); whoever acknowledges takes it
/// over. A mitigated or resolved incident is not reassigned.
pub async fn reassign(
    conn: &mut PgConnection,
    c: &Change<'_>,
    asked: &crate::responders::domain::Asked,
    message: &str,
) -> AppResult<Incident> {
    let (key, actor) = (c.key, c.actor);
    let message = crate::responders::domain::check_message(message)?;
    let incident = db::lock(&mut *conn, key).await?;
    check_version(&incident, c.expected_version)?;
    let at = c.clock(conn).await?;
    // What was paging before (read first: going back to triggered starts the service's own).
    let running = crate::paging::db::escalation(&mut *conn, incident.id)
        .await?
        .filter(|e| e.state == "pending")
        .map(|e| e.policy);
    let version = match incident.status {
        domain::Status::Triggered => db::touch(&mut *conn, incident.id).await?,
        domain::Status::Acknowledged => {
            let next = domain::step_back(&incident.milestones(), domain::Status::Triggered)?;
            // A snooze is for an acknowledged incident: handed over, it ends.
            db::end_snooze(&mut *conn, incident.id, None).await?;
            db::set_milestones(&mut *conn, incident.id, &next).await?
        }
        other => {
            return Err(crate::error::AppError::Conflict(format!(
                "{key} is {other}: nobody needs to take it over. Reopen it first if it needs \
                 paging again."
            )));
        }
    };
    let after = audited(conn, actor, "incident.reassign", &incident, key).await?;
    let handed = crate::responders::actions::hand_over(conn, incident.id, asked).await?;
    // A quiet maintenance window's end must not page the service's policy over this one.
    crate::maintenance::actions::paged_by_hand(&mut *conn, incident.id).await?;
    let mut details = json!({ "action": "reassigned", "by": actor.name, "replaced": running });
    if let (Some(d), Value::Object(h)) = (details.as_object_mut(), handed) {
        h.into_iter()
            .filter(|(k, _)| k != "replaced")
            .for_each(|(k, v)| {
                d.insert(k, v);
            });
        if incident.status == domain::Status::Acknowledged {
            d.insert("from".into(), json!("acknowledged; back to triggered"));
        }
    }
    let entry = Entry {
        kind: Kind::Responder,
        at,
        body: &message,
        details,
        version: Some(version),
    };
    append(conn, incident.id, actor, entry).await?;
    if incident.status == domain::Status::Acknowledged {
        let what = format!("back to triggered (reassigned by {})", actor.name);
        let bridge = crate::bridge::db::of_incident(&mut *conn, after.id).await?;
        announce(conn, &after, &bridge, Event::Opened, &what, None).await?;
    }
    Ok(after)
}
