//! Writing schedules (checked, every person named must exist, audited) and reading who is on
//! call from them.

use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, StoredSchedule};
use super::domain::{Schedule, ScheduleDraft};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

/// The checked schedule, every handle it names known; else 422 naming the field.
pub async fn check(conn: &mut PgConnection, d: &ScheduleDraft) -> AppResult<Schedule> {
    let schedule = d.schedule()?;
    let people = crate::people::db::list(&mut *conn).await?;
    for (field, handle) in d.handles() {
        if !people.iter().any(|p| p.handle == handle) {
            return Err(AppError::invalid(
                &field,
                format!("there is no person with the handle {handle:?}"),
            ));
        }
    }
    Ok(schedule)
}

pub async fn create(conn: &mut PgConnection, actor: &Actor, d: &ScheduleDraft) -> AppResult<i64> {
    check(conn, d).await?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    let id = db::insert(&mut *conn, d, team).await?;
    audit::created(conn, actor, "schedule.create", d.name.trim(), &d).await?;
    Ok(id)
}

/// Replaces schedule `id` if it is still at `version`.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
    d: &ScheduleDraft,
) -> AppResult<StoredSchedule> {
    let current = db::get(&mut *conn, id).await?;
    check(conn, d).await?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    if !db::update(&mut *conn, id, version.unwrap_or(current.version), d, team).await? {
        return Err(AppError::Stale {
            current_version: current.version,
        });
    }
    audit::changed(
        conn,
        actor,
        "schedule.update",
        d.name.trim(),
        json!(current.draft()),
        &d,
    )
    .await?;
    db::get(conn, id).await
}

/// The rules of a stored schedule (stored documents were checked when written).
pub fn rules(s: &StoredSchedule) -> AppResult<Schedule> {
    s.draft()
        .schedule()
        .map_err(|e| AppError::Internal(format!("schedule {} no longer reads: {e:?}", s.id)))
}
