//! Changing where notifications go — channels and their subscriptions, people's contact methods
//! and rules — audited; and announcing an incident's events to the channels subscribed to them.
//! The API and the pages share these.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::db::{self, Channel, ContactMethod};
use super::domain::{
    ChannelKind, Event, Happening, SubscriptionDraft, check_address, secret_from_bytes,
};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

fn fresh_secret() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    secret_from_bytes(&bytes)
}

fn check_name(field: &str, name: &str) -> AppResult<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::invalid(field, "1 to 100 characters"));
    }
    Ok(name.to_owned())
}

/// Adds a channel. It hears nothing until it is subscribed to something: `events`, when given,
/// subscribes it to those events of every service and severity in the same step (the API's
/// shortcut); `None` leaves it without subscriptions. A webhook gets a Standard Webhooks signing
/// secret, returned this once.
/// A channel as asked for: its name, kind and address, the events it is told of at once (none:
/// no subscription yet) and the team that owns it.
pub struct ChannelRequest<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub url: &'a str,
    pub events: Option<Vec<String>>,
    pub team_id: Option<i64>,
}

pub async fn create_channel(
    conn: &mut PgConnection,
    actor: &Actor,
    asked: ChannelRequest<'_>,
    allow: &crate::egress::Allow,
) -> AppResult<(Channel, Option<String>)> {
    let name = check_name("name", asked.name)?;
    let kind = ChannelKind::parse(asked.kind)?;
    let address = check_address(kind, "url", asked.url, allow)?;
    let url = match kind {
        ChannelKind::Email => format!("mailto:{address}"),
        _ => address,
    };
    let subscription = asked
        .events
        .map(|events| {
            SubscriptionDraft {
                events,
                services: vec![],
                severities: vec![],
                audiences: vec![],
            }
            .checked()
        })
        .transpose()?;
    let secret = (kind == ChannelKind::Webhook).then(fresh_secret);
    let new = db::NewChannel {
        name: &name,
        kind: kind.as_str(),
        url: &url,
        secret: secret.as_deref(),
        team_id: asked.team_id,
    };
    let channel = db::insert_channel(&mut *conn, &new).await?;
    if let Some(subscription) = &subscription {
        db::insert_subscription(&mut *conn, channel.id, subscription).await?;
    }
    let events = subscription.map(|s| s.events).unwrap_or_default();
    audit::created(
        conn,
        actor,
        "notification_channel.create",
        &channel.name,
        json!({ "kind": channel.kind, "url": channel.url, "events": events, "team": channel.team }),
    )
    .await?;
    Ok((channel, secret))
}

