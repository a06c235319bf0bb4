-- The managers' reports (mean and median time to acknowledge, mitigate and resolve by month,
-- service and severity) over every incident ever: computed by PostgreSQL from the incidents'
-- timestamps, but kept, so a read is a few rows instead of sorting years of incidents nine
-- ways. A background refresher in every replica (one at a time, under an advisory lock)
-- refreshes it when incidents have changed; reports say when their figures were computed.
create materialized view report_figures as
with measured as (
    select coalesce(s.name, '(no service)') as service, i.peak_severity as severity,
           to_char(date_trunc('month', i.detected_at at time zone 'UTC'), 'YYYY-MM') as month,
           extract(epoch from i.acknowledged_at - i.detected_at)::float8 as mtta,
           extract(epoch from i.mitigated_at - i.detected_at)::float8 as mttm,
           extract(epoch from i.resolved_at - i.detected_at)::float8 as mttr
    from incidents i left join services s on s.id = i.service_id)
select m.metric, g.group_by, g.grp, count(*) as incidents, avg(m.secs) as mean_secs,
       percentile_cont(0.5) within group (order by m.secs) as median_secs
from measured,
     lateral (values ('mtta', mtta), ('mttm', mttm), ('mttr', mttr)) m(metric, secs),
     lateral (values ('month', month), ('service', service), ('severity', severity)) g(group_by, grp)
where m.secs is not null
group by m.metric, g.group_by, g.grp;
create unique index report_figures_key on report_figures (metric, group_by, grp);

-- When the figures were computed and what the incidents looked like then (how many, the newest
-- change), so a refresher can tell whether they changed since.
create table report_refreshes (
    id boolean primary key default true constraint report_refreshes_one check (id),
    refreshed_at timestamptz not null,
    incidents bigint not null,
    last_change timestamptz
);
insert into report_refreshes (refreshed_at, incidents, last_change)
select now(), count(*), max(updated_at) from incidents;

create index incidents_updated on incidents (updated_at);
