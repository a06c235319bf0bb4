-- Per severity: how fast an incident must be acknowledged and resolved (measured from
-- detection) and how often stakeholders hear about it. And the highest severity each incident
-- has reached, whose targets its SLA verdicts use.

create table severity_policies (
    severity text constraint severity_policies_pkey primary key
        constraint severity_policies_severity_check check (severity in ('Sev1', 'Sev2', 'Sev3', 'Sev4')),
    ack_target_secs integer not null constraint severity_policies_ack_positive check (ack_target_secs > 0),
    resolve_target_secs integer not null,
    update_cadence_secs integer constraint severity_policies_cadence_positive check (update_cadence_secs > 0),
    updated_at timestamptz not null default now(),
    constraint severity_policies_ack_before_resolve check (ack_target_secs <= resolve_target_secs)
);

insert into severity_policies (severity, ack_target_secs, resolve_target_secs, update_cadence_secs) values
    ('Sev1', 15 * 60, 4 * 3600, 30 * 60),
    ('Sev2', 30 * 60, 8 * 3600, 60 * 60),
    ('Sev3', 2 * 3600, 3 * 86400, null),
    ('Sev4', 86400, 14 * 86400, null);

alter table incidents add column peak_severity text
    constraint incidents_peak_severity_check check (peak_severity in ('Sev1', 'Sev2', 'Sev3', 'Sev4'));

-- 'Sev1' < 'Sev2' as text, so the worst severity is the least one.
update incidents i set peak_severity = least(
    i.severity,
    (select min(t.details ->> 'to') from timeline_events t
      where t.incident_id = i.id and t.kind = 'severity_changed'),
    (select min(t.details ->> 'severity') from timeline_events t
      where t.incident_id = i.id and t.kind = 'opened'));

alter table incidents alter column peak_severity set not null;
