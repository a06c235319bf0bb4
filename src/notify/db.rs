//! Channels and the notifications outbox.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};

use super::domain::{Happening, SubscriptionDraft};
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Channel {
    pub id: i64,
    pub name: String,
    /// webhook or slack
    pub kind: String,
    pub url: String,
    pub enabled: bool,
    #[serde(skip)]
    pub team_id: Option<i64>,
    /// The owning team's slug (its leads manage the channel); none: the installation's
    pub team: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A channel to add: where it goes and who owns it.
pub struct NewChannel<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub url: &'a str,
    pub secret: Option<&'a str>,
    pub team_id: Option<i64>,
}

pub async fn insert_channel(e: impl PgExecutor<'_>, c: &NewChannel<'_>) -> AppResult<Channel> {
    let name = c.name;
    sqlx::query_as!(
        Channel,
        r#"with c as (
               insert into notification_channels (name, kind, url, secret, team_id)
               values ($1, $2, $3, $4, $5)
               returning id, name, kind, url, enabled, team_id, created_at)
           select c.id, c.name, c.kind, c.url, c.enabled, c.team_id, t.slug as "team?",
                  c.created_at
           from c left join teams t on t.id = c.team_id"#,
        c.name,
        c.kind,
        c.url,
        c.secret,
        c.team_id
    )
    .fetch_one(e)
    .await
    .map_err(AppError::on_unique(
        "notification_channels_name_key",
        format!("A channel named {name:?} exists."),
    ))
}

pub async fn channels(e: impl PgExecutor<'_>) -> AppResult<Vec<Channel>> {
    Ok(sqlx::query_as!(
        Channel,
        r#"select c.id, c.name, c.kind, c.url, c.enabled, c.team_id, t.slug as "team?", c.created_at
           from notification_channels c left join teams t on t.id = c.team_id
           order by c.name"#
    )
    .fetch_all(e)
    .await?)
}

/// Points channel `id` at `url` and gives it to `team_id` (its name, kind and secret stay).
pub async fn update_channel(
    e: impl PgExecutor<'_>,
    id: i64,
    url: &str,
    team_id: Option<i64>,
) -> AppResult<Channel> {
    sqlx::query_as!(
        Channel,
        r#"with c as (
               update notification_channels set url = $2, team_id = $3 where id = $1
               returning id, name, kind, url, enabled, team_id, created_at)
           select c.id, c.name, c.kind, c.url, c.enabled, c.team_id, t.slug as "team?",
                  c.created_at
           from c left join teams t on t.id = c.team_id"#,
        id,
        url,
        team_id
    )
    .fetch_optional(e)
    .await?
    .ok_or_else(|| AppError::NotFound(format!("There is no channel {id}.")))
}

pub async fn delete_channel(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(
        sqlx::query!("delete from notification_channels where id = $1", id)
            .execute(e)
            .await?
            .rows_affected()
            > 0,
    )
}

/// Wakes the senders of every replica (they also look every few seconds, for a missed one).
pub const OUTBOX_CHANNEL: &str = "quell_outbox";

async fn wake(e: impl PgExecutor<'_>) -> AppResult<()> {
    sqlx::query!("select pg_notify('quell_outbox', '')")
        .execute(e)
        .await?;
    Ok(())
}

/// A channel's subscription, as stored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Subscription {
    pub id: i64,
    pub channel_id: i64,
    pub channel: String,
    pub events: Vec<String>,
    pub services: Vec<String>,
    pub severities: Vec<String>,
    pub audiences: Vec<String>,
    pub created_at: DateTime<Utc>,
}

impl Subscription {
    pub fn draft(&self) -> SubscriptionDraft {
        SubscriptionDraft {
            events: self.events.clone(),
            services: self.services.clone(),
            severities: self.severities.clone(),
            audiences: self.audiences.clone(),
        }
    }
}

