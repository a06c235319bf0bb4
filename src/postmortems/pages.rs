//! `/incidents/{key}/postmortem`: the document as a page, edited section by section (each form
//! carries the version it was rendered from; a stale one is refused with 409), and
//! `/incidents/{key}/postmortem.md`, the same document in Markdown.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use form_urlencoded as form;
use serde::Deserialize;
use sqlx::PgConnection;

use super::actions::{self, ItemDraft};
use super::db::{Facts, ItemRow};
use super::document::Document;
use super::domain::{SafeHtml, Section, render_markdown};
use crate::action_items::domain::UNFINISHED;
use crate::clock;
use crate::error::{AppError, AppResult, FieldError};
use crate::http::access::{Auth, Responder, Viewer};
use crate::http::extract::PageForm;
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::incidents::db::{self as incidents_db, Incident};
use crate::state::AppState;

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
    published: Option<super::db::VersionInfo>,
    edited_after: bool,
    sections: Vec<SectionView>,
    people: Vec<crate::people::db::Person>,
    comments: Vec<super::db::Comment>,
    /// Every published version, newest first.
    versions: Vec<super::db::VersionInfo>,
    /// An action-item form just refused, as typed, to show again with what was wrong.
    refused: Option<RefusedItem>,
}

/// An action item's form as shown: the item's own values, or what was typed when it was
/// refused (then with what was wrong, and open).
#[derive(Clone, Default)]
pub struct ItemFormView {
    action: String,
    kind: String,
    /// The owner's handle; empty for nobody
    owner: String,
    /// As typed: `YYYY-MM-DD`, or anything a refusal shows again
    due_on: String,
    work_item: String,
    status: String,
    errors: Vec<FieldError>,
}

/// A refused action-item form: the item it edits (`None`: the new one) and its fields as typed.
pub struct RefusedItem {
    item: Option<i64>,
    form: ItemFormView,
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

    fn comments_on(&self, part: &str) -> Vec<&super::db::Comment> {
        self.comments.iter().filter(|c| c.part == part).collect()
    }

    fn open_comments(&self) -> usize {
        self.comments
            .iter()
            .filter(|c| c.resolved_at.is_none())
            .count()
    }

    fn part_title(&self, part: &str) -> &'static str {
        super::domain::COMMENT_PARTS
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

async fn incident(state: &AppState, key: &str) -> Result<Incident, AppError> {
    incidents_db::get_named(&state.pool, key).await
}

async fn document(state: &AppState, i: &Incident) -> Result<Document, AppError> {
    let mut conn = state.pool.acquire().await?;
    let now = clock::now(&mut *conn).await?;
    Document::load(&mut conn, i, now).await
}

#[derive(serde::Deserialize)]
pub struct ShowQuery {
    /// Present to edit a published postmortem
    edit: Option<String>,
}

pub async fn show(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    Path(key): Path<String>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<ShowQuery>,
) -> PageResult<PostmortemPage> {
    page(&state, chrome, &key, q.edit.is_some()).await
}

/// The postmortem page; editing a published one when `edit`.
async fn page(
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
    let versions = super::db::versions(&state.pool, doc.pm.id).await?;
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
        comments: super::db::comments(&state.pool, doc_id).await?,
        versions,
        refused: None,
    })
}

