//! `/silences`: the silences not yet over and the last ones that are, a form to make one (from
//! matcher text as amtool writes it, tried first over last week's alerts), "silence alerts like
//! this" from an incident (`/silences?incident=INC-…`), a silence's own page with the alerts it
//! held, and the admin's longest length.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Deserialize;

use super::actions::{self, SilenceDraft, SilencePreview};
use super::db::{self, HeldAlert, SilencePolicy, SilenceRecord};
use crate::domain::IncidentKey;
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Responder, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_id};
use crate::http::page::{Chrome, PageError, PageResult, form_again, submitted};
use crate::http::request::PageRequest;
use crate::incident_ref::domain::SeenBy;
use crate::state::AppState;

/// The new-silence form as typed.
#[derive(Deserialize, Default, Clone)]
pub struct SilenceForm {
    #[serde(default)]
    matchers: String,
    /// `2h`, `1d` …; used when no end is given
    #[serde(default)]
    duration: String,
    /// `YYYY-MM-DDTHH:MM`, UTC; empty: now
    #[serde(default)]
    starts_at: String,
    /// `YYYY-MM-DDTHH:MM`, UTC; empty: start + duration
    #[serde(default)]
    ends_at: String,
    #[serde(default)]
    comment: String,
}

/// A `datetime-local` value read as UTC (every time Quell shows is UTC).
fn utc_input(field: &str, text: &str) -> Result<Option<DateTime<Utc>>, AppError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| Some(t.and_utc()))
        .ok_or_else(|| AppError::invalid(field, "a date and time in UTC, e.g. 2026-12-24T18:00"))
}

impl SilenceForm {
    fn draft(&self) -> Result<SilenceDraft, AppError> {
        let ends_at = utc_input("ends_at", &self.ends_at)?;
        Ok(SilenceDraft {
            matchers: vec![self.matchers.clone()],
            starts_at: utc_input("starts_at", &self.starts_at)?,
            ends_at,
            duration: ends_at.is_none().then(|| self.duration.clone()),
            comment: self.comment.clone(),
        })
    }

    fn of(d: &SilenceDraft) -> Self {
        Self {
            matchers: d.matchers.join(" "),
            duration: d.duration.clone().unwrap_or_else(|| "2h".into()),
            comment: d.comment.clone(),
            ..Default::default()
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "silences/list.html")]
pub struct ListPage {
    chrome: Chrome,
    current: Vec<SilenceRecord>,
    expired: Vec<SilenceRecord>,
    form: SilenceForm,
    preview: Option<SilencePreview>,
    errors: Vec<FieldError>,
    policy: SilencePolicy,
    /// The incident the form was filled from
    from_incident: Option<IncidentKey>,
}

impl ListPage {
    fn when(&self, t: &DateTime<Utc>) -> String {
        t.format("%Y-%m-%d %H:%M UTC").to_string()
    }

