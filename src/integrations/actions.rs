//! Changes to integrations, each with its audit record in the same transaction. New keys come
//! from the operating system's random source and are returned once; only their hashes stay.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{self, Integration, NewIntegration};
use super::domain::{Flapping, Format, OnAllResolved, check_name, key_from_bytes};
use crate::audit::{self, Actor};
use crate::auth::domain::token_hash;
use crate::error::{AppError, AppResult};

/// An integration with the secrets it was just given, shown this once.
pub struct WithSecrets {
    pub integration: Integration,
    pub key: String,
    pub signing_secret: Option<String>,
}

fn new_key() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    key_from_bytes(&bytes)
}

fn new_signing_secret() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    crate::notify::domain::secret_from_bytes(&bytes)
}

fn prefix(key: &str) -> String {
    key.chars().take(6).collect()
}

/// A new integration with `key` (given from a secret store, say) or, `None`, a key Quell makes.
pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    name: &str,
    format: &str,
    on_all_resolved: Option<&str>,
    flapping: Option<Flapping>,
    key: Option<&str>,
) -> AppResult<WithSecrets> {
    let key = match key {
        Some(k) => given_key(k)?,
        None => new_key(),
    };
    let name = check_name(name)?;
    let format = Format::parse(format)?;
    let on_all_resolved = match on_all_resolved {
        Some(v) => OnAllResolved::parse(v)?,
        None => OnAllResolved::Mitigate,
    };
    let flapping = flapping.unwrap_or_default().check()?;
    let made = Made {
        name: &name,
        format,
        on_all_resolved,
        flapping,
    };
    make(conn, actor, made, key).await
}

/// A key given rather than made: 16 to 200 visible characters, as other tools' keys are.
fn given_key(key: &str) -> AppResult<String> {
    let key = key.trim();
    if !(16..=200).contains(&key.len()) || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AppError::invalid(
            "key",
            "16 to 200 visible characters, as another tool's integration key is",
        ));
    }
    Ok(key.to_owned())
}

/// An integration keeping the key another tool gave its senders (an import from PagerDuty
/// keeps each Events API v2 integration's key, so its senders need no change).
pub async fn adopt(
    conn: &mut PgConnection,
    actor: &Actor,
    name: &str,
    format: &str,
    key: &str,
) -> AppResult<WithSecrets> {
    let name = check_name(name)?;
    let format = Format::parse(format)?;
    let key = given_key(key)?;
    let made = Made {
        name: &name,
        format,
        on_all_resolved: OnAllResolved::Mitigate,
        flapping: Flapping::default().check()?,
    };
    make(conn, actor, made, key).await
}

struct Made<'a> {
    name: &'a str,
    format: Format,
    on_all_resolved: OnAllResolved,
    flapping: Flapping,
}

async fn make(
    conn: &mut PgConnection,
    actor: &Actor,
    Made {
        name,
        format,
        on_all_resolved,
        flapping,
    }: Made<'_>,
    key: String,
) -> AppResult<WithSecrets> {
    let signing_secret = (format == Format::Generic).then(new_signing_secret);
    let integration = db::insert(
        &mut *conn,
        &NewIntegration {
            name,
            format,
            key_hash: &token_hash(&key),
            key_prefix: &prefix(&key),
            signing_secret: signing_secret.as_deref(),
            on_all_resolved,
            flapping,
        },
    )
    .await?;
    audit::created(
        conn,
        actor,
        "integration.create",
        &integration.name,
        &integration,
    )
    .await?;
    Ok(WithSecrets {
        integration,
        key,
        signing_secret,
    })
}

/// A new key (and signing secret); the old ones stop working at commit.
pub async fn rotate(conn: &mut PgConnection, actor: &Actor, id: Uuid) -> AppResult<WithSecrets> {
    rekey(conn, actor, id, None).await
}

/// [`rotate`] to a key given (from a secret store, say), keeping the signing secret its senders
/// sign with; `None` makes a key and a signing secret, as [`rotate`] does.
pub async fn rekey(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    key: Option<&str>,
) -> AppResult<WithSecrets> {
    let given = key.is_some();
    let key = match key {
        Some(k) => given_key(k)?,
        None => new_key(),
    };
    let before = db::get(&mut *conn, id).await?;
    let signing_secret = (before.signed && !given).then(new_signing_secret);
    let integration = db::rotate(
        &mut *conn,
        id,
        &token_hash(&key),
        &prefix(&key),
        signing_secret.as_deref(),
    )
    .await?;
    audit::changed(
        conn,
        actor,
        "integration.rotate_key",
        &integration.name,
        json!({ "key_prefix": before.key_prefix }),
        json!({ "key_prefix": integration.key_prefix }),
    )
    .await?;
    Ok(WithSecrets {
        integration,
        key,
        signing_secret,
    })
}

/// Fields left `None` keep their value.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    name: Option<&str>,
    enabled: Option<bool>,
    on_all_resolved: Option<&str>,
    flapping: Option<Flapping>,
) -> AppResult<Integration> {
    let before = db::get(&mut *conn, id).await?;
    let name = match name {
        Some(n) => check_name(n)?,
        None => before.name.clone(),
    };
    let on_all_resolved = match on_all_resolved {
        Some(v) => OnAllResolved::parse(v)?,
        None => before.on_all_resolved,
    };
    let flapping = flapping.unwrap_or(before.flapping).check()?;
    let settings = db::Settings {
        name: &name,
        enabled: enabled.unwrap_or(before.enabled),
        on_all_resolved,
        flapping,
    };
    let after = db::update(&mut *conn, id, &settings).await?;
    audit::changed(
        conn,
        actor,
        "integration.update",
        &after.name,
        &before,
        &after,
    )
    .await?;
    Ok(after)
}
