-- A notification channel belongs to a team (whose leads manage it and its subscriptions) or,
-- null, to the installation (admins).
alter table notification_channels add column team_id bigint
    constraint notification_channels_team_fkey references teams (id) on delete set null;
create index notification_channels_team on notification_channels (team_id);
