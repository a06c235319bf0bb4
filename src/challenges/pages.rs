//! The learner's pages: `/challenges` lists them with your credit; `/challenges/{id}` shows the
//! scenario and the evidence, and your attempt — state a hypothesis, take a hint, give up — or,
//! once it ended, the answer beside the real team's times; and the leaderboard.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions::{self, AttemptView, LearnerView, Player};
use super::db::{self, Standing, Summary};
use super::domain::EvidenceKind;
use super::handlers::{in_attempt, player};
use crate::error::AppResult;
use crate::http::access::{Auth, Responder};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageResult};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "challenges/list.html")]
pub struct ListPage {
    chrome: Chrome,
    challenges: Vec<Summary>,
    balance: i32,
}

pub async fn list(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Responder>,
) -> PageResult<ListPage> {
    let mut tx = state.pool.begin().await?;
    let credits = actions::credits(&mut tx, auth.user.id).await?;
    let challenges = db::list(&mut *tx, player(&auth).editor).await?;
    tx.commit().await?;
    Ok(ListPage {
        chrome,
        challenges,
        balance: credits.balance,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "challenges/show.html")]
pub struct ShowPage {
    chrome: Chrome,
    c: LearnerView,
    /// Your attempt in progress, or the last one you finished.
    attempt: Option<AttemptView>,
    balance: i32,
    board: Vec<Standing>,
}

impl ShowPage {
    /// The cost of the next hint, if one is left.
    fn next_hint_cost(&self) -> Option<i32> {
        let taken = self.attempt.as_ref().map_or(0, |a| a.hints.len());
        self.c.hints.get(taken).map(|h| h.cost)
    }

    fn minutes(&self, secs: &i64) -> String {
        crate::domain::format_minutes(*secs)
    }

    fn percent(&self, score: &f32) -> String {
        format!("{}%", (score * 100.0).round())
    }
}

pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Responder>,
    Path(id): Path<String>,
) -> PageResult<ShowPage> {
    let id = parse_id(&id, "challenge")?;
    let p = player(&auth);
    let mut tx = state.pool.begin().await?;
    let c = actions::playable(&mut tx, id, &p).await?;
    let attempt = match db::latest_attempt(&mut *tx, id, auth.user.id).await? {
        Some(a) => Some(actions::attempt(&mut tx, id, a.id, &p).await?),
        None => None,
    };
    let balance = actions::credits(&mut tx, auth.user.id).await?.balance;
    let board = db::leaderboard(&mut *tx, id).await?;
    tx.commit().await?;
    Ok(ShowPage {
        chrome,
        c: actions::learner_view(&c),
        attempt,
        balance,
        board,
    })
}

fn back(id: i64, anchor: &str) -> Response {
    Redirect::to(&format!("/challenges/{id}#{anchor}")).into_response()
}

pub async fn start(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut tx = state.pool.begin().await?;
    actions::start(&mut tx, id, &player(&auth)).await?;
    tx.commit().await?;
    Ok(back(id, "attempt"))
}

#[derive(Deserialize)]
pub struct HypothesisForm {
    #[serde(default)]
    text: String,
}

/// Runs one step of the player's attempt and goes back to the challenge at `anchor`.
async fn step<T>(
    state: &AppState,
    p: &Player<'_>,
    ids: (String, String),
    anchor: &str,
    run: impl AsyncFnOnce(&mut sqlx::PgConnection, i64, i64, &Player<'_>) -> AppResult<T>,
) -> PageResult<Response> {
    let (id, _) = in_attempt(state, p, ids, run).await?;
    Ok(back(id, anchor))
}

pub async fn hypothesize(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(ids): Path<(String, String)>,
    PageForm(f): PageForm<HypothesisForm>,
) -> PageResult<Response> {
    step(
        &state,
        &player(&auth),
        ids,
        "attempt",
        async |tx, id, a, p| actions::hypothesize(tx, id, a, p, &f.text).await,
    )
    .await
}

pub async fn hint(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(ids): Path<(String, String)>,
) -> PageResult<Response> {
    step(&state, &player(&auth), ids, "hints", actions::hint).await
}

pub async fn give_up(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(ids): Path<(String, String)>,
) -> PageResult<Response> {
    step(&state, &player(&auth), ids, "answer", actions::give_up).await
}