pub async fn insert_subscription(
    e: impl PgExecutor<'_>,
    channel_id: i64,
    d: &SubscriptionDraft,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into subscriptions (channel_id, events, services, severities, audiences)
           values ($1, $2, $3, $4, $5) returning id"#,
        channel_id,
        &d.events,
        &d.services,
        &d.severities,
        &d.audiences
    )
    .fetch_one(e)
    .await?)
}

/// Every subscription of an enabled or disabled channel, by channel name.
pub async fn subscriptions(e: impl PgExecutor<'_>) -> AppResult<Vec<Subscription>> {
    Ok(sqlx::query_as!(
        Subscription,
        r#"select s.id, s.channel_id, c.name as channel, s.events, s.services, s.severities,
                  s.audiences, s.created_at
           from subscriptions s join notification_channels c on c.id = s.channel_id
           order by c.name, s.id"#
    )
    .fetch_all(e)
    .await?)
}

/// Whether a service named `name` exists (subscriptions name services).
pub async fn service_exists(e: impl PgExecutor<'_>, name: &str) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select exists(select 1 from services where name = $1) as "exists!""#,
        name
    )
    .fetch_one(e)
    .await?)
}

pub async fn delete_subscription(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(sqlx::query!("delete from subscriptions where id = $1", id)
        .execute(e)
        .await?
        .rows_affected()
        > 0)
}

/// Queues `payload` for every enabled channel with a subscription matching `h`, once per
/// channel, in the caller's transaction; returns the channels' names.
pub async fn publish(
    conn: &mut PgConnection,
    incident_id: i64,
    h: &Happening<'_>,
    payload: &Value,
) -> AppResult<Vec<String>> {
    let one = Publication {
        incident_id,
        happening: *h,
        payload,
    };
    Ok(publish_many(conn, std::slice::from_ref(&one))
        .await?
        .pop()
        .unwrap_or_default())
}

/// One incident's event to announce.
#[derive(Debug, Clone, Copy)]
pub struct Publication<'a> {
    pub incident_id: i64,
    pub happening: Happening<'a>,
    pub payload: &'a Value,
}

/// [`publish`] for several incidents' events in a few statements whatever their number (a
/// batch of alerts opens many incidents); returns each one's channels, in their order.
pub async fn publish_many(
    conn: &mut PgConnection,
    items: &[Publication<'_>],
) -> AppResult<Vec<Vec<String>>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let mut events: Vec<&str> = items.iter().map(|p| p.happening.event.as_str()).collect();
    events.sort_unstable();
    events.dedup();
    let subs = sqlx::query_as!(
        Subscription,
        r#"select s.id, s.channel_id, c.name as channel, s.events, s.services, s.severities,
                  s.audiences, s.created_at
           from subscriptions s join notification_channels c on c.id = s.channel_id
           where c.enabled and s.events && $1::text[]
           order by s.channel_id"#,
        &events as &[&str]
    )
    .fetch_all(&mut *conn)
    .await?;
    let drafts: Vec<(i64, &str, SubscriptionDraft)> = subs
        .iter()
        .map(|s| (s.channel_id, s.channel.as_str(), s.draft()))
        .collect();
    let kept = kept_to(&mut *conn, items, &subs).await?;
    let mut told = Vec::with_capacity(items.len());
    let (mut channels, mut incidents, mut kinds, mut payloads) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in items {
        let mut to: Vec<(i64, String)> = Vec::new();
        for (channel_id, channel, draft) in &drafts {
            if draft.matches(&p.happening)
                && !to.iter().any(|(id, _)| id == channel_id)
                && kept.hears(*channel_id, p.incident_id)
            {
                to.push((*channel_id, (*channel).to_owned()));
            }
        }
        for (channel_id, _) in &to {
            channels.push(*channel_id);
            incidents.push(p.incident_id);
            kinds.push(p.happening.event.as_str());
            payloads.push(p.payload);
        }
        told.push(to.into_iter().map(|t| t.1).collect());
    }
    if channels.is_empty() {
        return Ok(told);
    }
    sqlx::query!(
        r#"with queued as (
               insert into notifications (channel_id, incident_id, event, payload)
               select c, i, e, p
               from unnest($1::int8[], $2::int8[], $3::text[], $4::jsonb[])
                    with ordinality as q(c, i, e, p, n)
               order by n
               returning 1)
           select pg_notify('quell_outbox', '')"#,
        &channels,
        &incidents,
        &kinds as &[&str],
        &payloads as &[&Value],
    )
    .execute(&mut *conn)
    .await?;
    Ok(told)
}

