//! Changing the status page (audited): its settings, its components, and publishing an
//! incident to it — never one restricted to some people.

use sqlx::PgConnection;

use super::db::{self, Component, Publication, Settings};
use super::domain::{self, ComponentDraft, PublicationDraft};
use crate::audit::{self, Actor};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};

/// Names the page and says a few words under it.
pub async fn set_settings(
    conn: &mut PgConnection,
    actor: &Actor,
    name: &str,
    intro: &str,
) -> AppResult<Settings> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "name",
            "1 to 100 characters, no control characters",
        ));
    }
    let intro = intro.trim();
    if intro.chars().count() > 2000 {
        return Err(AppError::invalid("intro", "at most 2000 characters"));
    }
    let before = db::settings(&mut *conn).await?;
    let after = db::set_settings(&mut *conn, name, intro).await?;
    audit::changed(
        conn,
        actor,
        "status.settings",
        "status page",
        &before,
        &after,
    )
    .await?;
    Ok(after)
}

async fn component(conn: &mut PgConnection, id: i64) -> AppResult<Component> {
    db::components(&mut *conn)
        .await?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or_else(|| AppError::NotFound(format!("There is no component {id}.")))
}

pub async fn create_component(
    conn: &mut PgConnection,
    actor: &Actor,
    draft: ComponentDraft,
) -> AppResult<Component> {
    let draft = domain::check_component(draft)?;
    let id = db::insert_component(&mut *conn, &draft).await?;
    let made = component(&mut *conn, id).await?;
    audit::created(conn, actor, "status.component.create", &made.name, &made).await?;
    Ok(made)
}

/// Changes a component; `version`, when given, must be the one it is at.
pub async fn update_component(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
    draft: ComponentDraft,
) -> AppResult<Component> {
    let draft = domain::check_component(draft)?;
    let before = component(&mut *conn, id).await?;
    let version = version.unwrap_or(before.version);
    if !db::update_component(&mut *conn, id, version, &draft).await? {
        return Err(AppError::Stale {
            current_version: before.version,
        });
    }
    let after = component(&mut *conn, id).await?;
    audit::changed(
        conn,
        actor,
        "status.component.update",
        &after.name,
        &before,
        &after,
    )
    .await?;
    Ok(after)
}

/// Removes a component, unless an unresolved published incident names it (the public would
/// lose what it affects).
pub async fn delete_component(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let before = component(&mut *conn, id).await?;
    if db::in_use(&mut *conn, id).await? {
        return Err(AppError::Conflict(format!(
            "an unresolved incident on the status page affects {:?}; take it off that incident first",
            before.name
        )));
    }
    db::delete_component(&mut *conn, id).await?;
    audit::deleted(
        conn,
        actor,
        "status.component.delete",
        &before.name,
        &before,
    )
    .await
}

/// Publishes incident `key` to the status page, or changes what its publication says: the
/// public title, the closing word, how it affects which components; with `message`, also
/// posts it as a stakeholder update for customers (its first public update). A restricted
/// incident is refused.
pub async fn publish(
    conn: &mut PgConnection,
    actor: &Actor,
    key: IncidentKey,
    (draft, message): (PublicationDraft, Option<&str>),
) -> AppResult<Publication> {
    let draft = domain::check_publication(draft)?;
    let incident = crate::incidents::db::lock(&mut *conn, key).await?;
    if incident.restricted {
        return Err(AppError::Conflict(format!(
            "{key} is restricted to some people; a restricted incident is never published to the status page"
        )));
    }
    let before = db::publication(&mut *conn, incident.id).await?;
    db::publish(&mut *conn, incident.id, &draft, &actor.name).await?;
    if let Some(text) = message.map(str::trim).filter(|m| !m.is_empty()) {
        let change = crate::incidents::actions::Change::now(key, actor);
        crate::incidents::actions::add_stakeholder_update(conn, &change, "customers", text)
            .await
            .map_err(|e| match e {
                AppError::Validation(mut f) => {
                    f.iter_mut().for_each(|f| f.field = "message".into());
                    AppError::Validation(f)
                }
                other => other,
            })?;
    }
    let after = db::publication(&mut *conn, incident.id)
        .await?
        .ok_or_else(|| AppError::Internal("a publication just written is gone".into()))?;
    let target = key.to_string();
    match before {
        None => audit::created(conn, actor, "status.publish", &target, &after).await?,
        Some(b) => audit::changed(conn, actor, "status.publish", &target, &b, &after).await?,
    }
    Ok(after)
}

/// Takes incident `key` off the status page.
pub async fn unpublish(conn: &mut PgConnection, actor: &Actor, key: IncidentKey) -> AppResult<()> {
    let incident = crate::incidents::db::lock(&mut *conn, key).await?;
    let Some(before) = db::publication(&mut *conn, incident.id).await? else {
        return Err(AppError::NotFound(format!(
            "{key} is not on the status page."
        )));
    };
    db::unpublish(&mut *conn, incident.id).await?;
    audit::deleted(conn, actor, "status.unpublish", &key.to_string(), &before).await
}

/// Announces maintenance window `id` on the status page (its occurrences over components'
/// services, named by those components only).
pub async fn announce(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    if !db::announce(&mut *conn, id, &actor.name).await? {
        return Err(AppError::invalid(
            "window",
            format!("there is no maintenance window {id}"),
        ));
    }
    let target = format!("maintenance window {id}");
    audit::record(conn, actor, "status.announce", &target, None, None).await
}

/// Withdraws maintenance window `id` from the status page.
pub async fn withdraw(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    if !db::withdraw(&mut *conn, id).await? {
        return Err(AppError::NotFound(format!(
            "Maintenance window {id} is not on the status page."
        )));
    }
    let target = format!("maintenance window {id}");
    audit::record(conn, actor, "status.withdraw", &target, None, None).await
}
