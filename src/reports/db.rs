//! Aggregates of the response metrics.

use sqlx::PgExecutor;

use super::domain::{GroupBy, Metric, Row};
use crate::error::AppResult;

/// Mean and median of `metric` per group, over the incidents that reached the metric's end.
pub async fn figures(
    e: impl PgExecutor<'_>,
    metric: Metric,
    group_by: GroupBy,
) -> AppResult<Vec<Row>> {
    let rows = sqlx::query!(
        r#"with measured as (
               select case $2::text
                          when 'service' then coalesce(s.name, '(no service)')
                          when 'severity' then i.peak_severity
                          else to_char(date_trunc('month', i.detected_at at time zone 'UTC'), 'YYYY-MM')
                      end as grp,
                      extract(epoch from (case $1::text
                          when 'mtta' then i.acknowledged_at
                          when 'mttm' then i.mitigated_at
                          else i.resolved_at
                      end) - i.detected_at)::float8 as secs
               from incidents i left join services s on s.id = i.service_id)
           select grp as "grp!", count(*) as "incidents!", avg(secs) as "mean_secs!",
                  percentile_cont(0.5) within group (order by secs) as "median_secs!"
           from measured where secs is not null
           group by grp order by grp"#,
        metric.as_str(),
        group_by.as_str()
    )
    .fetch_all(e)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Row {
            group: r.grp,
            incidents: r.incidents,
            mean_secs: r.mean_secs,
            median_secs: r.median_secs,
        })
        .collect())
}
