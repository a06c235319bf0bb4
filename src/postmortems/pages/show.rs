//! The postmortem as a page, its versions, and the same document in Markdown.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::{AppError, FieldError};
use crate::http::access::Viewer;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::incidents::db::Incident;
use crate::postmortems::document::Document;
use crate::postmortems::domain::{SafeHtml, Section, render_markdown};
use crate::state::AppState;

use super::shared::*;

/// A section as the page shows it: rendered, and as written for its edit form.
pub struct SectionView {
    pub name: &'static str,
    pub title: &'static str,
    pub html: SafeHtml,
    pub text: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/show.html")]
pub struct PostmortemPage {
    chrome: Chrome,
    /// Whether the page shows its editing controls: always while it is written and reviewed;
    /// once published it reads as a document until a responder switches to editing (`?edit`).
    editing: bool,
    /// Today (UTC), for marking overdue action items.
    today: chrono::NaiveDate,
    doc: Document,
    published: Option<crate::postmortems::db::VersionInfo>,
    edited_after: bool,
    sections: Vec<SectionView>,
    people: Vec<crate::people::db::Person>,
    comments: Vec<crate::postmortems::db::Comment>,
    /// Every published version, newest first.
    versions: Vec<crate::postmortems::db::VersionInfo>,
    /// An action-item form just refused, as typed, to show again with what was wrong.
    refused: Option<RefusedItem>,
}

/// An action item's form as shown: the item's own values, or what was typed when it was
/// refused (then with what was wrong, and open).
#[derive(Clone, Default)]
pub struct ItemFormView {
    pub(super) action: String,
    pub(super) kind: String,
    /// The owner's handle; empty for nobody
    pub(super) owner: String,
    /// As typed: `YYYY-MM-DD`, or anything a refusal shows again
    pub(super) due_on: String,
    pub(super) work_item: String,
    pub(super) status: String,
    pub(super) errors: Vec<FieldError>,
}

/// A refused action-item form: the item it edits (`None`: the new one) and its fields as typed.
pub struct RefusedItem {
    pub(super) item: Option<i64>,
    pub(super) form: ItemFormView,
}

impl PostmortemPage {
    fn section(&self, name: &str) -> Option<&SectionView> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// `{name}`, as a section cites a figure.
    fn cite(&self, name: &str) -> String {
        format!("{{{name}}}")
    }

    /// An action item past its due date and not finished.
    fn overdue(&self, a: &crate::action_items::db::ActionItem) -> bool {
        a.due_on.is_some_and(|d| d < self.today)
            && (a.status == "open" || a.status == "in_progress")
    }

    fn comments_on(&self, part: &str) -> Vec<&crate::postmortems::db::Comment> {
        self.comments.iter().filter(|c| c.part == part).collect()
    }

    fn open_comments(&self) -> usize {
        self.comments
            .iter()
            .filter(|c| c.resolved_at.is_none())
            .count()
    }

    fn part_title(&self, part: &str) -> &'static str {
        crate::postmortems::domain::COMMENT_PARTS
            .iter()
            .find(|(p, _)| *p == part)
            .map_or("this part", |(_, t)| t)
    }

    /// The edit form of item `a`: its values, or what was typed if this form was refused.
    fn item_form(&self, a: &crate::action_items::db::ActionItem) -> ItemFormView {
        if let Some(r) = &self.refused
            && r.item == Some(a.id)
        {
            return r.form.clone();
        }
        ItemFormView {
            action: a.action.clone(),
            kind: a.kind.clone(),
            owner: a
                .owner
                .as_deref()
                .and_then(|name| self.people.iter().find(|p| p.name == name))
                .map(|p| p.handle.clone())
                .unwrap_or_default(),
            due_on: a.due_on.map(|d| d.to_string()).unwrap_or_default(),
            work_item: a.work_item.clone(),
            status: a.status.clone(),
            errors: vec![],
        }
    }

