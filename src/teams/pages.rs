//! Team pages: `/teams` lists them, with a form to add one (managers and admins);
//! `/teams/{slug}/members` is where a team's leads change its members and settings. The team's
//! own page, with what it owns and how it responds, is the dashboard's (`/teams/{slug}`).

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::actions;
use super::db::{self, Team};
use super::domain::{TeamDraft, TeamRole};
use super::handlers::{asking, managed};
use crate::error::FieldError;
use crate::http::access::{Manager, Responder, Viewer};
use crate::http::extract::PageForm;
use crate::http::page::{Chrome, PageResult, submitted};
use crate::http::request::{ApiRequest, PageRequest};
use crate::state::AppState;

/// The team form as typed.
#[derive(Deserialize, Default)]
pub struct TeamForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    slug: String,
    #[serde(default)]
    description: String,
    /// `on` when ticked
    #[serde(default)]
    members_manage: Option<String>,
    #[serde(default)]
    oidc_group: String,
    #[serde(default)]
    version: Option<i32>,
}

impl TeamForm {
    fn of(t: &Team) -> Self {
        Self {
            name: t.name.clone(),
            slug: t.slug.clone(),
            description: t.description.clone(),
            members_manage: t.members_manage.then(|| "on".to_owned()),
            oidc_group: t.oidc_group.clone().unwrap_or_default(),
            version: Some(t.version),
        }
    }

    fn draft(&self) -> TeamDraft {
        TeamDraft {
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            members_manage: self.members_manage.is_some(),
            oidc_group: Some(self.oidc_group.clone()),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "teams/list.html")]
pub struct ListPage {
    chrome: Chrome,
    teams: Vec<Team>,
    form: TeamForm,
    errors: Vec<FieldError>,
}

async fn list_page(
    state: &AppState,
    chrome: Chrome,
    form: TeamForm,
    errors: Vec<FieldError>,
) -> PageResult<ListPage> {
    Ok(ListPage {
        chrome,
        teams: db::list(&state.pool, None).await?,
        form,
        errors,
    })
}

pub async fn list(PageRequest(state, chrome, _): PageRequest<Viewer>) -> PageResult<ListPage> {
    list_page(&state, chrome, TeamForm::default(), vec![]).await
}

pub async fn create(
    PageRequest(state, chrome, auth): PageRequest<Manager>,
    PageForm(form): PageForm<TeamForm>,
) -> PageResult<Response> {
    let draft = form.draft();
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::create(tx, &auth.actor, &draft))
    });
    submitted(
        tried.await,
        |t| format!("/teams/{}/members", t.slug),
        async |errors| list_page(&state, chrome, form, errors).await,
    )
    .await
}

/// A member as the membership page shows them.
pub struct MemberRow {
    handle: String,
    name: String,
    role: &'static str,
}

#[derive(Template, WebTemplate)]
#[template(path = "teams/members.html")]
pub struct MembersPage {
    chrome: Chrome,
    team: Team,
    members: Vec<MemberRow>,
    /// Whether the person may change the team (else the page only shows it)
    may_manage: bool,
    /// Handles of people not in the team yet, for the form that adds one
    others: Vec<(String, String)>,
    form: TeamForm,
    errors: Vec<FieldError>,
}

async fn members_page(
    state: &AppState,
    chrome: Chrome,
    team: Team,
    may_manage: bool,
    form: Option<TeamForm>,
    errors: Vec<FieldError>,
) -> PageResult<MembersPage> {
    let people = crate::people::db::list(&state.pool).await?;
    let others = people
        .into_iter()
        .filter(|p| team.part_of(&p.handle).is_none())
        .map(|p| (p.handle, p.name))
        .collect();
    Ok(MembersPage {
        chrome,
        members: team
            .members
            .iter()
            .map(|m| MemberRow {
                handle: m.handle.clone(),
                name: m.name.clone(),
                role: m.role.as_str(),
            })
            .collect(),
        may_manage,
        others,
        form: form.unwrap_or_else(|| TeamForm::of(&team)),
        team,
        errors,
    })
}

pub async fn members(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    Path(slug): Path<String>,
) -> PageResult<MembersPage> {
    let team = db::get(&state.pool, &slug).await?;
    let may = actions::check_may_lead(&team, &asking(&auth)).is_ok();
    members_page(&state, chrome, team, may, None, vec![]).await
}

/// The team's name, slug, description and settings, from its membership page.
pub async fn edit(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(slug): Path<String>,
    PageForm(form): PageForm<TeamForm>,
) -> PageResult<Response> {
    let team = managed(&state, &auth, &slug).await?;
    let (draft, version) = (form.draft(), form.version);
    let tried = crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::update(tx, &auth.actor, &team, version, &draft))
    });
    let tried = tried.await;
    submitted(
        tried,
        |t| format!("/teams/{}/members", t.slug),
        async |errors| members_page(&state, chrome, team.clone(), true, Some(form), errors).await,
    )
    .await
}

#[derive(Deserialize)]
pub struct MemberForm {
    #[serde(default)]
    handle: String,
    #[serde(default)]
    role: String,
    /// `remove` to take the person out; otherwise they are put in as `role`
    #[serde(default)]
    action: String,
}

/// Adds a member, changes one's part, or takes one out.
pub async fn change_member(
    PageRequest(state, chrome, auth): PageRequest<Responder>,
    Path(slug): Path<String>,
    PageForm(form): PageForm<MemberForm>,
) -> PageResult<Response> {
    let team = managed(&state, &auth, &slug).await?;
    let handle = form.handle.trim().to_owned();
    let tried = match form.action.as_str() {
        "remove" => {
            crate::transaction::write(&state.pool, |tx, _| {
                Box::pin(actions::remove_member(tx, &auth.actor, &team, &handle))
            })
            .await
        }
        _ => match TeamRole::parse("role", &form.role) {
            Ok(role) => {
                crate::transaction::write(&state.pool, |tx, _| {
                    Box::pin(actions::set_member(tx, &auth.actor, &team, &handle, role))
                })
                .await
            }
            Err(e) => Err(e.into()),
        },
    };
    submitted(
        tried,
        |t| format!("/teams/{}/members", t.slug),
        async |errors| members_page(&state, chrome, team.clone(), true, None, errors).await,
    )
    .await
}

/// Deletes the team (managers and admins), from its membership page.
pub async fn delete(
    ApiRequest(state, auth): ApiRequest<Manager>,
    Path(slug): Path<String>,
) -> PageResult<Response> {
    let team = db::get(&state.pool, &slug).await?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(actions::delete(tx, &auth.actor, &team))
    })
    .await?;
    Ok(Redirect::to("/teams").into_response())
}
