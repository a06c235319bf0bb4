-- Paging: escalation policies (a service points at one), how each person is reached and after
-- how long, escalations as persisted timers (one row per incident, fired by any replica's
-- engine, each step at most once), single-use acknowledge links, channel subscriptions to
-- incident events, and per-person calendar feeds of their shifts.

create table escalation_policies (
    id bigint generated always as identity constraint escalation_policies_pkey primary key,
    name text not null constraint escalation_policies_name_key unique
        constraint escalation_policies_name_length check (length(name) between 1 and 100),
    -- [{"delay_minutes": 5, "targets": [{"person": "ana"}, {"schedule": "Payments"}, {"channel": "ops"}]}]
    steps jsonb not null constraint escalation_policies_steps_array check (jsonb_typeof(steps) = 'array'),
    repeat integer not null default 0 constraint escalation_policies_repeat_range check (repeat between 0 and 9),
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);

alter table services add column escalation_policy_id bigint
    constraint services_escalation_policy_fkey references escalation_policies (id) on delete set null;

create table contact_methods (
    id bigint generated always as identity constraint contact_methods_pkey primary key,
    person_id bigint not null constraint contact_methods_person_fkey references people (id) on delete cascade,
    kind text not null constraint contact_methods_kind_check check (kind in ('email', 'slack', 'webhook')),
    label text not null constraint contact_methods_label_length check (length(label) between 1 and 100),
    -- an email address, or the URL of a webhook
    address text not null constraint contact_methods_address_length check (length(address) between 3 and 2000),
    -- a webhook's Standard Webhooks signing secret (kept to sign, so not hashed)
    secret text,
    -- set when a message to it was given up on; cleared by the next delivery
    failing_since timestamptz,
    last_error text,
    created_at timestamptz not null default now(),
    constraint contact_methods_label_key unique (person_id, label)
);

create table notification_rules (
    id bigint generated always as identity constraint notification_rules_pkey primary key,
    contact_method_id bigint not null constraint notification_rules_method_fkey
        references contact_methods (id) on delete cascade,
    after_minutes integer not null constraint notification_rules_after_range check (after_minutes between 0 and 1440),
    constraint notification_rules_key unique (contact_method_id, after_minutes)
);

-- The escalation of one incident: the next step to fire and when; `steps` and `repeat` are the
-- policy as it was when the incident opened.
create table escalations (
    incident_id bigint constraint escalations_pkey primary key
        constraint escalations_incident_fkey references incidents (id) on delete cascade,
    policy_id bigint constraint escalations_policy_fkey references escalation_policies (id) on delete set null,
    policy_name text not null,
    steps jsonb not null,
    repeat integer not null,
    step integer not null default 0,
    round integer not null default 0,
    state text not null default 'pending'
        constraint escalations_state_check check (state in ('pending', 'stopped', 'done')),
    due_at timestamptz not null,
    started_at timestamptz not null default now(),
    stopped_at timestamptz,
    updated_at timestamptz not null default now()
);
create index escalations_due on escalations (due_at) where state = 'pending';

-- Each step of each round fires once: the engine's insert here is its proof.
create table escalation_steps (
    incident_id bigint not null constraint escalation_steps_incident_fkey references incidents (id) on delete cascade,
    round integer not null,
    step integer not null,
    fired_at timestamptz not null default now(),
    constraint escalation_steps_pkey primary key (incident_id, round, step)
);

-- A notification goes to a channel or to one person's contact method.
alter table notifications alter column channel_id drop not null;
alter table notifications
    add column contact_method_id bigint constraint notifications_contact_method_fkey
        references contact_methods (id) on delete cascade,
    add column person_id bigint constraint notifications_person_fkey references people (id) on delete set null,
    add constraint notifications_one_target check ((channel_id is null) <> (contact_method_id is null));
alter table notifications drop constraint notifications_state_check;
alter table notifications add constraint notifications_state_check
    check (state in ('pending', 'delivered', 'failed', 'cancelled'));
create index notifications_by_method on notifications (contact_method_id, id) where contact_method_id is not null;

-- Channels may be email addresses too.
alter table notification_channels drop constraint notification_channels_kind_check;
alter table notification_channels add constraint notification_channels_kind_check
    check (kind in ('webhook', 'slack', 'email'));
alter table notification_channels drop constraint notification_channels_url_check;
alter table notification_channels add constraint notification_channels_url_check
    check (url ~ '^(https?://|mailto:)');

-- A signed acknowledge link sent with a page: usable once, until it expires, without signing in.
create table ack_links (
    nonce uuid constraint ack_links_pkey primary key,
    incident_id bigint not null constraint ack_links_incident_fkey references incidents (id) on delete cascade,
    person_id bigint not null constraint ack_links_person_fkey references people (id) on delete cascade,
    expires_at timestamptz not null,
    used_at timestamptz,
    created_at timestamptz not null default now()
);
create index ack_links_expires on ack_links (expires_at);

-- What a channel is told: events, narrowed by service, severity and (for stakeholder updates)
-- audience; an empty list means all.
create table subscriptions (
    id bigint generated always as identity constraint subscriptions_pkey primary key,
    channel_id bigint not null constraint subscriptions_channel_fkey
        references notification_channels (id) on delete cascade,
    events text[] not null constraint subscriptions_events_nonempty check (cardinality(events) > 0),
    services text[] not null default '{}',
    severities text[] not null default '{}',
    audiences text[] not null default '{}',
    created_at timestamptz not null default now()
);
create index subscriptions_by_channel on subscriptions (channel_id);
-- Channels so far heard of SLA breaches only; they keep doing so.
insert into subscriptions (channel_id, events) select id, '{sla.breached}' from notification_channels;

-- A person's calendar feed of their shifts, at /oncall/<token>.ics.
create table oncall_feeds (
    person_id bigint constraint oncall_feeds_pkey primary key
        constraint oncall_feeds_person_fkey references people (id) on delete cascade,
    token text not null constraint oncall_feeds_token_key unique,
    created_at timestamptz not null default now()
);

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related', 'checklist',
    'paged', 'escalation'));
