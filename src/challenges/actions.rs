//! Writing challenges (checked, audited), and playing them: attempts, graded hypotheses, hints
//! paid for with credit, giving up. Each play step locks its attempt, so concurrent requests are
//! decided one at a time and a hint is charged once.

use serde::Serialize;
use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Attempt, Challenge, Hypothesis};
use super::domain::{
    Accepted, Answer, ChallengeDraft, Evidence, Leak, SOLVED_AT, UNCERTAIN_FROM, check_hypothesis,
    grade_with, labelled_set, leaks, ranked_score, reward, verdict_score,
};
use crate::audit::{self, Actor};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;

async fn incident_of(conn: &mut PgConnection, d: &ChallengeDraft) -> AppResult<Option<i64>> {
    let Some(named) = d
        .incident
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    else {
        return Ok(None);
    };
    let key = IncidentKey::parse(named)
        .ok_or_else(|| AppError::invalid("incident", "name the incident as INC-<number>"))?;
    db::incident_id(&mut *conn, key.0)
        .await?
        .map(Some)
        .ok_or_else(|| AppError::invalid("incident", format!("there is no incident {key}")))
}

/// The team a draft belongs to: the one it names (an unknown one refused naming `team`), else
/// its incident's service's team, else nobody's.
async fn team_of(
    conn: &mut PgConnection,
    d: &ChallengeDraft,
    incident: Option<i64>,
) -> AppResult<Option<i64>> {
    if let Some(named) = d.team.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        return crate::teams::actions::named(&mut *conn, named).await;
    }
    match incident {
        Some(id) => db::incident_team(&mut *conn, id).await,
        None => Ok(None),
    }
}

/// The audit row of an editor's change to a challenge.
async fn audited(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    id: i64,
    title: &str,
) -> AppResult<()> {
    audit::created(
        conn,
        actor,
        action,
        &id.to_string(),
        json!({ "title": title }),
    )
    .await
}

/// Saves a new draft.
pub async fn create(conn: &mut PgConnection, actor: &Actor, d: &ChallengeDraft) -> AppResult<i64> {
    d.check()?;
    let incident = incident_of(conn, d).await?;
    let team = team_of(conn, d, incident).await?;
    let id = db::insert(&mut *conn, d, (incident, team), &actor.name).await?;
    audited(conn, actor, "challenge.create", id, &d.title).await?;
    Ok(id)
}

/// Replaces a challenge if it is still at `version`.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
    d: &ChallengeDraft,
) -> AppResult<Challenge> {
    d.check()?;
    let current = db::get(&mut *conn, id).await?;
    not_playing(conn, id, actor.person_id).await?;
    let incident = incident_of(conn, d).await?;
    let team = team_of(conn, d, incident).await?;
    if !db::update(
        &mut *conn,
        id,
        version.unwrap_or(current.version),
        d,
        (incident, team),
    )
    .await?
    {
        return Err(AppError::Stale {
            current_version: current.version,
        });
    }
    audited(conn, actor, "challenge.update", id, &d.title).await?;
    db::get(conn, id).await
}

/// Refuses an editor who has an attempt at the challenge in progress: what the editor's tools
/// show (the answer, the rubric, the leak guard's reasons) would end the game.
async fn not_playing(conn: &mut PgConnection, id: i64, person_id: Option<i64>) -> AppResult<()> {
    if let Some(person_id) = person_id
        && db::open_attempt(&mut *conn, id, person_id).await?.is_some()
    {
        return Err(AppError::Conflict(
            "You have an attempt at this challenge in progress; finish it or give up first.".into(),
        ));
    }
    Ok(())
}

/// The challenge for its editor, answer and rubric included; refused while that editor has an
/// attempt at it in progress.
pub async fn editable(conn: &mut PgConnection, id: i64, person_id: i64) -> AppResult<Challenge> {
    let c = db::get(&mut *conn, id).await?;
    not_playing(conn, id, Some(person_id)).await?;
    Ok(c)
}

/// What would give the game away (see [`leaks`]): in the scenario, a hint or an evidence item.
pub fn flags(c: &Challenge) -> Vec<Leak> {
    leaks(&source(c), c.detected_at)
}

