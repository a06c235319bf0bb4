//! Changes to services, each with its audit record in the same transaction.

use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Service};
use super::domain::ServiceDraft;
use crate::audit::{self, Actor};
use crate::error::AppResult;

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    d: &ServiceDraft,
) -> AppResult<Service> {
    let s = db::insert(&mut *conn, d).await?;
    audit::record(conn, actor, "service.create", &s.name, None, Some(json!(s))).await?;
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
    let Some(s) = db::update(&mut *conn, current.id, expected_version, d).await? else {
        return Ok(None);
    };
    audit::record(
        conn,
        actor,
        "service.update",
        &s.name,
        Some(json!(current)),
        Some(json!(s)),
    )
    .await?;
    Ok(Some(s))
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, s: &Service) -> AppResult<()> {
    db::delete(&mut *conn, s.id, &s.name).await?;
    audit::record(conn, actor, "service.delete", &s.name, Some(json!(s)), None).await
}
