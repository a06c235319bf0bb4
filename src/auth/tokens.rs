//! Issuing and revoking API tokens: one transaction step each, audited, shared by the API
//! (`/api/v1/tokens`) and the account page.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde_json::json;
use sqlx::PgPool;

use super::CurrentUser;
use super::db::{self, Token};
use super::domain::{UserRole, token_display_prefix, token_from_bytes, token_hash};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

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
    let mut tx = pool.begin().await?;
    let info = db::insert_token(
        &mut *tx,
        owner,
        name,
        &token_hash(&token),
        &token_display_prefix(&token),
    )
    .await?;
    audit::record(
        &mut tx,
        actor,
        "token.create",
        &info.owner,
        None,
        Some(json!({ "id": info.id, "name": info.name })),
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
    let mut tx = pool.begin().await?;
    db::revoke_token(&mut *tx, id).await?;
    audit::record(
        &mut tx,
        actor,
        "token.revoke",
        &token.owner,
        Some(json!({ "id": id, "owner_id": owner })),
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