/// Publishes a complete challenge the leak guard does not flag.
pub async fn publish(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<Challenge> {
    let c = db::get(&mut *conn, id).await?;
    not_playing(conn, id, actor.person_id).await?;
    source(&c).check()?;
    let open = flags(&c);
    if !open.is_empty() {
        let list: Vec<String> = open
            .iter()
            .map(|l| format!("{} ({}): {}", l.field, l.title, l.reason))
            .collect();
        return Err(AppError::Conflict(format!(
            "The leak guard flags {} item{}; remove or reword {} before publishing: {}.",
            open.len(),
            if open.len() == 1 { "" } else { "s" },
            if open.len() == 1 { "it" } else { "them" },
            list.join("; ")
        )));
    }
    db::publish(&mut *conn, id).await?;
    audited(conn, actor, "challenge.publish", id, &c.title).await?;
    db::get(conn, id).await
}

/// The challenge as its editor wrote it, answer and rubric included.
pub fn source(c: &Challenge) -> ChallengeDraft {
    ChallengeDraft {
        title: c.title.clone(),
        incident: c.incident.map(|k| k.to_string()),
        team: c.team.clone(),
        scenario: c.scenario.clone(),
        evidence: c.evidence.0.clone(),
        hints: c.hints.0.clone(),
        answer: answer(c),
        rubric: c.rubric.0.clone(),
    }
}

fn answer(c: &Challenge) -> Answer {
    Answer {
        cause: c.answer_cause.clone(),
        fix: c.answer_fix.clone(),
        explanation: c.explanation.clone(),
    }
}

/// What a hint costs, before it is taken.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct HintCost {
    pub position: i32,
    pub cost: i32,
}

/// A challenge as a learner sees it: never the answer, the rubric, the hints' text or the
/// incident it came from.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LearnerView {
    pub id: i64,
    pub title: String,
    pub status: String,
    pub scenario: String,
    pub evidence: Vec<Evidence>,
    pub hints: Vec<HintCost>,
}

pub fn learner_view(c: &Challenge) -> LearnerView {
    LearnerView {
        id: c.id,
        title: c.title.clone(),
        status: c.status.clone(),
        scenario: c.scenario.clone(),
        evidence: c.evidence.0.clone(),
        hints: c
            .hints
            .0
            .iter()
            .zip(0..)
            .map(|(h, position)| HintCost {
                position,
                cost: h.cost,
            })
            .collect(),
    }
}

/// A hint taken.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TakenHint {
    pub position: i32,
    pub text: String,
    pub cost: i32,
}

/// The learner's time beside the real team's.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Times {
    /// From the attempt's start to its end
    pub learner_secs: i64,
    /// The team that worked the incident: started → detected, detected → mitigated
    pub team_detect_secs: Option<i64>,
    pub team_mitigate_secs: Option<i64>,
}

/// An attempt as its learner sees it; the answer, the incident and the times only once it ended.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AttemptView {
    #[serde(flatten)]
    pub attempt: Attempt,
    pub hypotheses: Vec<Hypothesis>,
    pub hints: Vec<TakenHint>,
    pub answer: Option<Answer>,
    /// The incident it was built from, e.g. INC-184
    pub incident: Option<String>,
    pub times: Option<Times>,
}

async fn view(conn: &mut PgConnection, a: Attempt, c: &Challenge) -> AppResult<AttemptView> {
    let taken = db::hints_taken(&mut *conn, a.id).await?;
    let ended = a.ended_at.is_some();
    Ok(AttemptView {
        hypotheses: db::hypotheses(&mut *conn, a.id).await?,
        hints: taken
            .into_iter()
            .filter_map(|p| {
                c.hints.0.get(p as usize).map(|h| TakenHint {
                    position: p,
                    text: h.text.clone(),
                    cost: h.cost,
                })
            })
            .collect(),
        answer: ended.then(|| answer(c)),
        incident: c.incident.filter(|_| ended).map(|k| k.to_string()),
        times: a.ended_at.map(|end| Times {
            learner_secs: (end - a.started_at).num_seconds(),
            team_detect_secs: c.team_detect_secs,
            team_mitigate_secs: c.team_mitigate_secs,
        }),
        attempt: a,
    })
}

/// Who is playing, and whether they may play drafts (editors try theirs out).
pub struct Player<'a> {
    pub person_id: i64,
    pub editor: bool,
    pub actor: &'a Actor,
}

