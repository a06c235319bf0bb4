//! The search query.

use sqlx::PgExecutor;

use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Hit {
    /// `INC-<n>`
    #[schema(value_type = String)]
    pub key: IncidentKey,
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

/// How many of each source's newest matches are ranked.
pub const CANDIDATES: i64 = 100;
/// How many of each source's newest rows are walked, newest first, looking for them before
/// the GIN index is asked instead: incidents, timeline entries, postmortems.
pub const WINDOWS: [i64; 3] = [2_500, 10_000, 1_000];

/// The incidents best matching `q`, at most `limit`, among the newest [`CANDIDATES`] matches of
/// each source (incidents, timeline entries, postmortems) — so a word in half of a hundred
/// thousand incidents costs what a rare one does. Each source's candidates are found one of two
/// ways, whichever the word needs, never by the planner's guess at how common it is (a guess
/// that walked a million timeline entries for a word in none): its newest rows are walked in
/// id order until enough match (a common word), and only when the walk falls short is its GIN
/// index asked for every match, newest first (a rare word, so few). The incidents are ranked
/// on the candidates' stored vectors and cut to `limit`, and only then is a snippet made, from
/// each incident's best match alone (`ts_headline` reads the whole text). Only incidents
/// `seen_by` may see are found.
pub async fn search(
    e: impl PgExecutor<'_>,
    q: &str,
    seen_by: SeenBy,
    limit: i64,
) -> AppResult<Vec<Hit>> {
    Ok(sqlx::query_as!(
        Hit,
        r#"with q as materialized (select websearch_to_tsquery('english', $1) as q),
           inc_walk as (
             select w.id, w.search
             from (select id, search from incidents order by id desc limit $4) w, q
             where w.search @@ q.q limit $3),
           inc as (
             select id, search from inc_walk where (select count(*) from inc_walk) >= $3
             union all
             select * from (
               select i.id, i.search from incidents i, q
               where i.search @@ q.q and (select count(*) from inc_walk) < $3
               order by i.id + 0 desc limit $3) deep),
           tl_walk as (
             select w.id, w.incident_id, w.search
             from (select id, incident_id, search from timeline_events order by id desc limit $5) w, q
             where w.search @@ q.q limit $3),
           tl as (
             select id, incident_id, search from tl_walk where (select count(*) from tl_walk) >= $3
             union all
             select * from (
               select t.id, t.incident_id, t.search from timeline_events t, q
               where t.search @@ q.q and (select count(*) from tl_walk) < $3
               order by t.id + 0 desc limit $3) deep),
           pm_walk as (
             select w.id, w.incident_id, w.search
             from (select id, incident_id, search from postmortems order by id desc limit $6) w, q
             where w.search @@ q.q limit $3),
           pm as (
             select id, incident_id, search from pm_walk where (select count(*) from pm_walk) >= $3
             union all
             select * from (
               select p.id, p.incident_id, p.search from postmortems p, q
               where p.search @@ q.q and (select count(*) from pm_walk) < $3
               order by p.id + 0 desc limit $3) deep),
           hits as (
             select inc.id as incident_id, 'incident' as source, 2 * ts_rank_cd(inc.search, q.q) as rank,
                    inc.id as ref
             from inc, q
             union all
             select tl.incident_id, 'timeline', ts_rank_cd(tl.search, q.q), tl.id from tl, q
             union all
             select pm.incident_id, 'postmortem', 1.5 * ts_rank_cd(pm.search, q.q), pm.id from pm, q
           ),
           top as (
             select i.id, i.number, i.title, i.severity, i.status, i.summary, i.impact,
                    sum(h.rank) as score, array_agg(distinct h.source) as sources,
                    (array_agg(h.source order by h.rank desc))[1] as best_source,
                    (array_agg(h.ref order by h.rank desc))[1] as best_ref
             from hits h join incidents i on i.id = h.incident_id
             where incident_visible(i.restricted, i.id, $7)
             group by i.id
             order by sum(h.rank) desc, i.number desc
             limit $2
           )
           select t.number as "key!: IncidentKey", t.title, t.severity, t.status,
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
        CANDIDATES,
        WINDOWS[0],
        WINDOWS[1],
        WINDOWS[2],
        seen_by.sql(),
    )
    .fetch_all(e)
    .await?)
}
