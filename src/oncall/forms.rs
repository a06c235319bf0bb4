//! Making and changing a schedule in the browser: `/schedules/new` and `/schedules/{id}/edit`.
//! The form holds the name, the team and every layer (people in turn order, shift length,
//! first hand-off and zone, and an optional restriction to some days and hours), plus a blank
//! layer to add one. "Preview" draws the next four weeks of what is typed without saving;
//! "Save" writes it as the API does — checked, the version the form was read at (a change
//! made meanwhile answers 409), refused fields named (`layers[1].time_zone`). Overrides are
//! kept as they are: the schedule's page adds and removes them.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{Datelike, NaiveDateTime, NaiveTime, Weekday};

use super::actions;
use super::db;
use super::domain::{LayerDoc, Restriction, ScheduleDraft, ShiftLength};
use super::pages::Timeline;
use crate::auth::domain::UserRole;
use crate::clock;
use crate::error::{AppError, FieldError};
use crate::http::access::Responder;
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::PageRequest;
use crate::state::AppState;
use crate::teams;

/// The days a restriction may name, as the form sends and shows them.
pub const DAYS: [(&str, &str); 7] = [
    ("mon", "Mon"),
    ("tue", "Tue"),
    ("wed", "Wed"),
    ("thu", "Thu"),
    ("fri", "Fri"),
    ("sat", "Sat"),
    ("sun", "Sun"),
];

/// One layer as the form holds it (what was typed, kept when it comes back refused).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerForm {
    /// Handles in turn order, one per line (or separated by commas)
    pub people: String,
    /// day, week or hours
    pub length: String,
    pub hours: String,
    /// The first hand-off, `YYYY-MM-DDTHH:MM` in `zone`
    pub start: String,
    pub zone: String,
    /// Restricted to `days` from `from` to `to`
    pub restrict: bool,
    pub days: Vec<String>,
    pub from: String,
    pub to: String,
    /// Ticked: the layer is left out when saved
    pub remove: bool,
}

impl LayerForm {
    pub fn of(l: &LayerDoc) -> Self {
        let (length, hours) = match l.length {
            ShiftLength::Day => ("day", String::new()),
            ShiftLength::Week => ("week", String::new()),
            ShiftLength::Hours { hours } => ("hours", hours.to_string()),
        };
        let r = l.restriction.as_ref();
        LayerForm {
            people: l.people.join("\n"),
            length: length.to_owned(),
            hours,
            start: l.start.format("%Y-%m-%dT%H:%M").to_string(),
            zone: l.time_zone.clone(),
            restrict: r.is_some(),
            days: r
                .map(|r| r.days.iter().map(|d| day_key(*d).to_owned()).collect())
                .unwrap_or_default(),
            from: r.map_or("09:00".into(), |r| r.from.format("%H:%M").to_string()),
            to: r.map_or("17:00".into(), |r| r.to.format("%H:%M").to_string()),
            remove: false,
        }
    }

    /// An empty layer to fill in: weekly, handing off at 09:00 on `monday` in `zone`.
    pub fn blank(monday: &str, zone: &str) -> Self {
        LayerForm {
            length: "week".into(),
            start: format!("{monday}T09:00"),
            zone: zone.to_owned(),
            days: DAYS[..5].iter().map(|(k, _)| (*k).to_owned()).collect(),
            from: "09:00".into(),
            to: "17:00".into(),
            ..Default::default()
        }
    }

    /// Nobody in it: the blank layer left empty adds nothing.
    pub fn is_blank(&self) -> bool {
        self.people.trim().is_empty()
    }

    pub fn has_day(&self, key: &str) -> bool {
        self.days.iter().any(|d| d == key)
    }

