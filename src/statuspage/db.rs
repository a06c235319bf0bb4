//! The status page's rows: its settings, components (with the services they stand for),
//! publications (with how they affect components), and what the public may read of published
//! incidents — never one restricted to some people, whatever was published before.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgExecutor};

use super::domain::{ComponentDraft, PublicationDraft};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Settings {
    /// The page's heading: the installation's name
    pub name: String,
    /// A short text under it
    pub intro: String,
    pub updated_at: DateTime<Utc>,
}

pub async fn settings(e: impl PgExecutor<'_>) -> AppResult<Settings> {
    Ok(sqlx::query_as!(
        Settings,
        "select name, intro, updated_at from status_settings"
    )
    .fetch_one(e)
    .await?)
}

pub async fn set_settings(e: impl PgExecutor<'_>, name: &str, intro: &str) -> AppResult<Settings> {
    Ok(sqlx::query_as!(
        Settings,
        r#"update status_settings set name = $1, intro = $2, updated_at = now()
           returning name, intro, updated_at"#,
        name,
        intro
    )
    .fetch_one(e)
    .await?)
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Component {
    pub id: i64,
    pub name: String,
    pub description: String,
    /// The group it is shown under; empty: on its own
    pub group: String,
    pub position: i32,
    /// The services it stands for, by name
    pub services: Vec<String>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Every component, in the order the page shows them (by position, then name).
pub async fn components(e: impl PgExecutor<'_>) -> AppResult<Vec<Component>> {
    Ok(sqlx::query_as!(
        Component,
        r#"select c.id, c.name, c.description, c.group_name as "group", c.position,
                  coalesce(array(select s.name from status_component_services cs
                                 join services s on s.id = cs.service_id
                                 where cs.component_id = c.id order by s.name), '{}')
                      as "services!",
                  c.version, c.created_at, c.updated_at
           from status_components c
           order by c.position, lower(c.name)"#
    )
    .fetch_all(e)
    .await?)
}

/// Points a component at its services, by name; an unknown name is refused, naming it.
async fn set_services(conn: &mut PgConnection, id: i64, services: &[String]) -> AppResult<()> {
    let found: Vec<String> =
        sqlx::query_scalar!("select name from services where name = any($1)", services)
            .fetch_all(&mut *conn)
            .await?;
    if let Some(missing) = services.iter().find(|s| !found.contains(s)) {
        return Err(AppError::invalid(
            "services",
            format!("there is no service {missing:?}"),
        ));
    }
    sqlx::query!(
        "delete from status_component_services where component_id = $1",
        id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"insert into status_component_services (component_id, service_id)
           select $1, id from services where name = any($2)"#,
        id,
        services
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn named_twice(e: sqlx::Error, name: &str) -> AppError {
    match &e {
        sqlx::Error::Database(d) if d.constraint() == Some("status_components_name_key") => {
            AppError::invalid("name", format!("a component is already called {name:?}"))
        }
        _ => e.into(),
    }
}

pub async fn insert_component(conn: &mut PgConnection, d: &ComponentDraft) -> AppResult<i64> {
    let id = sqlx::query_scalar!(
        r#"insert into status_components (name, description, group_name, position)
           values ($1, $2, $3, $4) returning id"#,
        d.name,
        d.description,
        d.group,
        d.position
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| named_twice(e, &d.name))?;
    set_services(conn, id, &d.services).await?;
    Ok(id)
}

/// Changes a component if it is still at `version`; whether it was.
pub async fn update_component(
    conn: &mut PgConnection,
    id: i64,
    version: i32,
    d: &ComponentDraft,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"update status_components
           set name = $3, description = $4, group_name = $5, position = $6,
               version = version + 1, updated_at = now()
           where id = $1 and version = $2"#,
        id,
        version,
        d.name,
        d.description,
        d.group,
        d.position
    )
    .execute(&mut *conn)
    .await
    .map_err(|e| named_twice(e, &d.name))?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    set_services(conn, id, &d.services).await?;
    Ok(true)
}

/// Whether an unresolved publication names the component (it may not go while one does).
pub async fn in_use(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: whether any unresolved one names the component
           select exists(select 1 from status_publication_components pc
                         join incidents i on i.id = pc.incident_id
                         where pc.component_id = $1 and i.resolved_at is null) as "used!""#,
        id
    )
    .fetch_one(e)
    .await?)
}

pub async fn delete_component(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    let done = sqlx::query!("delete from status_components where id = $1", id)
        .execute(e)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// What the page's rows last changed: anything that moves this moves the page.
pub async fn changed_at(e: impl PgExecutor<'_>) -> AppResult<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: the public's, which is only those never restricted
           select greatest(
               (select updated_at from status_settings),
               (select max(updated_at) from status_components),
               (select max(announced_at) from status_announcements),
               (select max(p.updated_at) from status_publications p
                join incidents i on i.id = p.incident_id where not i.restricted))"#
    )
    .fetch_one(e)
    .await?)
}

