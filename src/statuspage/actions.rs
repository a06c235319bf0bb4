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

/// Takes incident `key` off the status page; its subscribers' mail not yet sent is called off.
pub async fn unpublish(conn: &mut PgConnection, actor: &Actor, key: IncidentKey) -> AppResult<()> {
    let incident = crate::incidents::db::lock(&mut *conn, key).await?;
    let Some(before) = db::publication(&mut *conn, incident.id).await? else {
        return Err(AppError::NotFound(format!(
            "{key} is not on the status page."
        )));
    };
    db::unpublish(&mut *conn, incident.id).await?;
    crate::notify::actions::call_off_subscriber_mail(conn, &[incident.id], WITHDRAWN).await?;
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

/// What a subscription form asked for: an address, and every component or these; and the
/// client address that asked.
pub struct SubscriptionRequest<'a> {
    pub email: &'a str,
    pub components: Option<Vec<i64>>,
    pub from: Option<&'a str>,
}

/// A new credential for a subscriber's links: 256 random bits, hex.
fn new_token() -> String {
    use argon2::password_hash::rand_core::{OsRng, RngCore};
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Someone asks for email about the page: a new address is kept unconfirmed and sent a
/// confirmation link; one waiting to confirm is sent it again at most hourly (with its choice
/// of components replaced); a confirmed one changes nothing (their own links do). The answer
/// is the same every time, so the form tells no one who subscribes. Past the hourly limits on
/// confirmations (from this client, and in all) it is refused and sends nothing.
pub async fn subscribe(conn: &mut PgConnection, req: SubscriptionRequest<'_>) -> AppResult<()> {
    let email = domain::check_email(req.email)?;
    let components = req.components.as_deref();
    if components.is_some_and(<[i64]>::is_empty) {
        return Err(AppError::Validation(vec![crate::error::FieldError {
            field: "components".into(),
            message: "choose at least one component, or every component".into(),
        }]));
    }
    let (from_here, all) = db::confirmations_lately(&mut *conn, req.from).await?;
    if from_here >= domain::CONFIRMATIONS_PER_HOUR_FROM_ONE || all >= domain::CONFIRMATIONS_PER_HOUR
    {
        return Err(AppError::LimitReached(
            "Too many subscriptions were asked for lately; try again in an hour.".into(),
        ));
    }
    let settings = db::settings(&mut *conn).await?;
    let (id, token) = match db::subscriber_by_email(&mut *conn, &email).await? {
        None => {
            let token = new_token();
            match db::insert_subscriber(conn, (&email, &token, req.from), components).await? {
                Some(id) => (id, token),
                // The same address, at the same moment, by another request: that one sends.
                None => return Ok(()),
            }
        }
        Some(s) if s.confirmed_at.is_some() => return Ok(()),
        Some(s) => {
            let minutes = domain::CONFIRM_AGAIN_AFTER_MINUTES;
            if !db::confirm_again(&mut *conn, s.id, req.from, minutes).await? {
                return Ok(());
            }
            db::set_subscriber_components(conn, s.id, components).await?;
            (s.id, s.token)
        }
    };
    let mail = domain::confirmation_mail(&settings.name, &token);
    crate::notify::actions::tell_subscribers(conn, None, CONFIRM, &[(id, mail)]).await?;
    Ok(())
}

/// Why mail about an incident is called off.
pub const WITHDRAWN: &str = "the incident is no longer on the status page";

/// The event a confirmation request is.
const CONFIRM: &str = "status.confirm";

/// The subscriber these links belong to.
pub async fn subscriber(conn: &mut PgConnection, token: &str) -> AppResult<db::Subscriber> {
    let token = token.trim();
    let found = if token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()) {
        db::subscriber_by_token(&mut *conn, token).await?
    } else {
        None
    };
    found.ok_or_else(|| {
        AppError::NotFound(
            "This link is no longer valid: the subscription was ended, or never confirmed in time."
                .into(),
        )
    })
}

/// Confirms the subscription these links belong to.
pub async fn confirm(conn: &mut PgConnection, token: &str) -> AppResult<db::Subscriber> {
    let s = subscriber(conn, token).await?;
    db::confirm_subscriber(&mut *conn, s.id).await?;
    subscriber(conn, token).await
}

/// Changes which components a subscriber hears about.
pub async fn choose(
    conn: &mut PgConnection,
    token: &str,
    components: Option<Vec<i64>>,
) -> AppResult<db::Subscriber> {
    if components.as_deref().is_some_and(<[i64]>::is_empty) {
        return Err(AppError::Validation(vec![crate::error::FieldError {
            field: "components".into(),
            message: "choose at least one component, every component, or unsubscribe".into(),
        }]));
    }
    let s = subscriber(conn, token).await?;
    db::set_subscriber_components(conn, s.id, components.as_deref()).await?;
    subscriber(conn, token).await
}

/// Ends the subscription these links belong to: the address is forgotten, with its messages
/// not yet sent.
pub async fn unsubscribe(conn: &mut PgConnection, token: &str) -> AppResult<String> {
    let s = subscriber(conn, token).await?;
    db::delete_subscriber(&mut *conn, s.id).await?;
    Ok(s.email)
}

/// An admin removes a subscriber (a failing address, say).
pub async fn remove_subscriber(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let Some(before) = db::subscriber(&mut *conn, id).await? else {
        return Err(AppError::NotFound(format!("There is no subscriber {id}.")));
    };
    db::delete_subscriber(&mut *conn, id).await?;
    audit::deleted(
        conn,
        actor,
        "status.subscriber.delete",
        &before.email,
        &before,
    )
    .await
}
