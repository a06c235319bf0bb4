//! Change history pages: `/changes` across services (filters service, kind, period) and
//! `/services/{name}/changes` for one service, newest first, a page at a time.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};

use super::db::Change;
use super::domain::ChangeKind;
use super::handlers::ChangeQuery;
use crate::error::AppError;
use crate::http::access::{Auth, Viewer};
use crate::http::extract::{ApiQuery, query_text};
use crate::http::page::{Chrome, PageResult};
use crate::state::AppState;

const PAGE: i64 = 100;

#[derive(Template, WebTemplate)]
#[template(path = "changes/list.html")]
pub struct ChangesPage {
    chrome: Chrome,
    /// The one service shown, for `/services/{name}/changes`.
    service: Option<String>,
    changes: Vec<Change>,
    kinds: [ChangeKind; 4],
    /// The filters as typed, to show them again.
    q_service: String,
    q_kind: String,
    q_from: String,
    q_to: String,
    /// The query string of the next page, if there is one.
    next: Option<String>,
}

impl ChangesPage {
    fn kind_label(&self, kind: &str) -> &'static str {
        ChangeKind::parse("kind", kind).map_or("change", ChangeKind::label)
    }
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    service: Option<String>,
    mut q: ChangeQuery,
) -> PageResult<ChangesPage> {
    if let Some(name) = &service {
        super::db::service_id(&state.pool, name)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("There is no service named {name:?}.")))?;
        q.service = Some(name.clone());
    }
    let (changes, next) = q.page(&state.pool, PAGE).await?;
    let text = |v: &Option<String>| query_text(v).unwrap_or_default();
    let next = next.map(|cursor| {
        let cursor = cursor.encode();
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                [
                    ("service", text(&q.service)),
                    ("kind", text(&q.kind)),
                    ("from", text(&q.from)),
                    ("to", text(&q.to)),
                    ("cursor", cursor),
                ]
                .into_iter()
                // The service of /services/{name}/changes is in the path already.
                .filter(|(k, v)| !v.is_empty() && (*k != "service" || service.is_none())),
            )
            .finish()
    });
    Ok(ChangesPage {
        chrome,
        q_service: text(&q.service),
        q_kind: text(&q.kind),
        q_from: text(&q.from),
        q_to: text(&q.to),
        service,
        changes,
        kinds: ChangeKind::ALL,
        next,
    })
}

pub async fn list(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> PageResult<ChangesPage> {
    page(&state, chrome, None, q).await
}

pub async fn for_service(
    State(state): State<AppState>,
    chrome: Chrome,
    _auth: Auth<Viewer>,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> PageResult<ChangesPage> {
    page(&state, chrome, Some(name), q).await
}
