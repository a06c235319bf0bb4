//! The challenges API: editors write under `/api/v1/challenges`, learners play through
//! `…/attempts`, and `/api/v1/me/credits` shows a person's credit.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::actions::Standing;
use super::actions::{self, AttemptView, Credits, Graded, Hinted, LearnerView, Player};
use super::db::{self, Summary};
use super::domain::ChallengeDraft;
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Auth, Manager, MinRole, Responder, Viewer};
use crate::http::extract::{ApiJson, ApiQuery, IfMatch, parse_id, with_etag};
use crate::http::request::ApiRequest;
use crate::state::AppState;

/// The signed-in person as a player; managers and admins are editors.
pub fn player<R: MinRole>(auth: &Auth<R>) -> Player<'_> {
    Player {
        person_id: auth.user.id,
        editor: auth.user.role.allows(UserRole::Manager),
        actor: &auth.actor,
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ChallengeList {
    pub items: Vec<Summary>,
}

/// Published challenges (and drafts, for editors); `?team=` a team's slug or `mine`.
#[utoipa::path(get, path = "/api/v1/challenges", operation_id = "listChallenges", tag = "challenges",
    params(crate::teams::domain::TeamQuery),
    responses((status = 200, description = "OK", body = ChallengeList)))]
pub async fn list(
    ApiRequest(state, auth): ApiRequest<Responder>,
    ApiQuery(q): ApiQuery<crate::teams::domain::TeamQuery>,
) -> AppResult<Json<ChallengeList>> {
    let team = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed(&state.pool, auth.user.id, team).await?;
    Ok(Json(ChallengeList {
        items: db::list(&state.pool, player(&auth).editor, narrowed.ids.as_deref()).await?,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Created {
    pub id: i64,
}

/// Write a challenge (a draft until published).
#[utoipa::path(post, path = "/api/v1/challenges", operation_id = "createChallenge", tag = "challenges",
    request_body = ChallengeDraft,
    responses((status = 201, description = "Created as a draft", body = Created),
              (status = 422, description = "A field is wrong, named in details (evidence[2].source.path …)", body = crate::error::ErrorBody)))]
pub async fn create(
    ApiRequest(state, auth): ApiRequest<Manager>,
    body: ApiJson<ChallengeDraft>,
) -> AppResult<Response> {
    let id = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &body.value))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(Created { id })).into_response())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateBody {
    /// The incident whose published postmortem it is built from, e.g. INC-1187
    pub incident: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Generated {
    pub id: i64,
    /// What the leak guard flags in the draft: refine it before publishing
    pub leaks: Vec<super::domain::Leak>,
}

/// Draft a challenge from an incident's published postmortem, in one call.
#[utoipa::path(post, path = "/api/v1/challenges/generate", operation_id = "generateChallenge", tag = "challenges",
    request_body = GenerateBody,
    responses((status = 201, description = "A draft, with what the leak guard flags", body = Generated),
              (status = 404, description = "No such incident", body = crate::error::ErrorBody),
              (status = 409, description = "The incident has no published postmortem", body = crate::error::ErrorBody),
              (status = 422, description = "The postmortem lacks what a challenge needs (a root cause)", body = crate::error::ErrorBody)))]
pub async fn generate(
    ApiRequest(state, auth): ApiRequest<Manager>,
    body: ApiJson<GenerateBody>,
) -> AppResult<Response> {
    let key = crate::domain::IncidentKey::parse(body.value.incident.trim())
        .ok_or_else(|| AppError::invalid("incident", "name the incident as INC-<number>"))?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let id = actions::generate(&mut tx, &auth.actor, key).await?;
    let c = db::get(&mut *tx, id).await?;
    tx.commit().await?;
    Ok((
        StatusCode::CREATED,
        Json(Generated {
            id,
            leaks: actions::flags(&c),
        }),
    )
        .into_response())
}

