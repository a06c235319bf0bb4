//! Queries on the audit log and the tally of refused attempts.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor, PgPool};

use super::domain::Actor;
use crate::error::{AppError, AppResult};

pub async fn append(
    e: impl PgExecutor<'_>,
    actor: &Actor,
    action: &str,
    target: &str,
    outcome: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> AppResult<i64> {
    Ok(sqlx::query_scalar!(
        r#"insert into audit_log
               (actor_id, actor, action, target, outcome, before, after, request_id, client_addr)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           returning id"#,
        actor.person_id,
        actor.name,
        action,
        target,
        outcome,
        before,
        after,
        actor.request_id,
        actor.client_addr,
    )
    .fetch_one(e)
    .await?)
}

/// One successful change, for [`record_many`].
pub struct Change<'a> {
    pub actor: &'a Actor,
    pub action: &'a str,
    pub target: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Appends several successful changes in one statement (a batch of incidents opened by
/// alerts), in their order.
pub async fn record_many(e: impl PgExecutor<'_>, changes: &[Change<'_>]) -> AppResult<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let actor_id: Vec<Option<i64>> = changes.iter().map(|c| c.actor.person_id).collect();
    let actor: Vec<&str> = changes.iter().map(|c| c.actor.name.as_str()).collect();
    let action: Vec<&str> = changes.iter().map(|c| c.action).collect();
    let target: Vec<&str> = changes.iter().map(|c| c.target.as_str()).collect();
    let before: Vec<Option<&Value>> = changes.iter().map(|c| c.before.as_ref()).collect();
    let after: Vec<Option<&Value>> = changes.iter().map(|c| c.after.as_ref()).collect();
    let request_id: Vec<Option<&str>> = changes
        .iter()
        .map(|c| c.actor.request_id.as_deref())
        .collect();
    let client_addr: Vec<Option<&str>> = changes
        .iter()
        .map(|c| c.actor.client_addr.as_deref())
        .collect();
    sqlx::query!(
        r#"insert into audit_log
               (actor_id, actor, action, target, outcome, before, after, request_id, client_addr)
           select i, a, x, t, 'ok', b, f, r, c
           from unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[],
                       $7::text[], $8::text[]) with ordinality as e(i, a, x, t, b, f, r, c, n)
           order by n"#,
        &actor_id as &[Option<i64>],
        &actor as &[&str],
        &action as &[&str],
        &target as &[&str],
        &before as &[Option<&Value>],
        &after as &[Option<&Value>],
        &request_id as &[Option<&str>],
        &client_addr as &[Option<&str>],
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Appends a successful change to the audit log.
pub async fn record(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    target: &str,
    before: Option<Value>,
    after: Option<Value>,
) -> AppResult<()> {
    append(conn, actor, action, target, "ok", before, after).await?;
    Ok(())
}

/// Appends the creation of `target`, as it was made.
pub async fn created(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    target: &str,
    after: impl serde::Serialize,
) -> AppResult<()> {
    record(conn, actor, action, target, None, Some(json_of(after)?)).await
}

/// Appends a change of `target`, as it was before and after.
pub async fn changed(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    target: &str,
    before: impl serde::Serialize,
    after: impl serde::Serialize,
) -> AppResult<()> {
    let (before, after) = (json_of(before)?, json_of(after)?);
    record(conn, actor, action, target, Some(before), Some(after)).await
}

/// Appends the deletion of `target`, as it was.
pub async fn deleted(
    conn: &mut PgConnection,
    actor: &Actor,
    action: &str,
    target: &str,
    before: impl serde::Serialize,
) -> AppResult<()> {
    record(conn, actor, action, target, Some(json_of(before)?), None).await
}

fn json_of(value: impl serde::Serialize) -> AppResult<Value> {
    serde_json::to_value(value)
        .map_err(|e| crate::error::AppError::Internal(format!("an audit record: {e}")))
}

/// A refused attempt. The tally is keyed by what Quell chose — the action and the route template
/// (`POST /incidents/{key}/notes`) — with the client address and the minute; what the requester
/// named (a typed email, a path, a webhook id) is kept only in the first row of its minute, and
/// cut short.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// What was refused: `login.failed`, `csrf.cross_origin`, `alerts.unauthorized`, …
    pub action: &'a str,
    /// The route template and method, never the path as sent.
    pub route: &'a str,
    /// What the attempt named, as sent.
    pub target: &'a str,
}

