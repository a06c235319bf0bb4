-- "Mine": lists can be narrowed to the teams a person is in, and each person's last choice (a
-- team's slug, 'mine', or null for everything) is remembered, so the next page opens the same
-- way — in every replica.
create table team_choices (
    person_id bigint not null constraint team_choices_pkey primary key
        constraint team_choices_person_fkey references people (id) on delete cascade,
    team text constraint team_choices_team_length check (length(team) between 1 and 40),
    chosen_at timestamptz not null default now()
);
-- 'mine' now means "my teams" wherever a team is asked for; a team that took it as its slug
-- keeps its name and gets another.
update teams set slug = 'mine-team', version = version + 1 where slug = 'mine';