/// A challenge as a learner sees it: the scenario, the evidence and what the hints cost; never
/// the answer, the rubric or the incident.
#[utoipa::path(get, path = "/api/v1/challenges/{id}", operation_id = "getChallenge", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "OK", body = LearnerView), (status = 404, description = "Not found (or a draft)", body = crate::error::ErrorBody)))]
pub async fn get(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<Json<LearnerView>> {
    let id = parse_id(&id, "challenge")?;
    let mut conn = state.pool.acquire().await?;
    let c = actions::playable(&mut conn, id, &player(&auth)).await?;
    Ok(Json(actions::learner_view(&c)))
}

/// The whole challenge, answer and rubric included, for its editors; refused while the editor
/// has an attempt at it in progress.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/source", operation_id = "getChallengeSource", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "With an ETag", body = ChallengeDraft), crate::http::openapi::NotFound,
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody)))]
pub async fn source(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut conn = state.pool.acquire().await?;
    let c = actions::editable(&mut conn, id, auth.user.id).await?;
    Ok(with_etag(StatusCode::OK, c.version, &actions::source(&c)))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LeakList {
    /// What would give the game away; publishing refuses while there is any
    pub items: Vec<super::domain::Leak>,
}

/// What the leak guard flags: evidence dated after the incident's detection, and the scenario, a
/// hint or an evidence item that says part of the answer. Refused to an editor playing it.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/leaks", operation_id = "getChallengeLeaks", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "OK", body = LeakList), crate::http::openapi::NotFound,
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody)))]
pub async fn leaks(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> AppResult<Json<LeakList>> {
    let mut conn = state.pool.acquire().await?;
    let c = actions::editable(&mut conn, parse_id(&id, "challenge")?, auth.user.id).await?;
    Ok(Json(LeakList {
        items: actions::flags(&c),
    }))
}

/// Replace a challenge (If-Match with the source's ETag).
#[utoipa::path(put, path = "/api/v1/challenges/{id}", operation_id = "updateChallenge", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("If-Match" = String, Header)),
    request_body = ChallengeDraft,
    responses((status = 200, description = "OK", body = ChallengeDraft), crate::http::openapi::NotFound,
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody),
              (status = 412, description = "Changed since you read it", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid, (status = 428, description = "If-Match is missing", body = crate::error::ErrorBody)))]
pub async fn update(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
    IfMatch(version): IfMatch,
    body: ApiJson<ChallengeDraft>,
) -> AppResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let c = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, id, version, &body.value))
    })
    .await?;
    Ok(with_etag(StatusCode::OK, c.version, &actions::source(&c)))
}

/// Publish a challenge: learners see it.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/publish", operation_id = "publishChallenge", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "Published", body = LearnerView), crate::http::openapi::NotFound,
              (status = 409, description = "The leak guard flags something, or you are playing it", body = crate::error::ErrorBody),
              (status = 422, description = "It is not complete", body = crate::error::ErrorBody)))]
pub async fn publish(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> AppResult<Json<LearnerView>> {
    let id = parse_id(&id, "challenge")?;
    let c = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::publish(tx, &auth.actor, id))
    })
    .await?;
    Ok(Json(actions::learner_view(&c)))
}

/// Start an attempt (or get the one in progress, 200).
#[utoipa::path(post, path = "/api/v1/challenges/{id}/attempts", operation_id = "startAttempt", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 201, description = "Started", body = AttemptView), (status = 200, description = "Already in progress", body = AttemptView),
              crate::http::openapi::NotFound))]
pub async fn start(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let (view, started) = actions::start(&mut tx, id, &player(&auth)).await?;
    tx.commit().await?;
    let status = if started {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view)).into_response())
}

/// Runs one step of the player's own attempt (the path's challenge and attempt ids) in a
/// transaction; the pages use it too.
pub async fn in_attempt<T>(
    state: &AppState,
    p: &Player<'_>,
    (id, attempt_id): (String, String),
    run: impl AsyncFnOnce(&mut sqlx::PgConnection, i64, i64, &Player<'_>) -> AppResult<T>,
) -> AppResult<(i64, T)> {
    let (id, attempt_id) = (
        parse_id(&id, "challenge")?,
        parse_id(&attempt_id, "attempt")?,
    );
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let done = run(&mut tx, id, attempt_id, p).await?;
    tx.commit().await?;
    Ok((id, done))
}

/// Your attempt: hypotheses, hints taken; the answer and the times once it ended.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/attempts/{attempt_id}", operation_id = "getAttempt", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("attempt_id" = i64, Path, description = "Your attempt's id")),
    responses((status = 200, description = "OK", body = AttemptView), (status = 404, description = "Not found (or not yours)", body = crate::error::ErrorBody)))]
