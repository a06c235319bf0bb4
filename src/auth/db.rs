//! Accounts (people who can sign in), API tokens and the sign-in throttle.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgExecutor};

use super::domain::{CurrentUser, UserRole, delay_after};
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub handle: String,
    pub role: UserRole,
    pub password_hash: Option<String>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub session_epoch: i32,
    pub created_at: DateTime<Utc>,
}

struct UserRow {
    id: i64,
    name: String,
    email: String,
    handle: String,
    role: String,
    password_hash: Option<String>,
    disabled_at: Option<DateTime<Utc>>,
    session_epoch: i32,
    created_at: DateTime<Utc>,
}

impl TryFrom<UserRow> for User {
    type Error = AppError;
    fn try_from(r: UserRow) -> AppResult<Self> {
        Ok(Self {
            role: UserRole::parse("role", &r.role)
                .map_err(|e| AppError::Internal(format!("{e:?}")))?,
            id: r.id,
            name: r.name,
            email: r.email,
            handle: r.handle,
            password_hash: r.password_hash,
            disabled_at: r.disabled_at,
            session_epoch: r.session_epoch,
            created_at: r.created_at,
        })
    }
}

impl From<User> for CurrentUser {
    fn from(u: User) -> Self {
        Self {
            id: u.id,
            name: u.name,
            email: u.email,
            handle: u.handle,
            role: u.role,
        }
    }
}

pub async fn find_by_email(e: impl PgExecutor<'_>, email: &str) -> AppResult<Option<User>> {
    sqlx::query_as!(
        UserRow,
        r#"select id, name, email, handle, role, password_hash, disabled_at, session_epoch, created_at
           from people where lower(email) = lower($1)"#,
        email.trim()
    )
    .fetch_optional(e)
    .await?
    .map(User::try_from)
    .transpose()
}

