//! Queries on challenges, attempts and credits.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use sqlx::types::Json;

use super::domain::{ChallengeDraft, Concept, Evidence, Hint};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;

/// A challenge as stored, answer and rubric included: never sent to a learner as it is.
#[derive(Debug, Clone)]
pub struct Challenge {
    pub id: i64,
    pub title: String,
    /// `INC-1187`, when built from an incident
    pub incident: Option<IncidentKey>,
    /// The owning team's slug; `None`, the installation's
    pub team: Option<String>,
    pub scenario: String,
    pub evidence: Json<Vec<Evidence>>,
    pub hints: Json<Vec<Hint>>,
    pub answer_cause: String,
    pub answer_fix: String,
    pub explanation: String,
    pub rubric: Json<Vec<Concept>>,
    pub status: String,
    pub version: i32,
    pub created_by: String,
    pub published_at: Option<DateTime<Utc>>,
    /// The real team's times, from the incident: detected − started, mitigated − detected
    pub team_detect_secs: Option<i64>,
    pub team_mitigate_secs: Option<i64>,
    /// When the incident was detected: where the learner's scenario begins
    pub detected_at: Option<DateTime<Utc>>,
}

pub async fn get(e: impl PgExecutor<'_>, id: i64) -> AppResult<Challenge> {
    sqlx::query_as!(
        Challenge,
        r#"select c.id, c.title, i.number as "incident?: IncidentKey",
                  (select t.slug from teams t where t.id = c.team_id) as "team?", c.scenario,
                  c.evidence as "evidence: Json<Vec<Evidence>>", c.hints as "hints: Json<Vec<Hint>>",
                  c.answer_cause, c.answer_fix, c.explanation,
                  c.rubric as "rubric: Json<Vec<Concept>>", c.status, c.version, c.created_by,
                  c.published_at,
                  extract(epoch from i.detected_at - i.started_at)::int8 as "team_detect_secs?",
                  extract(epoch from i.mitigated_at - i.detected_at)::int8 as "team_mitigate_secs?",
                  i.detected_at as "detected_at?"
           -- every incident: a challenge's own source, never a restricted one (generation
           -- refuses them)
           from challenges c left join incidents i on i.id = c.incident_id
           where c.id = $1"#,
        id
    )
    .fetch_optional(e)
    .await?
    .ok_or_else(|| AppError::NotFound(format!("There is no challenge {id}.")))
}

/// A challenge in a list.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Summary {
    pub id: i64,
    pub title: String,
    /// draft or published
    pub status: String,
    pub evidence_items: i32,
    pub hints: i32,
    pub published_at: Option<DateTime<Utc>>,
    /// The owning team's slug; `None`, the installation's
    pub team: Option<String>,
}

/// Published challenges, newest first; drafts too for editors; those of `teams` only, when
/// given.
pub async fn list(
    e: impl PgExecutor<'_>,
    with_drafts: bool,
    teams: Option<&[i64]>,
) -> AppResult<Vec<Summary>> {
    Ok(sqlx::query_as!(
        Summary,
        r#"select c.id, c.title, c.status, jsonb_array_length(c.evidence) as "evidence_items!",
                  jsonb_array_length(c.hints) as "hints!", c.published_at,
                  t.slug as "team?"
           from challenges c left join teams t on t.id = c.team_id
           where (c.status = 'published' or $1)
             and ($2::int8[] is null or c.team_id = any($2))
           order by c.published_at desc nulls first, c.id desc"#,
        with_drafts,
        teams
    )
    .fetch_all(e)
    .await?)
}

pub async fn insert(
    e: impl PgExecutor<'_>,
    d: &ChallengeDraft,
    (incident_id, team_id): (Option<i64>, Option<i64>),
    created_by: &str,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into challenges (title, incident_id, scenario, evidence, hints, answer_cause,
                                   answer_fix, explanation, rubric, created_by, team_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning id"#,
        d.title.trim(),
        incident_id,
        d.scenario.trim(),
        Json(&d.evidence) as _,
        Json(&d.hints) as _,
        d.answer.cause.trim(),
        d.answer.fix.trim(),
        d.answer.explanation.trim(),
        Json(&d.rubric) as _,
        created_by,
        team_id
    )
    .fetch_one(e)
    .await?)
}

