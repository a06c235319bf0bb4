//! Browser sessions: tower-sessions on a PostgreSQL store (so every replica sees every
//! session), HttpOnly and SameSite=Lax cookies, `Secure` and a `__Host-` name behind https, an
//! idle timeout, an absolute timeout, a fresh id at sign-in, and a per-session CSRF token.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, Session, SessionManagerLayer};

use super::db::{self, User};
use super::domain::constant_time_eq;
use super::session_store::PgSessionStore;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// A session ends after this long without a request…
pub const IDLE_TIMEOUT_HOURS: i64 = 12;
/// …and this long after sign-in, whatever happens.
pub const ABSOLUTE_TIMEOUT_HOURS: i64 = 7 * 24;

const SIGNED_IN: &str = "signed_in";
const CSRF: &str = "csrf";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SignedIn {
    user_id: i64,
    /// The person's session epoch at sign-in: a password change or a disable moves it on.
    epoch: i32,
    /// Unix seconds.
    at: i64,
}

fn session_error(e: tower_sessions::session::Error) -> AppError {
    match &e {
        tower_sessions::session::Error::Store(tower_sessions::session_store::Error::Backend(m))
            if m.starts_with(super::session_store::UNAVAILABLE) =>
        {
            AppError::Unavailable
        }
        _ => AppError::Internal(format!("session: {e}")),
    }
}

/// The session layer for the pages.
pub fn layer(state: &AppState) -> SessionManagerLayer<PgSessionStore> {
    let store = PgSessionStore::new(state.pool.clone());
    let https = state.config.base_url.starts_with("https://");
    SessionManagerLayer::new(store)
        .with_name(if https { "__Host-quell" } else { "quell" })
        .with_secure(https)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(
            IDLE_TIMEOUT_HOURS,
        )))
}

fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The session's CSRF token, made on first use.
pub async fn csrf_token(session: &Session) -> AppResult<String> {
    if let Some(t) = session.get::<String>(CSRF).await.map_err(session_error)? {
        return Ok(t);
    }
    let t = random_hex();
    session.insert(CSRF, &t).await.map_err(session_error)?;
    Ok(t)
}

/// Whether `given` is this session's CSRF token.
pub async fn csrf_matches(session: &Session, given: &str) -> AppResult<bool> {
    Ok(
        match session.get::<String>(CSRF).await.map_err(session_error)? {
            Some(expected) => constant_time_eq(expected.as_bytes(), given.as_bytes()),
            None => false,
        },
    )
}

/// Signs `user` in: a new session id (against fixation) and a new CSRF token.
pub async fn sign_in(session: &Session, user: &User) -> AppResult<()> {
    session.cycle_id().await.map_err(session_error)?;
    session
        .insert(
            SIGNED_IN,
            SignedIn {
                user_id: user.id,
                epoch: user.session_epoch,
                at: Utc::now().timestamp(),
            },
        )
        .await
        .map_err(session_error)?;
    session
        .insert(CSRF, random_hex())
        .await
        .map_err(session_error)?;
    Ok(())
}

/// Keeps this session signed in after the person's own password change moved the epoch on.
pub async fn follow_epoch(session: &Session, epoch: i32) -> AppResult<()> {
    if let Some(mut s) = session
        .get::<SignedIn>(SIGNED_IN)
        .await
        .map_err(session_error)?
    {
        s.epoch = epoch;
        session.insert(SIGNED_IN, s).await.map_err(session_error)?;
    }
    Ok(())
}

/// Ends the session: its row is deleted and the cookie cleared.
pub async fn sign_out(session: &Session) -> AppResult<()> {
    session.flush().await.map_err(session_error)
}

/// The person signed in to this session, if the session is still good: the person exists, is
/// not disabled, has not changed password or been disabled since, and the absolute timeout has
/// not passed. A session that fails any of these is ended.
pub async fn current_user(state: &AppState, session: &Session) -> AppResult<Option<User>> {
    let Some(signed) = session
        .get::<SignedIn>(SIGNED_IN)
        .await
        .map_err(session_error)?
    else {
        return Ok(None);
    };
    let user = db::find_by_id(&state.pool, signed.user_id).await?;
    let expired = Utc::now().timestamp() - signed.at > ABSOLUTE_TIMEOUT_HOURS * 3600;
    match user {
        Some(u) if u.disabled_at.is_none() && u.session_epoch == signed.epoch && !expired => {
            Ok(Some(u))
        }
        _ => {
            sign_out(session).await?;
            Ok(None)
        }
    }
}
