//! On-call pages: `/schedules` (who is on call now in each), `/schedules/{id}` (the next four
//! weeks drawn as a timeline, the layers and the overrides), and each person's calendar feed at
//! `/oncall/{token}.ics` (the token is the credential; `POST /oncall/feed` makes or resets it).

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Duration, Utc};

use super::actions;
use super::db::{self, StoredSchedule};
use super::domain::{OverrideDoc, Schedule, Shift, Span, ical};
use crate::auth::domain::UserRole;
use crate::clock;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{PageForm, parse_form_time, parse_id};
use crate::http::page::{Chrome, PageError, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;
use crate::teams;

/// What the team rule calls a schedule in a refusal.
const WHAT: &str = "schedule";

pub struct Row {
    pub id: i64,
    pub name: String,
    pub on_call_now: Option<String>,
    pub layers: usize,
    pub overrides: usize,
}

#[derive(Template, WebTemplate)]
#[template(path = "oncall/schedules.html")]
pub struct SchedulesPage {
    chrome: Chrome,
    rows: Vec<Row>,
    /// When the signed-in person made their feed, if they did.
    feed_made: Option<DateTime<Utc>>,
    /// The feed's address, shown once, as it is made: only its hash is kept.
    new_feed: Option<String>,
    /// Whether the person may make a schedule (a manager, or a team's lead)
    may_add: bool,
}

fn feed_address(state: &AppState, token: &str) -> String {
    format!("{}/oncall/{token}.ics", state.config.base_url)
}

pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
) -> PageResult<SchedulesPage> {
    schedules(&state, (chrome, &auth), None).await
}

async fn schedules(
    state: &AppState,
    (chrome, auth): (Chrome, &crate::http::access::Auth<Viewer>),
    new_feed: Option<String>,
) -> PageResult<SchedulesPage> {
    let may_add = teams::actions::Judge::of(state, auth)
        .await?
        .may_add(UserRole::Manager);
    let now = clock::now(&state.pool).await?;
    let mut rows = Vec::new();
    for s in db::list(&state.pool, None).await? {
        rows.push(Row {
            id: s.id,
            on_call_now: actions::rules(&s)?.on_call(now),
            name: s.name,
            layers: s.layers.0.len(),
            overrides: s.overrides.0.len(),
        });
    }
    let feed_made = match &chrome.user {
        Some(u) => db::feed_made_at(&state.pool, u.id).await?,
        None => None,
    };
    Ok(SchedulesPage {
        chrome,
        rows,
        feed_made,
        new_feed,
        may_add,
    })
}

#[derive(serde::Deserialize, Default)]
pub struct FeedForm {
    #[serde(default)]
    reset: String,
}

/// Makes (or, with `reset=yes`, replaces) the signed-in person's calendar feed address and
/// shows it this once; Quell keeps only its hash, like an API token's.
pub async fn make_feed(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    PageForm(form): PageForm<FeedForm>,
) -> PageResult<Response> {
    // 244 random bits; the address is the credential.
    let fresh = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let hash = crate::auth::domain::token_hash(&fresh);
    let made = db::make_feed(&state.pool, auth.user.id, &hash, form.reset == "yes").await?;
    if !made {
        return Ok(Redirect::to("/schedules#feed").into_response());
    }
    let address = feed_address(&state, &fresh);
    Ok(schedules(&state, (chrome, &auth), Some(address))
        .await?
        .into_response())
}

