-- On-call schedules: layers of rotations and overrides, kept as the document a person wrote;
-- who is on call is computed from it, never stored.
create table schedules (
    id bigint generated always as identity constraint schedules_pkey primary key,
    name text not null constraint schedules_name_key unique
        constraint schedules_name_length check (length(name) between 1 and 100),
    layers jsonb not null default '[]' constraint schedules_layers_array check (jsonb_typeof(layers) = 'array'),
    overrides jsonb not null default '[]' constraint schedules_overrides_array check (jsonb_typeof(overrides) = 'array'),
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);
