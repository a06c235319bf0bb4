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

/// The incidents best matching `q`, at most `limit`. Every source is found through its GIN
/// index and ranked on its stored vector; the incidents are ranked and cut to `limit` first,
/// and only then is a snippet made, from each incident's best match alone (`ts_headline`
/// reads the whole text, so it runs `limit` times, not once per match).
pub async fn search(e: impl PgExecutor<'_>, q: &str, limit: i64) -> AppResult<Vec<Hit>> {
    Ok(sqlx::query_as!(
        Hit,
        r#"with q as not materialized (select websearch_to_tsquery('english', $1) as q),
           hits as (
             select i.id as incident_id, 'incident' as source, 2 * ts_rank_cd(i.search, q.q) as rank,
                    i.id as ref
             from incidents i, q where i.search @@ q.q
             union all
             select t.incident_id, 'timeline', ts_rank_cd(t.search, q.q), t.id
             from timeline_events t, q where t.search @@ q.q
             union all
             select pm.incident_id, 'postmortem', 1.5 * ts_rank_cd(pm.search, q.q), pm.id
             from postmortems pm, q where pm.search @@ q.q
           ),
           top as (
             select i.id, i.number, i.title, i.severity, i.status, i.summary, i.impact,
                    sum(h.rank) as score, array_agg(distinct h.source) as sources,
                    (array_agg(h.source order by h.rank desc))[1] as best_source,
                    (array_agg(h.ref order by h.rank desc))[1] as best_ref
             from hits h join incidents i on i.id = h.incident_id
             group by i.id
             order by sum(h.rank) desc, i.number desc
             limit $2
           )
           select 'INC-' || t.number as "key!", t.title, t.severity, t.status,
                  t.score::real as "score!",
                  (case t.best_source
                     when 'timeline' then
                       (select ts_headline('english', e.body, q.q,
                                           'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10')
                        from timeline_events e where e.id = t.best_ref)
                     when 'postmortem' then
                       (select ts_headline('english', pm.summary || ' ' || pm.root_cause || ' '
                                           || pm.contributing_factors || ' ' || pm.lessons, q.q,
                                           'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10')
                        from postmortems pm where pm.id = t.best_ref)
                     else ts_headline('english', t.title || ' ' || t.summary || ' ' || t.impact, q.q,
                                      'StartSel=«, StopSel=», MaxFragments=1, MaxWords=30, MinWords=10')
                   end) as "snippet!",
                  t.sources as "sources!"
           from top t, q
           order by t.score desc, t.number desc"#,
        q,
        limit,
    )
    .fetch_all(e)
    .await?)
}
