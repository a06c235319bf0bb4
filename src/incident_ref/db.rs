//! Reading an incident's reference, and locking incidents for the engines.

use sqlx::{PgConnection, PgExecutor};

use serde::Serialize;

use super::domain::SeenBy;
use crate::domain::{IncidentKey, Severity};
use crate::error::{AppError, AppResult};

/// An incident as a room below `incidents` names it.
#[derive(Debug, Clone)]
pub struct IncidentRef {
    pub id: i64,
    pub key: IncidentKey,
    pub title: String,
    pub summary: String,
    pub severity: Severity,
    /// triggered, acknowledged, mitigated or resolved
    pub status: String,
    pub service_id: Option<i64>,
    /// The service's name
    pub service: Option<String>,
    /// Kept to named teams and people
    pub restricted: bool,
}

struct Row {
    id: i64,
    key: IncidentKey,
    title: String,
    summary: String,
    severity: String,
    status: String,
    service_id: Option<i64>,
    service: Option<String>,
    restricted: bool,
}

impl TryFrom<Row> for IncidentRef {
    type Error = AppError;

    fn try_from(r: Row) -> AppResult<Self> {
        Ok(Self {
            severity: Severity::parse("severity", &r.severity)?,
            id: r.id,
            key: r.key,
            title: r.title,
            summary: r.summary,
            status: r.status,
            service_id: r.service_id,
            service: r.service,
            restricted: r.restricted,
        })
    }
}

/// The incident with this id, if there is one (for the engines, which see every incident).
pub async fn by_id(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<IncidentRef>> {
    find(e, Some(id), None, SeenBy::ALL).await
}

/// The incident with this key, if there is one `seen_by` may see.
pub async fn by_key(
    e: impl PgExecutor<'_>,
    key: IncidentKey,
    seen_by: SeenBy,
) -> AppResult<Option<IncidentRef>> {
    find(e, None, Some(key.0), seen_by).await
}

/// The incident with id `id` or number `number` (one of them given); either is a unique index.
async fn find(
    e: impl PgExecutor<'_>,
    id: Option<i64>,
    number: Option<i64>,
    seen_by: SeenBy,
) -> AppResult<Option<IncidentRef>> {
    sqlx::query_as!(
        Row,
        r#"select i.id, i.number as "key: IncidentKey", i.title, i.summary, i.severity, i.status,
                  i.service_id, s.name as "service?", i.restricted
           from incidents i left join services s on i.service_id = s.id
           where (i.id = $1 or i.number = $2) and incident_visible(i.restricted, i.id, $3)"#,
        id,
        number,
        seen_by.sql()
    )
    .fetch_optional(e)
    .await?
    .map(IncidentRef::try_from)
    .transpose()
}

/// An incident a viewer may or may not see: whether it exists, and if so whether it is
/// restricted and seen by them.
pub struct Sight {
    pub id: i64,
    pub restricted: bool,
    pub visible: bool,
}

/// How the incident with this key stands to `viewer`, if it exists.
pub async fn sight(
    e: impl PgExecutor<'_>,
    key: IncidentKey,
    viewer: SeenBy,
) -> AppResult<Option<Sight>> {
    Ok(sqlx::query_as!(
        Sight,
        r#"select id, restricted,
                  incident_visible(restricted, id, $2) as "visible!"
           from incidents where number = $1"#,
        key.0,
        viewer.sql()
    )
    .fetch_optional(e)
    .await?)
}

/// Whether `seen_by` may see the incident `id` (one that does not exist is not seen).
pub async fn visible(e: impl PgExecutor<'_>, id: i64, seen_by: SeenBy) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select incident_visible(restricted, id, $2) as "visible!" from incidents where id = $1"#,
        id,
        seen_by.sql()
    )
    .fetch_optional(e)
    .await?
    .unwrap_or(false))
}

/// Who may see a restricted incident: the teams and people named.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct Access {
    /// Whether the incident is kept to the teams and people below (and admins)
    pub restricted: bool,
    pub teams: Vec<Grantee>,
    pub people: Vec<Grantee>,
}

/// A team (by slug) or a person (by handle) who may see a restricted incident.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Grantee {
    /// The team's slug or the person's handle
    pub name: String,
    /// What people call them
    pub title: String,
    #[serde(skip)]
    pub id: i64,
}

/// Who may see the incident `id`.
pub async fn access(e: impl PgExecutor<'_>, id: i64) -> AppResult<Access> {
    let rows = sqlx::query!(
        r#"select i.restricted,
                  coalesce(t.id, p.id) as "id?",
                  a.team_id is not null as "team!",
                  coalesce(t.slug, p.handle) as "name?",
                  coalesce(t.name, p.name) as "title?"
           -- every incident: whom one is kept to, for those who see it and the channels
           from incidents i
           left join incident_access a on a.incident_id = i.id
           left join teams t on t.id = a.team_id
           left join people p on p.id = a.person_id
           where i.id = $1
           order by 3 desc, 4"#,
        id
    )
    .fetch_all(e)
    .await?;
    let mut access = Access::default();
    for r in rows {
        access.restricted = r.restricted;
        let (Some(id), Some(name), Some(title)) = (r.id, r.name, r.title) else {
            continue;
        };
        let g = Grantee { name, title, id };
        if r.team {
            access.teams.push(g);
        } else {
            access.people.push(g);
        }
    }
    Ok(access)
}

/// Key-share locks the incidents `ids` names, in id order, and returns those that exist. The
/// background engines take it before they claim an incident's timers or escalation, so they
/// lock in the order people's changes do — the incident first (`for update`), then what hangs
/// off it — and a change and an engine queue at the incident instead of each holding what the
/// other waits for. Key-share, because the engines' own writes (breaches, timeline entries)
/// only need the incident to stay; it waits for a change holding the incident and makes a
/// change wait for the engine's short transaction.
pub async fn share(conn: &mut PgConnection, ids: &[i64]) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        r#"-- every incident: the engines' lock
           select id from incidents where id = any($1) order by id for key share"#,
        ids
    )
    .fetch_all(conn)
    .await?)
}