/// Writes `d` over challenge `id` if it is still at `version`; `false` when stale.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    version: i32,
    d: &ChallengeDraft,
    (incident_id, team_id): (Option<i64>, Option<i64>),
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"update challenges
           set title = $3, incident_id = $4, scenario = $5, evidence = $6, hints = $7,
               answer_cause = $8, answer_fix = $9, explanation = $10, rubric = $11,
               team_id = $12, version = version + 1, updated_at = now()
           where id = $1 and version = $2"#,
        id,
        version,
        d.title.trim(),
        incident_id,
        d.scenario.trim(),
        Json(&d.evidence) as _,
        Json(&d.hints) as _,
        d.answer.cause.trim(),
        d.answer.fix.trim(),
        d.answer.explanation.trim(),
        Json(&d.rubric) as _,
        team_id,
    )
    .execute(e)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn publish(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update challenges set status = 'published', published_at = coalesce(published_at, now()),
                                 version = version + 1, updated_at = now()
           where id = $1"#,
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The team of the service of incident `incident_id`, if it has one.
pub async fn incident_team(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select s.team_id
           -- every incident: one a challenge is built from, never a restricted one
           from incidents i join services s on s.id = i.service_id
           where i.id = $1"#,
        incident_id
    )
    .fetch_optional(e)
    .await?
    .flatten())
}

/// The id of the incident with this number, if any open to everyone: a challenge is read by
/// everyone who trains, so a restricted incident is never its source.
pub async fn incident_id(e: impl PgExecutor<'_>, number: i64) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        "select id from incidents where number = $1 and incident_visible(restricted, id, $2)",
        number,
        SeenBy::EVERYONE.sql()
    )
    .fetch_optional(e)
    .await?)
}

/// An attempt as stored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Attempt {
    pub id: i64,
    pub challenge_id: i64,
    #[serde(skip)]
    pub person_id: i64,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    /// solved or gave_up; null while in progress
    pub outcome: Option<String>,
    pub best_score: f32,
    /// Not the person's first attempt at the challenge: practice, never ranked
    pub practice: bool,
    /// What the learner read that holds the answer while the attempt was open (`INC-1187`, a
    /// search for `retry`): looked up, never ranked
    pub looked_up: Option<String>,
    pub looked_up_at: Option<DateTime<Utc>>,
}

pub async fn open_attempt(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    person_id: i64,
) -> AppResult<Option<Attempt>> {
    Ok(latest_attempt(e, challenge_id, person_id)
        .await?
        .filter(|a| a.ended_at.is_none()))
}

/// The challenges the person has an attempt in progress at.
pub async fn playing(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        "select challenge_id from attempts where person_id = $1 and ended_at is null",
        person_id
    )
    .fetch_all(e)
    .await?)
}

/// The person's latest attempt at the challenge, in progress or ended.
pub async fn latest_attempt(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    person_id: i64,
) -> AppResult<Option<Attempt>> {
    Ok(sqlx::query_as!(
        Attempt,
        r#"select id, challenge_id, person_id, started_at, ended_at, outcome, best_score,
                  practice, looked_up, looked_up_at
           from attempts where challenge_id = $1 and person_id = $2
           order by (ended_at is null) desc, id desc limit 1"#,
        challenge_id,
        person_id
    )
    .fetch_optional(e)
    .await?)
}

/// Starts an attempt, practice when the person had one before; `None` when one is in progress
/// already (the unique index).
pub async fn insert_attempt(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    person_id: i64,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"insert into attempts (challenge_id, person_id, practice)
           values ($1, $2, exists (select 1 from attempts
                                   where challenge_id = $1 and person_id = $2))
           on conflict (challenge_id, person_id) where ended_at is null do nothing
           returning id"#,
        challenge_id,
        person_id
    )
    .fetch_optional(e)
    .await?)
}

