-- The change-failure rate asks, for each change, whether any incident confirmed it as its
-- trigger.
create index suspect_verdicts_triggers on suspect_verdicts (change_id)
    where verdict = 'confirmed_trigger';