/// The most characters of a requester's text an audit row keeps.
pub const MAX_TARGET_CHARS: usize = 200;

fn cut(text: &str) -> String {
    crate::domain::shorten(text, MAX_TARGET_CHARS)
}

/// Counts a refusal in its minute's tally row, if there is one yet.
async fn count_refusal(e: impl PgExecutor<'_>, r: &Refusal<'_>, addr: &str) -> AppResult<bool> {
    let counted = sqlx::query!(
        r#"update audit_refusal_tally set count = count + 1, last_at = now()
           where action = $1 and route = $2 and client_addr = $3
             and window_start = date_trunc('minute', now())"#,
        r.action,
        r.route,
        addr
    )
    .execute(e)
    .await?;
    Ok(counted.rows_affected() > 0)
}

/// Records a refused attempt. The first refusal of an action on a route from an address in a
/// minute appends an audit row; the rest of that minute only count, so a flood from one address
/// adds one row a minute whatever it sends.
pub async fn refusal(pool: &PgPool, actor: &Actor, r: Refusal<'_>) -> AppResult<()> {
    let r = Refusal {
        route: &cut(r.route),
        ..r
    };
    let addr = cut(actor.client_addr.as_deref().unwrap_or_default());
    if count_refusal(pool, &r, &addr).await? {
        return Ok(());
    }
    let mut tx = crate::transaction::begin(pool).await?;
    // Concurrent first refusals of one tally wait here, so only one of them appends a row.
    sqlx::query!(
        "select pg_advisory_xact_lock(hashtext($1 || ' ' || $2 || ' ' || $3))",
        r.action,
        r.route,
        addr
    )
    .execute(&mut *tx)
    .await?;
    if count_refusal(&mut *tx, &r, &addr).await? {
        tx.commit().await?;
        return Ok(());
    }
    let actor = Actor {
        request_id: actor.request_id.as_deref().map(cut),
        client_addr: Some(addr.clone()).filter(|a| !a.is_empty()),
        ..actor.clone()
    };
    let id = append(
        &mut *tx,
        &actor,
        r.action,
        &cut(r.target),
        "refused",
        None,
        None,
    )
    .await?;
    sqlx::query!(
        r#"insert into audit_refusal_tally (audit_id, action, route, client_addr, window_start)
           values ($1, $2, $3, $4, date_trunc('minute', now()))"#,
        id,
        r.action,
        r.route,
        addr
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = AuditEntry)]
pub struct Entry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    /// `ok` or `refused`
    pub outcome: String,
    /// For refusals: how many attempts this row stands for (all within its minute)
    pub count: i32,
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    pub request_id: Option<String>,
    pub client_addr: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub action: Option<String>,
    pub actor: Option<String>,
    pub outcome: Option<String>,
    pub before_id: Option<i64>,
}

/// Newest first.
pub async fn list(e: impl PgExecutor<'_>, f: &Filter, limit: i64) -> AppResult<Vec<Entry>> {
    Ok(sqlx::query_as!(
        Entry,
        r#"select a.id, a.at, a.actor, a.action, a.target, a.outcome,
                  coalesce(t.count, 1) as "count!", a.before, a.after, a.request_id, a.client_addr
           from audit_log a left join audit_refusal_tally t on t.audit_id = a.id
           where ($1::text is null or a.action like $1 || '%')
             and ($2::text is null or a.actor ilike '%' || $2 || '%')
             and ($3::text is null or a.outcome = $3)
             and ($4::bigint is null or a.id < $4)
           order by a.id desc
           limit $5"#,
        f.action,
        f.actor,
        f.outcome,
        f.before_id,
        limit
    )
    .fetch_all(e)
    .await?)
}

