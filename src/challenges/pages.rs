//! The learner's pages: `/challenges` lists them with your credit; `/challenges/{id}` shows the
//! scenario and the evidence, and your attempt — state a hypothesis, take a hint, give up — or,
//! once it ended, the answer beside the real team's times; and the leaderboard. The editor's:
//! `/challenges/{id}/edit` (managers) changes every part, shows what the leak guard flags beside
//! each evidence item, drops or rewords items, adds the incident's attached evidence, and
//! publishes; `POST /challenges/generate` drafts one from a published postmortem in one click;
//! `/challenges/{id}/reviews` is the review queue, where editors judge what waits.

use std::collections::HashMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use sqlx::PgConnection;

use super::actions::Standing;
use super::actions::{self, AttemptView, LearnerView, Player};
use super::db::{self, Challenge, Review, Summary};
use super::domain::{
    Answer, ChallengeDraft, Evidence, EvidenceKind, hints_from_lines, hints_to_lines,
};
use super::handlers::{in_attempt, player};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult, FieldError};
use crate::evidence::db::Item;
use crate::http::access::{Manager, Responder};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "challenges/list.html")]
pub struct ListPage {
    chrome: Chrome,
    challenges: Vec<Summary>,
    balance: i32,
    /// The latest lines of the person's credit ledger
    entries: Vec<db::Entry>,
    /// Challenges the signed-in person is playing now: their editor stays closed until the
    /// attempt ends (it shows the answer)
    playing: Vec<i64>,
    /// The teams to narrow the list to: (slug, name); and the choice (a slug, `mine`, or blank)
    teams: Vec<(String, String)>,
    filter_team: String,
}

impl ListPage {
    fn playing(&self, id: &i64) -> bool {
        self.playing.contains(id)
    }
}

pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        crate::teams::domain::TeamQuery,
    >,
) -> PageResult<ListPage> {
    let team = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed(&state.pool, auth.user.id, team).await?;
    let teams = crate::teams::db::choices(&state.pool).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let credits = actions::credits(&mut tx, auth.user.id).await?;
    let challenges = db::list(&mut *tx, player(&auth).editor, narrowed.ids.as_deref()).await?;
    let playing = db::playing(&mut *tx, auth.user.id).await?;
    tx.commit().await?;
    Ok(ListPage {
        chrome,
        challenges,
        balance: credits.balance,
        entries: credits.entries.into_iter().take(10).collect(),
        playing,
        teams,
        filter_team: narrowed.team.unwrap_or_default(),
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
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<ShowPage> {
    let id = parse_id(&id, "challenge")?;
    let p = player(&auth);
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let c = actions::playable(&mut tx, id, &p).await?;
    let attempt = match db::latest_attempt(&mut *tx, id, auth.user.id).await? {
        Some(a) => Some(actions::attempt(&mut tx, id, a.id, &p).await?),
        None => None,
    };
    let balance = actions::credits(&mut tx, auth.user.id).await?.balance;
    let board = actions::leaderboard(&mut tx, id).await?;
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
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let me = player(&auth);
    crate::transaction::write(&state.pool, |tx, _| Box::pin(actions::start(tx, id, &me))).await?;
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
    ApiRequest(state, auth): ApiRequest<Responder>,
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
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
) -> PageResult<Response> {
    step(&state, &player(&auth), ids, "hints", actions::hint).await
}

pub async fn give_up(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(ids): Path<(String, String)>,
) -> PageResult<Response> {
    step(&state, &player(&auth), ids, "answer", actions::give_up).await
}

/// The editor's form as typed: the challenge's fields, and per evidence item `evidence.<n>.title`,
/// `evidence.<n>.text` and `drop.<n>`; `add.<id>` for each of the incident's items to add.
#[derive(Deserialize, Default)]
pub struct EditForm {
    #[serde(flatten)]
    fields: HashMap<String, String>,
}

impl EditForm {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    fn of(d: &ChallengeDraft) -> Self {
        let mut fields = HashMap::from([
            ("title".to_owned(), d.title.clone()),
            ("team".to_owned(), d.team.clone().unwrap_or_default()),
            ("scenario".to_owned(), d.scenario.clone()),
            ("cause".to_owned(), d.answer.cause.clone()),
            ("fix".to_owned(), d.answer.fix.clone()),
            ("explanation".to_owned(), d.answer.explanation.clone()),
            ("hints".to_owned(), hints_to_lines(&d.hints)),
            (
                "rubric".to_owned(),
                serde_json::to_string_pretty(&d.rubric).unwrap_or_default(),
            ),
        ]);
        for (n, e) in d.evidence.iter().enumerate() {
            fields.insert(format!("evidence.{n}.title"), e.title.clone());
            fields.insert(format!("evidence.{n}.text"), e.text.clone());
        }
        Self { fields }
    }

    /// The draft the form describes, from the challenge as it stands (`current`) and the
    /// incident's items it may add.
    fn draft(&self, current: &ChallengeDraft, attachable: &[Item]) -> AppResult<ChallengeDraft> {
        let text = |k: &str| self.get(k).unwrap_or("").to_owned();
        let rubric = serde_json::from_str(&text("rubric")).map_err(|e| {
            AppError::invalid(
                "rubric",
                format!("write the concepts as a JSON list, as shown ({e})"),
            )
        })?;
        let mut evidence = Vec::new();
        for (n, e) in current.evidence.iter().enumerate() {
            if self.get(&format!("drop.{n}")).is_some() {
                continue;
            }
            let mut e = e.clone();
            if let Some(t) = self.get(&format!("evidence.{n}.title")) {
                e.title = t.to_owned();
            }
            if let Some(t) = self.get(&format!("evidence.{n}.text")) {
                e.text = t.replace("\r\n", "\n");
            }
            evidence.push(e);
        }
        for item in attachable {
            if self.get(&format!("add.{}", item.id)).is_some() {
                evidence.push(item.evidence());
            }
        }
        Ok(ChallengeDraft {
            title: text("title"),
            incident: current.incident.clone(),
            team: Some(text("team")),
            scenario: text("scenario").replace("\r\n", "\n"),
            evidence,
            hints: hints_from_lines(&text("hints"))?,
            answer: Answer {
                cause: text("cause"),
                fix: text("fix"),
                explanation: text("explanation"),
            },
            rubric,
        })
    }
}

/// An evidence item as the editor sees it, with what the leak guard says of it.
pub struct EditedItem {
    n: usize,
    e: Evidence,
    leaks: Vec<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "challenges/edit.html")]
pub struct EditPage {
    chrome: Chrome,
    id: i64,
    title: String,
    status: String,
    version: i32,
    incident: Option<String>,
    form: EditForm,
    items: Vec<EditedItem>,
    /// The incident's evidence not yet in the challenge
    attachable: Vec<Item>,
    flagged: usize,
    /// What the leak guard says of the scenario and the hints
    elsewhere: Vec<String>,
    /// Why publishing was refused, when it was
    notice: Option<String>,
    errors: Vec<FieldError>,
}

impl EditPage {
    fn field(&self, name: &str) -> &str {
        self.form.get(name).unwrap_or("")
    }

    fn item_field(&self, n: &usize, part: &str) -> &str {
        self.form.get(&format!("evidence.{n}.{part}")).unwrap_or("")
    }
}

/// The incident's evidence items the challenge does not hold yet.
async fn attachable(conn: &mut PgConnection, d: &ChallengeDraft) -> AppResult<Vec<Item>> {
    let Some(key) = d.incident.as_deref().and_then(IncidentKey::parse) else {
        return Ok(vec![]);
    };
    let Some(i) = crate::incidents::db::find(&mut *conn, key)
        .await?
        .filter(|i| !i.restricted)
    else {
        return Ok(vec![]);
    };
    Ok(crate::evidence::db::list(&mut *conn, i.id, None)
        .await?
        .into_iter()
        .filter(|item| {
            !d.evidence
                .iter()
                .any(|e| e.title == item.title && e.text == item.text)
        })
        .collect())
}

async fn edit_page(
    conn: &mut PgConnection,
    chrome: Chrome,
    c: &Challenge,
    form: Option<EditForm>,
    notice: Option<String>,
    errors: Vec<FieldError>,
) -> AppResult<EditPage> {
    let d = actions::source(c);
    let flags = actions::flags(c);
    let items = d
        .evidence
        .iter()
        .enumerate()
        .map(|(n, e)| EditedItem {
            n,
            e: e.clone(),
            leaks: flags
                .iter()
                .filter(|l| l.evidence == Some(n))
                .map(|l| l.reason.clone())
                .collect(),
        })
        .collect();
    Ok(EditPage {
        chrome,
        id: c.id,
        title: c.title.clone(),
        status: c.status.clone(),
        version: c.version,
        incident: c.incident.map(|k| k.to_string()),
        attachable: attachable(conn, &d).await?,
        form: form.unwrap_or_else(|| EditForm::of(&d)),
        items,
        flagged: flags.len(),
        elsewhere: flags
            .iter()
            .filter(|l| l.evidence.is_none())
            .map(|l| format!("{}: {}", l.title, l.reason))
            .collect(),
        notice,
        errors,
    })
}

pub async fn edit_form(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path(id): Path<String>,
) -> PageResult<EditPage> {
    let id = parse_id(&id, "challenge")?;
    let mut conn = state.pool.acquire().await?;
    let c = actions::editable(&mut conn, id, auth.user.id).await?;
    Ok(edit_page(&mut conn, chrome, &c, None, None, vec![]).await?)
}

fn to_editor(id: i64, anchor: &str) -> Response {
    Redirect::to(&format!("/challenges/{id}/edit#{anchor}")).into_response()
}

pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path(id): Path<String>,
    PageForm(form): PageForm<EditForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let c = actions::editable(&mut tx, id, auth.user.id).await?;
    let current = actions::source(&c);
    let version = form.get("version").and_then(|v| v.parse().ok());
    let saved = async {
        let extra = attachable(&mut tx, &current).await?;
        let d = form.draft(&current, &extra)?;
        actions::update(&mut tx, &auth.actor, id, version, &d).await
    }
    .await;
    match saved {
        Ok(_) => {
            tx.commit().await?;
            Ok(to_editor(id, "evidence"))
        }
        Err(AppError::Validation(errors)) => {
            let page = edit_page(&mut tx, chrome, &c, Some(form), None, errors).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}

pub async fn publish(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let id = parse_id(&id, "challenge")?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let c = actions::editable(&mut tx, id, auth.user.id).await?;
    match actions::publish(&mut tx, &auth.actor, id).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(Redirect::to(&format!("/challenges/{id}")).into_response())
        }
        Err(AppError::Conflict(why)) => {
            let page = edit_page(&mut tx, chrome, &c, None, Some(why), vec![]).await?;
            Ok((StatusCode::CONFLICT, page).into_response())
        }
        Err(AppError::Validation(errors)) => {
            let page = edit_page(&mut tx, chrome, &c, None, None, errors).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}

#[derive(Deserialize)]
pub struct GenerateForm {
    #[serde(default)]
    incident: String,
}

/// One click on a published postmortem (or the list's form): a draft, opened in the editor.
pub async fn generate(
    ApiRequest(state, auth): ApiRequest<Manager>,
    PageForm(f): PageForm<GenerateForm>,
) -> PageResult<Response> {
    let key = IncidentKey::parse(f.incident.trim())
        .ok_or_else(|| AppError::invalid("incident", "name the incident as INC-<number>"))?;
    let id = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::generate(tx, &auth.actor, key))
    })
    .await?;
    Ok(to_editor(id, "evidence"))
}

