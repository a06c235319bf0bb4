//! `/maintenance`: windows going on, coming and over, a form to plan one, and cancelling one.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{Redirect, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::actions::{self, WindowDraft, WindowView};
use crate::error::FieldError;
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{PageForm, parse_id};
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::PageRequest;
use crate::state::AppState;

/// The form as typed: weekdays as ticked boxes.
#[derive(Deserialize, Default, Clone)]
pub struct WindowForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    services: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    starts_at: String,
    #[serde(default)]
    time_zone: String,
    #[serde(default)]
    duration: String,
    #[serde(default)]
    weekly: Option<String>,
    #[serde(default)]
    weekdays: String,
    #[serde(default)]
    repeat_until: String,
    #[serde(default)]
    comment: String,
}

impl WindowForm {
    fn draft(&self) -> WindowDraft {
        WindowDraft {
            name: self.name.clone(),
            services: self
                .services
                .split([',', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            mode: self.mode.clone(),
            starts_at: self.starts_at.clone(),
            time_zone: self.time_zone.clone(),
            duration: self.duration.clone(),
            weekly: self.weekly.is_some(),
            weekdays: vec![self.weekdays.clone()],
            repeat_until: Some(self.repeat_until.clone()),
            comment: self.comment.clone(),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "maintenance/list.html")]
pub struct ListPage {
    chrome: Chrome,
    windows: Vec<WindowView>,
    form: WindowForm,
    errors: Vec<FieldError>,
}

impl ListPage {
    fn when(&self, t: &DateTime<Utc>) -> String {
        t.format("%a %Y-%m-%d %H:%M UTC").to_string()
    }

    fn days(&self, w: &WindowView) -> String {
        const NAMES: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
        w.window
            .weekdays
            .iter()
            .filter_map(|d| NAMES.get((*d as usize).wrapping_sub(1)))
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn length(&self, w: &WindowView) -> String {
        crate::domain::format_minutes(i64::from(w.window.duration_minutes) * 60)
    }
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    form: WindowForm,
    errors: Vec<FieldError>,
) -> PageResult<ListPage> {
    let mut conn = state.pool.acquire().await?;
    let mut windows = actions::list(&mut conn).await?;
    // Going on first, then coming soonest first, then over.
    windows.sort_by_key(|w| {
        (
            match w.state.as_str() {
                "active" => 0,
                "upcoming" => 1,
                _ => 2,
            },
            w.current.as_ref().map(|c| c.starts_at),
        )
    });
    Ok(ListPage {
        chrome,
        windows,
        form,
        errors,
    })
}

pub async fn list(PageRequest(state, chrome, _): PageRequest<Viewer>) -> PageResult<ListPage> {
    let form = WindowForm {
        mode: "quiet".into(),
        time_zone: "UTC".into(),
        duration: "2h".into(),
        ..Default::default()
    };
    list_page(&state, chrome, form, vec![]).await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<WindowForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &draft))
    });
    submitted(
        tried.await,
        |w| format!("/maintenance#window-{}", w.window.id),
        async |errors| list_page(&state, chrome, form, errors).await,
    )
    .await
}

#[derive(Deserialize)]
pub struct VersionForm {
    version: i32,
}

pub async fn cancel(
    PageRequest(state, _, auth): PageRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<VersionForm>,
) -> PageResult<Redirect> {
    let id = parse_id(&id, "maintenance window")?;
    let version = Some(form.version);
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::cancel(tx, &auth.actor, id, version))
    })
    .await?;
    Ok(Redirect::to(&format!("/maintenance#window-{id}")))
}
