-- The status page's email subscribers, the ledger of what was mailed to them, and the page's
-- version: every change to what the public sees bumps it (triggers below), so each replica's
-- copy of the page knows when it is stale, and wakes the mailer (NOTIFY quell_status).

create table status_subscribers (
    id bigint generated always as identity constraint status_subscribers_pkey primary key,
    -- as typed, compared without case
    email text not null constraint status_subscribers_email_check
        check (length(email) between 3 and 254 and position('@' in email) > 1),
    -- the credential of the confirm, manage and unsubscribe links (random, 256 bits)
    token text not null constraint status_subscribers_token_key unique,
    -- every component, or only those in status_subscriber_components
    all_components boolean not null default true,
    created_at timestamptz not null default now(),
    confirmation_sent_at timestamptz not null default now(),
    -- the client address that last asked for a confirmation (the form's limits count it)
    requested_from text,
    confirmed_at timestamptz,
    -- the last message that could not be delivered (given up after its retries)
    failing_since timestamptz,
    last_error text
);
create unique index status_subscribers_email_key on status_subscribers (lower(email));
create index status_subscribers_waiting on status_subscribers (confirmation_sent_at)
    where confirmed_at is null;

create table status_subscriber_components (
    subscriber_id bigint not null constraint status_subscriber_components_subscriber_fkey
        references status_subscribers (id) on delete cascade,
    component_id bigint not null constraint status_subscriber_components_component_fkey
        references status_components (id) on delete cascade,
    constraint status_subscriber_components_pkey primary key (subscriber_id, component_id)
);
create index status_subscriber_components_component on status_subscriber_components (component_id);

-- One row per public event mailed to subscribers (`update:<stakeholder update>` or
-- `resolved:<incident>:<unix seconds>`): the first replica to write it queues the messages,
-- so each event is mailed once.
create table status_mailings (
    event text constraint status_mailings_pkey primary key,
    incident_id bigint constraint status_mailings_incident_fkey
        references incidents (id) on delete cascade,
    recipients integer not null,
    queued_at timestamptz not null default now()
);

-- Messages to subscribers go through the outbox like every other.
alter table notifications
    add column status_subscriber_id bigint constraint notifications_status_subscriber_fkey
        references status_subscribers (id) on delete cascade;
alter table notifications drop constraint notifications_one_target;
alter table notifications add constraint notifications_one_target
    check (num_nonnulls(channel_id, contact_method_id, status_subscriber_id) = 1);
alter table notifications drop constraint notifications_about_something;
alter table notifications add constraint notifications_about_something
    check (incident_id is not null or schedule_id is not null or status_subscriber_id is not null);
create index notifications_by_status_subscriber on notifications (status_subscriber_id, id)
    where status_subscriber_id is not null;

-- The page's version.
create table status_page_version (
    only_row boolean constraint status_page_version_pkey primary key default true
        constraint status_page_version_only_row check (only_row),
    version bigint not null default 1
);
insert into status_page_version default values;

create function status_page_changed() returns trigger language plpgsql as $$
begin
    update status_page_version set version = version + 1;
    perform pg_notify('quell_status', '');
    return null;
end $$;

-- What the page is made of: its own tables and the maintenance windows it may announce …
create trigger status_settings_changed after insert or update or delete on status_settings
    for each statement execute function status_page_changed();
create trigger status_components_changed after insert or update or delete on status_components
    for each statement execute function status_page_changed();
create trigger status_component_services_changed after insert or update or delete on status_component_services
    for each statement execute function status_page_changed();
create trigger status_publications_changed after insert or update or delete on status_publications
    for each statement execute function status_page_changed();
create trigger status_publication_components_changed after insert or update or delete on status_publication_components
    for each statement execute function status_page_changed();
create trigger status_announcements_changed after insert or update or delete on status_announcements
    for each statement execute function status_page_changed();
create trigger maintenance_windows_status_changed after insert or update or delete on maintenance_windows
    for each statement execute function status_page_changed();
create trigger maintenance_window_services_status_changed after insert or update or delete on maintenance_window_services
    for each statement execute function status_page_changed();

-- … and, of a published incident, its customers' updates and its turns (restricted, impact,
-- mitigation, resolution): a row's change counts only when the incident is published. The
-- trigger's argument names the row's column holding the incident.
create function status_incident_changed() returns trigger language plpgsql as $$
begin
    if exists (select 1 from status_publications
               where incident_id = (to_jsonb(new) ->> tg_argv[0])::bigint) then
        update status_page_version set version = version + 1;
        perform pg_notify('quell_status', '');
    end if;
    return null;
end $$;
create trigger incidents_status_changed
    after update of restricted, started_at, mitigated_at, resolved_at on incidents
    for each row
    when (old.restricted is distinct from new.restricted
          or old.started_at is distinct from new.started_at
          or old.mitigated_at is distinct from new.mitigated_at
          or old.resolved_at is distinct from new.resolved_at)
    execute function status_incident_changed('id');
create trigger stakeholder_updates_status_changed
    after insert or update on stakeholder_updates
    for each row when (new.audience = 'customers')
    execute function status_incident_changed('incident_id');