/// The challenge if this player may see it: published, or a draft for an editor.
pub async fn playable(conn: &mut PgConnection, id: i64, p: &Player<'_>) -> AppResult<Challenge> {
    let c = db::get(&mut *conn, id).await?;
    if c.status != "published" && !p.editor {
        return Err(AppError::NotFound(format!("There is no challenge {id}.")));
    }
    Ok(c)
}

/// Starts an attempt, or returns the one in progress; `true` when it started one.
pub async fn start(
    conn: &mut PgConnection,
    challenge_id: i64,
    p: &Player<'_>,
) -> AppResult<(AttemptView, bool)> {
    let c = playable(conn, challenge_id, p).await?;
    db::open_account(&mut *conn, p.person_id).await?;
    let started = db::insert_attempt(&mut *conn, c.id, p.person_id)
        .await?
        .is_some();
    let a = db::open_attempt(&mut *conn, c.id, p.person_id)
        .await?
        .ok_or_else(|| AppError::Internal("the attempt vanished".into()))?;
    Ok((view(conn, a, &c).await?, started))
}

/// The player's own attempt at the challenge, locked; someone else's is not found.
async fn own_attempt(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    p: &Player<'_>,
) -> AppResult<(Attempt, Challenge)> {
    let a = db::lock_attempt(&mut *conn, attempt_id)
        .await?
        .filter(|a| a.person_id == p.person_id && a.challenge_id == challenge_id)
        .ok_or_else(|| AppError::NotFound(format!("There is no attempt {attempt_id} of yours.")))?;
    let c = db::get(&mut *conn, challenge_id).await?;
    Ok((a, c))
}

fn still_open(a: &Attempt) -> AppResult<()> {
    match a.ended_at {
        None => Ok(()),
        Some(_) => Err(AppError::Conflict(
            "This attempt has ended; start a new one to play again.".into(),
        )),
    }
}

pub async fn attempt(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    p: &Player<'_>,
) -> AppResult<AttemptView> {
    let (a, c) = own_attempt(conn, challenge_id, attempt_id, p).await?;
    view(conn, a, &c).await
}

/// What a hypothesis earned; the answer comes with it when it solves the challenge.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Graded {
    #[serde(flatten)]
    pub hypothesis: Hypothesis,
    /// It scored 0.8 or more: the attempt ends and the answer is shown
    pub solved: bool,
    pub answer: Option<Answer>,
    /// Credit the solve earned: 20 less 5 a hint on a first attempt not looked up, else 0
    pub earned: i32,
}

pub async fn hypothesize(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    p: &Player<'_>,
    text: &str,
) -> AppResult<Graded> {
    let text = check_hypothesis(text)?;
    let (a, c) = own_attempt(conn, challenge_id, attempt_id, p).await?;
    still_open(&a)?;
    let accepted: Vec<Accepted> = db::accepted(&mut *conn, c.id)
        .await?
        .into_iter()
        .filter_map(|(text, verdict)| verdict_score(&verdict).map(|score| Accepted { text, score }))
        .collect();
    let g = grade_with(text, &c.rubric.0, &accepted);
    let mut h = db::insert_hypothesis(
        &mut *conn,
        &db::NewHypothesis {
            attempt_id: a.id,
            text,
            score: g.score as f32,
            covered: &g.covered,
            feedback: &g.feedback,
        },
    )
    .await?;
    let solved = g.score >= SOLVED_AT;
    if !solved && g.score >= UNCERTAIN_FROM {
        h.in_review = db::queue_review(&mut *conn, h.id, c.id, "uncertain")
            .await?
            .is_some();
    }
    let mut earned = 0;
    if solved {
        db::end_attempt(&mut *conn, a.id, "solved").await?;
        earned = earn_for_solve(conn, &a, &format!("solved challenge {}", c.id)).await?;
    }
    Ok(Graded {
        hypothesis: h,
        solved,
        answer: solved.then(|| answer(&c)),
        earned,
    })
}