    fn max_length(&self) -> String {
        crate::domain::format_minutes(i64::from(self.policy.max_hours) * 3600)
    }
}

struct Shown {
    form: SilenceForm,
    preview: Option<SilencePreview>,
    errors: Vec<FieldError>,
    from_incident: Option<IncidentKey>,
}

/// Who the page is for, as the incidents they may see go.
fn sees(chrome: &Chrome) -> SeenBy {
    chrome.user.as_ref().map_or(SeenBy::EVERYONE, SeenBy::of)
}

async fn list_page(state: &AppState, chrome: Chrome, shown: Shown) -> PageResult<ListPage> {
    let seen_by = sees(&chrome);
    Ok(ListPage {
        current: db::list(&state.pool, true, 200, seen_by).await?,
        expired: db::list(&state.pool, false, 20, seen_by).await?,
        chrome,
        form: shown.form,
        preview: shown.preview,
        errors: shown.errors,
        policy: db::policy(&state.pool).await?,
        from_incident: shown.from_incident,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// `INC-…`: fill the form to silence alerts like this incident's
    incident: Option<String>,
}

pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> PageResult<ListPage> {
    let mut shown = Shown {
        form: SilenceForm {
            duration: "2h".into(),
            ..Default::default()
        },
        preview: None,
        errors: vec![],
        from_incident: None,
    };
    if let Some(text) = q.incident.as_deref() {
        let key = IncidentKey::parse(text.trim())
            .ok_or_else(|| AppError::invalid("incident", "an incident key such as INC-42"))?;
        let mut conn = state.pool.acquire().await?;
        let sees = SeenBy::of(&auth.user);
        let draft = actions::like_incident(&mut conn, key, sees)
            .await?
            .ok_or_else(|| {
                AppError::NotFound(format!("{key} has no alert to silence alerts like."))
            })?;
        shown.form = SilenceForm::of(&draft);
        // The preview is a responder's tool (it reads a week of alerts).
        if chrome.can("responder") {
            shown.preview = actions::preview(&mut conn, &draft, sees).await.ok();
        }
        shown.from_incident = Some(key);
    }
    list_page(&state, chrome, shown).await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<SilenceForm>,
) -> PageResult<Response> {
    let again = async |errors| {
        let shown = Shown {
            form: form.clone(),
            preview: None,
            errors,
            from_incident: None,
        };
        list_page(&state, chrome, shown).await
    };
    let draft = match form.draft() {
        Ok(d) => d,
        Err(e) => return form_again(e, again).await,
    };
    let person = Some(auth.user.id);
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, person, &draft))
    });
    submitted(tried.await, |s| format!("/silences/{}", s.id), again).await
}

pub async fn preview(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<SilenceForm>,
) -> PageResult<Response> {
    let tried = match form.draft() {
        Ok(draft) => {
            let mut conn = state.pool.acquire().await?;
            actions::preview(&mut conn, &draft, SeenBy::of(&auth.user)).await
        }
        Err(e) => Err(e),
    };
    let (preview, errors) = match tried {
        Ok(p) => (Some(p), vec![]),
        Err(AppError::Validation(errors)) => (None, errors),
        Err(other) => return Err(PageError(other)),
    };
    let status = if errors.is_empty() {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::UNPROCESSABLE_ENTITY
    };
    let shown = Shown {
        form,
        preview,
        errors,
        from_incident: None,
    };
    Ok((status, list_page(&state, chrome, shown).await?).into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "silences/show.html")]
pub struct ShowPage {
    chrome: Chrome,
    silence: SilenceRecord,
    held: Vec<HeldAlert>,
}

impl ShowPage {
    fn when(&self, t: &DateTime<Utc>) -> String {
        t.format("%Y-%m-%d %H:%M UTC").to_string()
    }

    fn labels_of(&self, a: &HeldAlert) -> String {
        a.labels
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        format!(
                            "{k}={}",
                            v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    }
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    Path(id): Path<String>,
) -> PageResult<ShowPage> {
    let id = parse_id(&id, "silence")?;
    let silence = actions::find(&state.pool, id, SeenBy::of(&auth.user)).await?;
    let held = db::held(&state.pool, id, SeenBy::of(&auth.user), 200).await?;
    Ok(ShowPage {
        chrome,
        silence,
        held,
    })
}

#[derive(Deserialize)]
pub struct VersionForm {
    version: i32,
}

pub async fn expire(
    PageRequest(state, _, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<VersionForm>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "silence")?;
    let version = Some(form.version);
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::expire(tx, &auth.actor, id, version))
    })
    .await?;
    Ok(Redirect::to(&format!("/silences/{id}")))
}

#[derive(Deserialize)]
pub struct PolicyForm {
    max_hours: String,
    version: i32,
}

pub async fn set_policy(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(form): PageForm<PolicyForm>,
) -> PageResult<Response> {
    let again = async |errors| {
        let shown = Shown {
            form: SilenceForm {
                duration: "2h".into(),
                ..Default::default()
            },
            preview: None,
            errors,
            from_incident: None,
        };
        list_page(&state, chrome, shown).await
    };
    let Ok(hours) = form.max_hours.trim().parse::<i32>() else {
        let e = AppError::invalid("max_hours", "a whole number of hours, 1 to 8784");
        return form_again(e, again).await;
    };
    let version = Some(form.version);
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::set_policy(tx, &auth.actor, hours, version))
    });
    submitted(tried.await, |_| "/silences#policy".to_owned(), again).await
}