/// The attempt, locked until the transaction ends, so its hints and its end are decided one
/// request at a time.
pub async fn lock_attempt(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<Attempt>> {
    Ok(sqlx::query_as!(
        Attempt,
        r#"select id, challenge_id, person_id, started_at, ended_at, outcome, best_score,
                  practice, looked_up, looked_up_at
           from attempts where id = $1 for update"#,
        id
    )
    .fetch_optional(e)
    .await?)
}

pub async fn end_attempt(e: impl PgExecutor<'_>, id: i64, outcome: &str) -> AppResult<()> {
    sqlx::query!(
        "update attempts set ended_at = now(), outcome = $2 where id = $1 and ended_at is null",
        id,
        outcome
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A graded hypothesis.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Hypothesis {
    pub id: i64,
    pub text: String,
    pub score: f32,
    /// The aspects it covers
    pub covered: Vec<String>,
    pub feedback: String,
    pub created_at: DateTime<Utc>,
    /// Waiting for an editor's verdict
    pub in_review: bool,
    /// An editor's verdict on it: right, partial or wrong
    pub verdict: Option<String>,
    /// The editor's note with the verdict
    pub verdict_note: Option<String>,
}

pub struct NewHypothesis<'a> {
    pub attempt_id: i64,
    pub text: &'a str,
    pub score: f32,
    pub covered: &'a [String],
    pub feedback: &'a str,
}

pub async fn insert_hypothesis(
    e: impl PgExecutor<'_>,
    h: &NewHypothesis<'_>,
) -> AppResult<Hypothesis> {
    Ok(sqlx::query_as!(
        Hypothesis,
        r#"with h as (
               insert into attempt_hypotheses (attempt_id, text, score, covered, feedback)
               values ($1, $2, $3, $4, $5)
               returning id, text, score, covered, feedback, created_at),
           best as (update attempts set best_score = greatest(best_score, $3) where id = $1)
           select id as "id!", text as "text!", score as "score!", covered as "covered!",
                  feedback as "feedback!", created_at as "created_at!",
                  false as "in_review!", null::text as verdict, null::text as verdict_note
           from h"#,
        h.attempt_id,
        h.text,
        h.score,
        h.covered,
        h.feedback
    )
    .fetch_one(e)
    .await?)
}

pub async fn hypotheses(e: impl PgExecutor<'_>, attempt_id: i64) -> AppResult<Vec<Hypothesis>> {
    Ok(sqlx::query_as!(
        Hypothesis,
        r#"select h.id, h.text, h.score, h.covered, h.feedback, h.created_at,
                  (r.id is not null and r.verdict is null) as "in_review!",
                  r.verdict as "verdict?", nullif(r.note, '') as "verdict_note?"
           from attempt_hypotheses h left join hypothesis_reviews r on r.hypothesis_id = h.id
           where h.attempt_id = $1 order by h.id"#,
        attempt_id
    )
    .fetch_all(e)
    .await?)
}

/// The positions of the hints an attempt has taken, in order.
pub async fn hints_taken(e: impl PgExecutor<'_>, attempt_id: i64) -> AppResult<Vec<i32>> {
    Ok(sqlx::query_scalar!(
        "select position from attempt_hints where attempt_id = $1 order by position",
        attempt_id
    )
    .fetch_all(e)
    .await?)
}

pub async fn take_hint(
    e: impl PgExecutor<'_>,
    attempt_id: i64,
    position: i32,
    cost: i32,
) -> AppResult<()> {
    sqlx::query!(
        "insert into attempt_hints (attempt_id, position, cost) values ($1, $2, $3)",
        attempt_id,
        position,
        cost
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Opens the person's credit account with the starting grant if it has none (and writes the
/// grant to the ledger); `true` when it did.
pub async fn open_account(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<bool> {
    let opened = sqlx::query_scalar!(
        r#"with opened as (
               insert into credit_balances (person_id, balance)
               select $1, starting_grant from credit_settings
               on conflict (person_id) do nothing
               returning balance),
           entry as (
               insert into credit_entries (person_id, amount, reason)
               select $1, balance, 'starting grant' from opened)
           select count(*) as "n!" from opened"#,
        person_id
    )
    .fetch_one(e)
    .await?;
    Ok(opened == 1)
}

/// Moves the balance by `amount` (negative to charge) and writes the ledger entry; a charge
/// that would take the balance below zero is refused by the database's check: 409.
pub async fn post_entry(
    e: impl PgExecutor<'_>,
    person_id: i64,
    amount: i32,
    reason: &str,
    attempt_id: Option<i64>,
) -> AppResult<i32> {
    sqlx::query_scalar!(
        r#"with moved as (
               update credit_balances set balance = balance + $2 where person_id = $1
               returning balance),
           entry as (
               insert into credit_entries (person_id, amount, reason, attempt_id)
               select $1, $2, $3, $4 from moved)
           select balance as "balance!" from moved"#,
        person_id,
        amount,
        reason,
        attempt_id
    )
    .fetch_one(e)
    .await
    .map_err(|err| match &err {
        sqlx::Error::Database(db) if db.constraint() == Some("credit_balances_never_negative") => {
            AppError::Conflict(format!(
                "Not enough credit: this costs {}.",
                amount.unsigned_abs()
            ))
        }
        _ => AppError::Database(err),
    })
}

/// One line of a person's credit ledger.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = CreditEntry)]
pub struct Entry {
    pub amount: i32,
    pub reason: String,
    pub attempt_id: Option<i64>,
    pub created_at: DateTime<Utc>,
}

pub async fn balance(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        "select balance from credit_balances where person_id = $1",
        person_id
    )
    .fetch_optional(e)
    .await?
    .unwrap_or(0))
}

