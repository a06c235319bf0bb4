//! Sign-in, sign-out, your account (password, tokens), and the admins' user management page.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use tokio::sync::OnceCell;
use tower_sessions::Session;

use super::actions::{self as tokens, change_user};
use super::bootstrap::{Account, ensure_account};
use crate::audit::{self, Actor};
use crate::auth::db::{self, Token, User};
use crate::auth::domain::{UserRole, check_password, safe_next, throttle_key, wait_left};
use crate::auth::{login_token, password, session};
use crate::clock;
use crate::error::{AppError, FieldError};
use crate::http::access::{Admin, Auth, RequestActor, Viewer};
use crate::http::extract::{PageForm, SignInForm};
use crate::http::page::Chrome;
use crate::http::page::{PageError, PageResult};
use crate::http::request::{ApiRequest, PageRequest};
use crate::people::domain::Preferences;
use crate::state::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "auth/login.html")]
pub struct LoginPage {
    chrome: Chrome,
    /// Whether single sign-on is offered.
    sso: bool,
    email: String,
    next: String,
    error: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct NextQuery {
    next: Option<String>,
}

pub async fn login_form(
    State(state): State<AppState>,
    chrome: Chrome,
    Query(q): Query<NextQuery>,
) -> PageResult<Response> {
    let page = LoginPage {
        chrome,
        sso: state.config.oidc.is_some(),
        email: String::new(),
        next: safe_next(q.next.as_deref()),
        error: None,
    };
    show_login(&state, StatusCode::OK, page).await
}

/// The sign-in page with a fresh form token, which its cookie carries too.
async fn show_login(
    state: &AppState,
    status: StatusCode,
    mut page: LoginPage,
) -> PageResult<Response> {
    let (token, cookie) = login_token::issue(state).await?;
    page.chrome.csrf = token;
    let mut res = (status, page).into_response();
    let cookie = HeaderValue::from_str(&cookie)
        .map_err(|e| AppError::Internal(format!("sign-in cookie: {e}")))?;
    res.headers_mut().append(SET_COOKIE, cookie);
    Ok(res)
}

#[derive(Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: Option<String>,
}

/// A hash nobody's password matches, verified when the email is unknown so that a wrong email
/// costs as long as a wrong password.
static DECOY: OnceCell<String> = OnceCell::const_new();

/// Signs in by email and password. Failures are counted per account and per client address;
/// past a few, further attempts wait a delay that doubles with each failure.
pub async fn login(
    State(state): State<AppState>,
    session: Session,
    RequestActor(actor): RequestActor,
    SignInForm(f): SignInForm<LoginForm>,
) -> PageResult<Response> {
    let next = safe_next(f.next.as_deref());
    let account_key = throttle_key("account", &f.email.trim().to_lowercase());
    let addr_key = throttle_key("addr", actor.client_addr.as_deref().unwrap_or("unknown"));
    let again = async |status: StatusCode, error: String| -> PageResult<Response> {
        let page = LoginPage {
            chrome: Chrome::default(),
            sso: state.config.oidc.is_some(),
            email: f.email.clone(),
            next: next.clone(),
            error: Some(error),
        };
        show_login(&state, status, page).await
    };

    // A refused sign-in, tallied under the email typed (kept in the first row of its minute).
    let refused = async |action: &str| {
        let refusal = audit::db::Refusal {
            action,
            route: "POST /login",
            target: f.email.trim(),
        };
        audit::db::refusal(&state.pool, &actor, refusal).await
    };
    let now = clock::now(&state.pool).await?;
    for key in [&account_key, &addr_key] {
        if let Some(until) = db::blocked_until(&state.pool, key).await?
            && let Some(secs) = wait_left(until, now)
        {
            refused("login.throttled").await?;
            return again(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many failed sign-ins. Wait {secs} s and try again."),
            )
            .await;
        }
    }

    let user = db::find_by_email(&state.pool, &f.email).await?;
    let usable = user.as_ref().filter(|u| u.disabled_at.is_none());
    let hash = match usable.and_then(|u| u.password_hash.clone()) {
        Some(h) => h,
        None => DECOY.get_or_try_init(password::decoy).await?.clone(),
    };
    let matches = password::verify(f.password.clone(), hash).await?
        && usable.is_some_and(|u| u.password_hash.is_some());

    let Some(user) = usable.filter(|_| matches) else {
        let mut tx = crate::transaction::begin(&state.pool).await?;
        for key in [&account_key, &addr_key] {
            let failures = db::record_failure(&mut *tx, key).await?;
            db::block(&mut *tx, key, failures).await?;
        }
        tx.commit().await?;
        refused("login.failed").await?;
        return again(
            StatusCode::UNAUTHORIZED,
            "The email or the password is wrong.".into(),
        )
        .await;
    };

    db::clear_failures(&state.pool, &account_key).await?;
    db::clear_failures(&state.pool, &addr_key).await?;
    session::sign_in(&session, user).await?;
    let actor = Actor {
        person_id: Some(user.id),
        name: user.name.clone(),
        ..actor
    };
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(audit::record(tx, &actor, "login", &user.email, None, None))
    })
    .await?;
    Ok(Redirect::to(&next).into_response())
}