/// Credits a solved attempt, when it is ranked (the person's first, not looked up: a replay
/// could paste the answer it was shown), with 20 less 5 a hint; what it earned.
async fn earn_for_solve(conn: &mut PgConnection, a: &Attempt, reason: &str) -> AppResult<i32> {
    if a.practice || a.looked_up.is_some() {
        return Ok(0);
    }
    let earned = reward(db::hints_taken(&mut *conn, a.id).await?.len());
    if earned > 0 {
        db::open_account(&mut *conn, a.person_id).await?;
        db::post_entry(&mut *conn, a.person_id, earned, reason, Some(a.id)).await?;
    }
    Ok(earned)
}

/// Puts one of the player's hypotheses before the challenge's editors ("I think this is right").
pub async fn ask_review(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    hypothesis_id: i64,
    p: &Player<'_>,
) -> AppResult<()> {
    let (a, c) = own_attempt(conn, challenge_id, attempt_id, p).await?;
    db::hypothesis_of(&mut *conn, a.id, hypothesis_id)
        .await?
        .ok_or_else(|| {
            AppError::NotFound(format!(
                "There is no hypothesis {hypothesis_id} in this attempt."
            ))
        })?;
    db::queue_review(&mut *conn, hypothesis_id, c.id, "learner")
        .await?
        .ok_or_else(|| AppError::Conflict("An editor has judged it already.".into()))?;
    Ok(())
}

/// The challenge's review queue and verdicts, for an editor not playing it.
pub async fn reviews(
    conn: &mut PgConnection,
    id: i64,
    person_id: i64,
) -> AppResult<Vec<db::Review>> {
    editable(conn, id, person_id).await?;
    db::reviews(conn, id).await
}

/// An editor's verdict on a waiting hypothesis: right, partial or wrong, with a note. The
/// hypothesis takes the score the verdict stands for (1, 0.5, 0) and its attempt's best score
/// follows (a right one solves it); a right or partly right phrasing becomes an accepted answer.
pub async fn judge(
    conn: &mut PgConnection,
    actor: &Actor,
    challenge_id: i64,
    review_id: i64,
    verdict: &str,
    note: &str,
) -> AppResult<db::Review> {
    not_playing(conn, challenge_id, actor.person_id).await?;
    let score = verdict_score(verdict)
        .ok_or_else(|| AppError::invalid("verdict", "right, partial or wrong"))?;
    if note.chars().count() > 2000 {
        return Err(AppError::invalid("note", "at most 2000 characters"));
    }
    let missing = || {
        AppError::NotFound(format!(
            "There is no review {review_id} waiting in challenge {challenge_id}."
        ))
    };
    // The attempt first, then the review: the order a hypothesis being stated takes them.
    let attempt_id = db::review_attempt(&mut *conn, challenge_id, review_id)
        .await?
        .ok_or_else(missing)?;
    let attempt = db::lock_attempt(&mut *conn, attempt_id)
        .await?
        .ok_or_else(missing)?;
    let review = db::lock_open_review(&mut *conn, challenge_id, review_id)
        .await?
        .ok_or_else(missing)?;
    db::decide(
        &mut *conn,
        &review,
        verdict,
        note.trim(),
        &actor.name,
        score as f32,
    )
    .await?;
    // A right verdict solves the attempt; one not solved before earns as a solve does.
    if verdict == "right" && attempt.outcome.as_deref() != Some("solved") {
        let reason = format!("solved challenge {challenge_id} (an editor's verdict)");
        earn_for_solve(conn, &attempt, &reason).await?;
    }
    if verdict != "wrong" {
        db::accept(&mut *conn, challenge_id, &review.text, verdict, review.id).await?;
    }
    audited(conn, actor, "challenge.review", challenge_id, verdict).await?;
    Ok(db::Review {
        verdict: Some(verdict.to_owned()),
        note: note.trim().to_owned(),
        reviewed_by: Some(actor.name.clone()),
        ..review
    })
}

/// The challenge's judged hypotheses as a labelled set (TSV), for an editor not playing it.
pub async fn labelled(conn: &mut PgConnection, id: i64, person_id: i64) -> AppResult<String> {
    let c = editable(conn, id, person_id).await?;
    let lines: Vec<(String, String)> = db::reviews(conn, id)
        .await?
        .into_iter()
        .filter_map(|r| r.verdict.map(|v| (v, r.text)))
        .collect();
    Ok(labelled_set(&c.title, &c.rubric.0, &lines))
}

