-- Teams: who owns what. A person may be in several teams, as a member or a lead.
create table teams (
    id bigint generated always as identity constraint teams_pkey primary key,
    slug text not null constraint teams_slug_key unique
        constraint teams_slug_format check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 40),
    name text not null constraint teams_name_length check (length(name) between 1 and 80),
    description text not null default '',
    -- whether members, not only leads, may change the team's configuration
    members_manage boolean not null default false,
    -- the identity provider's group whose members are this team's, kept in step at sign-in
    oidc_group text,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create unique index teams_name_key on teams (lower(name));

create table team_members (
    team_id bigint not null constraint team_members_team_fkey references teams (id) on delete cascade,
    person_id bigint not null constraint team_members_person_fkey references people (id) on delete cascade,
    role text not null constraint team_members_role_check check (role in ('member', 'lead')),
    added_at timestamptz not null default now(),
    constraint team_members_pkey primary key (team_id, person_id)
);
create index team_members_person on team_members (person_id);

-- A service's team was free text; each distinct one becomes a team the service belongs to.
with named as (
    select distinct on (lower(btrim(team))) btrim(team) as name,
           coalesce(nullif(btrim(left(btrim(regexp_replace(lower(btrim(team)), '[^a-z0-9]+', '-', 'g'), '-'), 36), '-'), ''), 'team') as base
    from services where btrim(team) <> ''
    order by lower(btrim(team)), team
), numbered as (
    select name, base, row_number() over (partition by base order by name) as n from named
)
insert into teams (slug, name)
select base || case when n > 1 then '-' || n else '' end, left(name, 80) from numbered;

alter table services add column team_id bigint
    constraint services_team_fkey references teams (id) on delete set null;
update services s set team_id = t.id from teams t where lower(t.name) = lower(left(btrim(s.team), 80));
alter table services drop column team;
create index services_team on services (team_id);