pub async fn attempt(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
) -> AppResult<Json<AttemptView>> {
    let (_, view) = in_attempt(&state, &player(&auth), ids, actions::attempt).await?;
    Ok(Json(view))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HypothesisBody {
    /// What you think happened and why, 1 to 2000 characters
    pub text: String,
}

/// State a hypothesis: a score from 0 to 1 and feedback on which aspects it covers.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/attempts/{attempt_id}/hypotheses", operation_id = "stateHypothesis", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("attempt_id" = i64, Path, description = "Your attempt's id")),
    request_body = HypothesisBody,
    responses((status = 201, description = "Graded", body = Graded), crate::http::openapi::NotFound,
              (status = 409, description = "The attempt has ended", body = crate::error::ErrorBody), (status = 422, description = "Blank or too long", body = crate::error::ErrorBody)))]
pub async fn hypothesize(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
    body: ApiJson<HypothesisBody>,
) -> AppResult<Response> {
    let text = &body.value.text;
    let (_, graded) = in_attempt(&state, &player(&auth), ids, async |tx, id, a, p| {
        actions::hypothesize(tx, id, a, p, text).await
    })
    .await?;
    Ok((StatusCode::CREATED, Json(graded)).into_response())
}

/// "I think this is right": put one of your hypotheses before the challenge's editors.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/attempts/{attempt_id}/hypotheses/{hypothesis_id}/review", operation_id = "askForReview", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("attempt_id" = i64, Path, description = "Your attempt's id"),
           ("hypothesis_id" = i64, Path, description = "One of its hypotheses")),
    responses((status = 202, description = "Waiting for an editor's verdict"), crate::http::openapi::NotFound,
              (status = 409, description = "Judged already", body = crate::error::ErrorBody)))]
pub async fn ask_review(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((id, attempt_id, hypothesis_id)): Path<(String, String, String)>,
) -> AppResult<StatusCode> {
    let hypothesis_id = parse_id(&hypothesis_id, "hypothesis")?;
    in_attempt(
        &state,
        &player(&auth),
        (id, attempt_id),
        async |tx, id, a, p| actions::ask_review(tx, id, a, hypothesis_id, p).await,
    )
    .await?;
    Ok(StatusCode::ACCEPTED)
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ReviewList {
    /// Waiting ones first, oldest first; then the judged, newest first
    pub items: Vec<db::Review>,
}

/// The review queue: hypotheses the grader was unsure of or their learners think right, and the
/// verdicts given. Refused to an editor playing it.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/reviews", operation_id = "listReviews", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "OK", body = ReviewList), crate::http::openapi::NotFound,
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody)))]
pub async fn reviews(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> AppResult<Json<ReviewList>> {
    let mut conn = state.pool.acquire().await?;
    let items = actions::reviews(&mut conn, parse_id(&id, "challenge")?, auth.user.id).await?;
    Ok(Json(ReviewList { items }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ReviewVerdict)]
pub struct VerdictBody {
    /// right, partial or wrong
    pub verdict: String,
    /// Why, for the learner (at most 2000 characters)
    #[serde(default)]
    pub note: String,
}

/// Judge a waiting hypothesis: the learner sees the verdict and the note, the hypothesis takes
/// the score it stands for (right 1, partial 0.5, wrong 0; a right one solves the attempt), and a
/// right or partly right phrasing becomes an accepted answer the grader matches from then on.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/reviews/{review_id}", operation_id = "judgeHypothesis", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("review_id" = i64, Path, description = "The review's id")),
    request_body = VerdictBody,
    responses((status = 200, description = "Judged", body = db::Review), (status = 404, description = "No such review waiting", body = crate::error::ErrorBody),
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn judge(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path((id, review_id)): Path<(String, String)>,
    body: ApiJson<VerdictBody>,
) -> AppResult<Json<db::Review>> {
    let (id, review_id) = (parse_id(&id, "challenge")?, parse_id(&review_id, "review")?);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let r = actions::judge(
        &mut tx,
        &auth.actor,
        id,
        review_id,
        &body.value.verdict,
        &body.value.note,
    )
    .await?;
    tx.commit().await?;
    Ok(Json(r))
}

/// The challenge's labelled set: every judged hypothesis as `verdict<TAB>text`, after comment
/// lines naming the challenge and giving its rubric (`scripts/bench-grading` reads it).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/labelled.tsv", operation_id = "exportLabelledSet", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "TSV", content_type = "text/tab-separated-values", body = String),
              crate::http::openapi::NotFound,
              (status = 409, description = "You are playing it", body = crate::error::ErrorBody)))]
