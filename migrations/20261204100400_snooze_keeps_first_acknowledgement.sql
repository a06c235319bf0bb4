-- A snoozed incident back to triggered keeps its first acknowledgement (time to acknowledge,
-- its SLA target and MTTA were met then); triggered no longer means never acknowledged.
alter table incidents drop constraint incidents_status_stamps;
alter table incidents add constraint incidents_status_stamps check (
    (status = 'triggered' and mitigated_at is null and resolved_at is null)
    or (status = 'acknowledged' and acknowledged_at is not null and mitigated_at is null and resolved_at is null)
    or (status = 'mitigated' and mitigated_at is not null and resolved_at is null)
    or (status = 'resolved' and resolved_at is not null));
-- Who ended a snooze early (a person's "End snooze"); null when it ran out or the incident moved on.
alter table incident_snoozes add column ended_by text;
