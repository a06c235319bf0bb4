//! Reading an incident's reference, and locking incidents for the engines.

use sqlx::{PgConnection, PgExecutor};

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
        })
    }
}

/// The incident with this id, if there is one.
pub async fn by_id(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<IncidentRef>> {
    find(e, Some(id), None).await
}

/// The incident with this key, if there is one.
pub async fn by_key(e: impl PgExecutor<'_>, key: IncidentKey) -> AppResult<Option<IncidentRef>> {
    find(e, None, Some(key.0)).await
}

/// The incident with id `id` or number `number` (one of them given); either is a unique index.
async fn find(
    e: impl PgExecutor<'_>,
    id: Option<i64>,
    number: Option<i64>,
) -> AppResult<Option<IncidentRef>> {
    sqlx::query_as!(
        Row,
        r#"select i.id, i.number as "key: IncidentKey", i.title, i.summary, i.severity, i.status,
                  i.service_id, s.name as "service?"
           from incidents i left join services s on i.service_id = s.id
           where i.id = $1 or i.number = $2"#,
        id,
        number
    )
    .fetch_optional(e)
    .await?
    .map(IncidentRef::try_from)
    .transpose()
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
        "select id from incidents where id = any($1) order by id for key share",
        ids
    )
    .fetch_all(conn)
    .await?)
}