/// A published incident as the public may see it, and (for the comms lead) as it stands.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Publication {
    pub incident_id: i64,
    /// How the public names it (random)
    pub public_id: String,
    #[schema(value_type = String)]
    pub key: IncidentKey,
    /// The public title
    pub title: String,
    /// Said publicly when it resolves
    pub closing: String,
    pub published_at: DateTime<Utc>,
    pub published_by: String,
    pub updated_at: DateTime<Utc>,
    /// First customer impact
    pub started_at: DateTime<Utc>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Restricted since it was published: the public sees it no more
    #[serde(skip)]
    pub restricted: bool,
}

/// The publication of one incident, if it was published.
pub async fn publication(
    e: impl PgExecutor<'_>,
    incident_id: i64,
) -> AppResult<Option<Publication>> {
    Ok(sqlx::query_as!(
        Publication,
        r#"-- every incident: the comms lead's view of one they may already see
           select p.incident_id, p.public_id, i.number as "key!: IncidentKey", p.title, p.closing,
                  p.published_at, p.published_by, p.updated_at, i.started_at, i.mitigated_at,
                  i.resolved_at, i.restricted
           from status_publications p join incidents i on i.id = p.incident_id
           where p.incident_id = $1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?)
}

/// Published incidents the public may see: every one still unresolved, and those resolved
/// since `since`; newest first.
pub async fn public_incidents(
    e: impl PgExecutor<'_>,
    since: DateTime<Utc>,
) -> AppResult<Vec<Publication>> {
    Ok(sqlx::query_as!(
        Publication,
        r#"-- every incident: the public's, which is only those never restricted
           select p.incident_id, p.public_id, i.number as "key!: IncidentKey", p.title, p.closing,
                  p.published_at, p.published_by, p.updated_at, i.started_at, i.mitigated_at,
                  i.resolved_at, i.restricted
           from status_publications p join incidents i on i.id = p.incident_id
           where not i.restricted and (i.resolved_at is null or i.resolved_at >= $1)
           order by p.published_at desc"#,
        since
    )
    .fetch_all(e)
    .await?)
}

/// Publishes an incident (or changes what its publication says), with how it affects which
/// components; a component that is gone is refused, naming it.
pub async fn publish(
    conn: &mut PgConnection,
    incident_id: i64,
    d: &PublicationDraft,
    by: &str,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into status_publications (incident_id, title, closing, published_by)
           values ($1, $2, $3, $4)
           on conflict (incident_id) do update
           set title = excluded.title, closing = excluded.closing, updated_at = now()"#,
        incident_id,
        d.title,
        d.closing,
        by
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "delete from status_publication_components where incident_id = $1",
        incident_id
    )
    .execute(&mut *conn)
    .await?;
    for (component, status) in &d.components {
        let added = sqlx::query!(
            r#"insert into status_publication_components (incident_id, component_id, status)
               select $1, id, $3 from status_components where id = $2"#,
            incident_id,
            component,
            status.as_str()
        )
        .execute(&mut *conn)
        .await?;
        if added.rows_affected() == 0 {
            return Err(AppError::invalid(
                "components",
                format!("there is no component {component}"),
            ));
        }
    }
    Ok(())
}