/// The restricted incidents among a publication's and the teams each is kept to, with the
/// team of each channel subscribed: a restricted incident is told only to its teams' own
/// channels (a shared channel's audience is the whole installation).
struct Kept {
    incidents: Vec<(i64, Vec<i64>)>,
    channels: Vec<(i64, Option<i64>)>,
}

impl Kept {
    fn hears(&self, channel_id: i64, incident_id: i64) -> bool {
        let Some((_, teams)) = self.incidents.iter().find(|(id, _)| *id == incident_id) else {
            return true;
        };
        self.channels
            .iter()
            .find(|(id, _)| *id == channel_id)
            .and_then(|(_, team)| *team)
            .is_some_and(|team| teams.contains(&team))
    }
}

async fn kept_to(
    conn: &mut PgConnection,
    items: &[Publication<'_>],
    subs: &[Subscription],
) -> AppResult<Kept> {
    let ids: Vec<i64> = items.iter().map(|p| p.incident_id).collect();
    let incidents: Vec<(i64, Vec<i64>)> = sqlx::query!(
        r#"select i.id,
                  coalesce(array_agg(a.team_id) filter (where a.team_id is not null), '{}')
                      as "teams!"
           -- every incident: which of these are restricted, whoever is asking
           from incidents i left join incident_access a on a.incident_id = i.id
           where i.id = any($1) and i.restricted
           group by i.id"#,
        &ids
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| (r.id, r.teams))
    .collect();
    let channels = if incidents.is_empty() {
        Vec::new()
    } else {
        let ids: Vec<i64> = subs.iter().map(|s| s.channel_id).collect();
        sqlx::query!(
            "select id, team_id from notification_channels where id = any($1)",
            &ids
        )
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| (r.id, r.team_id))
        .collect()
    };
    Ok(Kept {
        incidents,
        channels,
    })
}

/// Queues `payload` for one channel (an escalation step naming it) — unless the incident is
/// restricted and the channel is not one of its teams'.
pub async fn to_channel(
    conn: &mut PgConnection,
    channel_id: i64,
    incident_id: i64,
    event: &str,
    payload: &Value,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into notifications (channel_id, incident_id, event, payload)
           select $1, $2, $3, $4
           -- every incident: the one paged, whoever is asking
           from incidents i
           where i.id = $2
             and (not i.restricted
                  or exists (select from incident_access a
                             join notification_channels c on c.team_id = a.team_id
                             where a.incident_id = i.id and c.id = $1))"#,
        channel_id,
        incident_id,
        event,
        payload
    )
    .execute(&mut *conn)
    .await?;
    wake(conn).await
}

/// How a person is reached.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ContactMethod {
    pub id: i64,
    #[serde(skip)]
    pub person_id: i64,
    /// email, slack or webhook
    pub kind: String,
    pub label: String,
    pub address: String,
    /// When a message to it was last given up on (cleared by the next delivery)
    pub failing_since: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_method(
    e: impl PgExecutor<'_>,
    person_id: i64,
    kind: &str,
    label: &str,
    address: &str,
    secret: Option<&str>,
) -> AppResult<ContactMethod> {
    sqlx::query_as!(
        ContactMethod,
        r#"insert into contact_methods (person_id, kind, label, address, secret)
           values ($1, $2, $3, $4, $5)
           returning id, person_id, kind, label, address, failing_since, last_error, created_at"#,
        person_id,
        kind,
        label,
        address,
        secret
    )
    .fetch_one(e)
    .await
    .map_err(AppError::on_unique(
        "contact_methods_label_key",
        format!("There is already a contact method labelled {label:?}."),
    ))
}

