-- Services depend on services: an incident's suspect changes include those of the services its
-- service depends on. The graph has no cycles (checked when a dependency is set, under an
-- advisory lock so that two concurrent edits cannot close one together).
create table service_dependencies (
    service_id bigint not null
        constraint service_dependencies_service_fkey references services (id) on delete cascade,
    depends_on_id bigint not null
        constraint service_dependencies_depends_on_fkey references services (id) on delete cascade,
    constraint service_dependencies_pkey primary key (service_id, depends_on_id),
    constraint service_dependencies_not_itself check (service_id <> depends_on_id)
);
create index service_dependencies_depended_on on service_dependencies (depends_on_id);