/// The answer to an action-item form: back to the postmortem, or, when a field is wrong, the
/// page again (422) with the form as typed and what is wrong with it.
async fn item_answer<T>(
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
    State(state): State<AppState>,
    _auth: Auth<Viewer>,
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

/// Back to the postmortem after an edit, still editing (a published one reads as a document
/// otherwise).
fn back(i: &Incident) -> Redirect {
    Redirect::to(&format!("/incidents/{}/postmortem?edit", i.key))
}

/// One change to the postmortem of the incident `key`, in its own transaction: committed when
/// it goes through, rolled back (explicitly, so the row locks go at once) and answered with the
/// refusal when not. Returns the incident, for the redirect, and what the change returned.
async fn change<T>(
    state: &AppState,
    key: &str,
    f: impl AsyncFnOnce(&mut PgConnection, &Incident) -> AppResult<T>,
) -> Result<(Incident, T), PageError> {
    let i = incident(state, key).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    match f(&mut tx, &i).await {
        Ok(v) => {
            tx.commit().await?;
            Ok((i, v))
        }
        Err(err) => {
            tx.rollback().await?;
            Err(refused(err))
        }
    }
}

/// A refused edit: a stale version is a 409 page saying so; anything else as usual.
fn refused(err: AppError) -> PageError {
    match err {
        AppError::Stale { .. } => PageError(AppError::Conflict(
            "Someone changed this postmortem since you loaded it; your edit was not saved. Reload the page, then edit again.".into(),
        )),
        other => PageError(other),
    }
}

#[derive(Deserialize)]
pub struct SectionForm {
    section: String,
    text: String,
    version: i32,
}

pub async fn edit_section(
    State(state): State<AppState>,
    auth: Auth<Responder>,
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

fn count(field: &str, raw: &str) -> Result<Option<i64>, AppError> {
    let raw = raw.trim().replace([' ', ','], "");
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<i64>()
        .map(Some)
        .map_err(|_| AppError::invalid(field, "a whole number"))
}

pub async fn edit_facts(
    State(state): State<AppState>,
    auth: Auth<Responder>,
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
    State(state): State<AppState>,
    auth: Auth<Responder>,
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

#[derive(Deserialize)]
pub struct ItemForm {
    action: String,
    #[serde(rename = "type")]
    kind: String,
    owner: String,
    due_on: String,
    work_item: String,
}

pub async fn add_item(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Responder>,
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
    item_answer(&state, chrome, &key, done, |errors| RefusedItem {
        item: None,
        form: ItemFormView {
            action: form.action.clone(),
            kind: form.kind.clone(),
            owner: form.owner.clone(),
            due_on: form.due_on.clone(),
            work_item: form.work_item.clone(),
            status: String::new(),
            errors,
        },
    })
    .await
}

#[derive(Deserialize)]
pub struct CommentForm {
    part: String,
    body: String,
}

pub async fn comment(
    State(state): State<AppState>,
    auth: Auth<Responder>,
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
    State(state): State<AppState>,
    auth: Auth<Responder>,
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

#[derive(Deserialize)]
pub struct ItemEditForm {
    action: String,
    #[serde(rename = "type")]
    kind: String,
    owner: String,
    due_on: String,
    work_item: String,
    status: String,
    version: i32,
}

/// The item `id` of this incident's postmortem; another incident's is not found here.
async fn own_item(conn: &mut PgConnection, i: &Incident, id: i64) -> AppResult<ItemRow> {
    let item = actions::item(conn, id).await?;
    if item.incident != i.key.to_string() {
        return Err(AppError::NotFound(format!(
            "{} has no action item {id}.",
            i.key
        )));
    }
    Ok(item)
}

pub async fn edit_item(
    State(state): State<AppState>,
    chrome: Chrome,
    auth: Auth<Responder>,
    Path((key, id)): Path<(String, String)>,
    PageForm(form): PageForm<ItemEditForm>,
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
        actions::edit_action_item(tx, &auth.actor, &was, Some(form.version), &edit).await
    })
    .await;
    item_answer(&state, chrome, &key, done, |errors| RefusedItem {
        item: Some(id),
        form: ItemFormView {
            action: form.action.clone(),
            kind: form.kind.clone(),
            owner: form.owner.clone(),
            due_on: form.due_on.clone(),
            work_item: form.work_item.clone(),
            status: form.status.clone(),
            errors,
        },
    })
    .await
}

#[derive(Deserialize)]
pub struct VersionForm {
    version: i32,
}

pub async fn delete_item(
    State(state): State<AppState>,
    auth: Auth<Responder>,
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

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/action_items.html")]
pub struct ActionItemsPage {
    chrome: Chrome,
    items: Vec<super::db::ListedItem>,
    rates: Vec<(&'static str, usize, usize)>,
    owner: String,
    /// The status filter chosen: a status, `unfinished` (the default) or `any`
    status: String,
    kind: String,
    overdue: bool,
    /// The filters as a query string, for the status forms to come back to.
    back: String,
    /// The next page's address, when there are more items
    next_page: Option<String>,
    /// Whether this is a later page (then a link leads back to the first)
    later_page: bool,
}

pub async fn action_items(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<super::handlers::ItemQuery>,
) -> PageResult<ActionItemsPage> {
    // Unfinished items unless asked: a list of everything opens on the ones long done.
    let filter = q.filter_or(UNFINISHED)?;
    let status = filter.status.clone().unwrap_or_else(|| "any".to_owned());
    let (after, limit) = q.page()?;
    let mut conn = state.pool.acquire().await?;
    let (items, next) = actions::list_items(&mut conn, &filter, after, limit).await?;
    let everything = super::db::types_and_statuses(&mut *conn).await?;
    let rates = super::domain::completion_by_type(
        everything
            .iter()
            .map(|(kind, status, n)| (kind.as_str(), status.as_str(), *n)),
    );
    let back = crate::http::page::filters_query([
        ("owner", filter.owner.as_deref()),
        ("status", Some(status.as_str()).filter(|s| *s != UNFINISHED)),
        ("type", filter.kind.as_deref()),
        ("overdue", filter.overdue.then_some("true")),
    ]);
    let next_page = next.map(|c| crate::http::page::next_page("/action-items", &back, &c.encode()));
    Ok(ActionItemsPage {
        chrome,
        items,
        next_page,
        later_page: after.is_some(),
        rates,
        owner: filter.owner.unwrap_or_default(),
        status,
        kind: filter.kind.unwrap_or_default(),
        back,
        overdue: filter.overdue,
    })
}

#[derive(Deserialize)]
pub struct StatusForm {
    status: String,
    /// The list's filters, to return to the same list.
    #[serde(default)]
    back: String,
}

pub async fn item_status(
    State(state): State<AppState>,
    auth: Auth<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<StatusForm>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "action item")?;
    super::handlers::set_status(&state, &auth.actor, id, &form.status).await?;
    // Only a query string of this list: never somewhere else.
    let query: String = form::parse(form.back.trim_start_matches('?').as_bytes())
        .fold(form::Serializer::new(String::new()), |mut q, (k, v)| {
            if ["owner", "status", "type", "overdue"].contains(&k.as_ref()) {
                q.append_pair(&k, &v);
            }
            q
        })
        .finish();
    Ok(Redirect::to(&if query.is_empty() {
        "/action-items".to_owned()
    } else {
        format!("/action-items?{query}")
    }))
}

pub struct NearMissView {
    pub m: super::db::NearMiss,
    pub html: SafeHtml,
}

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/near_misses.html")]
pub struct NearMissesPage {
    chrome: Chrome,
    misses: Vec<NearMissView>,
}

/// Every "Where we got lucky" entry: the near misses worth reading together.
pub async fn near_misses(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
) -> PageResult<NearMissesPage> {
    let mut misses = Vec::new();
    for m in super::db::near_misses(&state.pool).await? {
        // Text citing a figure (`{time_to_detect}`) is shown with it filled in, as on the
        // postmortem; the document is loaded only for those.
        let text = if m.got_lucky.contains('{') {
            let i = incident(&state, &m.key).await?;
            document(&state, &i).await?.section_text(Section::GotLucky)
        } else {
            m.got_lucky.clone()
        };
        misses.push(NearMissView {
            html: render_markdown(&text),
            m,
        });
    }
    Ok(NearMissesPage { chrome, misses })
}

pub async fn review(
    State(state): State<AppState>,
    auth: Auth<Responder>,
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

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/version.html")]
pub struct VersionPage {
    chrome: Chrome,
    key: String,
    version: super::db::Published,
    html: SafeHtml,
    diff: Vec<super::domain::DiffRow>,
}

/// A published version as frozen, and what changed since.
pub async fn version(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    Path((key, number)): Path<(String, String)>,
) -> PageResult<VersionPage> {
    let i = incident(&state, &key).await?;
    let doc = document(&state, &i).await?;
    let number: i32 = number
        .parse()
        .map_err(|_| AppError::NotFound(format!("There is no version {number:?}.")))?;
    let version = super::db::version(&state.pool, doc.pm.id, number)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no published version {number}.")))?;
    Ok(VersionPage {
        chrome,
        key: doc.key.clone(),
        html: render_markdown(&version.markdown),
        diff: super::domain::readable_diff(&version.markdown, &doc.markdown(), 1),
        version,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/list.html")]
pub struct ListPage {
    chrome: Chrome,
    rows: Vec<super::handlers::PostmortemSummary>,
    services: Vec<String>,
    q: super::handlers::PostmortemQuery,
    /// On a later page: the first page's address
    first_page: Option<String>,
    /// The next page's address, when there are more
    next_page: Option<String>,
    /// What is wrong with the filters as typed (the list is then empty, answered 422)
    errors: Vec<FieldError>,
}

impl ListPage {
    fn chosen(&self, value: &Option<String>, option: &str) -> bool {
        value.as_deref().map(str::trim) == Some(option)
    }

    fn typed<'a>(&self, value: &'a Option<String>) -> &'a str {
        value.as_deref().unwrap_or("")
    }

    fn status_label(&self, status: &str) -> &'static str {
        super::domain::status_label(status)
    }
}

/// The managers' view: postmortems with their figures and open action items, filtered. A
/// filter that cannot be read is shown again as typed, named, with nothing listed (422).
pub async fn list(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        super::handlers::PostmortemQuery,
    >,
) -> PageResult<Response> {
    let services = crate::services::db::list(&state.pool)
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let (filter, (after, limit)) = match q.filter().and_then(|f| q.page().map(|p| (f, p))) {
        Ok(read) => read,
        Err(AppError::Validation(errors)) => {
            let page = ListPage {
                chrome,
                rows: vec![],
                services,
                q,
                first_page: None,
                next_page: None,
                errors,
            };
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response());
        }
        Err(other) => return Err(other.into()),
    };
    let (rows, next) = super::db::list(&state.pool, &filter, after, limit).await?;
    let rows = rows
        .into_iter()
        .map(super::handlers::PostmortemSummary::from)
        .collect();
    let filters = crate::http::page::filters_query([
        ("status", q.status.as_deref()),
        ("service", q.service.as_deref()),
        ("severity", q.severity.as_deref()),
        ("from", q.from.as_deref()),
        ("to", q.to.as_deref()),
        ("open_items", q.open_items.as_deref()),
        ("limit", q.limit.as_deref()),
    ]);
    let next_page =
        next.map(|c| crate::http::page::next_page("/postmortems", &filters, &c.encode()));
    let first_page = after.is_some().then(|| format!("/postmortems?{filters}"));
    Ok(ListPage {
        chrome,
        rows,
        services,
        q,
        first_page,
        next_page,
        errors: vec![],
    }
    .into_response())
}
