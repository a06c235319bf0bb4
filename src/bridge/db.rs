//! The incident_bridges and service_bridges tables.

use sqlx::PgExecutor;

use super::domain::Bridge;
use crate::error::AppResult;

/// The incident's bridge; empty when none was set.
pub async fn of_incident(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<Bridge> {
    Ok(of_incidents(e, &[incident_id])
        .await?
        .remove(&incident_id)
        .unwrap_or_default())
}

/// The bridges of several incidents, by incident; those without one are left out.
pub async fn of_incidents(
    e: impl PgExecutor<'_>,
    incident_ids: &[i64],
) -> AppResult<std::collections::HashMap<i64, Bridge>> {
    Ok(sqlx::query!(
        "select incident_id, call_url, chat_url from incident_bridges where incident_id = any($1)",
        incident_ids
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(|r| {
        let bridge = Bridge {
            call_url: r.call_url,
            chat_url: r.chat_url,
        };
        (r.incident_id, bridge)
    })
    .collect())
}

/// Sets (or, with an empty bridge, clears) the incident's bridge.
pub async fn set_for_incident(
    e: impl PgExecutor<'_>,
    incident_id: i64,
    bridge: &Bridge,
    by: &str,
) -> AppResult<()> {
    sqlx::query!(
        r#"insert into incident_bridges (incident_id, call_url, chat_url, set_by)
           values ($1, $2, $3, $4)
           on conflict (incident_id) do update
             set call_url = excluded.call_url, chat_url = excluded.chat_url,
                 set_by = excluded.set_by, set_at = now()"#,
        incident_id,
        bridge.call_url,
        bridge.chat_url,
        by
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The service's default bridge; empty when it has none.
pub async fn of_service(e: impl PgExecutor<'_>, service_id: i64) -> AppResult<Bridge> {
    Ok(sqlx::query_as!(
        Bridge,
        "select call_url, chat_url from service_bridges where service_id = $1",
        service_id
    )
    .fetch_optional(e)
    .await?
    .unwrap_or_default())
}

/// Sets the service's default bridge; an empty one removes it.
pub async fn set_for_service(
    e: impl PgExecutor<'_>,
    service_id: i64,
    bridge: &Bridge,
) -> AppResult<()> {
    if bridge.is_empty() {
        sqlx::query!(
            "delete from service_bridges where service_id = $1",
            service_id
        )
        .execute(e)
        .await?;
    } else {
        sqlx::query!(
            r#"insert into service_bridges (service_id, call_url, chat_url) values ($1, $2, $3)
               on conflict (service_id) do update
                 set call_url = excluded.call_url, chat_url = excluded.chat_url"#,
            service_id,
            bridge.call_url,
            bridge.chat_url
        )
        .execute(e)
        .await?;
    }
    Ok(())
}