pub async fn labelled(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut conn = state.pool.acquire().await?;
    let tsv = actions::labelled(&mut conn, id, auth.user.id).await?;
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/tab-separated-values; charset=utf-8".to_owned(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"challenge-{id}-labelled.tsv\""),
            ),
        ],
        tsv,
    )
        .into_response())
}

/// Take the next hint; its cost is charged once.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/attempts/{attempt_id}/hints", operation_id = "takeHint", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("attempt_id" = i64, Path, description = "Your attempt's id")),
    responses((status = 201, description = "The hint and your balance", body = Hinted), crate::http::openapi::NotFound,
              (status = 409, description = "Not enough credit, no more hints, or the attempt has ended", body = crate::error::ErrorBody)))]
pub async fn hint(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
) -> AppResult<Response> {
    let (_, hinted) = in_attempt(&state, &player(&auth), ids, actions::hint).await?;
    Ok((StatusCode::CREATED, Json(hinted)).into_response())
}

/// Give up: the attempt ends and the answer is shown.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/attempts/{attempt_id}/give-up", operation_id = "giveUp", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id"), ("attempt_id" = i64, Path, description = "Your attempt's id")),
    responses((status = 200, description = "Ended, with the answer", body = AttemptView), crate::http::openapi::NotFound))]
pub async fn give_up(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
) -> AppResult<Json<AttemptView>> {
    let (_, view) = in_attempt(&state, &player(&auth), ids, actions::give_up).await?;
    Ok(Json(view))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Leaderboard {
    pub items: Vec<Standing>,
}

/// One row per person, their first attempt (later ones are practice), finished and not looked up:
/// the counted score first (a tenth off for each hypothesis after the third), then fewer hints,
/// then faster.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/leaderboard", operation_id = "getLeaderboard", tag = "challenges",
    params(("id" = i64, Path, description = "The challenge's id")),
    responses((status = 200, description = "OK", body = Leaderboard), crate::http::openapi::NotFound))]
pub async fn leaderboard(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> AppResult<Json<Leaderboard>> {
    let id = parse_id(&id, "challenge")?;
    let mut conn = state.pool.acquire().await?;
    actions::playable(&mut conn, id, &player(&auth)).await?;
    Ok(Json(Leaderboard {
        items: actions::leaderboard(&mut conn, id).await?,
    }))
}

/// Your credit: the balance (never below zero) and the ledger, newest first.
#[utoipa::path(get, path = "/api/v1/me/credits", operation_id = "getMyCredits", tag = "challenges",
    responses((status = 200, description = "OK", body = Credits)))]
pub async fn my_credits(ApiRequest(state, auth): ApiRequest<Viewer>) -> AppResult<Json<Credits>> {
    let credits = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::credits(tx, auth.user.id))
    })
    .await?;
    Ok(Json(credits))
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreditSettings {
    /// The credit a person starts with, 0 to 1 000 000
    pub starting_grant: i32,
}

/// The starting grant.
#[utoipa::path(get, path = "/api/v1/credits/settings", operation_id = "getCreditSettings", tag = "challenges",
    responses((status = 200, description = "OK", body = CreditSettings)))]
pub async fn settings(ApiRequest(state, _): ApiRequest<Admin>) -> AppResult<Json<CreditSettings>> {
    Ok(Json(CreditSettings {
        starting_grant: db::starting_grant(&state.pool).await?,
    }))
}

/// Set the starting grant (for people who have no credit account yet).
#[utoipa::path(put, path = "/api/v1/credits/settings", operation_id = "setCreditSettings", tag = "challenges",
    request_body = CreditSettings,
    responses((status = 200, description = "OK", body = CreditSettings), (status = 422, description = "Out of range", body = crate::error::ErrorBody)))]
pub async fn set_settings(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<CreditSettings>,
) -> AppResult<Json<CreditSettings>> {
    let grant = body.value.starting_grant;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_starting_grant(tx, &auth.actor, grant))
    })
    .await?;
    Ok(Json(CreditSettings {
        starting_grant: grant,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct BalanceList {
    pub items: Vec<db::Balance>,
}

/// Every person's credit: balance, earned by solving, spent on hints.
#[utoipa::path(get, path = "/api/v1/credits/balances", operation_id = "listCreditBalances", tag = "challenges",
    responses((status = 200, description = "OK", body = BalanceList)))]
pub async fn balances(ApiRequest(state, _): ApiRequest<Admin>) -> AppResult<Json<BalanceList>> {
    Ok(Json(BalanceList {
        items: db::balances(&state.pool).await?,
    }))
}