    /// The layer it describes; an error names the field under `at` (`layers[1]`).
    pub fn doc(&self, at: &str) -> Result<LayerDoc, AppError> {
        let field = |f: &str| format!("{at}.{f}");
        let length = match self.length.trim() {
            "day" => ShiftLength::Day,
            "week" => ShiftLength::Week,
            "hours" => ShiftLength::Hours {
                hours: self.hours.trim().parse().map_err(|_| {
                    AppError::invalid(&field("length.hours"), "a whole number of hours, 1 to 8760")
                })?,
            },
            _ => {
                return Err(AppError::invalid(
                    &field("length"),
                    "daily, weekly or a number of hours",
                ));
            }
        };
        let start = NaiveDateTime::parse_from_str(self.start.trim(), "%Y-%m-%dT%H:%M")
            .or_else(|_| NaiveDateTime::parse_from_str(self.start.trim(), "%Y-%m-%d %H:%M"))
            .map_err(|_| AppError::invalid(&field("start"), "a date and time, YYYY-MM-DD HH:MM"))?;
        let time = |f: &str, v: &str| {
            NaiveTime::parse_from_str(v.trim(), "%H:%M")
                .map_err(|_| AppError::invalid(&field(f), "a time of day, HH:MM"))
        };
        let restriction = if self.restrict {
            let days = self
                .days
                .iter()
                .map(|d| {
                    d.parse::<Weekday>().map_err(|_| {
                        AppError::invalid(&field("restriction.days"), "days of the week")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(Restriction {
                days,
                from: time("restriction.from", &self.from)?,
                to: time("restriction.to", &self.to)?,
            })
        } else {
            None
        };
        Ok(LayerDoc {
            length,
            start,
            time_zone: self.zone.trim().to_owned(),
            people: self
                .people
                .split(['\n', ','])
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
            restriction,
        })
    }
}

fn day_key(d: Weekday) -> &'static str {
    DAYS[d.num_days_from_monday() as usize].0
}

/// The form as sent: its fields, and each layer (`l<n>_people`, `l<n>_length`, …; checkboxes
/// may repeat, `l<n>_days`).
pub struct Sent {
    pub name: String,
    pub team: String,
    pub version: Option<i32>,
    pub preview: bool,
    pub layers: Vec<LayerForm>,
    /// Layers past the twentieth were sent
    pub too_many: bool,
}

impl Sent {
    pub fn read(pairs: &[(String, String)]) -> Sent {
        let one = |k: &str| {
            pairs
                .iter()
                .find(|(f, _)| f == k)
                .map_or(String::new(), |(_, v)| v.clone())
        };
        let mut layers: Vec<LayerForm> = Vec::new();
        let mut too_many = false;
        for (k, v) in pairs {
            let Some((n, f)) = k
                .strip_prefix('l')
                .and_then(|rest| rest.split_once('_'))
                .filter(|(n, _)| n == &"0" || !n.starts_with('0'))
                .and_then(|(n, f)| Some((n.parse::<usize>().ok()?, f)))
            else {
                continue;
            };
            // At most 20 layers (and the blank one), as the API allows; more is refused.
            if n > 20 {
                too_many = true;
                continue;
            }
            while layers.len() <= n {
                layers.push(LayerForm::default());
            }
            let l = &mut layers[n];
            match f {
                "people" => l.people = v.clone(),
                "length" => l.length = v.clone(),
                "hours" => l.hours = v.clone(),
                "start" => l.start = v.clone(),
                "zone" => l.zone = v.clone(),
                "restrict" => l.restrict = true,
                "days" => l.days.push(v.clone()),
                "from" => l.from = v.clone(),
                "to" => l.to = v.clone(),
                "remove" => l.remove = true,
                _ => {}
            }
        }
        Sent {
            name: one("name"),
            team: one("team"),
            version: one("version").trim().parse().ok(),
            preview: one("intent") == "preview",
            layers,
            too_many,
        }
    }

    /// The draft it describes (with `overrides` kept), or the fields that are wrong, named as
    /// the form shows them: a layer by its place on the form, not among those kept.
    /// Also which form layers it kept, in order (the `kept[k]`-th is the draft's `k`-th).
    pub fn draft(
        &self,
        overrides: Vec<super::domain::OverrideDoc>,
    ) -> Result<(ScheduleDraft, Vec<usize>), AppError> {
        if self.too_many {
            return Err(AppError::invalid("layers", "at most 20 layers"));
        }
        let kept: Vec<usize> = (0..self.layers.len())
            .filter(|&n| !self.layers[n].remove && !self.layers[n].is_blank())
            .collect();
        let mut layers = Vec::new();
        for &n in &kept {
            layers.push(self.layers[n].doc(&format!("layers[{n}]"))?);
        }
        let draft = ScheduleDraft {
            name: self.name.trim().to_owned(),
            team: self.team.trim().to_owned(),
            layers,
            overrides,
        };
        // The domain names the k-th kept layer; the form shows it as layer kept[k].
        draft
            .schedule()
            .map_err(|e| on_form(AppError::from(e), &kept))?;
        Ok((draft, kept))
    }
}

/// `error` with each field naming a layer by its place on the form.
fn on_form(error: AppError, kept: &[usize]) -> AppError {
    match error {
        AppError::Validation(fields) => AppError::Validation(
            fields
                .into_iter()
                .map(|f| FieldError {
                    field: relabel(&f.field, kept),
                    message: f.message,
                })
                .collect(),
        ),
        other => other,
    }
}

fn relabel(field: &str, kept: &[usize]) -> String {
    let Some(rest) = field.strip_prefix("layers[") else {
        return field.to_owned();
    };
    let Some((k, tail)) = rest.split_once(']') else {
        return field.to_owned();
    };
    match k.parse::<usize>().ok().and_then(|k| kept.get(k)) {
        Some(n) => format!("layers[{n}]{tail}"),
        None => field.to_owned(),
    }
}

/// What a person calls a field of the form: `layers[1].time_zone` → "Layer 2, time zone".
pub fn label(field: &str) -> String {
    fn named(f: &str) -> &str {
        match f {
            "people" => "people",
            "length" => "shift length",
            "length.hours" => "hours per shift",
            "start" => "first hand-off",
            "time_zone" => "time zone",
            "restriction.days" => "days",
            "restriction.from" => "on call from",
            "restriction.to" => "on call until",
            "restriction" => "restriction",
            other => other,
        }
    }
    if let Some(rest) = field.strip_prefix("layers[")
        && let Some((n, tail)) = rest.split_once(']')
        && let Ok(n) = n.parse::<usize>()
    {
        let tail = tail.trim_start_matches('.');
        // `people[2]`: the third person named
        let tail = match tail.split_once('[') {
            Some((head, _)) => head,
            None => tail,
        };
        return match tail {
            "" => format!("Layer {}", n + 1),
            t => format!("Layer {}, {}", n + 1, named(t)),
        };
    }
    match field {
        "name" => "Name".to_owned(),
        "team" => "Team".to_owned(),
        "layers" => "Layers".to_owned(),
        "version" => "Version".to_owned(),
        other => other.to_owned(),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "oncall/edit.html")]
pub struct EditPage {
    chrome: Chrome,
    /// The schedule changed; `None` for a new one
    id: Option<i64>,
    version: Option<i32>,
    name: String,
    team: String,
    teams: Vec<(String, String)>,
    layers: Vec<LayerForm>,
    /// How many overrides it has (kept as they are)
    overrides: usize,
    errors: Vec<FieldError>,
    /// The next four weeks of what was typed, when previewed
    preview: Option<Timeline>,
    /// People's handles and names, and time zones, to choose from
    people: Vec<(String, String)>,
    zones: Vec<&'static str>,
}

impl EditPage {
    fn label(&self, field: &str) -> String {
        label(field)
    }

    /// The errors of layer `n` (at its place on the form).
    fn layer_errors(&self, n: &usize) -> Vec<&FieldError> {
        let at = format!("layers[{n}]");
        self.errors
            .iter()
            .filter(|e| e.field == at || e.field.starts_with(&format!("{at}.")))
            .collect()
    }
}

/// Zones offered first in the list (any IANA zone may be typed).
const ZONES: [&str; 12] = [
    "UTC",
    "Europe/Lisbon",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Paris",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Singapore",
    "Australia/Sydney",
];

struct Shown {
    id: Option<i64>,
    version: Option<i32>,
    sent: Sent,
    overrides: usize,
    errors: Vec<FieldError>,
    preview: Option<Timeline>,
}

async fn page(state: &AppState, chrome: Chrome, shown: Shown) -> PageResult<EditPage> {
    let mut conn = state.pool.acquire().await?;
    let people = crate::people::db::list(&mut *conn)
        .await?
        .into_iter()
        .map(|p| (p.handle, p.name))
        .collect();
    let mut layers = shown.sent.layers;
    // Always a blank layer at the end to add one.
    if layers.last().is_none_or(|l| !l.is_blank()) && layers.len() <= 20 {
        let now = clock::now(&mut *conn).await?.date_naive();
        let monday = now - chrono::Duration::days(i64::from(now.weekday().num_days_from_monday()));
        let zone = layers.last().map_or("UTC".to_owned(), |l| l.zone.clone());
        layers.push(LayerForm::blank(
            &monday.format("%Y-%m-%d").to_string(),
            &zone,
        ));
    }
    Ok(EditPage {
        chrome,
        id: shown.id,
        version: shown.version,
        name: shown.sent.name,
        team: shown.sent.team,
        teams: teams::db::choices(&mut *conn).await?,
        layers,
        overrides: shown.overrides,
        errors: shown.errors,
        preview: shown.preview,
        people,
        zones: ZONES.to_vec(),
    })
}

/// `GET /schedules/new`.
pub async fn new_form(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
) -> PageResult<EditPage> {
    // Someone who may not make the installation's schedules makes their team's: the first
    // team they lead is chosen for them (they may pick another they lead).
    let team = if auth.user.role.allows(UserRole::Manager) {
        String::new()
    } else {
        teams::db::of_person(&state.pool, auth.user.id)
            .await?
            .into_iter()
            .find(|(_, _, role)| *role == teams::domain::TeamRole::Lead)
            .map(|(slug, _, _)| slug)
            .unwrap_or_default()
    };
    let sent = Sent {
        name: String::new(),
        team,
        version: None,
        preview: false,
        layers: vec![],
        too_many: false,
    };
    let shown = Shown {
        id: None,
        version: None,
        sent,
        overrides: 0,
        errors: vec![],
        preview: None,
    };
    page(&state, chrome, shown).await
}

/// `GET /schedules/{id}/edit`.
pub async fn edit_form(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
) -> PageResult<EditPage> {
    let id = parse_id(&id, "schedule")?;
    let s = db::get(&state.pool, id).await?;
    let owner = [s.team_id];
    teams::actions::may_configure(&state, &auth, "schedule", &owner, UserRole::Manager).await?;
    let sent = Sent {
        name: s.name.clone(),
        team: s.team.clone().unwrap_or_default(),
        version: Some(s.version),
        preview: false,
        layers: s.layers.0.iter().map(LayerForm::of).collect(),
        too_many: false,
    };
    let shown = Shown {
        id: Some(id),
        version: Some(s.version),
        sent,
        overrides: s.overrides.0.len(),
        errors: vec![],
        preview: None,
    };
    page(&state, chrome, shown).await
}

/// `POST /schedules/new`: preview, or create.
pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(pairs): PageForm<Vec<(String, String)>>,
) -> PageResult<Response> {
    sent(&state, chrome, &auth, None, Sent::read(&pairs)).await
}

/// `POST /schedules/{id}/edit`: preview, or save at the version the form was read at.
pub async fn update(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(pairs): PageForm<Vec<(String, String)>>,
) -> PageResult<Response> {
    let id = parse_id(&id, "schedule")?;
    sent(&state, chrome, &auth, Some(id), Sent::read(&pairs)).await
}

/// What the schedule's form does with what was sent: drawn, saved, or sent back with the
/// fields that are wrong.
async fn sent(
    state: &AppState,
    chrome: Chrome,
    auth: &crate::http::access::Auth<Responder>,
    id: Option<i64>,
    sent: Sent,
) -> PageResult<Response> {
    let current = match id {
        Some(id) => Some(db::get(&state.pool, id).await?),
        None => None,
    };
    // Only who may change it edits it (a new one's team is checked when it is saved).
    if let Some(c) = &current {
        let owner = [c.team_id];
        teams::actions::may_configure(state, auth, "schedule", &owner, UserRole::Manager).await?;
    }
    let overrides = current
        .as_ref()
        .map(|c| c.overrides.0.clone())
        .unwrap_or_default();
    let shown = |sent, errors, preview| Shown {
        id,
        version: sent_version(&current, &sent),
        overrides: overrides.len(),
        sent,
        errors,
        preview,
    };
    // Sent back with the fields named as the form shows them; anything else is the error page.
    let again = async |chrome, sent, error: AppError, kept: &[usize]| -> PageResult<Response> {
        let (status, errors) = match on_form(error, kept) {
            AppError::Validation(errors) => (StatusCode::UNPROCESSABLE_ENTITY, errors),
            AppError::Forbidden(m) => (StatusCode::FORBIDDEN, vec![field_error("team", m)]),
            AppError::Conflict(m) => (StatusCode::CONFLICT, vec![field_error("name", m)]),
            AppError::Stale { .. } => (
                StatusCode::CONFLICT,
                vec![field_error(
                    "version",
                    "someone changed this schedule since you opened the form; nothing was \
                     saved — open it again to see their change"
                        .into(),
                )],
            ),
            other => return Err(PageError(other)),
        };
        let page = page(state, chrome, shown(sent, errors, None)).await?;
        Ok((status, page).into_response())
    };
    let (draft, kept) = match sent.draft(overrides.clone()) {
        Ok(d) => d,
        Err(e) => return again(chrome, sent, e, &[]).await,
    };
    let mut conn = state.pool.acquire().await?;
    let rules = match actions::check(&mut conn, &draft).await {
        Ok(r) => r,
        Err(e) => return again(chrome, sent, e, &kept).await,
    };
    drop(conn);
    if sent.preview {
        let now = clock::now(&state.pool).await?;
        let people = draft
            .layers
            .iter()
            .flat_map(|l| l.people.iter().map(String::as_str));
        let timeline = Timeline::of(&rules, people, now);
        return Ok(page(state, chrome, shown(sent, vec![], Some(timeline)))
            .await?
            .into_response());
    }
    let owned = async {
        let to = teams::actions::named(&state.pool, &draft.team).await?;
        let mut owners = vec![to];
        if let Some(c) = &current {
            owners.push(c.team_id);
        }
        teams::actions::may_configure(state, auth, "schedule", &owners, UserRole::Manager).await
    };
    if let Err(e) = owned.await {
        return again(chrome, sent, e, &kept).await;
    }
    let actor = &auth.actor;
    let saved = crate::transaction::write(&state.pool, |tx, _| {
        let draft = draft.clone();
        let version = sent.version;
        Box::pin(async move {
            match id {
                Some(id) => {
                    let version = Some(version.ok_or_else(|| {
                        AppError::invalid("version", "the version the form was read at")
                    })?);
                    actions::update(tx, actor, id, version, &draft)
                        .await
                        .map(|s| s.id)
                }
                None => actions::create(tx, actor, &draft).await,
            }
        })
    })
    .await;
    match saved {
        Ok(id) => Ok(Redirect::to(&format!("/schedules/{id}")).into_response()),
        Err(e) => again(chrome, sent, e, &kept).await,
    }
}

fn field_error(field: &str, message: String) -> FieldError {
    FieldError {
        field: field.to_owned(),
        message,
    }
}

/// The version a form carries on: the one it was first read at (never the current one, which
/// would let a resubmission write over a change made meanwhile).
fn sent_version(current: &Option<db::StoredSchedule>, sent: &Sent) -> Option<i32> {
    current.as_ref().and(sent.version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_form_reads_layers_by_place_and_names_a_wrong_field_where_it_is_shown() {
        let sent = Sent::read(&pairs(&[
            ("name", "Database"),
            ("l0_people", "ana\nben"),
            ("l0_length", "week"),
            ("l0_start", "2026-01-05T09:00"),
            ("l0_zone", "Europe/Lisbon"),
            ("l1_people", ""),
            ("l1_length", "week"),
            ("l2_people", "lena, dev"),
            ("l2_length", "day"),
            ("l2_start", "2026-01-05T09:00"),
            ("l2_zone", "Mars/Olympus"),
            ("l2_restrict", "on"),
            ("l2_days", "mon"),
            ("l2_days", "fri"),
            ("l2_from", "09:00"),
            ("l2_to", "17:00"),
            ("intent", "preview"),
        ]));
        assert!(sent.preview);
        assert_eq!(sent.layers.len(), 3);
        assert_eq!(sent.layers[2].days, ["mon", "fri"]);
        // The blank second layer is left out; the third's zone is named as the third's.
        match sent.draft(vec![]).map(|d| d.0) {
            Err(AppError::Validation(f)) => assert_eq!(f[0].field, "layers[2].time_zone"),
            other => panic!("{other:?}"),
        }
        assert_eq!(label("layers[2].time_zone"), "Layer 3, time zone");
        assert_eq!(label("layers[0].people[1]"), "Layer 1, people");
        assert_eq!(label("layers[1].length.hours"), "Layer 2, hours per shift");
    }

    #[test]
    fn a_layer_round_trips_through_the_form() {
        let doc = LayerDoc {
            length: ShiftLength::Hours { hours: 12 },
            start: NaiveDateTime::parse_from_str("2026-01-05 20:00", "%Y-%m-%d %H:%M").unwrap(),
            time_zone: "Europe/Berlin".into(),
            people: vec!["ana".into(), "ben".into()],
            restriction: Some(Restriction {
                days: vec![Weekday::Sat, Weekday::Sun],
                from: NaiveTime::from_hms_opt(20, 0, 0).unwrap(),
                to: NaiveTime::from_hms_opt(8, 0, 0).unwrap(),
            }),
        };
        let form = LayerForm::of(&doc);
        assert_eq!(form.days, ["sat", "sun"]);
        assert_eq!(form.doc("layers[0]").unwrap(), doc);
        let bad = LayerForm {
            hours: "twelve".into(),
            ..form.clone()
        };
        match bad.doc("layers[0]") {
            Err(AppError::Validation(f)) => assert_eq!(f[0].field, "layers[0].length.hours"),
            other => panic!("{other:?}"),
        }
        let bad = LayerForm {
            from: "9am".into(),
            ..form
        };
        match bad.doc("layers[3]") {
            Err(AppError::Validation(f)) => assert_eq!(f[0].field, "layers[3].restriction.from"),
            other => panic!("{other:?}"),
        }
    }
}
