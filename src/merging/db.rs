//! What the merge page offers: the open incidents one could duplicate.

use sqlx::PgExecutor;

use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

/// An open incident another could merge into.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub key: IncidentKey,
    pub title: String,
    pub severity: String,
    pub status: String,
    pub service: Option<String>,
}

/// Open incidents other than `incident_id` that `seen_by` may see: those linked to it first,
/// then those of its service, then the newest; at most `limit`.
pub async fn candidates(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    service_id: Option<i64>,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<Candidate>> {
    Ok(sqlx::query_as!(
        Candidate,
        r#"select i.number as "key!: IncidentKey", i.title, i.severity, i.status,
                  s.name as "service?"
           from incidents i
           left join services s on s.id = i.service_id
           where i.status <> 'resolved' and i.id <> $1
             and incident_visible(i.restricted, i.id, $3)
           order by exists (select 1 from incident_links l
                            where (l.incident_id, l.related_id) = (least(i.id, $1), greatest(i.id, $1))) desc,
                    (i.service_id is not distinct from $2) desc, i.number desc
           limit $4"#,
        incident_id,
        service_id,
        seen_by.sql(),
        limit
    )
    .fetch_all(e)
    .await?)
}