/// Whether the role Quell connects as could switch the append-only guard off: it owns the audit
/// table (or may act as its owner), or is a superuser.
pub async fn guard_can_be_lifted(e: impl PgExecutor<'_>) -> AppResult<bool> {
    Ok(sqlx::query_scalar!(
        r#"select r.rolsuper or pg_has_role(current_user, c.relowner, 'USAGE') as "lifted!"
           from pg_class c, pg_roles r
           where c.oid = 'audit_log'::regclass and r.rolname = current_user"#
    )
    .fetch_one(e)
    .await?)
}

/// The role that owns the audit log once it is handed over.
pub const OWNER_ROLE: &str = "quell_audit_owner";

/// Hands the audit log to a role of its own (`quell_audit_owner`, which cannot sign in) and
/// leaves `app_role` — the role Quell connects as — only reading and appending: it can then
/// neither switch the append-only trigger off, nor alter, truncate or drop the table. Run by a
/// database administrator (a superuser connection) once; safe to run again. Refused when
/// `app_role` could take the table back anyway (a superuser, a role that creates roles, or a
/// member of the owner role).
pub async fn hand_over(conn: &mut sqlx::PgConnection, app_role: &str) -> AppResult<()> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let app = sqlx::query!(
        r#"select rolsuper as "superuser!", rolcreaterole as "createrole!"
           from pg_roles where rolname = $1"#,
        app_role
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| AppError::invalid("app-role", format!("there is no role {app_role:?}")))?;
    if app.superuser || app.createrole {
        return Err(AppError::invalid(
            "app-role",
            format!(
                "{app_role:?} is a superuser or may create roles, so it could take the audit log \
                 back; connect Quell as an ordinary role"
            ),
        ));
    }
    // The owner of a schema may drop it with everything in it, the audit log included.
    let owns_schema = sqlx::query_scalar!(
        r#"select pg_has_role($1, n.nspowner, 'USAGE') as "owns!"
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where c.oid = 'audit_log'::regclass"#,
        app_role
    )
    .fetch_one(&mut *tx)
    .await?;
    if owns_schema {
        return Err(AppError::invalid(
            "app-role",
            format!(
                "{app_role:?} owns the database or the schema the audit log is in, and could drop \
                 it whole; give the database to another role and grant {app_role:?} CREATE on \
                 the schema instead"
            ),
        ));
    }
    sqlx::query!(
        r#"select set_config('quell.audit_app_role', $1, true) as app,
                  set_config('quell.audit_owner', $2, true) as owner"#,
        app_role,
        OWNER_ROLE
    )
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query!(
        r#"do $$
           declare
               app text := current_setting('quell.audit_app_role');
               owner text := current_setting('quell.audit_owner');
           begin
               if not exists (select from pg_roles where rolname = owner) then
                   execute format('create role %I nologin', owner);
               end if;
               execute format('alter table audit_log owner to %I', owner);
               execute format('alter function audit_log_is_append_only() owner to %I', owner);
               execute format('revoke all on audit_log from %I', app);
               execute format('grant select, insert on audit_log to %I', app);
               execute format('revoke %I from %I', owner, app);
           end
           $$"#
    )
    .execute(&mut *tx)
    .await?;
    let still_member = sqlx::query_scalar!(
        r#"select pg_has_role($1, $2, 'USAGE') as "member!""#,
        app_role,
        OWNER_ROLE
    )
    .fetch_one(&mut *tx)
    .await?;
    if still_member {
        return Err(AppError::invalid(
            "app-role",
            format!("{app_role:?} still acts as {OWNER_ROLE} through another role it belongs to"),
        ));
    }
    tx.commit().await?;
    Ok(())
}
