//! Accounts and API tokens over the API: `/api/v1/me`, `/api/v1/users` (admins),
//! `/api/v1/tokens`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::actions::{self, change_user};
use super::bootstrap::{Account, ensure_account};
use crate::audit;
use crate::auth::db::{self, Token, User};
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Auth, Viewer};
use crate::http::extract::{ApiJson, parse_id};
use crate::http::request::ApiRequest;
use crate::people::domain::Preferences;
use crate::state::AppState;

#[derive(Serialize, utoipa::ToSchema)]
pub struct UserView {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub handle: String,
    pub role: UserRole,
    /// Whether the person can sign in with a password
    pub has_password: bool,
    pub disabled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl From<&User> for UserView {
    fn from(u: &User) -> Self {
        Self {
            id: u.id,
            name: u.name.clone(),
            email: u.email.clone(),
            handle: u.handle.clone(),
            role: u.role,
            has_password: u.password_hash.is_some(),
            disabled_at: u.disabled_at,
            created_at: u.created_at,
        }
    }
}

/// Your preferences: your time zone (on-call load counts your pages outside 08:00–20:00 there;
/// your notices speak its time), and whether and how early you hear about your hand-offs.
#[utoipa::path(get, path = "/api/v1/me/preferences", operation_id = "getMyPreferences", tag = "accounts",
    responses((status = 200, description = "Yours, or the defaults", body = Preferences), (status = 401, description = "No valid token", body = crate::error::ErrorBody)))]
pub async fn preferences(
    ApiRequest(state, auth): ApiRequest<Viewer>,
) -> AppResult<Json<Preferences>> {
    Ok(Json(
        crate::people::db::preferences(&state.pool, auth.user.id).await?,
    ))
}

/// A change to your preferences: what is given changes, what is left out stays.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferencesChange {
    /// An IANA time zone, e.g. Europe/Lisbon
    #[serde(default)]
    pub time_zone: Option<String>,
    /// Hear when your on-call shift starts and ends
    #[serde(default)]
    pub handoff_notices: Option<bool>,
    /// Hours (1–48) before a shift to be reminded of it; null: no reminder
    #[serde(default, deserialize_with = "crate::http::extract::double_option")]
    #[schema(value_type = Option<i32>)]
    pub handoff_reminder_hours: Option<Option<i32>>,
}

/// Changes your preferences: the fields given (the others stay as they are).
#[utoipa::path(patch, path = "/api/v1/me/preferences", operation_id = "setMyPreferences", tag = "accounts", request_body = PreferencesChange,
    responses((status = 200, description = "Saved; all of them", body = Preferences),
              (status = 422, description = "An unknown time zone, or a reminder outside 1–48 hours; the field and why", body = crate::error::ErrorBody)))]
pub async fn set_preferences(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    body: ApiJson<PreferencesChange>,
) -> AppResult<Json<Preferences>> {
    let change = &body.value;
    let now = crate::people::db::preferences(&state.pool, auth.user.id).await?;
    let asked = Preferences {
        time_zone: change.time_zone.clone().unwrap_or(now.time_zone),
        handoff_notices: change.handoff_notices.unwrap_or(now.handoff_notices),
        handoff_reminder_hours: change
            .handoff_reminder_hours
            .unwrap_or(now.handoff_reminder_hours),
    };
    let saved =
        crate::people::actions::save_preferences(&state.pool, &auth.actor, auth.user.id, &asked)
            .await?;
    Ok(Json(saved))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct UserList {
    pub items: Vec<UserView>,
}

/// Who the token belongs to.
#[utoipa::path(get, path = "/api/v1/me", operation_id = "getMe", tag = "accounts",
    responses((status = 200, description = "OK", body = UserView), (status = 401, description = "No valid token", body = crate::error::ErrorBody)))]
pub async fn me(State(state): State<AppState>, auth: Auth<Viewer>) -> AppResult<Json<UserView>> {
    let user = db::find_by_id(&state.pool, auth.user.id)
        .await?
        .ok_or_else(|| AppError::NotFound("Your account no longer exists.".into()))?;
    Ok(Json(UserView::from(&user)))
}

/// Every account.
#[utoipa::path(get, path = "/api/v1/users", operation_id = "listUsers", tag = "accounts",
    responses((status = 200, description = "OK", body = UserList), crate::http::openapi::AdminsOnly))]