#[derive(Deserialize)]
pub struct Empty {}

pub async fn logout(session: Session, PageForm(_): PageForm<Empty>) -> PageResult<Redirect> {
    session::sign_out(&session).await?;
    Ok(Redirect::to("/login"))
}

#[derive(Template, WebTemplate)]
#[template(path = "auth/account.html")]
pub struct AccountPage {
    chrome: Chrome,
    me: User,
    tokens: Vec<Token>,
    errors: Vec<FieldError>,
    notice: Option<String>,
    /// A token just made, shown this once.
    new_token: Option<String>,
    /// Your preferences as stored, or as the refused form typed them
    prefs: PrefsForm,
}

/// The preferences form: time zone, hand-off notices, reminder hours (blank: none).
#[derive(Deserialize, Clone, Default)]
pub struct PrefsForm {
    #[serde(default)]
    time_zone: String,
    /// A checkbox: present when ticked
    #[serde(default)]
    handoff_notices: Option<String>,
    #[serde(default)]
    handoff_reminder_hours: String,
}

impl PrefsForm {
    fn of(p: &Preferences) -> Self {
        Self {
            time_zone: p.time_zone.clone(),
            handoff_notices: p.handoff_notices.then(|| "on".to_owned()),
            handoff_reminder_hours: p
                .handoff_reminder_hours
                .map(|h| h.to_string())
                .unwrap_or_default(),
        }
    }

    /// What the form asks for, or the field that cannot be read.
    fn asked(&self) -> Result<Preferences, FieldError> {
        let hours = self.handoff_reminder_hours.trim();
        let handoff_reminder_hours = if hours.is_empty() {
            None
        } else {
            Some(hours.parse().map_err(|_| FieldError {
                field: "handoff_reminder_hours".into(),
                message: format!("{hours:?} is not a whole number of hours"),
            })?)
        };
        Ok(Preferences {
            time_zone: self.time_zone.clone(),
            handoff_notices: self.handoff_notices.is_some(),
            handoff_reminder_hours,
        })
    }

    /// The zones offered to choose from.
    fn zones(&self) -> impl Iterator<Item = &'static str> {
        chrono_tz::TZ_VARIANTS.iter().map(|z| z.name())
    }
}

async fn account_page(
    state: &AppState,
    chrome: Chrome,
    id: i64,
    errors: Vec<FieldError>,
    notice: Option<String>,
) -> Result<AccountPage, AppError> {
    let me = db::find_by_id(&state.pool, id)
        .await?
        .ok_or_else(|| AppError::NotFound("Your account no longer exists.".into()))?;
    let tokens = db::list_tokens(&state.pool, Some(id)).await?;
    let prefs = PrefsForm::of(&crate::people::db::preferences(&state.pool, id).await?);
    Ok(AccountPage {
        chrome,
        me,
        tokens,
        errors,
        notice,
        new_token: None,
        prefs,
    })
}

