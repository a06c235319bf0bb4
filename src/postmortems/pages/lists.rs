//! Across incidents: the postmortems, the action items, and the near misses.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use form_urlencoded as form;
use serde::Deserialize;

use crate::action_items::domain::UNFINISHED;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::PageForm;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::{ApiRequest, PageRequest};
use crate::incident_ref::domain::SeenBy;
use crate::postmortems::actions::{self};
use crate::postmortems::domain::{SafeHtml, Section, render_markdown};

use super::shared::*;

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/action_items.html")]
pub struct ActionItemsPage {
    chrome: Chrome,
    items: Vec<crate::postmortems::db::ListedItem>,
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
    /// The teams to narrow it to: (slug, name); and the choice (a slug, `mine`, or blank)
    teams: Vec<(String, String)>,
    filter_team: String,
}

pub async fn action_items(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        crate::postmortems::handlers::ItemQuery,
    >,
) -> PageResult<ActionItemsPage> {
    // Unfinished items unless asked: a list of everything opens on the ones long done.
    let mut filter = q.filter_or(UNFINISHED)?;
    let team = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed_page(&state.pool, auth.user.id, team).await?;
    filter.teams = narrowed.ids.clone();
    let status = filter.status.clone().unwrap_or_else(|| "any".to_owned());
    let (after, limit) = q.page()?;
    let mut conn = state.pool.acquire().await?;
    let sees = SeenBy::of(&auth.user);
    let (items, next) = actions::list_items(&mut conn, &filter, sees, after, limit).await?;
    let everything = crate::postmortems::db::types_and_statuses(&mut *conn).await?;
    let rates = crate::postmortems::domain::completion_by_type(
        everything
            .iter()
            .map(|(kind, status, n)| (kind.as_str(), status.as_str(), *n)),
    );
    let back = crate::http::page::filters_query([
        ("owner", filter.owner.as_deref()),
        ("status", Some(status.as_str()).filter(|s| *s != UNFINISHED)),
        ("type", filter.kind.as_deref()),
        ("overdue", filter.overdue.then_some("true")),
        ("team", narrowed.team.as_deref()),
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
        teams: crate::teams::db::choices(&state.pool).await?,
        filter_team: narrowed.team.unwrap_or_default(),
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
    ApiRequest(state, auth): ApiRequest<Responder>,
    Path(id): Path<String>,
    PageForm(form): PageForm<StatusForm>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "action item")?;
    crate::postmortems::handlers::set_status(&state, &auth.user, &auth.actor, id, &form.status)
        .await?;
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
    pub m: crate::postmortems::db::NearMiss,
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
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
) -> PageResult<NearMissesPage> {
    let mut misses = Vec::new();
    for m in crate::postmortems::db::near_misses(&state.pool, SeenBy::of(&auth.user)).await? {
        // Text citing a figure (`{time_to_detect}`) is shown with it filled in, as on the
        // postmortem; the document is loaded only for those.
        let text = if m.got_lucky.contains('{') {
            let i = incident(&state, &m.key.to_string()).await?;
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

#[derive(Template, WebTemplate)]
#[template(path = "postmortems/list.html")]
pub struct ListPage {
    chrome: Chrome,
    rows: Vec<crate::postmortems::handlers::PostmortemSummary>,
    services: Vec<String>,
    q: crate::postmortems::handlers::PostmortemQuery,
    /// On a later page: the first page's address
    first_page: Option<String>,
    /// The next page's address, when there are more
    next_page: Option<String>,
    /// What is wrong with the filters as typed (the list is then empty, answered 422)
    errors: Vec<FieldError>,
    /// The teams to narrow it to: (slug, name); and the choice (a slug, `mine`, or blank)
    teams: Vec<(String, String)>,
    filter_team: String,
}

impl ListPage {
    fn chosen(&self, value: &Option<String>, option: &str) -> bool {
        value.as_deref().map(str::trim) == Some(option)
    }

    fn typed<'a>(&self, value: &'a Option<String>) -> &'a str {
        value.as_deref().unwrap_or("")
    }

    fn status_label(&self, status: &str) -> &'static str {
        crate::postmortems::domain::status_label(status)
    }
}

/// The managers' view: postmortems with their figures and open action items, filtered. A
/// filter that cannot be read is shown again as typed, named, with nothing listed (422).
pub async fn list(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        crate::postmortems::handlers::PostmortemQuery,
    >,
) -> PageResult<Response> {
    let services = crate::services::db::list(&state.pool)
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect();
    let team = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed_page(&state.pool, auth.user.id, team).await?;
    let teams = crate::teams::db::choices(&state.pool).await?;
    let filter_team = narrowed.team.clone().unwrap_or_default();
    let (mut filter, (after, limit)) = match q.filter().and_then(|f| q.page().map(|p| (f, p))) {
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
                teams,
                filter_team,
            };
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response());
        }
        Err(other) => return Err(other.into()),
    };
    filter.teams = narrowed.ids;
    let (rows, next) =
        crate::postmortems::db::list(&state.pool, &filter, SeenBy::of(&auth.user), after, limit)
            .await?;
    let rows = rows
        .into_iter()
        .map(crate::postmortems::handlers::PostmortemSummary::from)
        .collect();
    let filters = crate::http::page::filters_query([
        ("status", q.status.as_deref()),
        ("service", q.service.as_deref()),
        ("severity", q.severity.as_deref()),
        ("from", q.from.as_deref()),
        ("to", q.to.as_deref()),
        ("open_items", q.open_items.as_deref()),
        ("team", narrowed.team.as_deref()),
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
        teams,
        filter_team,
    }
    .into_response())
}
