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

-- A service's team was free text; each distinct one (by its first 80 characters, either case)
-- becomes a team the service belongs to, its slug made from the name and numbered until it is
-- one no other team has.
alter table services add column team_id bigint
    constraint services_team_fkey references teams (id) on delete set null;
do $$
declare
    named record;
    base text;
    candidate text;
    n integer;
    made bigint;
begin
    for named in
        select distinct on (lower(left(btrim(team), 80))) left(btrim(team), 80) as name
        from services where btrim(team) <> ''
        order by lower(left(btrim(team), 80)), team
    loop
        base := coalesce(nullif(btrim(left(btrim(regexp_replace(lower(named.name), '[^a-z0-9]+', '-', 'g'), '-'), 36), '-'), ''), 'team');
        candidate := base;
        n := 1;
        while exists (select 1 from teams where slug = candidate) loop
            n := n + 1;
            candidate := base || '-' || n;
        end loop;
        insert into teams (slug, name) values (candidate, btrim(named.name)) returning id into made;
        update services set team_id = made
        where btrim(team) <> '' and lower(left(btrim(team), 80)) = lower(named.name);
    end loop;
end
$$;
alter table services drop column team;
create index services_team on services (team_id);