/// A person's contact methods (all people's when `person_id` is `None`), failing ones first.
pub async fn methods(
    e: impl PgExecutor<'_>,
    person_id: Option<i64>,
) -> AppResult<Vec<ContactMethod>> {
    Ok(sqlx::query_as!(
        ContactMethod,
        r#"select id, person_id, kind, label, address, failing_since, last_error, created_at
           from contact_methods where $1::bigint is null or person_id = $1
           order by failing_since is null, label"#,
        person_id
    )
    .fetch_all(e)
    .await?)
}

/// A contact method that stopped working, with whose it is (for admins).
#[derive(Debug, Clone, Serialize)]
pub struct FailingMethod {
    pub person: String,
    pub handle: String,
    pub label: String,
    pub kind: String,
    pub failing_since: DateTime<Utc>,
    pub last_error: Option<String>,
}

pub async fn failing_methods(e: impl PgExecutor<'_>) -> AppResult<Vec<FailingMethod>> {
    Ok(sqlx::query_as!(
        FailingMethod,
        r#"select p.name as person, p.handle, m.label, m.kind,
                  m.failing_since as "failing_since!", m.last_error
           from contact_methods m join people p on p.id = m.person_id
           where m.failing_since is not null order by m.failing_since"#
    )
    .fetch_all(e)
    .await?)
}

pub async fn delete_method(e: impl PgExecutor<'_>, person_id: i64, id: i64) -> AppResult<bool> {
    Ok(sqlx::query!(
        "delete from contact_methods where id = $1 and person_id = $2",
        id,
        person_id
    )
    .execute(e)
    .await?
    .rows_affected()
        > 0)
}

/// "Use this method this many minutes after being paged."
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Rule {
    pub id: i64,
    pub contact_method_id: i64,
    pub method: String,
    pub after_minutes: i32,
}

pub async fn insert_rule(
    e: impl PgExecutor<'_>,
    method_id: i64,
    after_minutes: i32,
) -> AppResult<i64> {
    sqlx::query_scalar!(
        r#"insert into notification_rules (contact_method_id, after_minutes) values ($1, $2)
           returning id"#,
        method_id,
        after_minutes
    )
    .fetch_one(e)
    .await
    .map_err(AppError::on_unique(
        "notification_rules_key",
        "That method is already used after that many minutes.".to_owned(),
    ))
}

