//! CSRF protection for the sign-in form without a session: a signed double-submit cookie. The
//! sign-in page sets a cookie holding a random nonce and its HMAC under a key every replica
//! shares (`server_keys`), and puts the same token in the form; a sign-in is taken only when the
//! two agree and the signature holds. Nothing is stored for the anonymous visitor, so a flood of
//! `GET /login` adds no rows. The session (and its own CSRF token) begins at sign-in.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::db;
use super::domain::constant_time_eq;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// How long a sign-in page stays usable, in seconds.
const MAX_AGE_SECS: i64 = 3600;

/// The cookie's name: `__Host-` bound to this origin behind https.
fn cookie_name(state: &AppState) -> &'static str {
    if secure(state) {
        "__Host-quell_login"
    } else {
        "quell_login"
    }
}

fn secure(state: &AppState) -> bool {
    state.config.base_url.starts_with("https://")
}

async fn key(state: &AppState) -> AppResult<&[u8; 32]> {
    state
        .login_key
        .get_or_try_init(|| async {
            let mut fresh = [0u8; 32];
            OsRng.fill_bytes(&mut fresh);
            let mut conn = state.pool.acquire().await?;
            let stored = db::server_key(&mut conn, "login_csrf", &fresh).await?;
            <[u8; 32]>::try_from(stored.as_slice())
                .map_err(|_| AppError::Internal("server key login_csrf is not 32 bytes".into()))
        })
        .await
}

fn signature(key: &[u8; 32], nonce: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(b"quell sign-in form\0");
    mac.update(nonce.as_bytes());
    hex(&mac.finalize().into_bytes())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh token for a sign-in page, and the `Set-Cookie` value that carries it.
pub async fn issue(state: &AppState) -> AppResult<(String, String)> {
    let mut nonce = [0u8; 16];
    OsRng.fill_bytes(&mut nonce);
    let nonce = hex(&nonce);
    let token = format!("{nonce}.{}", signature(key(state).await?, &nonce));
    let cookie = format!(
        "{}={token}; Path=/; Max-Age={MAX_AGE_SECS}; HttpOnly; SameSite=Lax{}",
        cookie_name(state),
        if secure(state) { "; Secure" } else { "" }
    );
    Ok((token, cookie))
}

/// Whether the form's token is the one in the cookie, and Quell signed it.
pub async fn matches(state: &AppState, headers: &HeaderMap, given: &str) -> AppResult<bool> {
    let name = cookie_name(state);
    let in_cookie = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned());
    let Some(in_cookie) = in_cookie else {
        return Ok(false);
    };
    if !constant_time_eq(in_cookie.as_bytes(), given.as_bytes()) {
        return Ok(false);
    }
    let Some((nonce, sig)) = given.split_once('.') else {
        return Ok(false);
    };
    let expected = signature(key(state).await?, nonce);
    Ok(constant_time_eq(expected.as_bytes(), sig.as_bytes()))
}