pub async fn entries(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<Entry>> {
    Ok(sqlx::query_as!(
        Entry,
        r#"select amount, reason, attempt_id, created_at from credit_entries
           where person_id = $1 order by id desc limit 200"#,
        person_id
    )
    .fetch_all(e)
    .await?)
}

/// A person's credit as an admin sees it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Balance {
    pub name: String,
    pub email: String,
    pub balance: i32,
    /// Credit earned by solving
    pub earned: i64,
    /// Credit spent on hints
    pub spent: i64,
}

/// Every credit account, the largest balance first.
pub async fn balances(e: impl PgExecutor<'_>) -> AppResult<Vec<Balance>> {
    Ok(sqlx::query_as!(
        Balance,
        r#"select p.name as "name!", p.email as "email!", b.balance as "balance!",
                  coalesce((select sum(c.amount) from credit_entries c
                            where c.person_id = b.person_id and c.reason like 'solved %'), 0)
                      as "earned!",
                  coalesce((select -sum(c.amount) from credit_entries c
                            where c.person_id = b.person_id and c.amount < 0), 0) as "spent!"
           from credit_balances b join people p on p.id = b.person_id
           order by b.balance desc, p.name"#
    )
    .fetch_all(e)
    .await?)
}

pub async fn set_starting_grant(e: impl PgExecutor<'_>, grant: i32) -> AppResult<()> {
    sqlx::query!("update credit_settings set starting_grant = $1", grant)
        .execute(e)
        .await?;
    Ok(())
}

pub async fn starting_grant(e: impl PgExecutor<'_>) -> AppResult<i32> {
    Ok(
        sqlx::query_scalar!("select starting_grant from credit_settings")
            .fetch_one(e)
            .await?,
    )
}

/// A person's ranked attempt at a challenge: their first, finished, not looked up.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub name: String,
    pub best_score: f32,
    pub hints_used: i64,
    /// Hypotheses stated
    pub guesses: i64,
    pub seconds: i64,
    pub outcome: String,
    /// How many attempts they finished, practice included
    pub attempts: i64,
}