/// A shift on the four-week timeline, placed in percent of the drawing's width (SVG attributes,
/// so the page's style policy has nothing to block).
pub struct Bar {
    pub left: f64,
    pub width: f64,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// One person's row on the timeline: their name above their shifts.
pub struct Lane {
    pub person: String,
    /// Which of six colours: the person's place among the schedule's people
    pub tone: usize,
    /// Where the name's baseline and the bars' top sit, in pixels from the drawing's top
    pub label_y: i64,
    pub bar_y: i64,
    pub bars: Vec<Bar>,
}

/// The row of `person` among `lanes`, added (with the next colour) when they have none yet.
fn lane_of(lanes: &mut Vec<Lane>, person: &str) -> usize {
    if let Some(n) = lanes.iter().position(|l| l.person == person) {
        return n;
    }
    lanes.push(Lane {
        person: person.to_owned(),
        tone: lanes.len() % 6,
        label_y: 0,
        bar_y: 0,
        bars: vec![],
    });
    lanes.len() - 1
}

/// A day line across the timeline; every seventh, from today, carries its date.
pub struct Tick {
    pub left: f64,
    pub label: Option<String>,
}

/// Pixels: the date labels' row, then a row per person (name, then bar).
const TICKS_ROW: i64 = 22;
const LANE: i64 = 40;
pub const BAR: i64 = 18;

/// Four weeks of a schedule drawn: who is on call when, a row per person.
pub struct Timeline {
    /// Who is on call over the four weeks, in order (the table under the drawing)
    pub spans: Vec<Span>,
    pub lanes: Vec<Lane>,
    pub ticks: Vec<Tick>,
    /// The drawing's height in pixels
    pub height: i64,
    /// The period drawn
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Where "now" sits on the timeline, in percent
    pub now_at: f64,
}

impl Timeline {
    /// The 28 days from the start of today (UTC) of `rules`, people coloured in the order
    /// `people` names them (the layers' order), then anyone an override adds.
    pub fn of<'a>(
        rules: &Schedule,
        people: impl Iterator<Item = &'a str>,
        now: DateTime<Utc>,
    ) -> Timeline {
        let from = now
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .expect("midnight")
            .and_utc();
        let to = from + Duration::days(28);
        let total = (to - from).num_seconds() as f64;
        let pct =
            |t: DateTime<Utc>| ((t - from).num_seconds() as f64 / total * 100.0).clamp(0.0, 100.0);
        let mut lanes: Vec<Lane> = Vec::new();
        // Trimmed, as the rotation reads them, so a row names the person its bars are.
        for p in people {
            lane_of(&mut lanes, p.trim());
        }
        let spans = rules.spans(from, to);
        for sp in &spans {
            let n = lane_of(&mut lanes, &sp.person);
            lanes[n].bars.push(Bar {
                left: pct(sp.from),
                width: pct(sp.to) - pct(sp.from),
                from: sp.from,
                to: sp.to,
            });
        }
        // Only people on call in the period get a row.
        lanes.retain(|l| !l.bars.is_empty());
        for (n, lane) in lanes.iter_mut().enumerate() {
            let top = TICKS_ROW + LANE * n as i64;
            lane.label_y = top + 14;
            lane.bar_y = top + 18;
        }
        let ticks = (0..28)
            .map(|d| {
                let t = from + Duration::days(d);
                Tick {
                    left: pct(t),
                    label: (d % 7 == 0).then(|| t.format("%Y-%m-%d").to_string()),
                }
            })
            .collect();
        Timeline {
            now_at: pct(now),
            height: TICKS_ROW + LANE * lanes.len() as i64 + 4,
            from,
            to,
            spans,
            lanes,
            ticks,
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "oncall/schedule.html")]
pub struct SchedulePage {
    chrome: Chrome,
    s: StoredSchedule,
    now: DateTime<Utc>,
    on_call_now: Option<String>,
    t: Timeline,
    /// What was wrong with the override just sent
    errors: Vec<FieldError>,
    /// Whether the person may change it (its team's lead, or a manager): the forms are offered
    may_edit: bool,
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    Path(id): Path<String>,
) -> PageResult<SchedulePage> {
    let id = parse_id(&id, "schedule")?;
    let owner = [db::get(&state.pool, id).await?.team_id];
    let may_edit = teams::actions::Judge::of(&state, &auth)
        .await?
        .may(&owner, UserRole::Manager);
    render(&state, chrome, id, vec![], may_edit).await
}

async fn render(
    state: &AppState,
    chrome: Chrome,
    id: i64,
    errors: Vec<FieldError>,
    may_edit: bool,
) -> PageResult<SchedulePage> {
    let s = db::get(&state.pool, id).await?;
    let now = clock::now(&state.pool).await?;
    let rules = actions::rules(&s)?;
    let people = s
        .layers
        .0
        .iter()
        .flat_map(|l| l.people.iter().map(String::as_str));
    let t = Timeline::of(&rules, people, now);
    Ok(SchedulePage {
        chrome,
        errors,
        may_edit,
        on_call_now: rules.on_call(now),
        t,
        s,
        now,
    })
}

/// `GET /oncall/{token}.ics`: the feed's owner's shifts, two weeks back and twelve ahead.
pub async fn feed(State(state): State<AppState>, Path(file): Path<String>) -> PageResult<Response> {
    let not_found = || AppError::NotFound("There is no such calendar feed.".into());
    let token = file.strip_suffix(".ics").ok_or_else(not_found)?;
    let handle = db::feed_owner(&state.pool, &crate::auth::domain::token_hash(token))
        .await?
        .ok_or_else(not_found)?;
    let now = clock::now(&state.pool).await?;
    let (from, to) = (now - Duration::weeks(2), now + Duration::weeks(12));
    let mut shifts = Vec::new();
    for s in db::list(&state.pool, None).await? {
        for sp in actions::rules(&s)?.spans(from, to) {
            if sp.person == handle {
                shifts.push(Shift {
                    schedule_id: s.id,
                    schedule: s.name.clone(),
                    from: sp.from,
                    to: sp.to,
                });
            }
        }
    }
    shifts.sort_by_key(|s| s.from);
    Ok((
        [
            (header::CONTENT_TYPE, "text/calendar; charset=utf-8"),
            (header::CACHE_CONTROL, "private, max-age=300"),
        ],
        ical(&handle, &shifts, now),
    )
        .into_response())
}

#[derive(serde::Deserialize, Default)]
pub struct OverrideForm {
    #[serde(default)]
    version: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    replaces: String,
    #[serde(default)]
    with: String,
}

/// Adds an override from the schedule's page (its team's leads, managers), as a new version of
/// the schedule.
pub async fn add_override(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<OverrideForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "schedule")?;
    let current = db::get(&state.pool, id).await?;
    let owner = [current.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Manager).await?;
    let parsed = (|| -> Result<OverrideDoc, AppError> {
        let from = parse_form_time("from", &form.from)?
            .ok_or_else(|| AppError::invalid("from", "when the override starts (UTC)"))?;
        let to = parse_form_time("to", &form.to)?
            .ok_or_else(|| AppError::invalid("to", "when the override ends (UTC)"))?;
        let replaces = Some(form.replaces.trim().to_owned()).filter(|r| !r.is_empty());
        Ok(OverrideDoc {
            from,
            to,
            replaces,
            with: form.with.trim().to_owned(),
        })
    })();
    // Checked against this version: a change of owner meanwhile makes it stale, not allowed.
    let version =
        AppError::checked_version(form.version.trim().parse::<i32>().ok(), current.version)?;
    let tried = match parsed {
        Ok(o) => {
            let actor = &auth.actor;
            crate::transaction::write(&state.pool, |tx, _| {
                let o = o.clone();
                Box::pin(async move {
                    let mut draft = db::get(&mut *tx, id).await?.draft();
                    draft.overrides.push(o);
                    actions::update(tx, actor, id, version, &draft).await
                })
            })
            .await
        }
        Err(e) => Err(e),
    };
    submitted(
        tried,
        |_| format!("/schedules/{id}#overrides"),
        async |errors| render(&state, chrome, id, errors, true).await,
    )
    .await
}

#[derive(serde::Deserialize, Default)]
pub struct RemoveForm {
    #[serde(default)]
    version: String,
}

/// Removes override `n` (its place in the list) from the schedule's page (its team's leads,
/// managers).
pub async fn remove_override(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((id, n)): Path<(String, String)>,
    PageForm(form): PageForm<RemoveForm>,
) -> PageResult<Response> {
    let id = parse_id(&id, "schedule")?;
    let n = n
        .parse::<usize>()
        .map_err(|_| AppError::NotFound("There is no such override.".into()))?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let current = db::get(&mut *tx, id).await?;
    let owner = [current.team_id];
    teams::actions::may_configure(&state, &auth, WHAT, &owner, UserRole::Manager).await?;
    let mut draft = current.draft();
    if n >= draft.overrides.len() {
        return Err(PageError(AppError::NotFound(
            "There is no such override.".into(),
        )));
    }
    draft.overrides.remove(n);
    let version =
        AppError::checked_version(form.version.trim().parse::<i32>().ok(), current.version)?;
    actions::update(&mut tx, &auth.actor, id, version, &draft).await?;
    tx.commit().await?;
    Ok(Redirect::to(&format!("/schedules/{id}#overrides")).into_response())
}
