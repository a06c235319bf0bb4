-- Paging by hand from an incident, "add a responder": a person, a schedule's on-call person, or
-- an escalation policy, which runs through its steps until someone it paged accepts. Accepting
-- leaves the incident as it is (helping is not taking it over; reassigning an incident runs
-- its own escalation again, with a new target). Each request keeps who asked and why; each
-- person paged keeps their answer; each message sent for it points back at it, so its delivery
-- state is read per request and per person, and an acceptance calls off only its messages.

create table responder_requests (
    id bigint generated always as identity constraint responder_requests_pkey primary key,
    incident_id bigint not null constraint responder_requests_incident_fkey
        references incidents (id) on delete cascade,
    target_kind text not null constraint responder_requests_target_kind_check
        check (target_kind in ('person', 'schedule', 'policy')),
    -- the handle, schedule name or policy name asked for, as it was named
    target text not null constraint responder_requests_target_length check (length(target) between 1 and 200),
    message text not null default '' constraint responder_requests_message_length check (length(message) <= 2000),
    requested_by text not null,
    requested_at timestamptz not null default now(),
    -- a policy's steps as they were when asked; the next step (0-based) and when it is due
    policy_name text,
    steps jsonb,
    next_step integer not null default 0,
    due_at timestamptz,
    -- pending (waiting for an answer; a policy's next step is due at due_at, none when every
    -- step has paged), answered (someone accepted), ended (nobody could be paged, or the
    -- incident was resolved)
    state text not null default 'pending'
        constraint responder_requests_state_check check (state in ('pending', 'answered', 'ended')),
    ended_at timestamptz,
    ended_why text,
    constraint responder_requests_policy_steps check ((target_kind = 'policy') = (steps is not null))
);
create index responder_requests_incident on responder_requests (incident_id, id);
create index responder_requests_due on responder_requests (due_at) where state = 'pending' and due_at is not null;

-- Each person a request paged, once per request, and their answer.
create table responder_pages (
    request_id bigint not null constraint responder_pages_request_fkey
        references responder_requests (id) on delete cascade,
    person_id bigint not null constraint responder_pages_person_fkey references people (id) on delete cascade,
    -- the policy step (1-based) or schedule that put them there
    step integer,
    via_schedule text,
    paged_at timestamptz not null default now(),
    accepted_at timestamptz,
    constraint responder_pages_pkey primary key (request_id, person_id)
);
create index responder_pages_person on responder_pages (person_id) where accepted_at is null;

-- A link sent with a responder's page accepts that request instead of acknowledging the incident.
alter table ack_links add column request_id bigint constraint ack_links_request_fkey
    references responder_requests (id) on delete cascade;

-- The request a message was sent for, if any.
alter table notifications add column responder_request_id bigint constraint notifications_responder_request_fkey
    references responder_requests (id) on delete cascade;
create index notifications_by_responder_request on notifications (responder_request_id)
    where responder_request_id is not null;

alter table timeline_events drop constraint timeline_events_kind_check;
alter table timeline_events add constraint timeline_events_kind_check check (kind in (
    'opened', 'acknowledged', 'mitigated', 'resolved', 'reopened', 'severity_changed',
    'role_assigned', 'role_unassigned', 'edited', 'note', 'context', 'stakeholder_update',
    'sla_breached', 'alerts_resolved', 'suspect_verdict', 'related', 'checklist',
    'paged', 'escalation', 'claimed', 'claim_released', 'bridge', 'access', 'responder'));