/// Each person's first finished attempt at the challenge, unless it was looked up.
pub async fn ranked(e: impl PgExecutor<'_>, challenge_id: i64) -> AppResult<Vec<Ranked>> {
    Ok(sqlx::query_as!(
        Ranked,
        r#"select p.name as "name!", a.best_score as "best_score!",
                  (select count(*) from attempt_hints h where h.attempt_id = a.id) as "hints_used!",
                  (select count(*) from attempt_hypotheses y where y.attempt_id = a.id)
                      as "guesses!",
                  extract(epoch from a.ended_at - a.started_at)::int8 as "seconds!",
                  a.outcome as "outcome!",
                  (select count(*) from attempts o
                   where o.challenge_id = a.challenge_id and o.person_id = a.person_id
                     and o.ended_at is not null) as "attempts!"
           from attempts a join people p on p.id = a.person_id
           where a.challenge_id = $1 and a.ended_at is not null and not a.practice
             and a.looked_up is null"#,
        challenge_id
    )
    .fetch_all(e)
    .await?)
}

/// Marks the person's open attempts at these challenges as looked up, with what was read; the
/// first read is kept.
pub async fn mark_looked_up(
    e: impl PgExecutor<'_>,
    person_id: i64,
    challenge_ids: &[i64],
    what: &str,
) -> AppResult<()> {
    sqlx::query!(
        r#"update attempts set looked_up = $3, looked_up_at = now()
           where person_id = $1 and challenge_id = any($2) and ended_at is null
             and looked_up is null"#,
        person_id,
        challenge_ids,
        what
    )
    .execute(e)
    .await?;
    Ok(())
}

/// What a person playing could look up: for each challenge they have an attempt in progress at,
/// the numbers of the incident it was built from and of the incidents linked to it as related.
pub async fn lookups(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<(i64, Vec<i64>)>> {
    let rows = sqlx::query!(
        r#"-- every incident: which incidents would give away a person's open attempts
           select a.challenge_id as "challenge_id!",
                  array(select i.number from incidents i
                        where i.id = c.incident_id
                           or i.id in (select l.related_id from incident_links l
                                       where l.incident_id = c.incident_id)
                           or i.id in (select l.incident_id from incident_links l
                                       where l.related_id = c.incident_id)) as "numbers!"
           from attempts a join challenges c on c.id = a.challenge_id
           where a.person_id = $1 and a.ended_at is null and c.incident_id is not null"#,
        person_id
    )
    .fetch_all(e)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.challenge_id, r.numbers))
        .collect())
}

/// Puts a hypothesis in the review queue, or (when its learner asks) marks the waiting one as
/// asked; a hypothesis already judged stays as it was. The review's id.
pub async fn queue_review(
    e: impl PgExecutor<'_>,
    hypothesis_id: i64,
    challenge_id: i64,
    reason: &str,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"insert into hypothesis_reviews (hypothesis_id, challenge_id, reason, graded_score)
           select h.id, $2, $3, h.score from attempt_hypotheses h where h.id = $1
           on conflict (hypothesis_id) do update set reason = excluded.reason
               where hypothesis_reviews.verdict is null
           returning id"#,
        hypothesis_id,
        challenge_id,
        reason
    )
    .fetch_optional(e)
    .await?)
}

/// The attempt's hypothesis with this id, if it is one of the attempt's.
pub async fn hypothesis_of(
    e: impl PgExecutor<'_>,
    attempt_id: i64,
    hypothesis_id: i64,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        "select id from attempt_hypotheses where id = $1 and attempt_id = $2",
        hypothesis_id,
        attempt_id
    )
    .fetch_optional(e)
    .await?)
}

/// A hypothesis in the review queue, or judged.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Review {
    pub id: i64,
    pub hypothesis_id: i64,
    pub attempt_id: i64,
    /// Who stated it
    pub learner: String,
    pub text: String,
    /// What the grader gave it
    pub graded_score: f32,
    pub feedback: String,
    /// uncertain (the grader's score fell in the middle) or learner (they asked)
    pub reason: String,
    /// right, partial or wrong; null while it waits
    pub verdict: Option<String>,
    pub note: String,
    pub reviewed_by: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// The challenge's reviews: waiting ones first (oldest first), then the judged (newest first).
