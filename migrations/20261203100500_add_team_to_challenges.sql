-- A challenge belongs to a team (or to nobody, for the installation's): by default the team of
-- the service of the incident it was built from.
alter table challenges add column team_id bigint
    constraint challenges_team_fkey references teams (id) on delete set null;
create index challenges_team on challenges (team_id) where team_id is not null;
update challenges c set team_id = s.team_id
from incidents i join services s on s.id = i.service_id
where i.id = c.incident_id and c.team_id is null;
