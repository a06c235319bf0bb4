//! What imports made (`imported_objects`): per vendor, kind and their id, the Quell object and
//! a digest of what it was made from.

use sqlx::PgExecutor;

use crate::error::AppResult;

#[derive(Debug, Clone)]
pub struct Imported {
    pub kind: String,
    pub external_id: String,
    pub quell_id: String,
    pub digest: String,
}

/// Everything imported from `vendor`, locked until the transaction ends, so two imports run at
/// once take turns.
pub async fn all(e: impl PgExecutor<'_>, vendor: &str) -> AppResult<Vec<Imported>> {
    Ok(sqlx::query_as!(
        Imported,
        r#"select kind, external_id, quell_id, digest from imported_objects where vendor = $1
           for update"#,
        vendor
    )
    .fetch_all(e)
    .await?)
}

/// Notes what an object of theirs became, or became again.
pub async fn remember(
    e: impl PgExecutor<'_>,
    vendor: &str,
    kind: &str,
    external_id: &str,
    (quell_id, digest): (&str, &str),
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into imported_objects (vendor, kind, external_id, quell_id, digest)
           values ($1, $2, $3, $4, $5)
           on conflict (vendor, kind, external_id)
           do update set quell_id = excluded.quell_id, digest = excluded.digest, updated_at = now()"#,
        vendor,
        kind,
        external_id,
        quell_id,
        digest
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Serialises imports, from any vendor (a transaction-scoped advisory lock): two at once
/// would both put their routing rules first.
pub async fn take_turn(e: impl PgExecutor<'_>) -> AppResult<()> {
    sqlx::query!("select pg_advisory_xact_lock(hashtext('quell-import'))")
        .execute(e)
        .await?;
    Ok(())
}

/// Marks where one object's writes begin, so a refusal (a name taken, a value PostgreSQL
/// refuses) undoes them alone and the import goes on with the next.
pub async fn mark(conn: &mut sqlx::PgConnection) -> AppResult<()> {
    sqlx::query!("savepoint import_object")
        .execute(conn)
        .await?;
    Ok(())
}

/// Keeps (`true`) or undoes the writes since [`mark`].
pub async fn settle(conn: &mut sqlx::PgConnection, keep: bool) -> AppResult<()> {
    if keep {
        sqlx::query!("release savepoint import_object")
            .execute(conn)
            .await?;
    } else {
        sqlx::query!("rollback to savepoint import_object")
            .execute(conn)
            .await?;
    }
    Ok(())
}
