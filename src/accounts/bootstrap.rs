//! Accounts without a console: `QUELL_ADMIN_EMAIL` + `QUELL_ADMIN_PASSWORD` create or reset the
//! first admin at start, `QUELL_BOOTSTRAP_TOKEN` makes that admin's API token equal to a given
//! value, and `quell user create` does the same for anyone from the command line.

use sqlx::PgPool;

use crate::audit::{self, Actor};
use crate::auth::db::{self, User};
use crate::auth::domain::{UserRole, check_password, token_display_prefix, token_hash};
use crate::auth::password;
use crate::error::{AppError, AppResult};
use crate::people;

/// What to create or reset.
pub struct Account<'a> {
    pub email: &'a str,
    pub name: Option<&'a str>,
    pub role: UserRole,
    pub password: Option<&'a str>,
}

/// Creates the person with `role` and `password`, or, when the email exists, sets its role,
/// resets its password and enables it. Concurrent replicas starting with the same settings
/// serialise on an advisory lock.
pub async fn ensure_account(pool: &PgPool, a: &Account<'_>, actor: &Actor) -> AppResult<User> {
    crate::people::domain::check_email(a.email.trim())?;
    if let Some(p) = a.password {
        check_password("password", p)?;
    }
    let hash = match a.password {
        Some(p) => Some(password::hash(p.to_owned()).await?),
        None => None,
    };
    let mut tx = crate::transaction::begin(pool).await?;
    sqlx::query!("select pg_advisory_xact_lock(hashtext('quell.accounts'))")
        .execute(&mut *tx)
        .await?;
    let existing = db::find_by_email(&mut *tx, a.email).await?;
    let (id, action) = match existing {
        Some(u) => {
            db::set_account(&mut *tx, u.id, a.role, hash.as_deref()).await?;
            db::set_disabled(&mut *tx, u.id, false).await?;
            (u.id, "user.reset")
        }
        None => {
            let person = people::actions::add_for_email(&mut tx, a.name, a.email).await?;
            db::set_account(&mut *tx, person.id, a.role, hash.as_deref()).await?;
            (person.id, "user.create")
        }
    };
    let user = db::find_by_id(&mut *tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("account vanished".into()))?;
    audit::created(
        &mut tx,
        actor,
        action,
        &user.email,
        serde_json::json!({ "role": user.role, "handle": user.handle }),
    )
    .await?;
    tx.commit().await?;
    Ok(user)
}

/// Makes `token` (stored hashed) the `bootstrap` API token of `user`.
pub async fn set_bootstrap_token(pool: &PgPool, user: &User, token: &str) -> AppResult<()> {
    if token.len() < 20 {
        return Err(AppError::invalid(
            "QUELL_BOOTSTRAP_TOKEN",
            "use at least 20 random characters",
        ));
    }
    db::replace_token(
        pool,
        user.id,
        "bootstrap",
        &token_hash(token),
        &token_display_prefix(token),
    )
    .await
}

/// Applies `QUELL_ADMIN_EMAIL`, `QUELL_ADMIN_PASSWORD` and `QUELL_BOOTSTRAP_TOKEN`.
pub async fn from_settings(
    pool: &PgPool,
    email: Option<&str>,
    password: Option<&str>,
    token: Option<&str>,
) -> AppResult<()> {
    let Some(email) = email.filter(|e| !e.trim().is_empty()) else {
        if token.is_some() || password.is_some() {
            return Err(AppError::invalid(
                "QUELL_ADMIN_EMAIL",
                "set it too: the bootstrap password and token belong to that admin",
            ));
        }
        return Ok(());
    };
    let actor = Actor::system("bootstrap");
    // A restart (or another replica) with the same settings changes nothing: no reset, so the
    // admin's sessions survive it.
    let current = db::find_by_email(pool, email).await?;
    let unchanged = match (&current, password) {
        (Some(u), Some(p)) if u.role == UserRole::Admin && u.disabled_at.is_none() => {
            match &u.password_hash {
                Some(h) => password::verify(p.to_owned(), h.clone()).await?,
                None => false,
            }
        }
        (Some(u), None) => u.role == UserRole::Admin && u.disabled_at.is_none(),
        _ => false,
    };
    let admin = if let (true, Some(u)) = (unchanged, current) {
        u
    } else {
        ensure_account(
            pool,
            &Account {
                email,
                name: None,
                role: UserRole::Admin,
                password,
            },
            &actor,
        )
        .await?
    };
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        set_bootstrap_token(pool, &admin, token).await?;
    }
    tracing::info!(email = %admin.email, "bootstrap admin ready");
    Ok(())
}