/// Points channel `id` at another address (`Some`, checked as a new channel's is; `None` keeps
/// its own) and gives it to `team_id`; its name, kind, signing secret and subscriptions stay.
/// The audit log names a Slack or webhook address by its host alone: its path carries a token.
pub async fn update_channel(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    (url, team_id): (Option<&str>, Option<i64>),
    allow: &crate::egress::Allow,
) -> AppResult<Channel> {
    let Some(before) = channel(&mut *conn, id).await? else {
        return Err(AppError::NotFound(format!("There is no channel {id}.")));
    };
    let kind = ChannelKind::parse(&before.kind)?;
    let url = match url {
        None => before.url.clone(),
        Some(url) => match (kind, check_address(kind, "url", url, allow)?) {
            (ChannelKind::Email, address) => format!("mailto:{address}"),
            (_, address) => address,
        },
    };
    let after = db::update_channel(&mut *conn, id, &url, team_id).await?;
    let shown = |c: &Channel| match kind {
        ChannelKind::Email => c.url.clone(),
        _ => url::Url::parse(&c.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default(),
    };
    audit::changed(
        conn,
        actor,
        "notification_channel.update",
        &after.name,
        json!({ "address": shown(&before), "team": before.team }),
        json!({ "address": shown(&after), "address_changed": before.url != after.url,
                "team": after.team }),
    )
    .await?;
    Ok(after)
}

/// Removes channel `id` (its subscriptions and queued notifications go with it).
pub async fn delete_channel(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let Some(channel) = channel(&mut *conn, id).await? else {
        return Err(AppError::NotFound(format!("There is no channel {id}.")));
    };
    let subscriptions = subscriptions_of(&mut *conn, id).await?.len();
    db::delete_channel(&mut *conn, id).await?;
    audit::deleted(
        conn,
        actor,
        "notification_channel.delete",
        &id.to_string(),
        json!({ "name": channel.name, "kind": channel.kind, "url": channel.url,
                     "subscriptions": subscriptions }),
    )
    .await
}

/// Channel `id`, if there is one.
pub async fn channel(conn: &mut PgConnection, id: i64) -> AppResult<Option<Channel>> {
    Ok(db::channels(&mut *conn)
        .await?
        .into_iter()
        .find(|c| c.id == id))
}

/// The subscriptions of channel `id`.
pub async fn subscriptions_of(
    conn: &mut PgConnection,
    id: i64,
) -> AppResult<Vec<db::Subscription>> {
    Ok(db::subscriptions(&mut *conn)
        .await?
        .into_iter()
        .filter(|s| s.channel_id == id)
        .collect())
}

/// Subscribes channel `channel_id` to what `d` names; every service named must exist.
pub async fn subscribe(
    conn: &mut PgConnection,
    actor: &Actor,
    channel_id: i64,
    d: &SubscriptionDraft,
) -> AppResult<i64> {
    let d = d.checked()?;
    if !db::channels(&mut *conn)
        .await?
        .iter()
        .any(|c| c.id == channel_id)
    {
        return Err(AppError::invalid(
            "channel_id",
            format!("there is no channel {channel_id}"),
        ));
    }
    for (i, name) in d.services.iter().enumerate() {
        let known = db::service_exists(&mut *conn, name).await?;
        if !known {
            return Err(AppError::invalid(
                &format!("services[{i}]"),
                format!("there is no service named {name:?}"),
            ));
        }
    }
    let id = db::insert_subscription(&mut *conn, channel_id, &d).await?;
    audit::created(
        conn,
        actor,
        "subscription.create",
        &id.to_string(),
        json!({ "channel_id": channel_id, "subscription": d }),
    )
    .await?;
    Ok(id)
}

pub async fn unsubscribe(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    if !db::delete_subscription(&mut *conn, id).await? {
        return Err(AppError::NotFound(format!(
            "There is no subscription {id}."
        )));
    }
    audit::record(
        conn,
        actor,
        "subscription.delete",
        &id.to_string(),
        None,
        None,
    )
    .await
}

/// The incident an event is about, as messages name it.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    pub incident_id: i64,
    pub key: &'a str,
    pub title: &'a str,
    pub severity: &'a str,
    pub service: Option<&'a str>,
    /// Where responders meet, sent with every message when set.
    pub bridge: &'a crate::bridge::domain::Bridge,
}

/// The message of an event: what every sender needs (`message` for Slack and email; `path` is
/// made a link with the base URL when sent), plus `extra`.
pub fn message(about: &About<'_>, event: &str, what: &str, extra: Value) -> Value {
    let mut payload = json!({
        "type": event,
        "incident": {
            "key": about.key, "title": about.title, "severity": about.severity,
            "service": about.service,
        },
        "message": format!("{} ({}) {}: {what}", about.key, about.severity, about.title),
        "path": format!("/incidents/{}", about.key),
    });
    if let (Some(p), Some(line)) = (payload.as_object_mut(), about.bridge.line()) {
        p.insert("bridge".into(), json!(about.bridge));
        p.insert("bridge_line".into(), json!(line));
    }
    if let (Some(p), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        p.extend(extra);
    }
    payload
}

