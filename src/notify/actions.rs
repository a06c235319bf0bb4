//! Adding and removing notification channels, audited; the API and the admin page share these.

use argon2::password_hash::rand_core::{OsRng, RngCore};
use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Channel};
use super::domain::{ChannelKind, check_url, secret_from_bytes};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

/// Adds a channel; a webhook gets a Standard Webhooks signing secret, returned this once.
pub async fn create_channel(
    conn: &mut PgConnection,
    actor: &Actor,
    name: &str,
    kind: &str,
    url: &str,
) -> AppResult<(Channel, Option<String>)> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::invalid("name", "1 to 100 characters"));
    }
    let kind = ChannelKind::parse(kind)?;
    let url = check_url(url)?;
    let secret = (kind == ChannelKind::Webhook).then(|| {
        let mut bytes = [0u8; 32];
        OsRng.fill_bytes(&mut bytes);
        secret_from_bytes(&bytes)
    });
    let channel =
        db::insert_channel(&mut *conn, name, kind.as_str(), &url, secret.as_deref()).await?;
    audit::record(
        conn,
        actor,
        "notification_channel.create",
        &channel.name,
        None,
        Some(json!({ "kind": channel.kind, "url": channel.url })),
    )
    .await?;
    Ok((channel, secret))
}

/// Removes channel `id` (its queued notifications go with it).
pub async fn delete_channel(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    if !db::delete_channel(&mut *conn, id).await? {
        return Err(AppError::NotFound(format!("There is no channel {id}.")));
    }
    audit::record(
        conn,
        actor,
        "notification_channel.delete",
        &id.to_string(),
        None,
        None,
    )
    .await
}
