//! The people page: who can hold an incident role, and a form to add someone.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use super::db::{self, Person};
use super::domain::PersonDraft;
use crate::error::{AppError, FieldError, PageError, PageResult};
use crate::http::extract::PageForm;
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "people/list.html")]
pub struct ListPage {
    people: Vec<Person>,
    form: PersonDraft,
    errors: Vec<FieldError>,
}

pub async fn list(State(state): State<AppState>) -> PageResult<ListPage> {
    Ok(ListPage {
        people: db::list(&state.pool).await?,
        form: PersonDraft::default(),
        errors: vec![],
    })
}

pub async fn create(
    State(state): State<AppState>,
    PageForm(form): PageForm<PersonDraft>,
) -> PageResult<Response> {
    let result = match form.clone().validated() {
        Ok(draft) => db::insert(&state.pool, &draft).await,
        Err(err) => Err(err.into()),
    };
    let errors = match result {
        Ok(_) => return Ok(Redirect::to("/people").into_response()),
        Err(AppError::Validation(fields)) => fields,
        Err(AppError::Conflict(message)) => vec![FieldError {
            field: "email or handle".into(),
            message,
        }],
        Err(other) => return Err(PageError(other)),
    };
    let page = ListPage {
        people: db::list(&state.pool).await?,
        form,
        errors,
    };
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}
