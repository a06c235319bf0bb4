//! Change history pages: `/changes` across services (filters service, kind, period) and
//! `/services/{name}/changes` for one service, newest first, a page at a time; and the form that
//! records a change by hand, capacity figures included.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::db::Change;
use super::domain::{Capacity, ChangeDraft, ChangeKind};
use super::handlers::ChangeQuery;
use crate::error::{AppError, FieldError};
use crate::http::access::{Responder, Viewer};
use crate::http::extract::{ApiQuery, PageForm, parse_form_time, query_text};
use crate::http::page::{Chrome, PageError, PageResult};
use crate::http::request::PageRequest;
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
    /// The record-a-change form as typed, and what was wrong with it.
    form: ChangeForm,
    errors: Vec<FieldError>,
    /// What is wrong with the filters as typed (nothing is listed then, answered 422)
    filter_errors: Vec<FieldError>,
    /// Service names for the form's suggestions.
    services: Vec<String>,
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
    // Filters that cannot be read are shown again as typed, named, with nothing listed.
    let (changes, next, filter_errors) = match q.page(&state.pool, PAGE).await {
        Ok((changes, next)) => (changes, next, vec![]),
        Err(AppError::Validation(errors)) => (vec![], None, errors),
        Err(other) => return Err(other.into()),
    };
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
        form: ChangeForm {
            service: service.clone().unwrap_or_default(),
            ..Default::default()
        },
        errors: vec![],
        filter_errors,
        services: super::db::service_names(&state.pool).await?,
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
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> PageResult<Response> {
    Ok(answer(page(&state, chrome, None, q).await?))
}

pub async fn for_service(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<ChangeQuery>,
) -> PageResult<Response> {
    Ok(answer(page(&state, chrome, Some(name), q).await?))
}

/// The list, or 422 when its filters could not be read.
fn answer(page: ChangesPage) -> Response {
    if page.filter_errors.is_empty() {
        page.into_response()
    } else {
        (StatusCode::UNPROCESSABLE_ENTITY, page).into_response()
    }
}

/// The record-a-change form as typed: numbers stay text until checked.
#[derive(Deserialize, Default)]
pub struct ChangeForm {
    #[serde(default)]
    service: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    environment: String,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    author: String,
    #[serde(default)]
    link: String,
    /// UTC, `YYYY-MM-DDTHH:MM`; now when blank
    #[serde(default)]
    occurred_at: String,
    #[serde(default)]
    capacity_limit: String,
    #[serde(default)]
    capacity_per_replica: String,
    #[serde(default)]
    capacity_replicas: String,
    #[serde(default)]
    capacity_peak_requests_per_second: String,
    #[serde(default)]
    capacity_peak_latency_seconds: String,
}

impl ChangeForm {
    fn capacity(&self) -> Result<Option<Capacity>, AppError> {
        let number = |field: &str, v: &str| -> Result<Option<f64>, AppError> {
            let v = v.trim();
            if v.is_empty() {
                return Ok(None);
            }
            v.parse()
                .map(Some)
                .map_err(|_| AppError::invalid(field, format!("{v:?} is not a number")))
        };
        let whole = |field: &str, v: &str| -> Result<i64, AppError> {
            v.trim()
                .parse()
                .map_err(|_| AppError::invalid(field, "a whole number"))
        };
        let figures = [
            &self.capacity_limit,
            &self.capacity_per_replica,
            &self.capacity_replicas,
            &self.capacity_peak_requests_per_second,
            &self.capacity_peak_latency_seconds,
        ];
        if figures.iter().all(|f| f.trim().is_empty()) {
            return Ok(None);
        }
        Ok(Some(Capacity {
            limit: self.capacity_limit.clone(),
            per_replica: whole("capacity.per_replica", &self.capacity_per_replica)?,
            replicas: whole("capacity.replicas", &self.capacity_replicas)?,
            peak_requests_per_second: number(
                "capacity.peak_requests_per_second",
                &self.capacity_peak_requests_per_second,
            )?,
            peak_latency_seconds: number(
                "capacity.peak_latency_seconds",
                &self.capacity_peak_latency_seconds,
            )?,
        }))
    }

    fn draft(&self) -> Result<ChangeDraft, AppError> {
        let text = |v: &str| Some(v.to_owned()).filter(|v| !v.trim().is_empty());
        Ok(ChangeDraft {
            service: self.service.clone(),
            environment: text(&self.environment),
            kind: text(&self.kind),
            summary: self.summary.clone(),
            author: text(&self.author),
            link: text(&self.link),
            occurred_at: parse_form_time("occurred_at", &self.occurred_at)?,
            capacity: self.capacity()?,
        })
    }
}

/// Records a change typed on `/changes`; a wrong field shows the form again naming it.
pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    PageForm(form): PageForm<ChangeForm>,
) -> PageResult<Response> {
    let recorded = match form.draft() {
        Ok(draft) => {
            let mut tx = crate::transaction::begin(&state.pool).await?;
            let r = super::actions::record(&mut tx, &auth.actor, &draft).await;
            if r.is_ok() {
                tx.commit().await?;
            }
            r
        }
        Err(e) => Err(e),
    };
    match recorded {
        Ok(c) => Ok(Redirect::to(&format!("/changes#change-{}", c.id)).into_response()),
        Err(AppError::Validation(errors)) => {
            let mut again = page(&state, chrome, None, ChangeQuery::default()).await?;
            again.form = form;
            again.errors = errors;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, again).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}
