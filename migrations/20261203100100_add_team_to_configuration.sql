-- Schedules, escalation policies and routing rules belong to a team, or (null) to the
-- installation; a team deleted leaves what it owned to the installation.
alter table schedules add column team_id bigint
    constraint schedules_team_fkey references teams (id) on delete set null;
alter table escalation_policies add column team_id bigint
    constraint escalation_policies_team_fkey references teams (id) on delete set null;
alter table routing_rules add column team_id bigint
    constraint routing_rules_team_fkey references teams (id) on delete set null;
create index schedules_team on schedules (team_id);
create index escalation_policies_team on escalation_policies (team_id);
create index routing_rules_team on routing_rules (team_id);