pub async fn rules(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<Rule>> {
    Ok(sqlx::query_as!(
        Rule,
        r#"select r.id, r.contact_method_id, m.label as method, r.after_minutes
           from notification_rules r join contact_methods m on m.id = r.contact_method_id
           where m.person_id = $1 order by r.after_minutes, m.label"#,
        person_id
    )
    .fetch_all(e)
    .await?)
}

pub async fn delete_rule(e: impl PgExecutor<'_>, person_id: i64, id: i64) -> AppResult<bool> {
    Ok(sqlx::query!(
        r#"delete from notification_rules r using contact_methods m
           where r.id = $1 and m.id = r.contact_method_id and m.person_id = $2"#,
        id,
        person_id
    )
    .execute(e)
    .await?
    .rows_affected()
        > 0)
}

/// One message queued to a person.
#[derive(Debug, Clone, Serialize)]
pub struct Queued {
    pub method: String,
    pub kind: String,
    pub after_minutes: i32,
}

/// Queues a page to `person_id` by their rules (every method at once when they have none), in
/// the caller's transaction, sent for responder request `request_id` if any. Empty when they
/// have no contact method.
pub async fn page_person(
    conn: &mut PgConnection,
    (incident_id, request_id): (i64, Option<i64>),
    person_id: i64,
    payload: &Value,
) -> AppResult<Vec<Queued>> {
    let queued = sqlx::query_as!(
        Queued,
        r#"with plan as (
               select r.contact_method_id as method_id, r.after_minutes
               from notification_rules r join contact_methods m on m.id = r.contact_method_id
               where m.person_id = $2
               union all
               select m.id, 0 from contact_methods m
               where m.person_id = $2
                 and not exists (select 1 from notification_rules r
                                 join contact_methods o on o.id = r.contact_method_id
                                 where o.person_id = $2)),
           made as (
               insert into notifications (contact_method_id, person_id, incident_id, event,
                                          payload, next_attempt_at, responder_request_id)
               select p.method_id, $2, $1, 'incident.paged', $3,
                      now() + make_interval(mins => p.after_minutes), $4
               from plan p
               returning contact_method_id, next_attempt_at)
           select m.label as method, m.kind, p.after_minutes as "after_minutes!"
           from made
           -- a method may have two rules: its row is told apart by when it is due
           join plan p on p.method_id = made.contact_method_id
                      and made.next_attempt_at = now() + make_interval(mins => p.after_minutes)
           join contact_methods m on m.id = made.contact_method_id
           order by 3, 1"#,
        incident_id,
        person_id,
        payload,
        request_id
    )
    .fetch_all(&mut *conn)
    .await?;
    if !queued.is_empty() {
        wake(conn).await?;
    }
    Ok(queued)
}