/// The next hint and the balance after paying for it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Hinted {
    #[serde(flatten)]
    pub hint: TakenHint,
    pub balance: i32,
}

/// Gives the next hint, charging its cost once: the attempt is locked while it is decided, a
/// hint is recorded once per attempt, and a balance too small is refused by the database.
pub async fn hint(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    p: &Player<'_>,
) -> AppResult<Hinted> {
    let (a, c) = own_attempt(conn, challenge_id, attempt_id, p).await?;
    still_open(&a)?;
    let position = db::hints_taken(&mut *conn, a.id).await?.len() as i32;
    let h = c
        .hints
        .0
        .get(position as usize)
        .ok_or_else(|| AppError::Conflict("There are no more hints.".into()))?;
    db::open_account(&mut *conn, p.person_id).await?;
    let balance = db::post_entry(
        &mut *conn,
        p.person_id,
        -h.cost,
        &format!("hint {} of challenge {}", position + 1, c.id),
        Some(a.id),
    )
    .await?;
    db::take_hint(&mut *conn, a.id, position, h.cost).await?;
    Ok(Hinted {
        hint: TakenHint {
            position,
            text: h.text.clone(),
            cost: h.cost,
        },
        balance,
    })
}

/// Ends the attempt and shows the answer; giving up twice shows it again.
pub async fn give_up(
    conn: &mut PgConnection,
    challenge_id: i64,
    attempt_id: i64,
    p: &Player<'_>,
) -> AppResult<AttemptView> {
    let (a, c) = own_attempt(conn, challenge_id, attempt_id, p).await?;
    if a.ended_at.is_none() {
        db::end_attempt(&mut *conn, a.id, "gave_up").await?;
    }
    let a = db::lock_attempt(&mut *conn, a.id)
        .await?
        .ok_or_else(|| AppError::Internal("the attempt vanished".into()))?;
    view(conn, a, &c).await
}

/// A person on the leaderboard: their first attempt, finished and not looked up. Later attempts
/// are practice.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Standing {
    pub name: String,
    /// What it counts: the best score less a tenth for each hypothesis after the third, never
    /// below half of it
    pub score: f64,
    pub best_score: f32,
    /// Hypotheses stated
    pub guesses: i64,
    pub hints_used: i64,
    /// From start to end
    pub seconds: i64,
    /// solved or gave_up
    pub outcome: String,
    /// How many attempts they finished, practice included
    pub attempts: i64,
}

impl Standing {
    /// The outcome in words: "solved", "gave up".
    pub fn outcome_words(&self) -> &'static str {
        super::domain::outcome_words(&self.outcome)
    }
}

/// One row per person, their first attempt: the counted score first, then fewer hints, then
/// faster; at most 100.
pub async fn leaderboard(conn: &mut PgConnection, challenge_id: i64) -> AppResult<Vec<Standing>> {
    let mut board: Vec<Standing> = db::ranked(conn, challenge_id)
        .await?
        .into_iter()
        .map(|r| Standing {
            score: ranked_score(f64::from(r.best_score), r.guesses),
            name: r.name,
            best_score: r.best_score,
            guesses: r.guesses,
            hints_used: r.hints_used,
            seconds: r.seconds,
            outcome: r.outcome,
            attempts: r.attempts,
        })
        .collect();
    board.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.hints_used.cmp(&b.hints_used))
            .then(a.seconds.cmp(&b.seconds))
            .then(a.name.cmp(&b.name))
    });
    board.truncate(100);
    Ok(board)
}

/// Sets the credit a person starts with (for people who have no account yet), 0 to 1 000 000.
pub async fn set_starting_grant(
    conn: &mut PgConnection,
    actor: &Actor,
    grant: i32,
) -> AppResult<()> {
    if !(0..=1_000_000).contains(&grant) {
        return Err(AppError::invalid(
            "starting_grant",
            "0 to 1 000 000 credits",
        ));
    }
    db::set_starting_grant(&mut *conn, grant).await?;
    audit::created(
        conn,
        actor,
        "credits.settings",
        "starting_grant",
        json!({ "starting_grant": grant }),
    )
    .await
}

/// A person's credit: the balance and the latest ledger lines.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Credits {
    pub balance: i32,
    pub entries: Vec<db::Entry>,
}