/// Tells the channels subscribed to `event` of this incident, in the caller's transaction;
/// returns their names.
pub async fn announce(
    conn: &mut PgConnection,
    about: &About<'_>,
    event: Event,
    what: &str,
    audience: Option<&str>,
    extra: Value,
) -> AppResult<Vec<String>> {
    let one = Announcement {
        about: *about,
        event,
        what: what.to_owned(),
        audience,
        extra,
    };
    Ok(announce_many(conn, vec![one])
        .await?
        .pop()
        .unwrap_or_default())
}

/// One incident's event, for [`announce_many`].
pub struct Announcement<'a> {
    pub about: About<'a>,
    pub event: Event,
    pub what: String,
    pub audience: Option<&'a str>,
    pub extra: Value,
}

/// [`announce`] for several incidents at once, in a few statements whatever their number;
/// returns each one's channels, in their order.
pub async fn announce_many(
    conn: &mut PgConnection,
    mut items: Vec<Announcement<'_>>,
) -> AppResult<Vec<Vec<String>>> {
    let payloads: Vec<Value> = items
        .iter_mut()
        .map(|a| {
            message(
                &a.about,
                a.event.as_str(),
                &a.what,
                std::mem::take(&mut a.extra),
            )
        })
        .collect();
    let publications: Vec<db::Publication> = items
        .iter()
        .zip(&payloads)
        .map(|(a, payload)| db::Publication {
            incident_id: a.about.incident_id,
            happening: Happening {
                event: a.event,
                service: a.about.service,
                severity: a.about.severity,
                audience: a.audience,
            },
            payload,
        })
        .collect();
    db::publish_many(conn, &publications).await
}

/// A way to reach someone, as they give it.
pub struct MethodDraft<'a> {
    pub kind: &'a str,
    pub label: &'a str,
    pub address: &'a str,
}

/// Adds a way to reach `person_id` (a webhook inside the network only where `allow` lists
/// it); a webhook gets a signing secret, returned this once.
pub async fn add_method(
    conn: &mut PgConnection,
    actor: &Actor,
    person_id: i64,
    m: &MethodDraft<'_>,
    allow: &crate::egress::Allow,
) -> AppResult<(ContactMethod, Option<String>)> {
    let kind = ChannelKind::parse(m.kind)?;
    let label = check_name("label", m.label)?;
    let address = check_address(kind, "address", m.address, allow)?;
    let secret = (kind == ChannelKind::Webhook).then(fresh_secret);
    let method = db::insert_method(
        &mut *conn,
        person_id,
        kind.as_str(),
        &label,
        &address,
        secret.as_deref(),
    )
    .await?;
    audit::created(
        conn,
        actor,
        "contact_method.create",
        &method.id.to_string(),
        json!({ "person_id": person_id, "kind": method.kind, "label": method.label }),
    )
    .await?;
    Ok((method, secret))
}

pub async fn remove_method(
    conn: &mut PgConnection,
    actor: &Actor,
    person_id: i64,
    id: i64,
) -> AppResult<()> {
    if !db::delete_method(&mut *conn, person_id, id).await? {
        return Err(AppError::NotFound(format!(
            "There is no contact method {id}."
        )));
    }
    audit::record(
        conn,
        actor,
        "contact_method.delete",
        &id.to_string(),
        None,
        None,
    )
    .await
}

/// "Use method `method_id` `after_minutes` minutes after being paged."
pub async fn add_rule(
    conn: &mut PgConnection,
    actor: &Actor,
    person_id: i64,
    method_id: i64,
    after_minutes: i64,
) -> AppResult<i64> {
    if !(0..=1440).contains(&after_minutes) {
        return Err(AppError::invalid(
            "after_minutes",
            "0 to 1440 minutes (a day)",
        ));
    }
    if !db::methods(&mut *conn, Some(person_id))
        .await?
        .iter()
        .any(|m| m.id == method_id)
    {
        return Err(AppError::invalid(
            "contact_method_id",
            format!("there is no contact method {method_id} of yours"),
        ));
    }
    let id = db::insert_rule(&mut *conn, method_id, after_minutes as i32).await?;
    let made = json!({
        "person_id": person_id, "contact_method_id": method_id, "after_minutes": after_minutes,
    });
    audit::created(
        conn,
        actor,
        "notification_rule.create",
        &id.to_string(),
        made,
    )
    .await?;
    Ok(id)
}

