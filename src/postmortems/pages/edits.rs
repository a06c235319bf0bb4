//! The postmortem page's forms: sections, facts, the timeline, action items, comments, review and publication.

use axum::extract::{Path, State};
use axum::response::{Redirect, Response};
use serde::Deserialize;

use crate::clock;
use crate::error::AppError;
use crate::http::access::{Auth, Responder};
use crate::http::extract::PageForm;
use crate::http::page::PageResult;
use crate::http::request::{ApiRequest, PageRequest};
use crate::postmortems::actions::{self, ItemDraft};
use crate::postmortems::db::Facts;
use crate::state::AppState;

use super::shared::*;
use super::show::*;

#[derive(Deserialize)]
pub struct SectionForm {
    section: String,
    text: String,
    version: i32,
}

pub async fn edit_section(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<SectionForm>,
) -> PageResult<Redirect> {
    let (i, _) = change(&state, &key, async |tx, i| {
        actions::edit_section(tx, &auth.actor, i, form.version, &form.section, &form.text).await
    })
    .await?;
    Ok(back(&i))
}

#[derive(Deserialize)]
pub struct FactsForm {
    impacted: String,
    requests_label: String,
    failed_requests: String,
    total_requests: String,
    version: i32,
}

pub(super) fn count(field: &str, raw: &str) -> Result<Option<i64>, AppError> {
    let raw = raw.trim().replace([' ', ','], "");
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<i64>()
        .map(Some)
        .map_err(|_| AppError::invalid(field, "a whole number"))
}

pub async fn edit_facts(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<FactsForm>,
) -> PageResult<Redirect> {
    let facts = Facts {
        impacted: form.impacted.trim(),
        requests_label: form.requests_label.trim(),
        failed_requests: count("failed_requests", &form.failed_requests)?,
        total_requests: count("total_requests", &form.total_requests)?,
    };
    let (i, _) = change(&state, &key, async |tx, i| {
        actions::edit_facts(tx, &auth.actor, i, form.version, &facts).await
    })
    .await?;
    Ok(back(&i))
}

/// The timeline choice: a checkbox `event_<id>` per event shown.
#[derive(Deserialize)]
pub struct TimelineForm {
    version: String,
    #[serde(flatten)]
    fields: std::collections::HashMap<String, String>,
}

pub async fn choose_timeline(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<TimelineForm>,
) -> PageResult<Redirect> {
    let mut ids: Vec<i64> = form
        .fields
        .keys()
        .filter_map(|k| k.strip_prefix("event_")?.parse().ok())
        .collect();
    ids.sort_unstable();
    let version =
        form.version.trim().parse::<i32>().map_err(|_| {
            AppError::invalid("version", "the form lost its version; reload the page")
        })?;
    let (i, _) = change(&state, &key, async |tx, i| {
        actions::choose_timeline(tx, &auth.actor, i, version, &ids).await
    })
    .await?;
    Ok(back(&i))
}

/// An action item as typed: added (no status, no version) or edited.
#[derive(Deserialize)]
pub struct ItemForm {
    action: String,
    #[serde(rename = "type")]
    kind: String,
    owner: String,
    due_on: String,
    work_item: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    version: Option<i32>,
}

impl ItemForm {
    /// The form again as typed, with what was wrong in it.
    fn refused(&self, item: Option<i64>, errors: Vec<crate::error::FieldError>) -> RefusedItem {
        RefusedItem {
            item,
            form: ItemFormView {
                action: self.action.clone(),
                kind: self.kind.clone(),
                owner: self.owner.clone(),
                due_on: self.due_on.clone(),
                work_item: self.work_item.clone(),
                status: self.status.clone(),
                errors,
            },
        }
    }
}

pub async fn add_item(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<ItemForm>,
) -> PageResult<Response> {
    let draft = ItemDraft {
        action: &form.action,
        kind: &form.kind,
        owner: Some(&form.owner),
        due_on: Some(&form.due_on),
        work_item: &form.work_item,
    };
    let done = change(&state, &key, async |tx, i| {
        actions::add_action_item(tx, &auth.actor, i, &draft).await
    })
    .await;
    item_answer(&state, chrome, &key, done, |errors| {
        form.refused(None, errors)
    })
    .await
}

#[derive(Deserialize)]
pub struct CommentForm {
    part: String,
    body: String,
}

pub async fn comment(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<CommentForm>,
) -> PageResult<Redirect> {
    let (i, c) = change(&state, &key, async |tx, i| {
        actions::comment(tx, &auth.actor, i, &form.part, &form.body).await
    })
    .await?;
    Ok(Redirect::to(&format!(
        "/incidents/{}/postmortem?edit#comment-{}",
        i.key, c.id
    )))
}

pub async fn resolve_comment(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "comment")?;
    let (i, _) = change(&state, &key, async |tx, i| {
        actions::resolve_comment(tx, &auth.actor, i, id).await
    })
    .await?;
    Ok(back(&i))
}

pub async fn edit_item(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
    PageForm(form): PageForm<ItemForm>,
) -> PageResult<Response> {
    let id = crate::http::extract::parse_id(&id, "action item")?;
    let edit = actions::ItemEdit {
        action: Some(&form.action),
        kind: Some(&form.kind),
        owner: Some(Some(&form.owner)),
        due_on: Some(Some(&form.due_on)),
        work_item: Some(&form.work_item),
        status: Some(&form.status),
    };
    let done = change(&state, &key, async |tx, i| {
        let was = own_item(tx, i, id).await?;
        let version = Some(form.version.ok_or_else(|| {
            AppError::invalid("version", "the form lost its version; reload the page")
        })?);
        actions::edit_action_item(tx, &auth.actor, &was, version, &edit).await
    })
    .await;
    item_answer(&state, chrome, &key, done, |errors| {
        form.refused(Some(id), errors)
    })
    .await
}

#[derive(Deserialize)]
pub struct VersionForm {
    version: i32,
}

pub async fn delete_item(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path((key, id)): Path<(String, String)>,
    PageForm(form): PageForm<VersionForm>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "action item")?;
    let (i, _) = change(&state, &key, async |tx, i| {
        let was = own_item(tx, i, id).await?;
        actions::delete_action_item(tx, &auth.actor, &was, Some(form.version)).await
    })
    .await?;
    Ok(back(&i))
}

pub async fn review(
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(key): Path<String>,
    PageForm(form): PageForm<ReviewForm>,
) -> PageResult<Redirect> {
    let (i, _) = change(&state, &key, async |tx, i| {
        actions::set_review(tx, &auth.actor, i, form.to != "draft").await
    })
    .await?;
    Ok(back(&i))
}

#[derive(Deserialize)]
pub struct ReviewForm {
    /// in_review or draft
    to: String,
}

pub async fn publish(
    State(state): State<AppState>,
    auth: Auth<crate::http::access::Manager>,
    Path(key): Path<String>,
    PageForm(_): PageForm<serde::de::IgnoredAny>,
) -> PageResult<Redirect> {
    let (i, _) = change(&state, &key, async |tx, i| {
        let now = clock::now(&mut *tx).await?;
        actions::publish(tx, &auth.actor, i, now).await
    })
    .await?;
    // Published, it reads as a document.
    Ok(Redirect::to(&format!("/incidents/{}/postmortem", i.key)))
}
