-- Investigation challenges built from past incidents: a scenario, evidence, hints that cost
-- credit, the answer and a rubric that grades hypotheses. Learners' attempts, their hypotheses
-- and hints; credits per person with a ledger, never negative.
create table challenges (
    id bigint generated always as identity constraint challenges_pkey primary key,
    title text not null constraint challenges_title_length check (length(title) between 1 and 200),
    incident_id bigint constraint challenges_incident_fkey references incidents (id) on delete set null,
    scenario text not null constraint challenges_scenario_length check (length(scenario) between 1 and 20000),
    evidence jsonb not null default '[]' constraint challenges_evidence_array check (jsonb_typeof(evidence) = 'array'),
    hints jsonb not null default '[]' constraint challenges_hints_array check (jsonb_typeof(hints) = 'array'),
    answer_cause text not null constraint challenges_cause_length check (length(answer_cause) between 1 and 5000),
    answer_fix text not null constraint challenges_fix_length check (length(answer_fix) between 1 and 5000),
    explanation text not null default '',
    rubric jsonb not null default '[]' constraint challenges_rubric_array check (jsonb_typeof(rubric) = 'array'),
    status text not null default 'draft' constraint challenges_status_check check (status in ('draft', 'published')),
    version integer not null default 1,
    created_by text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    published_at timestamptz,
    constraint challenges_published_stamp check ((status = 'published') = (published_at is not null))
);

-- The credit a new learner starts with; one row.
create table credit_settings (
    id boolean primary key default true constraint credit_settings_one check (id),
    starting_grant integer not null default 100 constraint credit_settings_grant_check check (starting_grant between 0 and 1000000)
);
insert into credit_settings default values;

create table credit_balances (
    person_id bigint constraint credit_balances_pkey primary key
        constraint credit_balances_person_fkey references people (id) on delete cascade,
    balance integer not null constraint credit_balances_never_negative check (balance >= 0)
);

create table attempts (
    id bigint generated always as identity constraint attempts_pkey primary key,
    challenge_id bigint not null constraint attempts_challenge_fkey references challenges (id) on delete cascade,
    person_id bigint not null constraint attempts_person_fkey references people (id) on delete cascade,
    started_at timestamptz not null default now(),
    ended_at timestamptz,
    outcome text constraint attempts_outcome_check check (outcome in ('solved', 'gave_up')),
    best_score real not null default 0,
    constraint attempts_ended check ((ended_at is null) = (outcome is null))
);
create index attempts_by_challenge on attempts (challenge_id, best_score desc);
create index attempts_by_person on attempts (person_id, started_at desc);

-- Every change to a balance, with why.
create table credit_entries (
    id bigint generated always as identity constraint credit_entries_pkey primary key,
    person_id bigint not null constraint credit_entries_person_fkey references people (id) on delete cascade,
    amount integer not null,
    reason text not null,
    attempt_id bigint constraint credit_entries_attempt_fkey references attempts (id) on delete set null,
    created_at timestamptz not null default now()
);
create index credit_entries_by_person on credit_entries (person_id, id desc);

create table attempt_hypotheses (
    id bigint generated always as identity constraint attempt_hypotheses_pkey primary key,
    attempt_id bigint not null constraint attempt_hypotheses_attempt_fkey references attempts (id) on delete cascade,
    text text not null constraint attempt_hypotheses_text_length check (length(text) between 1 and 2000),
    score real not null,
    covered text[] not null,
    feedback text not null,
    created_at timestamptz not null default now()
);
create index attempt_hypotheses_by_attempt on attempt_hypotheses (attempt_id, id);

-- A hint is charged once per attempt: the primary key.
create table attempt_hints (
    attempt_id bigint not null constraint attempt_hints_attempt_fkey references attempts (id) on delete cascade,
    position integer not null,
    cost integer not null constraint attempt_hints_cost_check check (cost >= 0),
    taken_at timestamptz not null default now(),
    constraint attempt_hints_pkey primary key (attempt_id, position)
);

-- One attempt in progress per person and challenge.
create unique index attempts_one_open on attempts (challenge_id, person_id) where ended_at is null;
