-- The installation of scripts/bench-scale: a database that has run for three years, grown
-- from the demo world (`quell demo`: 200 incidents over six months, from a fixed seed) by
-- copying its resolved incidents back in time, each copy 52 hours earlier than the one before,
-- with their timelines, roles, updates, alert groups and alerts; the first copies keep their
-- postmortems and action items. Three storm incidents of 50,000 alerts each in one group (seven
-- labels, two annotations, as Alertmanager sends), and extra alerts and notes bring the totals
-- to 100,000 incidents, 1,000,000 timeline events and 1,000,000 alerts.
-- psql variables: copies (502), pm_copies (65), storm_alerts (50000), alerts_total (1000000;
-- scripts/bench-scale passes 10,000,000),
-- events_total (1000000).
\set ON_ERROR_STOP on
set synchronous_commit = off;
-- Live announcements are for open pages; a bulk load of history announces nothing.
alter table timeline_events disable trigger timeline_events_announce;
-- The months of alert partitions the history resolved in (three years and a margin).
select alert_partitions_cover(now() - interval '4 years', now());

create temporary table src as
select i.id, row_number() over (order by i.id) as n
from incidents i where i.status = 'resolved';
select count(*) as src_count, max(n) as src_max from src \gset
select coalesce(max(id), 0) as id_base from incidents \gset
select coalesce(max(number), 0) as number_base from incidents \gset
select coalesce(max(id), 0) as group_base from alert_groups \gset
select coalesce(max(id), 0) as pm_base from postmortems \gset

create temporary table copy_map as
select s.id as old_id, k,
       :id_base + (k - 1) * :src_count + s.n as new_id,
       :number_base + (k - 1) * :src_count + s.n as new_number,
       make_interval(hours => 52 * k) as shift
from src s, generate_series(1, :copies) k;
create index on copy_map (old_id);

insert into incidents (id, number, title, severity, status, service_id, summary, impact,
                       started_at, detected_at, acknowledged_at, mitigated_at, resolved_at,
                       version, created_at, updated_at, peak_severity)
overriding system value
select m.new_id, m.new_number, i.title, i.severity, i.status, i.service_id, i.summary, i.impact,
       i.started_at - m.shift, i.detected_at - m.shift, i.acknowledged_at - m.shift,
       i.mitigated_at - m.shift, i.resolved_at - m.shift, i.version,
       i.created_at - m.shift, i.updated_at - m.shift, i.peak_severity
from copy_map m join incidents i on i.id = m.old_id;

insert into timeline_events (incident_id, occurred_at, recorded_at, kind, author, body, details,
                             incident_version)
select m.new_id, e.occurred_at - m.shift, e.recorded_at - m.shift, e.kind, e.author, e.body,
       e.details, e.incident_version
from copy_map m join timeline_events e on e.incident_id = m.old_id;

insert into incident_roles (incident_id, role, person_id, assigned_at)
select m.new_id, r.role, r.person_id, r.assigned_at - m.shift
from copy_map m join incident_roles r on r.incident_id = m.old_id;

insert into stakeholder_updates (incident_id, audience, body, sent_at, author, author_id, recorded_at)
select m.new_id, u.audience, u.body, u.sent_at - m.shift, u.author, u.author_id, u.recorded_at - m.shift
from copy_map m join stakeholder_updates u on u.incident_id = m.old_id;

-- Alert groups and their alerts, closed and resolved like the incidents they belong to.
create temporary table group_map as
select g.id as old_id, m.k, m.new_id as incident_id,
       :group_base + row_number() over (order by m.k, g.id) as new_id, m.shift
from copy_map m join alert_groups g on g.incident_id = m.old_id;
create index on group_map (old_id, k);

insert into alert_groups (id, integration_id, group_key, incident_id, opened_at, closed_at)
overriding system value
select gm.new_id, g.integration_id, g.group_key || '/' || gm.k, gm.incident_id,
       g.opened_at - gm.shift, coalesce(g.closed_at, i.resolved_at) - gm.shift
from group_map gm join alert_groups g on g.id = gm.old_id join incidents i on i.id = g.incident_id;

insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, source,
                    severity, labels, details, source_url, starts_at, received_at,
                    last_received_at, deliveries, resolved_at, resolved_by, rule_id, routed, raw,
                    retained_from)
