-- The public status page: components (public names for services, ordered and grouped), the
-- page's own name and text, and the incidents published to it with their public title, the
-- components they affect and how, and the last word said when they resolve. Public updates
-- are the incident's stakeholder updates for the customers audience; nothing else of an
-- incident reaches the page.

create table status_settings (
    id boolean primary key default true constraint status_settings_one check (id),
    name text not null default 'Status' constraint status_settings_name_check
        check (length(btrim(name)) between 1 and 100),
    intro text not null default '' constraint status_settings_intro_check
        check (length(intro) <= 2000),
    updated_at timestamptz not null default now()
);
insert into status_settings (id) values (true);

create table status_components (
    id bigint generated always as identity constraint status_components_pkey primary key,
    name text not null constraint status_components_name_check
        check (length(btrim(name)) between 1 and 100),
    description text not null default '' constraint status_components_description_check
        check (length(description) <= 500),
    -- the group it is shown under; none: on its own
    group_name text not null default '' constraint status_components_group_check
        check (length(group_name) <= 100),
    position integer not null default 0,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
create unique index status_components_name_key on status_components (lower(name));

-- The services a component stands for (their maintenance puts it under maintenance).
create table status_component_services (
    component_id bigint not null constraint status_component_services_component_fkey
        references status_components (id) on delete cascade,
    service_id bigint not null constraint status_component_services_service_fkey
        references services (id) on delete cascade,
    constraint status_component_services_pkey primary key (component_id, service_id)
);

create table status_publications (
    incident_id bigint constraint status_publications_pkey primary key
        constraint status_publications_incident_fkey references incidents (id) on delete cascade,
    -- how the public names it: random, so it says nothing of how many incidents there are
    public_id text not null default substr(md5(random()::text || clock_timestamp()::text), 1, 12)
        constraint status_publications_public_id_key unique,
    title text not null constraint status_publications_title_check
        check (length(btrim(title)) between 1 and 200),
    -- said publicly when the incident resolves
    closing text not null constraint status_publications_closing_check
        check (length(btrim(closing)) between 1 and 2000),
    published_at timestamptz not null default now(),
    published_by text not null,
    updated_at timestamptz not null default now()
);
create index status_publications_recent on status_publications (published_at desc);

create table status_publication_components (
    incident_id bigint not null constraint status_publication_components_publication_fkey
        references status_publications (incident_id) on delete cascade,
    component_id bigint not null constraint status_publication_components_component_fkey
        references status_components (id) on delete cascade,
    status text not null constraint status_publication_components_status_check
        check (status in ('degraded_performance', 'partial_outage', 'major_outage')),
    constraint status_publication_components_pkey primary key (incident_id, component_id)
);
create index status_publication_components_component on status_publication_components (component_id);

-- Maintenance windows an admin announced on the page (no other window is public, nor any
-- window's own name or comment).
create table status_announcements (
    window_id bigint constraint status_announcements_pkey primary key
        constraint status_announcements_window_fkey references maintenance_windows (id) on delete cascade,
    -- how the public names its occurrences: random, as publications
    public_id text not null default substr(md5(random()::text || clock_timestamp()::text), 1, 12)
        constraint status_announcements_public_id_key unique,
    announced_by text not null,
    announced_at timestamptz not null default now()
);
