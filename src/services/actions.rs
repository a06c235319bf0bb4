//! Changes to services, each with its audit record in the same transaction.

use sqlx::PgConnection;

use super::db::{self, Service};
use super::domain::{ServiceDraft, check_dependencies};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

/// Makes the service depend on the services named: every one must exist, and none may close a
/// cycle (the graph is locked while it is checked and written).
async fn set_dependencies(conn: &mut PgConnection, s: &Service, names: &[String]) -> AppResult<()> {
    db::lock_dependencies(&mut *conn).await?;
    let edges = db::dependency_edges(&mut *conn).await?;
    check_dependencies(&s.name, names, &edges)?;
    let found = db::set_dependencies(&mut *conn, s.id, names).await?;
    if found < names.len() {
        let known: Vec<String> = db::list(&mut *conn)
            .await?
            .into_iter()
            .map(|s| s.name)
            .collect();
        let missing: Vec<&str> = names
            .iter()
            .filter(|n| !known.contains(n))
            .map(String::as_str)
            .collect();
        return Err(AppError::invalid(
            "depends_on",
            format!("there is no service named {}", missing.join(", ")),
        ));
    }
    Ok(())
}

/// The service as stored now (its dependencies included).
async fn reread(conn: &mut PgConnection, name: &str) -> AppResult<Service> {
    db::get_by_name(conn, name).await
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    d: &ServiceDraft,
) -> AppResult<Service> {
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    db::insert(&mut *conn, d, team).await?;
    let mut s = reread(conn, &d.name).await?;
    if let Some(names) = d.depends_on.as_deref().filter(|n| !n.is_empty()) {
        set_dependencies(conn, &s, names).await?;
        s = reread(conn, &s.name).await?;
    }
    audit::created(conn, actor, "service.create", &s.name, &s).await?;
    Ok(s)
}

/// `None` when the service moved past `expected_version` meanwhile.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    current: &Service,
    expected_version: i32,
    d: &ServiceDraft,
) -> AppResult<Option<Service>> {
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    if !db::update(&mut *conn, current.id, expected_version, d, team).await? {
        return Ok(None);
    }
    let mut s = reread(conn, &d.name).await?;
    if let Some(names) = d.depends_on.as_deref()
        && names != current.depends_on.as_slice()
    {
        set_dependencies(conn, &s, names).await?;
        s = reread(conn, &s.name).await?;
    }
    audit::changed(conn, actor, "service.update", &s.name, &current, &s).await?;
    Ok(Some(s))
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, s: &Service) -> AppResult<()> {
    db::delete(&mut *conn, s.id, &s.name).await?;
    audit::deleted(conn, actor, "service.delete", &s.name, &s).await
}

/// Sets the call and chat links a Sev1 or Sev2 of the service starts with (empty removes them).
pub async fn set_bridge(
    conn: &mut PgConnection,
    actor: &Actor,
    s: &Service,
    bridge: &crate::bridge::domain::Bridge,
) -> AppResult<()> {
    let before = crate::bridge::actions::set_for_service(&mut *conn, s.id, bridge).await?;
    audit::changed(conn, actor, "service.bridge", &s.name, &before, &bridge).await
}
