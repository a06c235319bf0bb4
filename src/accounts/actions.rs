//! What changes accounts, one audited transaction step each, shared by the API and the pages:
//! an admin's change of a person's role or state, and issuing and revoking API tokens.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde_json::json;
use sqlx::PgPool;

use crate::audit::{self, Actor};
use crate::auth::CurrentUser;
use crate::auth::db::{self, Token, User};
use crate::auth::domain::{UserRole, token_display_prefix, token_from_bytes, token_hash};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// A token's name: 1 to 100 characters once trimmed.
pub fn check_name(name: &str) -> AppResult<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::invalid(
            "name",
            "name the token in 1 to 100 characters",
        ));
    }
    Ok(name)
}

/// Makes a token for `owner`; the secret is returned this once and only its hash is kept.
pub async fn issue(
    pool: &PgPool,
    actor: &Actor,
    owner: i64,
    name: &str,
) -> AppResult<(String, Token)> {
    let name = check_name(name)?;
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let token = token_from_bytes(&bytes);
    let mut tx = crate::transaction::begin(pool).await?;
    let info = db::insert_token(
        &mut *tx,
        owner,
        name,
        &token_hash(&token),
        &token_display_prefix(&token),
    )
    .await?;
    audit::created(
        &mut tx,
        actor,
        "token.create",
        &info.owner,
        json!({ "id": info.id, "name": info.name }),
    )
    .await?;
    tx.commit().await?;
    Ok((token, info))
}

/// Whose tokens a person may revoke: their own, or (admins) anyone's.
pub fn revocable_by(who: &CurrentUser) -> Option<i64> {
    (!who.role.allows(UserRole::Admin)).then_some(who.id)
}

/// Revokes token `id` — only if it belongs to `owner`, when given; it stops working at once.
/// Someone else's token is "not found": its existence is not theirs to learn.
pub async fn revoke(pool: &PgPool, actor: &Actor, owner: Option<i64>, id: i64) -> AppResult<()> {
    let found = db::find_token(pool, id).await?;
    let Some((token, owner)) = found.filter(|(_, o)| owner.is_none_or(|want| *o == want)) else {
        return Err(AppError::NotFound(format!("You have no token {id}.")));
    };
    let mut tx = crate::transaction::begin(pool).await?;
    db::revoke_token(&mut *tx, id).await?;
    audit::deleted(
        &mut tx,
        actor,
        "token.revoke",
        &token.owner,
        json!({ "id": id, "owner_id": owner }),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Shared by the API and the admin page: one transaction, audited. An admin cannot demote or
/// disable themselves, so an instance always keeps an admin.
pub async fn change_user(
    state: &AppState,
    actor: &audit::Actor,
    self_id: i64,
    id: i64,
    role: Option<UserRole>,
    disabled: Option<bool>,
) -> AppResult<User> {
    let mut tx = crate::transaction::begin(&state.pool).await?;
    let before = db::find_by_id(&mut *tx, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no account {id}.")))?;
    if id == self_id && (role.is_some_and(|r| r != UserRole::Admin) || disabled == Some(true)) {
        return Err(AppError::Conflict(
            "You cannot demote or disable yourself; ask another admin.".into(),
        ));
    }
    if let Some(role) = role {
        db::set_role(&mut *tx, id, role).await?;
    }
    if let Some(disabled) = disabled {
        db::set_disabled(&mut *tx, id, disabled).await?;
    }
    let after = db::find_by_id(&mut *tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("account vanished".into()))?;
    audit::changed(
        &mut tx,
        actor,
        "user.update",
        &after.email,
        json!({ "role": before.role, "disabled": before.disabled_at.is_some() }),
        json!({ "role": after.role, "disabled": after.disabled_at.is_some() }),
    )
    .await?;
    tx.commit().await?;
    Ok(after)
}