select a.integration_id, gm.new_id, gm.incident_id, a.dedup_key || '/' || gm.k, 'resolved',
       a.summary, a.source, a.severity, a.labels, a.details, a.source_url,
       a.starts_at - gm.shift, a.received_at - gm.shift, a.last_received_at - gm.shift,
       a.deliveries, coalesce(a.resolved_at, i.resolved_at) - gm.shift,
       coalesce(a.resolved_by, 'incident'), a.rule_id, a.routed, a.raw,
       coalesce(a.resolved_at, i.resolved_at) - gm.shift
from group_map gm
join alerts a on a.group_id = gm.old_id
join incidents i on i.id = a.incident_id;

-- Postmortems (and their action items) of the first copies.
create temporary table pm_map as
select p.id as old_id, m.k, m.new_id as incident_id,
       :pm_base + row_number() over (order by m.k, p.id) as new_id, m.shift
from copy_map m join postmortems p on p.incident_id = m.old_id
where m.k <= :pm_copies;

insert into postmortems (id, incident_id, status, impacted, summary, impact, requests_label,
                         failed_requests, total_requests, root_cause, contributing_factors,
                         detection, went_well, was_hard, got_lucky, lessons, timeline_event_ids,
                         version, created_at, updated_at, published_at)
overriding system value
select pm.new_id, pm.incident_id, p.status, p.impacted, p.summary, p.impact, p.requests_label,
       p.failed_requests, p.total_requests, p.root_cause, p.contributing_factors, p.detection,
       p.went_well, p.was_hard, p.got_lucky, p.lessons, null, p.version,
       p.created_at - pm.shift, p.updated_at - pm.shift, p.published_at - pm.shift
from pm_map pm join postmortems p on p.id = pm.old_id;

-- Each copied postmortem's action items twice over (a second round of follow-ups).
insert into action_items (postmortem_id, number, action, type, owner_id, due_on, work_item,
                          status, created_at, updated_at, version)
select pm.new_id, a.number + r * 100, a.action, a.type, a.owner_id,
       (a.due_on - pm.shift)::date, a.work_item,
       case when r = 1 and a.status = 'open' then 'in_progress' else a.status end,
       a.created_at - pm.shift, a.updated_at - pm.shift, a.version
from pm_map pm join action_items a on a.postmortem_id = pm.old_id, generate_series(0, 1) r;

-- Three storm incidents, each a herd of :storm_alerts alerts in one group.
-- (Rows were copied with explicit ids: the identity sequences move past them first.)
select setval(pg_get_serial_sequence('incidents', 'id'), (select max(id) from incidents));
select setval(pg_get_serial_sequence('alert_groups', 'id'), (select max(id) from alert_groups));
select setval(pg_get_serial_sequence('postmortems', 'id'), (select max(id) from postmortems));
select id as storm_integration from integrations order by created_at limit 1 \gset
select max(number) as top_number from incidents \gset
insert into incidents (number, title, severity, status, service_id, summary, impact, started_at,
                       detected_at, acknowledged_at, mitigated_at, resolved_at, peak_severity)
select :top_number + s, 'Retry storm on payments-gateway ' || s, 'Sev2', 'resolved',
       (select id from services where name = 'payments-gateway'),
       'Clients retried without backoff; every retry fired an alert.',
       'Card payments slow for ' || (20 + s * 7) || ' minutes',
       now() - make_interval(days => 30 * s), now() - make_interval(days => 30 * s),
       now() - make_interval(days => 30 * s) + interval '4 minutes',
       now() - make_interval(days => 30 * s) + interval '40 minutes',
       now() - make_interval(days => 30 * s) + interval '2 hours', 'Sev2'
from generate_series(1, 3) s;
create temporary table storms as
select id, number, started_at from incidents where number > :top_number;
insert into timeline_events (incident_id, occurred_at, kind, author, body)
select s.id, s.started_at + make_interval(mins => v.at), v.kind, 'Quell', v.body
from storms s, (values (0, 'opened', 'Opened by an alert storm'),
                       (4, 'acknowledged', 'Acknowledged'),
                       (40, 'mitigated', 'Mitigated: retries capped'),
                       (120, 'resolved', 'Resolved')) v(at, kind, body);