pub async fn credits(conn: &mut PgConnection, person_id: i64) -> AppResult<Credits> {
    db::open_account(&mut *conn, person_id).await?;
    Ok(Credits {
        balance: db::balance(&mut *conn, person_id).await?,
        entries: db::entries(&mut *conn, person_id).await?,
    })
}

/// Drafts a challenge from an incident's published postmortem (see [`super::domain::generate`]);
/// an incident without one is a conflict. Returns the new draft's id.
pub async fn generate(conn: &mut PgConnection, actor: &Actor, key: IncidentKey) -> AppResult<i64> {
    use crate::postmortems::domain::Section;
    let i = crate::incidents::db::get(&mut *conn, key).await?;
    // A challenge is read by everyone who trains: a restricted incident is never one's source,
    // and is not there for it.
    if i.restricted {
        return Err(AppError::NotFound(format!("There is no incident {key}.")));
    }
    let published = crate::postmortems::db::for_incident(&mut *conn, i.id)
        .await?
        .is_some_and(|p| p.status == "published");
    if !published {
        return Err(AppError::Conflict(format!(
            "{key} has no published postmortem to build a challenge from."
        )));
    }
    let now = crate::clock::now(&mut *conn).await?;
    let doc = crate::postmortems::document::Document::load(conn, &i, now).await?;
    let events = crate::timeline::db::for_incident(&mut *conn, i.id).await?;
    let opened = events
        .iter()
        .find(|e| e.kind == crate::timeline::domain::Kind::Opened)
        .map(|e| e.body.clone())
        .unwrap_or_default();
    let timeline = events
        .iter()
        .filter(|e| {
            e.kind != crate::timeline::domain::Kind::Opened && e.occurred_at <= i.detected_at
        })
        .map(|e| {
            let text = if e.body.is_empty() {
                crate::timeline::domain::headline(e.kind, &e.details, e.occurred_at, i.detected_at)
            } else {
                e.body.clone()
            };
            (e.occurred_at, text)
        })
        .collect();
    let changes =
        crate::changes::actions::suspects(&mut *conn, &crate::incidents::views::suspecting(&i))
            .await?
            .into_iter()
            .map(|s| {
                let c = s.change;
                (
                    c.occurred_at,
                    format!(
                        "{} of {}: {}",
                        c.kind,
                        c.service.unwrap_or_default(),
                        c.summary
                    ),
                    c.author,
                )
            })
            .collect();
    let related = crate::related::db::list(&mut *conn, i.id, SeenBy::EVERYONE)
        .await?
        .into_iter()
        .map(|r| (r.key.to_string(), r.title, r.note))
        .collect();
    // The system around the service: what it depends on and what depends on it.
    let services = crate::services::db::list(&mut *conn).await?;
    let this = services
        .iter()
        .find(|s| Some(&s.name) == i.service.as_ref());
    let described = |s: &crate::services::db::Service| (s.name.clone(), s.description.clone());
    let depends_on = this.map_or(Vec::new(), |t| {
        services
            .iter()
            .filter(|s| t.depends_on.contains(&s.name))
            .map(described)
            .collect()
    });
    let depended_on_by = this.map_or(Vec::new(), |t| {
        services
            .iter()
            .filter(|s| s.depends_on.contains(&t.name))
            .map(described)
            .collect()
    });
    let material = super::domain::Material {
        key: key.to_string(),
        title: i.title.clone(),
        service: i.service.clone(),
        service_description: this.map(|s| s.description.clone()).unwrap_or_default(),
        depends_on,
        depended_on_by,
        summary: doc.section_text(Section::Summary),
        started_at: i.started_at,
        detected_at: i.detected_at,
        opened_note: opened,
        timeline,
        changes,
        related,
        attached: crate::evidence::db::list(&mut *conn, i.id, None)
            .await?
            .iter()
            .map(crate::evidence::db::Item::evidence)
            .collect(),
        root_cause: doc.section_text(Section::RootCause),
        contributing_factors: doc.section_text(Section::ContributingFactors),
        detection: doc.section_text(Section::Detection),
        lessons: doc.section_text(Section::Lessons),
        actions: doc
            .items
            .iter()
            .map(|a| (a.kind.clone(), a.action.clone()))
            .collect(),
    };
    create(conn, actor, &super::domain::generate(&material)).await
}