/// Changes your time zone and hand-off notices; refused, the form comes back as typed, naming
/// the field.
pub async fn change_preferences(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    PageForm(f): PageForm<PrefsForm>,
) -> PageResult<Response> {
    let refused = |errors: Vec<FieldError>| async {
        let mut page = account_page(&state, chrome.clone(), auth.user.id, errors, None).await?;
        page.prefs = f.clone();
        Ok::<_, PageError>((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
    };
    let asked = match f.asked() {
        Ok(asked) => asked,
        Err(e) => return refused(vec![e]).await,
    };
    let me = auth.user.id;
    let saved =
        crate::people::actions::save_preferences(&state.pool, &auth.actor, me, &asked).await;
    match saved {
        Ok(_) => {
            let notice = Some("Preferences saved.".to_owned());
            Ok(account_page(&state, chrome, me, vec![], notice)
                .await?
                .into_response())
        }
        Err(AppError::Validation(errors)) => refused(errors).await,
        Err(other) => Err(PageError(other)),
    }
}

#[derive(Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    name: String,
}

/// Makes an API token for yourself; the page shows its secret this once.
pub async fn create_token(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    PageForm(f): PageForm<TokenForm>,
) -> PageResult<Response> {
    match tokens::issue(&state.pool, &auth.actor, auth.user.id, &f.name).await {
        Ok((token, info)) => {
            let notice = format!(
                "Token {:?} made. Copy it now: it is not shown again.",
                info.name
            );
            let mut page = account_page(&state, chrome, auth.user.id, vec![], Some(notice)).await?;
            page.new_token = Some(token);
            Ok(page.into_response())
        }
        Err(AppError::Validation(errors)) => {
            let page = account_page(&state, chrome, auth.user.id, errors, None).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}

/// Revokes one of your API tokens.
pub async fn revoke_token(
    ApiRequest(state, auth): ApiRequest<Viewer>,
    Path(id): Path<String>,
    PageForm(_): PageForm<Empty>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "token")?;
    // The account page lists your own tokens only, admins' included.
    tokens::revoke(&state.pool, &auth.actor, Some(auth.user.id), id).await?;
    Ok(Redirect::to("/account"))
}

pub async fn account(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
) -> PageResult<AccountPage> {
    Ok(account_page(&state, chrome, auth.user.id, vec![], None).await?)
}

#[derive(Deserialize)]
pub struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
    #[serde(default)]
    confirm: String,
}

/// Changes your password; every other session of yours ends, this one stays.
pub async fn change_password(
    State(state): State<AppState>,
    chrome: Chrome,
    session: Session,
    auth: Auth<Viewer>,
    PageForm(f): PageForm<PasswordForm>,
) -> PageResult<Response> {
    let me = db::find_by_id(&state.pool, auth.user.id)
        .await?
        .ok_or_else(|| AppError::NotFound("Your account no longer exists.".into()))?;
    let problem = async {
        let ok = match me.password_hash.clone() {
            Some(h) => password::verify(f.current.clone(), h).await?,
            None => false,
        };
        if !ok {
            return Ok::<_, AppError>(Some(FieldError {
                field: "current".into(),
                message: "that is not your current password".into(),
            }));
        }
        if let Err(crate::domain::DomainError::Invalid { field, message }) =
            check_password("new", &f.new)
        {
            return Ok(Some(FieldError { field, message }));
        }
        if f.new != f.confirm {
            return Ok(Some(FieldError {
                field: "confirm".into(),
                message: "the two new passwords differ".into(),
            }));
        }
        Ok(None)
    }
    .await?;
    if let Some(err) = problem {
        let page = account_page(&state, chrome, me.id, vec![err], None).await?;
        return Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response());
    }
    let hash = password::hash(f.new.clone()).await?;
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let epoch = db::set_password(&mut *tx, me.id, &hash).await?;
    audit::record(
        &mut tx,
        &auth.actor,
        "user.password_changed",
        &me.email,
        None,
        None,
    )
    .await?;
    tx.commit().await?;
    session::follow_epoch(&session, epoch).await?;
    let page = account_page(
        &state,
        chrome,
        me.id,
        vec![],
        Some("Password changed. Your other sessions have ended.".into()),
    )
    .await?;
    Ok(page.into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/users.html")]
pub struct UsersPage {
    chrome: Chrome,
    users: Vec<User>,
    roles: [UserRole; 4],
    form: NewUserForm,
    errors: Vec<FieldError>,
}

impl UsersPage {
    /// Whether `id` is the signed-in admin, who may not disable themselves.
    fn is_me(&self, id: &i64) -> bool {
        self.chrome.user.as_ref().is_some_and(|u| u.id == *id)
    }
}

#[derive(Deserialize, Default, Clone)]
pub struct NewUserForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    password: String,
}

async fn users_page(
    state: &AppState,
    chrome: Chrome,
    form: NewUserForm,
    errors: Vec<FieldError>,
) -> Result<UsersPage, AppError> {
    Ok(UsersPage {
        chrome,
        users: db::list(&state.pool).await?,
        roles: UserRole::ALL,
        form,
        errors,
    })
}

pub async fn users(PageRequest(state, chrome, _): PageRequest<Admin>) -> PageResult<UsersPage> {
    let form = NewUserForm {
        role: "responder".into(),
        ..Default::default()
    };
    Ok(users_page(&state, chrome, form, vec![]).await?)
}

pub async fn create_user(
    PageRequest(state, chrome, auth): PageRequest<Admin>,
    PageForm(f): PageForm<NewUserForm>,
) -> PageResult<Response> {
    let result = async {
        let role = UserRole::parse("role", &f.role)?;
        if db::find_by_email(&state.pool, &f.email).await?.is_some() {
            return Err(AppError::invalid(
                "email",
                "an account with this email exists",
            ));
        }
        let password = Some(f.password.as_str()).filter(|p| !p.is_empty());
        let name = Some(f.name.trim()).filter(|n| !n.is_empty());
        ensure_account(
            &state.pool,
            &Account {
                email: f.email.trim(),
                name,
                role,
                password,
            },
            &auth.actor,
        )
        .await
    }
    .await;
    match result {
        Ok(_) => Ok(Redirect::to("/admin/users").into_response()),
        Err(AppError::Validation(errors)) => {
            let page = users_page(
                &state,
                chrome,
                NewUserForm {
                    password: String::new(),
                    ..f
                },
                errors,
            )
            .await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(other) => Err(PageError(other)),
    }
}

#[derive(Deserialize)]
pub struct ChangeUserForm {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    disabled: Option<String>,
}

pub async fn update_user(
    ApiRequest(state, auth): ApiRequest<Admin>,
    Path(id): Path<String>,
    PageForm(f): PageForm<ChangeUserForm>,
) -> PageResult<Redirect> {
    let id = crate::http::extract::parse_id(&id, "account")?;
    let role = f
        .role
        .as_deref()
        .map(|r| UserRole::parse("role", r))
        .transpose()?;
    let disabled = match f.disabled.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(
                AppError::invalid("disabled", format!("{other:?} is not true or false")).into(),
            );
        }
    };
    change_user(&state, &auth.actor, auth.user.id, id, role, disabled).await?;
    Ok(Redirect::to("/admin/users"))
}