// The review queue: a learner's "I think this is right" on a hypothesis, and the editors' page
// where each waiting hypothesis gets its verdict and a note, with the verdicts given and the
// labelled set to download.

/// "I think this is right": back to the attempt, the hypothesis marked as waiting.
pub async fn ask_review(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((id, attempt_id, hypothesis_id)): Path<(String, String, String)>,
) -> PageResult<Response> {
    let hypothesis_id = parse_id(&hypothesis_id, "hypothesis")?;
    let (id, ()) = in_attempt(
        &state,
        &player(&auth),
        (id, attempt_id),
        async |tx, id, a, p| actions::ask_review(tx, id, a, hypothesis_id, p).await,
    )
    .await?;
    Ok(Redirect::to(&format!("/challenges/{id}#hypothesis-{hypothesis_id}")).into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "challenges/reviews.html")]
pub struct ReviewsPage {
    chrome: Chrome,
    id: i64,
    title: String,
    waiting: Vec<Review>,
    judged: Vec<Review>,
    errors: Vec<FieldError>,
}

impl ReviewsPage {
    fn percent(&self, score: &f32) -> String {
        format!("{}%", (score * 100.0).round())
    }
}

async fn reviews_page(
    state: &AppState,
    chrome: Chrome,
    id: i64,
    person_id: i64,
    errors: Vec<FieldError>,
) -> PageResult<ReviewsPage> {
    let mut conn = state.pool.acquire().await?;
    let all = actions::reviews(&mut conn, id, person_id).await?;
    let title = super::db::get(&mut *conn, id).await?.title;
    let (waiting, judged) = all.into_iter().partition(|r| r.verdict.is_none());
    Ok(ReviewsPage {
        chrome,
        id,
        title,
        waiting,
        judged,
        errors,
    })
}

pub async fn reviews(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path(id): Path<String>,
) -> PageResult<ReviewsPage> {
    let id = parse_id(&id, "challenge")?;
    reviews_page(&state, chrome, id, auth.user.id, vec![]).await
}

#[derive(Deserialize)]
pub struct VerdictForm {
    #[serde(default)]
    verdict: String,
    #[serde(default)]
    note: String,
}

pub async fn judge(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    Path((id, review_id)): Path<(String, String)>,
    PageForm(form): PageForm<VerdictForm>,
) -> PageResult<Response> {
    let (id, review_id) = (parse_id(&id, "challenge")?, parse_id(&review_id, "review")?);
    let result = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::judge(
            tx,
            &auth.actor,
            id,
            review_id,
            &form.verdict,
            &form.note,
        ))
    })
    .await;
    match result {
        Ok(_) => Ok(Redirect::to(&format!("/challenges/{id}/reviews")).into_response()),
        Err(AppError::Validation(errors)) => {
            let page = reviews_page(&state, chrome, id, auth.user.id, errors).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(e) => Err(e.into()),
    }
}