    /// The add-an-item form: empty, or what was typed if it was refused.
    fn new_item_form(&self) -> ItemFormView {
        match &self.refused {
            Some(r) if r.item.is_none() => r.form.clone(),
            _ => ItemFormView::default(),
        }
    }
}

#[derive(serde::Deserialize)]
pub struct ShowQuery {
    /// Present to edit a published postmortem
    edit: Option<String>,
}

pub async fn show(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(key): Path<String>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<ShowQuery>,
) -> PageResult<PostmortemPage> {
    page(&state, chrome, &key, q.edit.is_some()).await
}

/// The postmortem page; editing a published one when `edit`.
pub(super) async fn page(
    state: &AppState,
    chrome: Chrome,
    key: &str,
    edit: bool,
) -> PageResult<PostmortemPage> {
    let i = incident(state, key).await?;
    let doc = document(state, &i).await?;
    let sections = Section::ALL
        .into_iter()
        .map(|s| SectionView {
            name: s.as_str(),
            title: s.title(),
            html: render_markdown(&match s {
                Section::Impact => doc.impact_markdown(),
                _ => doc.section_text(s),
            }),
            text: doc.pm.section(s).to_owned(),
        })
        .collect();
    let doc_id = doc.pm.id;
    let versions = crate::postmortems::db::versions(&state.pool, doc.pm.id).await?;
    let published = versions.first().cloned();
    let edited_after = doc.edited_after_publication();
    let editing = chrome.can("responder") && (doc.pm.status != "published" || edit);
    Ok(PostmortemPage {
        editing,
        today: crate::clock::now(&state.pool).await?.date_naive(),
        chrome,
        published,
        edited_after,
        doc,
        sections,
        people: crate::people::db::list(&state.pool).await?,
        comments: crate::postmortems::db::comments(&state.pool, doc_id).await?,
        versions,
        refused: None,
    })
}

/// The answer to an action-item form: back to the postmortem, or, when a field is wrong, the
/// page again (422) with the form as typed and what is wrong with it.
pub(super) async fn item_answer<T>(
    state: &AppState,
    chrome: Chrome,
    key: &str,
    done: Result<(Incident, T), PageError>,
    refused: impl FnOnce(Vec<FieldError>) -> RefusedItem,
) -> PageResult<Response> {
    match done {
        Ok((i, _)) => Ok(back(&i).into_response()),
        Err(PageError(AppError::Validation(errors))) => {
            let mut again = page(state, chrome, key, true).await?;
            again.refused = Some(refused(errors));
            Ok((StatusCode::UNPROCESSABLE_ENTITY, again).into_response())
        }
        Err(other) => Err(other),
    }
}

/// The Markdown export (`text/markdown`, never rendered by the browser: nosniff is set).
pub async fn export(
    ApiRequest(state, _): ApiRequest<Viewer>,
    Path(key): Path<String>,
) -> PageResult<Response> {
    let i = incident(&state, &key).await?;
    let doc = document(&state, &i).await?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "text/markdown; charset=utf-8".to_owned(),
            ),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{}-postmortem.md\"", doc.key),
            ),
        ],
        doc.markdown(),
    )
        .into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/version.html")]
pub struct VersionPage {
    chrome: Chrome,
    key: String,
    version: crate::postmortems::db::Published,
    html: SafeHtml,
    diff: Vec<crate::postmortems::domain::DiffRow>,
}

/// A published version as frozen, and what changed since.
pub async fn version(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path((key, number)): Path<(String, String)>,
) -> PageResult<VersionPage> {
    let i = incident(&state, &key).await?;
    let doc = document(&state, &i).await?;
    let number: i32 = number
        .parse()
        .map_err(|_| AppError::NotFound(format!("There is no version {number:?}.")))?;
    let version = crate::postmortems::db::version(&state.pool, doc.pm.id, number)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no published version {number}.")))?;
    Ok(VersionPage {
        chrome,
        key: doc.key.clone(),
        html: render_markdown(&version.markdown),
        diff: crate::postmortems::domain::readable_diff(&version.markdown, &doc.markdown(), 1),
        version,
    })
}