/// Takes an incident off the page; whether it was on it.
pub async fn unpublish(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<bool> {
    let done = sqlx::query!(
        "delete from status_publications where incident_id = $1",
        incident_id
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// How published incidents affect components.
#[derive(Debug, Clone)]
pub struct Affected {
    pub incident_id: i64,
    pub component_id: i64,
    pub status: String,
}

pub async fn affected(e: impl PgExecutor<'_>, incidents: &[i64]) -> AppResult<Vec<Affected>> {
    Ok(sqlx::query_as!(
        Affected,
        r#"select incident_id, component_id, status from status_publication_components
           where incident_id = any($1) order by incident_id, component_id"#,
        incidents
    )
    .fetch_all(e)
    .await?)
}

/// A public update: a stakeholder update for the customers audience.
#[derive(Debug, Clone)]
pub struct PublicUpdate {
    pub id: i64,
    pub incident_id: i64,
    pub body: String,
    pub sent_at: DateTime<Utc>,
}

/// The public updates of these incidents: those for customers recorded since the incident was
/// published (earlier ones were written before anyone chose to go public), oldest first.
pub async fn public_updates(
    e: impl PgExecutor<'_>,
    incidents: &[i64],
) -> AppResult<Vec<PublicUpdate>> {
    Ok(sqlx::query_as!(
        PublicUpdate,
        r#"select u.id, u.incident_id, u.body, u.sent_at from stakeholder_updates u
           join status_publications p on p.incident_id = u.incident_id
           where u.audience = 'customers' and u.incident_id = any($1)
             and u.recorded_at >= p.published_at
           order by u.id"#,
        incidents
    )
    .fetch_all(e)
    .await?)
}

/// A change of an incident's state, as its timeline has it: mitigated, resolved or reopened.
#[derive(Debug, Clone)]
pub struct Turn {
    pub incident_id: i64,
    pub kind: String,
    pub at: DateTime<Utc>,
}

/// The mitigations, resolutions and reopenings of these incidents, in order.
pub async fn turns(e: impl PgExecutor<'_>, incidents: &[i64]) -> AppResult<Vec<Turn>> {
    Ok(sqlx::query_as!(
        Turn,
        r#"select incident_id, kind, occurred_at as at from timeline_events
           where incident_id = any($1) and kind in ('mitigated', 'resolved', 'reopened')
           order by occurred_at, id"#,
        incidents
    )
    .fetch_all(e)
    .await?)
}

/// A maintenance window announced on the page.
#[derive(Debug, Clone)]
pub struct Announcement {
    pub window_id: i64,
    pub public_id: String,
}

pub async fn announcements(e: impl PgExecutor<'_>) -> AppResult<Vec<Announcement>> {
    Ok(sqlx::query_as!(
        Announcement,
        "select window_id, public_id from status_announcements order by window_id"
    )
    .fetch_all(e)
    .await?)
}

/// Announces a window; whether there is such a window.
pub async fn announce(e: impl PgExecutor<'_>, window_id: i64, by: &str) -> AppResult<bool> {
    let found = sqlx::query_scalar!(
        r#"with made as (
               insert into status_announcements (window_id, announced_by)
               select id, $2 from maintenance_windows where id = $1
               on conflict (window_id) do nothing returning 1)
           select exists(select 1 from maintenance_windows where id = $1) as "found!""#,
        window_id,
        by
    )
    .fetch_one(e)
    .await?;
    Ok(found)
}

/// Withdraws a window's announcement; whether it was announced.
pub async fn withdraw(e: impl PgExecutor<'_>, window_id: i64) -> AppResult<bool> {
    let done = sqlx::query!(
        "delete from status_announcements where window_id = $1",
        window_id
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// The page's version: every change to what the public sees raises it (the migration's
/// triggers), in the change's own transaction.
pub async fn version(e: impl PgExecutor<'_>) -> AppResult<i64> {
    Ok(
        sqlx::query_scalar!("select version from status_page_version")
            .fetch_one(e)
            .await?,
    )
}

/// One published incident for its own page, by its public id, however long ago: none when it
/// is not published or restricted.
pub async fn public_incident(
    e: impl PgExecutor<'_>,
    public_id: &str,
) -> AppResult<Option<Publication>> {
    Ok(sqlx::query_as!(
        Publication,
        r#"-- every incident: the public's, which is only those never restricted
           select p.incident_id, p.public_id, i.number as "key!: IncidentKey", p.title, p.closing,
                  p.published_at, p.published_by, p.updated_at, i.started_at, i.mitigated_at,
                  i.resolved_at, i.restricted
           from status_publications p join incidents i on i.id = p.incident_id
           where p.public_id = $1 and not i.restricted"#,
        public_id
    )
    .fetch_optional(e)
    .await?)
}

/// A status page subscriber, as the admins see them.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Subscriber {
    pub id: i64,
    pub email: String,
    /// The credential of their links; never shown
    #[serde(skip)]
    pub token: String,
    /// Every component, or only `components`
    pub all_components: bool,
    /// The components they chose (by id), when not all
    pub components: Vec<i64>,
    pub created_at: DateTime<Utc>,
    pub confirmation_sent_at: DateTime<Utc>,
    /// None: they have not confirmed, and receive nothing
    pub confirmed_at: Option<DateTime<Utc>>,
    /// Since when messages to them fail (each given up after its retries)
    pub failing_since: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

/// Which subscribers: the one with this id, address or token, or (all `None`) the first
/// `most`, failing first.
#[derive(Default)]
struct Which<'a> {
    id: Option<i64>,
    email: Option<&'a str>,
    token: Option<&'a str>,
    most: i64,
}

async fn subscribers_where(e: impl PgExecutor<'_>, w: Which<'_>) -> AppResult<Vec<Subscriber>> {
    Ok(sqlx::query_as!(
        Subscriber,
        r#"select s.id, s.email, s.token, s.all_components,
                  coalesce(array(select c.component_id from status_subscriber_components c
                                 where c.subscriber_id = s.id order by 1), '{}') as "components!",
                  s.created_at, s.confirmation_sent_at, s.confirmed_at, s.failing_since,
                  s.last_error
           from status_subscribers s
           where ($1::text is null or lower(s.email) = lower($1))
             and ($2::text is null or s.token = $2)
             and ($3::int8 is null or s.id = $3)
           order by s.failing_since desc nulls last, s.email
           limit $4"#,
        w.email,
        w.token,
        w.id,
        w.most
    )
    .fetch_all(e)
    .await?)
}

/// The first `most` subscribers, failing first, then by address.
pub async fn subscribers(e: impl PgExecutor<'_>, most: i64) -> AppResult<Vec<Subscriber>> {
    subscribers_where(
        e,
        Which {
            most,
            ..Which::default()
        },
    )
    .await
}

/// The one subscriber `w` names.
async fn one(e: impl PgExecutor<'_>, w: Which<'_>) -> AppResult<Option<Subscriber>> {
    Ok(subscribers_where(e, Which { most: 1, ..w }).await?.pop())
}

pub async fn subscriber(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<Subscriber>> {
    let w = Which {
        id: Some(id),
        ..Which::default()
    };
    one(e, w).await
}

pub async fn subscriber_by_email(
    e: impl PgExecutor<'_>,
    email: &str,
) -> AppResult<Option<Subscriber>> {
    let w = Which {
        email: Some(email),
        ..Which::default()
    };
    one(e, w).await
}

pub async fn subscriber_by_token(
    e: impl PgExecutor<'_>,
    token: &str,
) -> AppResult<Option<Subscriber>> {
    let w = Which {
        token: Some(token),
        ..Which::default()
    };
    one(e, w).await
}

/// Confirmations sent in the last hour: to requests from `from`, and to anyone.
pub async fn confirmations_lately(
    e: impl PgExecutor<'_>,
    from: Option<&str>,
) -> AppResult<(i64, i64)> {
    let r = sqlx::query!(
        r#"select count(*) filter (where requested_from = $1) as "from_here!",
                  count(*) as "all!"
           from status_subscribers
           where confirmed_at is null and confirmation_sent_at > now() - interval '1 hour'"#,
        from
    )
    .fetch_one(e)
    .await?;
    Ok((r.from_here, r.all))
}

/// Counts of subscribers: confirmed, waiting to confirm, failing.
pub async fn subscriber_counts(e: impl PgExecutor<'_>) -> AppResult<(i64, i64, i64)> {
    let r = sqlx::query!(
        r#"select count(*) filter (where confirmed_at is not null) as "confirmed!",
                  count(*) filter (where confirmed_at is null) as "waiting!",
                  count(*) filter (where failing_since is not null) as "failing!"
           from status_subscribers"#
    )
    .fetch_one(e)
    .await?;
    Ok((r.confirmed, r.waiting, r.failing))
}

/// A new subscriber, not yet confirmed; their id, or none when the address is already kept
/// (another request's, at the same moment).
pub async fn insert_subscriber(
    conn: &mut PgConnection,
    (email, token, from): (&str, &str, Option<&str>),
    components: Option<&[i64]>,
) -> AppResult<Option<i64>> {
    let id = sqlx::query_scalar!(
        r#"insert into status_subscribers (email, token, all_components, requested_from)
           values ($1, $2, $3, $4) on conflict do nothing returning id"#,
        email,
        token,
        components.is_none(),
        from
    )
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(id) = id {
        set_subscriber_components(conn, id, components).await?;
    }
    Ok(id)
}

/// What a subscriber hears about: every component (`None`) or these (ids that are no
/// component are left out).
pub async fn set_subscriber_components(
    conn: &mut PgConnection,
    id: i64,
    components: Option<&[i64]>,
) -> AppResult<()> {
    sqlx::query!(
        "delete from status_subscriber_components where subscriber_id = $1",
        id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "update status_subscribers set all_components = $2 where id = $1",
        id,
        components.is_none()
    )
    .execute(&mut *conn)
    .await?;
    if let Some(list) = components {
        sqlx::query!(
            r#"insert into status_subscriber_components (subscriber_id, component_id)
               select $1, id from status_components where id = any($2)"#,
            id,
            list
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Takes the sending of another confirmation to subscriber `id`, still unconfirmed, whose
/// last was sent more than `minutes` ago: false when it is not due (or another request has
/// just taken it).
pub async fn confirm_again(
    e: impl PgExecutor<'_>,
    id: i64,
    from: Option<&str>,
    minutes: i64,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        r#"update status_subscribers set confirmation_sent_at = now(), requested_from = $2
           where id = $1 and confirmed_at is null
             and confirmation_sent_at < now() - make_interval(mins => $3::int4)"#,
        id,
        from,
        minutes as i32
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Confirms a subscriber (a second time changes nothing).
pub async fn confirm_subscriber(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        "update status_subscribers set confirmed_at = coalesce(confirmed_at, now()) where id = $1",
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Removes a subscriber, with their messages not yet sent.
pub async fn delete_subscriber(e: impl PgExecutor<'_>, id: i64) -> AppResult<bool> {
    Ok(
        sqlx::query!("delete from status_subscribers where id = $1", id)
            .execute(e)
            .await?
            .rows_affected()
            == 1,
    )
}

/// Forgets addresses that did not confirm within `days` of their last confirmation; how many.
pub async fn forget_unconfirmed(e: impl PgExecutor<'_>, days: i64) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"delete from status_subscribers
           where confirmed_at is null
             and confirmation_sent_at < now() - make_interval(days => $1::int4)"#,
        days as i32
    )
    .execute(e)
    .await?
    .rows_affected())
}

/// A public event not yet mailed: a public update, or a resolution's closing word.
#[derive(Debug, Clone)]
pub struct MailEvent {
    /// `update:<id>` or `resolved:<incident>:<unix seconds>`
    pub event: String,
    pub incident_id: i64,
    /// When it became public: subscribers confirmed by then receive it
    pub at: DateTime<Utc>,
    /// The time it speaks of (an update's, or the resolution)
    pub said_at: DateTime<Utc>,
    pub body: String,
    pub resolved: bool,
}

/// Public events of the last day not yet mailed, oldest first.
pub async fn unmailed(e: impl PgExecutor<'_>) -> AppResult<Vec<MailEvent>> {
    Ok(sqlx::query_as!(
        MailEvent,
        r#"-- every incident: the public's, which is only those never restricted
           select e.event as "event!", e.incident_id as "incident_id!", e.at as "at!",
                  e.said_at as "said_at!", e.body as "body!", e.resolved as "resolved!"
           from (
               select 'update:' || u.id as event, u.incident_id, u.recorded_at as at,
                      u.sent_at as said_at, u.body, false as resolved
               from stakeholder_updates u
               join status_publications p on p.incident_id = u.incident_id
               join incidents i on i.id = u.incident_id
               where u.audience = 'customers' and u.recorded_at >= p.published_at
                 and not i.restricted and u.recorded_at > now() - interval '1 day'
               union all
               -- a resolution is public from when it was recorded (its time may be earlier)
               select 'resolved:' || i.id || ':' || extract(epoch from i.resolved_at)::int8,
                      i.id, greatest(r.recorded_at, p.published_at), i.resolved_at, p.closing,
                      true
               from status_publications p join incidents i on i.id = p.incident_id
               cross join lateral (
                   select coalesce(max(t.recorded_at), i.resolved_at) as recorded_at
                   from timeline_events t
                   where t.incident_id = i.id and t.kind = 'resolved') r
               where i.resolved_at is not null and not i.restricted
                 and greatest(r.recorded_at, p.published_at) > now() - interval '1 day') e
           where not exists (select 1 from status_mailings m where m.event = e.event)
           order by e.at, e.event"#
    )
    .fetch_all(e)
    .await?)
}

/// Takes an event for mailing: false when another replica has (the ledger's key is the
/// event; a second writer waits for the first's commit and then finds it there).
pub async fn take_mailing(
    e: impl PgExecutor<'_>,
    event: &str,
    incident_id: i64,
    recipients: i32,
) -> AppResult<bool> {
    Ok(sqlx::query!(
        r#"insert into status_mailings (event, incident_id, recipients) values ($1, $2, $3)
           on conflict (event) do nothing"#,
        event,
        incident_id,
        recipients
    )
    .execute(e)
    .await?
    .rows_affected()
        == 1)
}

/// Who receives an event of incident `incident_id` that became public at `at`: subscribers
/// confirmed by then who chose every component, or one it affects (every subscriber when it
/// names none); (id, token).
pub async fn recipients(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    at: DateTime<Utc>,
) -> AppResult<Vec<(i64, String)>> {
    Ok(sqlx::query!(
        r#"select s.id, s.token from status_subscribers s
           where s.confirmed_at is not null and s.confirmed_at <= $2
             and (s.all_components
                  or not exists (select 1 from status_publication_components pc
                                 where pc.incident_id = $1)
                  or exists (select 1 from status_subscriber_components sc
                             join status_publication_components pc
                               on pc.component_id = sc.component_id and pc.incident_id = $1
                             where sc.subscriber_id = s.id))
           order by s.id"#,
        incident_id,
        at
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.id, r.token))
    .collect())
}

/// Incidents with status page mail still to send that the public may no longer see
/// (restricted, or taken off the page).
pub async fn withdrawn_with_mail(e: impl PgExecutor<'_>) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: those no longer public, whose mail is called off
           select distinct n.incident_id as "id!" from notifications n
           join incidents i on i.id = n.incident_id
           where n.status_subscriber_id is not null and n.state = 'pending'
             and (i.restricted or not exists (select 1 from status_publications p
                                              where p.incident_id = i.id))"#
    )
    .fetch_all(e)
    .await?)
}

/// Forgets the mailing ledger's rows older than a week (only the last day's events are
/// mailed, so older rows guard nothing); how many.
pub async fn purge_mailings(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(
        sqlx::query!("delete from status_mailings where queued_at < now() - interval '7 days'")
            .execute(e)
            .await?
            .rows_affected(),
    )
}