/// Queues a message about schedule `schedule_id` (a hand-off notice) to every contact method
/// of `person_id` at once, in the caller's transaction; how many were queued (0: they have
/// none). Not a page: their escalating notification rules are for incidents.
pub async fn tell_person(
    conn: &mut PgConnection,
    person_id: i64,
    schedule_id: i64,
    event: &str,
    payload: &Value,
) -> AppResult<u64> {
    let queued = sqlx::query!(
        r#"insert into notifications (contact_method_id, person_id, schedule_id, event, payload)
           select m.id, $1, $2, $3, $4 from contact_methods m where m.person_id = $1"#,
        person_id,
        schedule_id,
        event,
        payload
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if queued > 0 {
        wake(conn).await?;
    }
    Ok(queued)
}

/// Queues one message to each status page subscriber named, about `incident_id` if any, in
/// the caller's transaction; how many.
pub async fn tell_subscribers(
    conn: &mut PgConnection,
    incident_id: Option<i64>,
    event: &str,
    to: &[(i64, Value)],
) -> AppResult<u64> {
    if to.is_empty() {
        return Ok(0);
    }
    let mut queued = 0;
    // A thousand at a time: one statement's values stay small however many subscribe.
    for chunk in to.chunks(1000) {
        let (ids, payloads): (Vec<i64>, Vec<Value>) = chunk.iter().cloned().unzip();
        queued += sqlx::query!(
            r#"insert into notifications (status_subscriber_id, incident_id, event, payload)
               select s, $1, $2, p from unnest($3::int8[], $4::jsonb[]) as t(s, p)"#,
            incident_id,
            event,
            &ids,
            &payloads
        )
        .execute(&mut *conn)
        .await?
        .rows_affected();
    }
    wake(conn).await?;
    Ok(queued)
}

/// Calls off the status page's messages about these incidents not yet delivered, because
/// `why`; how many.
pub async fn cancel_subscriber_mail(
    e: impl PgExecutor<'_>,
    incidents: &[i64],
    why: &str,
) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update notifications set state = 'cancelled', last_error = $2
           where status_subscriber_id is not null and state = 'pending'
             and incident_id = any($1)"#,
        incidents,
        why
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// Calls off the escalation's pages to an incident not yet sent (it was acknowledged); returns
/// how many. Pages sent for a responder request are the request's to call off.
pub async fn cancel_pages(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update notifications set state = 'cancelled', last_error = 'acknowledged before it was sent'
           where incident_id = $1 and contact_method_id is not null and state = 'pending'
             and attempts = 0 and responder_request_id is null"#,
        incident_id
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// Calls off the pages of responder requests not yet delivered — of `person_id` only, when
/// given — because `why`, also one waiting to be tried again (a sender holding it cannot record
/// over the call-off: its writes need the message pending); returns how many.
pub async fn cancel_request_pages(
    e: impl PgExecutor<'_>,
    requests: &[i64],
    person_id: Option<i64>,
    why: &str,
) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"update notifications set state = 'cancelled', last_error = $3
           where responder_request_id = any($1) and state = 'pending'
             and ($2::int8 is null or person_id = $2)"#,
        requests,
        person_id,
        why
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// A notification taken for delivery, with where it goes.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub attempts: i32,
    pub payload: Value,
    pub kind: String,
    pub url: String,
    pub secret: Option<String>,
    pub contact_method_id: Option<i64>,
    /// Seconds since it was queued, when claimed
    pub queued_secs: f64,
}

/// Takes up to `limit` due notifications under a lease: their next attempt moves `lease_secs`
/// ahead, so no other sender takes them meanwhile, and a sender that dies leaves them to be
/// retried when the lease ends. Each claim counts an attempt; the attempt number is the
/// claim's fencing token (`delivered`, `failed`): a sender that stalls past its lease, while
/// another takes the message again, cannot record over it.
pub async fn claim(e: impl PgExecutor<'_>, limit: i64, lease_secs: f64) -> AppResult<Vec<Claimed>> {
    Ok(sqlx::query_as!(
        Claimed,
        r#"with taken as (
               update notifications n
               set attempts = n.attempts + 1,
                   next_attempt_at = now() + make_interval(secs => $2)
               -- pages and channels before the status page's subscribers, however many
               -- of theirs wait
               where n.id in (select id from notifications
                              where state = 'pending' and next_attempt_at <= now()
                              order by status_subscriber_id is not null, next_attempt_at
                              limit $1
                              for update skip locked)
               returning n.id, n.attempts, n.payload, n.channel_id, n.contact_method_id,
                         n.status_subscriber_id, n.created_at)
           select t.id as "id!", t.attempts as "attempts!", t.payload as "payload!",
                  -- a status page subscriber is written to by email
                  coalesce(c.kind, m.kind, 'email') as "kind!",
                  coalesce(c.url, m.address, s.email) as "url!",
                  coalesce(c.secret, m.secret) as secret, t.contact_method_id,
                  extract(epoch from now() - t.created_at)::float8 as "queued_secs!"
           from taken t
           left join notification_channels c on c.id = t.channel_id
           left join contact_methods m on m.id = t.contact_method_id
           left join status_subscribers s on s.id = t.status_subscriber_id"#,
        limit,
        lease_secs
    )
    .fetch_all(e)
    .await?)
}

/// Seconds until the next notification is due, if any is pending.
pub async fn next_due_in(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"select extract(epoch from min(next_attempt_at) - now())::float8
           from notifications where state = 'pending'"#
    )
    .fetch_one(e)
    .await?)
}

/// Marks notification `id` delivered by the sender that holds claim `attempt` (its attempt
/// number, the fencing token); its contact method, if any, works again. False when the claim
/// has passed to another sender (its lease ran out and the message was taken again) or the
/// message is no longer pending: the write is refused and nothing changes.
pub async fn delivered(e: impl PgExecutor<'_>, id: i64, attempt: i32) -> AppResult<bool> {
    let recorded = sqlx::query_scalar!(
        r#"with n as (
               update notifications set state = 'delivered', delivered_at = now(), last_error = null
               where id = $1 and attempts = $2 and state = 'pending'
               returning contact_method_id, status_subscriber_id),
           m as (
               update contact_methods set failing_since = null, last_error = null
               where id = (select contact_method_id from n) and failing_since is not null),
           s as (
               update status_subscribers set failing_since = null, last_error = null
               where id = (select status_subscriber_id from n) and failing_since is not null)
           select count(*) as "n!" from n"#,
        id,
        attempt
    )
    .fetch_one(e)
    .await?;
    Ok(recorded == 1)
}

