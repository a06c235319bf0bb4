-- Where Quell sends word of SLA breaches, and the outbox of messages to send: written in the
-- transaction of the breach, delivered at least once by any replica's sender.

create table notification_channels (
    id bigint generated always as identity constraint notification_channels_pkey primary key,
    name text not null constraint notification_channels_name_key unique
        constraint notification_channels_name_length check (length(name) between 1 and 100),
    kind text not null constraint notification_channels_kind_check check (kind in ('webhook', 'slack')),
    url text not null constraint notification_channels_url_check check (url ~ '^https?://'),
    -- the Standard Webhooks signing secret (whsec_…) of a webhook; kept to sign, so not hashed
    secret text,
    enabled boolean not null default true,
    created_at timestamptz not null default now()
);

create table notifications (
    id bigint generated always as identity constraint notifications_pkey primary key,
    channel_id bigint not null constraint notifications_channel_fkey
        references notification_channels (id) on delete cascade,
    incident_id bigint not null constraint notifications_incident_fkey
        references incidents (id) on delete cascade,
    event text not null,
    payload jsonb not null,
    state text not null default 'pending'
        constraint notifications_state_check check (state in ('pending', 'delivered', 'failed')),
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    last_error text,
    delivered_at timestamptz,
    created_at timestamptz not null default now()
);
create index notifications_due on notifications (next_attempt_at) where state = 'pending';
create index notifications_by_incident on notifications (incident_id, id);