pub async fn list_users(ApiRequest(state, _): ApiRequest<Admin>) -> AppResult<Json<UserList>> {
    let users = db::list(&state.pool).await?;
    Ok(Json(UserList {
        items: users.iter().map(UserView::from).collect(),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUser {
    email: String,
    role: String,
    #[serde(default)]
    name: Option<String>,
    /// 10 to 128 characters; leave out for an account that signs in another way (SSO)
    #[serde(default)]
    password: Option<String>,
}

/// Create an account (or reset an existing one's role and password).
#[utoipa::path(post, path = "/api/v1/users", operation_id = "createUser", tag = "accounts", request_body = CreateUser,
    responses((status = 201, description = "Created", body = UserView), crate::http::openapi::AdminsOnly,
              (status = 409, description = "The email exists", body = crate::error::ErrorBody), crate::http::openapi::Invalid))]
pub async fn create_user(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<CreateUser>,
) -> AppResult<Response> {
    let b = body.value;
    let role = UserRole::parse("role", &b.role)?;
    if db::find_by_email(&state.pool, &b.email).await?.is_some() {
        return Err(AppError::Conflict(format!(
            "An account with the email {:?} exists; change it with PATCH /api/v1/users/{{id}}.",
            b.email
        )));
    }
    let user = ensure_account(
        &state.pool,
        &Account {
            email: &b.email,
            name: b.name.as_deref(),
            role,
            password: b.password.as_deref(),
        },
        &auth.actor,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(UserView::from(&user))).into_response())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchUser {
    #[serde(default)]
    role: Option<String>,
    /// `true` disables the account and ends its sessions; `false` enables it again
    #[serde(default)]
    disabled: Option<bool>,
}

/// Change an account's role, or disable or enable it.
#[utoipa::path(patch, path = "/api/v1/users/{id}", operation_id = "updateUser", tag = "accounts", request_body = PatchUser,
    params(("id" = i64, Path, description = "Account id")),
    responses((status = 200, description = "OK", body = UserView), crate::http::openapi::AdminsOnly,
              crate::http::openapi::NotFound, (status = 409, description = "Would leave no admin", body = crate::error::ErrorBody)))]
pub async fn patch_user(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    body: ApiJson<PatchUser>,
) -> AppResult<Json<UserView>> {
    let id = parse_id(&id, "account")?;
    let b = body.value;
    let role = b
        .role
        .as_deref()
        .map(|r| UserRole::parse("role", r))
        .transpose()?;
    let user = change_user(&state, &auth.actor, auth.user.id, id, role, b.disabled).await?;
    Ok(Json(UserView::from(&user)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    /// What the token is for, e.g. "alert bridge"
    name: String,
    /// Whose token: yourself when left out; someone else needs the admin role
    #[serde(default)]
    email: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct NewToken {
    /// The secret, shown this once; only its hash is kept
    pub token: String,
    #[serde(flatten)]
    pub info: Token,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenList {
    pub items: Vec<Token>,
}

/// A new API token for yourself, or (admins) for anyone by email.
#[utoipa::path(post, path = "/api/v1/tokens", operation_id = "createToken", tag = "accounts", request_body = CreateToken,
    responses((status = 201, description = "Created; `token` is shown only now", body = NewToken), (status = 403, description = "Only admins make tokens for others", body = crate::error::ErrorBody),
              crate::http::openapi::Invalid))]
pub async fn create_token(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    body: ApiJson<CreateToken>,
) -> AppResult<Response> {
    let b = body.value;
    actions::check_name(&b.name)?;
    let owner = match b.email.as_deref() {
        None => auth.user.id,
        Some(email) if email.eq_ignore_ascii_case(&auth.user.email) => auth.user.id,
        Some(email) => {
            if !auth.user.role.allows(UserRole::Admin) {
                let refusal = audit::db::Refusal {
                    action: "access.denied",
                    route: "POST /api/v1/tokens",
                    target: email,
                };
                audit::db::refusal(&state.pool, &auth.actor, refusal).await?;
                return Err(AppError::Forbidden(
                    "Only admins make tokens for other people.".into(),
                ));
            }
            db::find_by_email(&state.pool, email)
                .await?
                .ok_or_else(|| {
                    AppError::invalid("email", format!("no account has the email {email:?}"))
                })?
                .id
        }
    };
    let (token, info) = actions::issue(&state.pool, &auth.actor, owner, &b.name).await?;
    Ok((StatusCode::CREATED, Json(NewToken { token, info })).into_response())
}

/// Your tokens; admins see everyone's.
#[utoipa::path(get, path = "/api/v1/tokens", operation_id = "listTokens", tag = "accounts",
    responses((status = 200, description = "OK", body = TokenList)))]
pub async fn list_tokens(
    ApiRequest(state, auth): ApiRequest<Viewer>,
) -> AppResult<Json<TokenList>> {
    let scope = (!auth.user.role.allows(UserRole::Admin)).then_some(auth.user.id);
    Ok(Json(TokenList {
        items: db::list_tokens(&state.pool, scope).await?,
    }))
}

/// Revoke a token: yours, or (admins) anyone's. It stops working at once.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", operation_id = "revokeToken", tag = "accounts",
    params(("id" = i64, Path, description = "Token id")),
    responses((status = 204, description = "Revoked"), crate::http::openapi::NotFound))]
pub async fn revoke_token(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(id): Path<String>,
) -> AppResult<StatusCode> {
    let id = parse_id(&id, "token")?;
    let owner = actions::revocable_by(&auth.user);
    actions::revoke(&state.pool, &auth.actor, owner, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