pub async fn find_by_id(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<User>> {
    sqlx::query_as!(
        UserRow,
        r#"select id, name, email, handle, role, password_hash, disabled_at, session_epoch, created_at
           from people where id = $1"#,
        id
    )
    .fetch_optional(e)
    .await?
    .map(User::try_from)
    .transpose()
}

pub async fn list(e: impl PgExecutor<'_>) -> AppResult<Vec<User>> {
    sqlx::query_as!(
        UserRow,
        r#"select id, name, email, handle, role, password_hash, disabled_at, session_epoch, created_at
           from people order by name"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(User::try_from)
    .collect()
}

/// Sets role and password hash of an existing person (the person itself is made by
/// `people::db::insert`).
pub async fn set_account(
    e: impl PgExecutor<'_>,
    id: i64,
    role: UserRole,
    password_hash: Option<&str>,
) -> AppResult<()> {
    sqlx::query!(
        r#"update people set role = $2, password_hash = coalesce($3, password_hash),
               session_epoch = session_epoch + case when $3::text is null then 0 else 1 end
           where id = $1"#,
        id,
        role.as_str(),
        password_hash
    )
    .execute(e)
    .await?;
    Ok(())
}

/// A new password ends every other session of the person.
pub async fn set_password(e: impl PgExecutor<'_>, id: i64, password_hash: &str) -> AppResult<i32> {
    Ok(sqlx::query_scalar!(
        r#"update people set password_hash = $2, session_epoch = session_epoch + 1
           where id = $1 returning session_epoch"#,
        id,
        password_hash
    )
    .fetch_one(e)
    .await?)
}

pub async fn set_role(e: impl PgExecutor<'_>, id: i64, role: UserRole) -> AppResult<()> {
    sqlx::query!(
        "update people set role = $2 where id = $1",
        id,
        role.as_str()
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Disabling ends the person's sessions (their epoch moves on) and revokes their tokens for
/// good: enabling the person again brings neither back.
pub async fn set_disabled(e: impl PgExecutor<'_>, id: i64, disabled: bool) -> AppResult<()> {
    sqlx::query!(
        r#"with person as (
               update people
               set disabled_at = case when $2 then coalesce(disabled_at, now()) else null end,
                   session_epoch = session_epoch + case when $2 then 1 else 0 end
               where id = $1
               returning id)
           update api_tokens set revoked_at = now()
           where $2 and person_id in (select id from person) and revoked_at is null"#,
        id,
        disabled
    )
    .execute(e)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Token {
    pub id: i64,
    pub name: String,
    /// The token's first characters, to tell it apart
    pub prefix: String,
    /// Email of the person the token acts as
    pub owner: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

pub async fn insert_token(
    e: impl PgExecutor<'_>,
    person_id: i64,
    name: &str,
    hash: &[u8],
    prefix: &str,
) -> AppResult<Token> {
    Ok(sqlx::query_as!(
        Token,
        r#"with t as (
               insert into api_tokens (person_id, name, token_hash, prefix)
               values ($1, $2, $3, $4)
               returning id, person_id, name, prefix, created_at, last_used_at, revoked_at)
           select t.id, t.name, t.prefix, p.email as owner, t.created_at, t.last_used_at, t.revoked_at
           from t join people p on p.id = t.person_id"#,
        person_id,
        name,
        hash,
        prefix
    )
    .fetch_one(e)
    .await?)
}

/// Replaces the person's token named `name` (used by the bootstrap token).
pub async fn replace_token(
    e: impl PgExecutor<'_>,
    person_id: i64,
    name: &str,
    hash: &[u8],
    prefix: &str,
) -> AppResult<()> {
    sqlx::query!(
        r#"with gone as (
               update api_tokens set revoked_at = now()
               where person_id = $1 and name = $2 and revoked_at is null and token_hash <> $3)
           insert into api_tokens (person_id, name, token_hash, prefix)
           values ($1, $2, $3, $4)
           on conflict (token_hash) do update set revoked_at = null"#,
        person_id,
        name,
        hash,
        prefix
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The live token with this hash and its owner.
pub async fn token_owner(e: impl PgExecutor<'_>, hash: &[u8]) -> AppResult<Option<(i64, i64)>> {
    Ok(sqlx::query!(
        r#"select id, person_id from api_tokens where token_hash = $1 and revoked_at is null"#,
        hash
    )
    .fetch_optional(e)
    .await?
    .map(|r| (r.id, r.person_id)))
}

/// Notes a use, at most once a minute per token so busy scripts don't write on every request.
pub async fn touch_token(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        r#"update api_tokens set last_used_at = now()
           where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')"#,
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Tokens of one person, or of everyone when `person_id` is `None`.
pub async fn list_tokens(e: impl PgExecutor<'_>, person_id: Option<i64>) -> AppResult<Vec<Token>> {
    Ok(sqlx::query_as!(
        Token,
        r#"select t.id, t.name, t.prefix, p.email as owner, t.created_at, t.last_used_at, t.revoked_at
           from api_tokens t join people p on p.id = t.person_id
           where ($1::bigint is null or t.person_id = $1)
           order by t.created_at desc, t.id desc"#,
        person_id
    )
    .fetch_all(e)
    .await?)
}

pub async fn find_token(e: impl PgExecutor<'_>, id: i64) -> AppResult<Option<(Token, i64)>> {
    Ok(sqlx::query!(
        r#"select t.id, t.name, t.prefix, p.email as owner, t.created_at, t.last_used_at,
                  t.revoked_at, t.person_id
           from api_tokens t join people p on p.id = t.person_id where t.id = $1"#,
        id
    )
    .fetch_optional(e)
    .await?
    .map(|r| {
        (
            Token {
                id: r.id,
                name: r.name,
                prefix: r.prefix,
                owner: r.owner,
                created_at: r.created_at,
                last_used_at: r.last_used_at,
                revoked_at: r.revoked_at,
            },
            r.person_id,
        )
    }))
}

pub async fn revoke_token(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!(
        "update api_tokens set revoked_at = coalesce(revoked_at, now()) where id = $1",
        id
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Until when sign-ins under `key` are refused, if they are.
pub async fn blocked_until(e: impl PgExecutor<'_>, key: &str) -> AppResult<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        r#"select blocked_until from login_throttle where key = $1 and blocked_until > now()"#,
        key
    )
    .fetch_optional(e)
    .await?)
}

/// Counts a failure under `key` and blocks further attempts for the growing delay.
pub async fn record_failure(e: impl PgExecutor<'_>, key: &str) -> AppResult<i32> {
    // The delay is computed here from the new count; the database supplies the clock.
    let failures = sqlx::query_scalar!(
        r#"insert into login_throttle (key, failures, last_failure_at, blocked_until)
           values ($1, 1, now(), now())
           on conflict (key) do update
             set failures = case when login_throttle.last_failure_at < now() - interval '1 day'
                                 then 1 else login_throttle.failures + 1 end,
                 last_failure_at = now()
           returning failures"#,
        key
    )
    .fetch_one(e)
    .await?;
    Ok(failures)
}

pub async fn block(e: impl PgExecutor<'_>, key: &str, failures: i32) -> AppResult<()> {
    let secs = delay_after(failures).num_seconds() as f64;
    sqlx::query!(
        r#"update login_throttle set blocked_until = now() + make_interval(secs => $2)
           where key = $1"#,
        key,
        secs
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Forgets failures that no longer count: more than a day old (the next one starts again at
/// one) and no longer blocking.
pub async fn purge_stale_failures(e: impl PgExecutor<'_>) -> AppResult<u64> {
    Ok(sqlx::query!(
        r#"delete from login_throttle
           where last_failure_at < now() - interval '1 day' and blocked_until < now()"#
    )
    .execute(e)
    .await?
    .rows_affected())
}

pub async fn clear_failures(e: impl PgExecutor<'_>, key: &str) -> AppResult<()> {
    sqlx::query!("delete from login_throttle where key = $1", key)
        .execute(e)
        .await?;
    Ok(())
}

/// The shared secret named `name`: the stored one, or `fresh` stored now when there is none
/// (the first replica to ask makes it; the rest read it). When two ask at once, the loser's
/// statement cannot see the winner's row yet; its second look, a new statement, does.
pub async fn server_key(conn: &mut PgConnection, name: &str, fresh: &[u8]) -> AppResult<Vec<u8>> {
    let made = sqlx::query_scalar!(
        r#"with made as (
               insert into server_keys (name, key) values ($1, $2)
               on conflict (name) do nothing
               returning key)
           select key as "key!" from made
           union all
           select key from server_keys where name = $1
           limit 1"#,
        name,
        fresh
    )
    .fetch_optional(&mut *conn)
    .await?;
    match made {
        Some(key) => Ok(key),
        None => Ok(
            sqlx::query_scalar!("select key from server_keys where name = $1", name)
                .fetch_one(conn)
                .await?,
        ),
    }
}
