//! The search query.

use sqlx::PgExecutor;

use crate::error::AppResult;

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Hit {
    /// `INC-<n>`
    pub key: String,
    pub title: String,
    pub severity: String,
    pub status: String,
    /// Higher is better
    pub score: f32,
    /// The best-matching passage, matches between « and »
    pub snippet: String,
    /// Where it matched: incident, timeline, postmortem
    pub sources: Vec<String>,
}

pub async fn search(e: impl PgExecutor<'_>, q: &str, limit: i64) -> AppResult<Vec<Hit>> {
    Ok(sqlx::query_as!(
        Hit,
        r#"with q as (select websearch_to_tsquery('english', $1) as q),
           hits as (
             select i.id as incident_id, 'incident' as source,
                    2 * ts_rank_cd(to_tsvector('english', i.title || ' ' || i.summary || ' ' || i.impact), q.q) as rank,
                    ts_headline('english', i.title || ' ' || i.summary || ' ' || i.impact, q.q,
                                'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10') as snippet
             from incidents i, q
             where to_tsvector('english', i.title || ' ' || i.summary || ' ' || i.impact) @@ q.q
             union all
             select t.incident_id, 'timeline',
                    ts_rank_cd(to_tsvector('english', t.body), q.q),
                    ts_headline('english', t.body, q.q, 'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10')
             from timeline_events t, q
             where to_tsvector('english', t.body) @@ q.q
             union all
             select pm.incident_id, 'postmortem',
                    1.5 * ts_rank_cd(to_tsvector('english', pm.summary || ' ' || pm.impact || ' ' || pm.root_cause || ' '
                        || pm.contributing_factors || ' ' || pm.detection || ' ' || pm.went_well || ' ' || pm.was_hard || ' '
                        || pm.got_lucky || ' ' || pm.lessons), q.q),
                    ts_headline('english', pm.summary || ' ' || pm.root_cause || ' ' || pm.contributing_factors || ' ' || pm.lessons, q.q,
                                'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10')
             from postmortems pm, q
             where to_tsvector('english', pm.summary || ' ' || pm.impact || ' ' || pm.root_cause || ' '
                        || pm.contributing_factors || ' ' || pm.detection || ' ' || pm.went_well || ' ' || pm.was_hard || ' '
                        || pm.got_lucky || ' ' || pm.lessons) @@ q.q
           )
           select 'INC-' || i.number as "key!", i.title, i.severity, i.status,
                  sum(h.rank)::real as "score!",
                  (array_agg(h.snippet order by h.rank desc))[1] as "snippet!",
                  array_agg(distinct h.source) as "sources!"
           from hits h join incidents i on i.id = h.incident_id
           group by i.id
           order by sum(h.rank) desc, i.number desc
           limit $2"#,
        q,
        limit,
    )
    .fetch_all(e)
    .await?)
}
