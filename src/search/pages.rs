//! `/search?q=`: the search box on every page leads here; a key such as `INC-1187` opens it.

use askama::Template;
use askama_web::WebTemplate;
use axum::response::{IntoResponse, Redirect, Response};

use super::db::{self, Hit};
use super::handlers::{SearchQuery, check_query};
use crate::http::access::Viewer;
use crate::http::extract::ApiQuery;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::PageRequest;

pub struct Result {
    pub hit: Hit,
    pub pieces: Vec<(String, bool)>,
}

#[derive(Template, WebTemplate)]
#[template(path = "search.html")]
pub struct SearchPage {
    chrome: Chrome,
    q: String,
    results: Vec<Result>,
}

pub async fn search(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<SearchQuery>,
) -> PageResult<Response> {
    let q = check_query(q.q.as_deref())?;
    if let Some(key) = crate::incidents::domain::IncidentKey::parse(&q) {
        return Ok(Redirect::to(&format!("/incidents/{key}")).into_response());
    }
    let results = db::search(
        &state.pool,
        &q,
        crate::incident_ref::domain::SeenBy::of(&auth.user),
        50,
    )
    .await?
    .into_iter()
    .map(|hit| Result {
        pieces: super::without_title(super::pieces(&hit.snippet), &hit.title),
        hit,
    })
    .collect();
    Ok(SearchPage { chrome, q, results }.into_response())
}
