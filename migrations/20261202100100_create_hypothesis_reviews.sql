-- A teacher in the loop: a hypothesis the grader scored in the uncertain middle, or one its
-- learner says is right, waits for an editor's verdict. The verdict moves the hypothesis's score
-- (and so its attempt's); a phrasing judged right or partly right becomes an accepted answer the
-- grader matches from then on; every verdict is a labelled line of the challenge's set.
create table hypothesis_reviews (
    id bigint generated always as identity constraint hypothesis_reviews_pkey primary key,
    hypothesis_id bigint not null
        constraint hypothesis_reviews_hypothesis_fkey references attempt_hypotheses (id) on delete cascade
        constraint hypothesis_reviews_once unique,
    challenge_id bigint not null
        constraint hypothesis_reviews_challenge_fkey references challenges (id) on delete cascade,
    -- uncertain: the grader's score fell in the middle; learner: the learner asked
    reason text not null constraint hypothesis_reviews_reason_check check (reason in ('uncertain', 'learner')),
    -- what the grader gave before the verdict
    graded_score real not null,
    verdict text constraint hypothesis_reviews_verdict_check check (verdict in ('right', 'partial', 'wrong')),
    note text not null default '' constraint hypothesis_reviews_note_length check (length(note) <= 2000),
    reviewed_by text,
    reviewed_at timestamptz,
    created_at timestamptz not null default now(),
    constraint hypothesis_reviews_decided check ((verdict is null) = (reviewed_at is null))
);
create index hypothesis_reviews_open on hypothesis_reviews (challenge_id, id) where verdict is null;
create index hypothesis_reviews_by_challenge on hypothesis_reviews (challenge_id, id);

-- A review as editors read it: with the hypothesis, its attempt and who stated it.
create view hypothesis_review_rows as
select r.id, r.challenge_id, r.hypothesis_id, h.attempt_id, p.name as learner, h.text,
       r.graded_score, h.feedback, r.reason, r.verdict, r.note, r.reviewed_by, r.created_at
from hypothesis_reviews r
join attempt_hypotheses h on h.id = r.hypothesis_id
join attempts a on a.id = h.attempt_id
join people p on p.id = a.person_id;

create table accepted_answers (
    id bigint generated always as identity constraint accepted_answers_pkey primary key,
    challenge_id bigint not null
        constraint accepted_answers_challenge_fkey references challenges (id) on delete cascade,
    text text not null constraint accepted_answers_text_length check (length(text) between 1 and 2000),
    verdict text not null constraint accepted_answers_verdict_check check (verdict in ('right', 'partial')),
    review_id bigint constraint accepted_answers_review_fkey references hypothesis_reviews (id) on delete set null,
    created_at timestamptz not null default now()
);
create index accepted_answers_by_challenge on accepted_answers (challenge_id);
