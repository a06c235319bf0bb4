-- A person's first attempt at a challenge is the one ranked; later ones are practice. An attempt
-- during which its learner read the incident the challenge was built from, its postmortem or a
-- related incident (or searched and was shown one of them) is marked looked up, with what was
-- read and when, and is not ranked either.
alter table attempts
    add column practice boolean not null default false,
    add column looked_up text,
    add column looked_up_at timestamptz,
    add constraint attempts_looked_up check ((looked_up is null) = (looked_up_at is null));

update attempts a set practice = exists (
    select 1 from attempts b
    where b.challenge_id = a.challenge_id and b.person_id = a.person_id and b.id < a.id);

-- The attempts a person has in progress, asked on every read that might look an answer up.
create index attempts_open_by_person on attempts (person_id) where ended_at is null;