pub async fn reviews(e: impl PgExecutor<'_>, challenge_id: i64) -> AppResult<Vec<Review>> {
    reviews_where(e, challenge_id, None).await
}

/// The challenge's reviews, or the one with `id`.
async fn reviews_where(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    id: Option<i64>,
) -> AppResult<Vec<Review>> {
    Ok(sqlx::query_as!(
        Review,
        r#"select id as "id!", hypothesis_id as "hypothesis_id!", attempt_id as "attempt_id!",
                  learner as "learner!", text as "text!", graded_score as "graded_score!",
                  feedback as "feedback!", reason as "reason!", verdict, note as "note!",
                  reviewed_by, created_at as "created_at!"
           from hypothesis_review_rows
           where challenge_id = $1 and ($2::int8 is null or id = $2)
           order by (verdict is null) desc, case when verdict is null then id else -id end
           limit 500"#,
        challenge_id,
        id
    )
    .fetch_all(e)
    .await?)
}

/// The attempt a review's hypothesis belongs to (to lock the attempt before the review, in the
/// order stating a hypothesis takes them).
pub async fn review_attempt(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    review_id: i64,
) -> AppResult<Option<i64>> {
    Ok(sqlx::query_scalar!(
        r#"select h.attempt_id from hypothesis_reviews r
           join attempt_hypotheses h on h.id = r.hypothesis_id
           where r.id = $1 and r.challenge_id = $2"#,
        review_id,
        challenge_id
    )
    .fetch_optional(e)
    .await?)
}

/// A waiting review, locked: `None` when there is none or it is judged already.
pub async fn lock_open_review(
    conn: &mut sqlx::PgConnection,
    challenge_id: i64,
    review_id: i64,
) -> AppResult<Option<Review>> {
    let locked = sqlx::query_scalar!(
        r#"select id from hypothesis_reviews
           where id = $1 and challenge_id = $2 and verdict is null for update"#,
        review_id,
        challenge_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    if locked.is_none() {
        return Ok(None);
    }
    Ok(reviews_where(&mut *conn, challenge_id, Some(review_id))
        .await?
        .pop())
}

/// Records a verdict and gives the hypothesis the score it stands for; its attempt's best score
/// follows, and a right one solves the attempt.
pub async fn decide(
    e: impl PgExecutor<'_>,
    review: &Review,
    verdict: &str,
    note: &str,
    by: &str,
    score: f32,
) -> AppResult<()> {
    sqlx::query!(
        r#"with decided as (
               update hypothesis_reviews set verdict = $2, note = $3, reviewed_by = $4,
                      reviewed_at = now()
               where id = $1),
           scored as (
               update attempt_hypotheses set score = $5 where id = $6)
           update attempts a set
               best_score = (select max(case when h.id = $6 then $5 else h.score end)
                             from attempt_hypotheses h where h.attempt_id = a.id),
               outcome = case when $2 = 'right' then 'solved' else a.outcome end,
               ended_at = case when $2 = 'right' then coalesce(a.ended_at, now())
                               else a.ended_at end
           where a.id = $7"#,
        review.id,
        verdict,
        note,
        by,
        score,
        review.hypothesis_id,
        review.attempt_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Keeps a phrasing an editor judged right or partly right: the grader matches it from then on.
pub async fn accept(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
    text: &str,
    verdict: &str,
    review_id: i64,
) -> AppResult<()> {
    sqlx::query!(
        "insert into accepted_answers (challenge_id, text, verdict, review_id) values ($1, $2, $3, $4)",
        challenge_id,
        text,
        verdict,
        review_id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The challenge's accepted answers: (text, verdict).
pub async fn accepted(
    e: impl PgExecutor<'_>,
    challenge_id: i64,
) -> AppResult<Vec<(String, String)>> {
    Ok(sqlx::query!(
        "select text, verdict from accepted_answers where challenge_id = $1 order by id",
        challenge_id
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| (r.text, r.verdict))
    .collect())
}