/// Records a failed attempt under claim `attempt`: retried after `retry_in_secs`, or given up
/// (`None`). False, changing nothing, when the claim has passed to another sender.
pub async fn failed(
    e: impl PgExecutor<'_>,
    id: i64,
    attempt: i32,
    error: &str,
    retry_in_secs: Option<f64>,
) -> AppResult<bool> {
    let recorded = sqlx::query_scalar!(
        r#"with n as (
               update notifications
               set last_error = $3,
                   state = case when $4::float8 is null then 'failed' else 'pending' end,
                   next_attempt_at = now() + make_interval(secs => coalesce($4, 0))
               where id = $1 and attempts = $2 and state = 'pending'
               returning contact_method_id, status_subscriber_id, state),
           m as (
               update contact_methods
               set failing_since = coalesce(failing_since, now()), last_error = $3
               where id = (select contact_method_id from n where state = 'failed')),
           s as (
               update status_subscribers
               set failing_since = coalesce(failing_since, now()), last_error = $3
               where id = (select status_subscriber_id from n where state = 'failed'))
           select count(*) as "n!" from n"#,
        id,
        attempt,
        error,
        retry_in_secs
    )
    .fetch_one(e)
    .await?;
    Ok(recorded == 1)
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    pub id: i64,
    /// The channel's name, or the person and their contact method
    pub channel: String,
    pub event: String,
    /// pending, delivered, failed or cancelled (a page not yet sent when the incident was
    /// acknowledged)
    pub state: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When the next attempt is due (a pending one's send time; while being sent, the end of
    /// the sender's lease)
    pub next_attempt_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

pub async fn for_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Vec<Delivery>> {
    Ok(sqlx::query_as!(
        Delivery,
        r#"select n.id,
                  coalesce(c.name, p.name || ' by ' || m.label) as "channel!",
                  n.event, n.state, n.attempts, n.last_error, n.created_at, n.next_attempt_at,
                  n.delivered_at
           from notifications n
           left join notification_channels c on c.id = n.channel_id
           left join contact_methods m on m.id = n.contact_method_id
           left join people p on p.id = n.person_id
           -- the status page's subscribers are the admins' to see, on the status page's own page
           where n.incident_id = $1 and n.status_subscriber_id is null
           order by n.created_at, n.id"#,
        incident_id
    )
    .fetch_all(e)
    .await?)
}

/// Messages due and waiting to be sent, by kind (a channel's or contact method's; a status
/// page subscriber's is email): not those a notification rule holds for later.
pub async fn due_by_kind(e: impl PgExecutor<'_>) -> AppResult<Vec<(String, i64)>> {
    Ok(sqlx::query!(
        r#"select coalesce(c.kind, m.kind, 'email') as "kind!", count(*) as "n!"
           from notifications n
           left join notification_channels c on c.id = n.channel_id
           left join contact_methods m on m.id = n.contact_method_id
           where n.state = 'pending' and n.next_attempt_at <= now()
           group by 1 order by 1"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.kind, r.n))
    .collect())
}

/// Deletes up to `batch` messages done with (delivered, failed or cancelled) queued more than
/// `days` ago; how many. Pending messages are never deleted.
pub async fn purge_done(e: impl PgExecutor<'_>, days: i32, batch: i64) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"delete from notifications where id in (
               select id from notifications
               where state <> 'pending' and created_at < now() - make_interval(days => $1)
               order by created_at limit $2)"#,
        days,
        batch
    )
    .execute(e)
    .await?
    .rows_affected())
}