insert into alert_groups (integration_id, group_key, incident_id, opened_at, closed_at)
select :'storm_integration', 'storm/' || s.number, s.id, s.started_at, s.started_at + interval '2 hours'
from storms s;
insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, source,
                    severity, labels, details, source_url, starts_at, received_at,
                    last_received_at, resolved_at, resolved_by, routed, raw, retained_from)
select :'storm_integration', g.id, s.id, 'storm-' || s.number || '-' || n, 'resolved',
       'PaymentRetries high on pay-' || (n % 40), 'pay-' || (n % 40) || ':9100', 'critical',
       jsonb_build_object('alertname', 'PaymentRetries', 'instance', 'pay-' || (n % 40) || ':9100',
                          'job', 'payments-gateway', 'severity', 'critical', 'service',
                          'payments-gateway', 'region', 'eu-west-' || (n % 3), 'pod',
                          'gateway-' || n),
       jsonb_build_object('summary', 'PaymentRetries high on pay-' || (n % 40),
                          'runbook_url', 'https://runbooks.example.com/PaymentRetries'),
       'http://prometheus:9090/graph?g0.expr=payment_retries',
       s.started_at + make_interval(secs => n * 0.1), s.started_at + make_interval(secs => n * 0.1),
       s.started_at + make_interval(secs => n * 0.1), s.started_at + interval '2 hours', 'incident',
       '{"rule": "Default", "severity": "Sev2"}',
       '{"status": "firing"}', s.started_at + interval '2 hours'
from storms s join alert_groups g on g.incident_id = s.id, generate_series(1, :storm_alerts) n;

-- Up to the totals: more alerts in the copied groups (a group's alert fired again under other
-- keys, a second later each time), more notes on the copied incidents.
select :alerts_total - count(*) as more_alerts from alerts \gset
create temporary table refire as
select * from alerts where dedup_key like '%/%' and status = 'resolved' order by id;
select greatest(count(*), 1) as refire_count from refire \gset
insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, source,
                    severity, labels, details, source_url, starts_at, received_at,
                    last_received_at, deliveries, resolved_at, resolved_by, rule_id, routed, raw,
                    retained_from)
select a.integration_id, a.group_id, a.incident_id, a.dedup_key || '+' || r, a.status, a.summary,
       a.source, a.severity, a.labels, a.details, a.source_url, a.starts_at,
       a.received_at + make_interval(secs => r), a.last_received_at + make_interval(secs => r),
       a.deliveries, a.resolved_at, a.resolved_by, a.rule_id, a.routed, a.raw, a.retained_from
from generate_series(1, ceil(greatest(:more_alerts, 0)::numeric / :refire_count)::int) r,
     refire a
limit greatest(:more_alerts, 0);
drop table refire;

select :events_total - count(*) as more_events from timeline_events \gset
insert into timeline_events (incident_id, occurred_at, recorded_at, kind, author, body)
select m.new_id, i.detected_at + make_interval(mins => 3 + (r % 50)), i.detected_at + make_interval(mins => 3 + (r % 50)), 'note', 'Responder',
       (array['Checked the dashboards; error rate still above the threshold',
              'Rolled back the last deploy of the service',
              'Payments processor confirms elevated latency on their side',
              'Queue depth back to normal, watching for another ten minutes',
              'Customer support reports fewer tickets since the mitigation',
              'Database connections saturated on the primary; raised the pool limit'])[1 + r % 6]
from (select r, 1 + (r * 7919) % (select count(*) from copy_map) as pick
      from generate_series(1, greatest(:more_events, 0)) r) x
join (select new_id, row_number() over (order by new_id) as n from copy_map) m on m.n = x.pick
join incidents i on i.id = m.new_id;

select setval('incident_number_seq', (select max(number) from incidents));
-- The alerts were written here, not by Quell's ingest: their incidents' lines are counted again.
truncate alert_lines;
insert into alert_lines (incident_id, summary, rule_id, total, open, first_received_at,
                         last_received_at, source_url, severity)
select incident_id, summary, rule_id, count(*), count(*) filter (where status <> 'resolved'),
       min(received_at), max(last_received_at), max(source_url), max(severity)
from alerts group by incident_id, summary, rule_id;
alter table timeline_events enable trigger timeline_events_announce;
analyze;
select (select count(*) from incidents) as incidents, (select count(*) from timeline_events) as events,
       (select count(*) from alerts) as alerts, (select count(*) from postmortems) as postmortems,
       (select count(*) from action_items) as action_items;