pub async fn remove_rule(
    conn: &mut PgConnection,
    actor: &Actor,
    person_id: i64,
    id: i64,
) -> AppResult<()> {
    if !db::delete_rule(&mut *conn, person_id, id).await? {
        return Err(AppError::NotFound(format!(
            "There is no notification rule {id}."
        )));
    }
    audit::record(
        conn,
        actor,
        "notification_rule.delete",
        &id.to_string(),
        None,
        None,
    )
    .await
}

/// Pages a channel an escalation step names, in the caller's transaction.
pub async fn page_channel(
    conn: &mut PgConnection,
    channel_id: i64,
    about: &About<'_>,
    what: &str,
) -> AppResult<()> {
    let payload = message(about, PAGED, what, json!({}));
    db::to_channel(conn, channel_id, about.incident_id, PAGED, &payload).await
}

/// Pages a person by their rules (every method at once when they have none), in the caller's
/// transaction, with `extra` (their acknowledge link) in the message, sent for responder
/// request `request_id` if any; what was queued, empty when they have no contact method.
pub async fn page_person(
    conn: &mut PgConnection,
    (person_id, request_id): (i64, Option<i64>),
    about: &About<'_>,
    what: &str,
    extra: Value,
) -> AppResult<Vec<db::Queued>> {
    let payload = message(about, PAGED, what, extra);
    db::page_person(conn, (about.incident_id, request_id), person_id, &payload).await
}

/// Tells a person about a schedule of theirs (a hand-off notice) by every contact method at
/// once, in the caller's transaction; how many messages were queued.
pub async fn tell_person(
    conn: &mut PgConnection,
    person_id: i64,
    schedule_id: i64,
    payload: &Value,
) -> AppResult<u64> {
    db::tell_person(conn, person_id, schedule_id, HANDOFF, payload).await
}

/// The event a hand-off notice is.
pub const HANDOFF: &str = "oncall.handoff";

/// Calls off responder requests' pages not yet sent (of one person, when given); how many.
pub async fn call_off_request_pages(
    conn: &mut PgConnection,
    requests: &[i64],
    person_id: Option<i64>,
    why: &str,
) -> AppResult<u64> {
    db::cancel_request_pages(conn, requests, person_id, why).await
}

/// Calls off an incident's pages not yet sent (it was acknowledged); how many.
pub async fn call_off_pages(conn: &mut PgConnection, incident_id: i64) -> AppResult<u64> {
    db::cancel_pages(conn, incident_id).await
}

/// The event a page is.
const PAGED: &str = "incident.paged";

/// Queues a message to each status page subscriber named (`(subscriber, payload)`), about
/// `incident_id` if any, in the caller's transaction; how many.
pub async fn tell_subscribers(
    conn: &mut PgConnection,
    incident_id: Option<i64>,
    event: &str,
    to: &[(i64, Value)],
) -> AppResult<u64> {
    db::tell_subscribers(conn, incident_id, event, to).await
}

/// Calls off the status page's messages about these incidents not yet delivered, because
/// `why`; how many.
pub async fn call_off_subscriber_mail(
    conn: &mut PgConnection,
    incidents: &[i64],
    why: &str,
) -> AppResult<u64> {
    db::cancel_subscriber_mail(conn, incidents, why).await
}

/// Forgets up to `batch` messages done with (delivered, failed, cancelled) queued more than
/// `days` ago (the sweeper's retention); how many. Pending messages are never forgotten.
pub async fn forget_done(e: impl sqlx::PgExecutor<'_>, days: i32, batch: i64) -> AppResult<u64> {
    db::purge_done(e, days, batch).await
}
