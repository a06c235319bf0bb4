//! Recording a change, one transaction step each: from a person or pipeline through the API
//! (checked, audited), and from a sender's change event on the alert path.

use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{self, Change, NewChange};
use super::domain::{ChangeDraft, sender_details};
use crate::audit::{self, Actor};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::services;

/// Records a change reported through the API: an unknown service or a time in the future is
/// refused naming the field, and nothing is stored.
pub async fn record(
    conn: &mut PgConnection,
    actor: &Actor,
    draft: &ChangeDraft,
) -> AppResult<Change> {
    let now = clock::now(&mut *conn).await?;
    let c = draft.checked(now)?;
    let service = services::db::find_by_name(&mut *conn, &c.service)
        .await?
        .ok_or_else(|| {
            AppError::invalid(
                "service",
                format!("there is no service named {:?}", c.service),
            )
        })?;
    let id = db::insert(
        &mut *conn,
        &NewChange {
            service_id: Some(service.id),
            environment: &c.environment,
            kind: c.kind,
            summary: &c.summary,
            author: &c.author,
            link: &c.link,
            occurred_at: c.occurred_at,
            details: &json!({}),
            sent: None,
        },
    )
    .await?;
    let change = db::get(&mut *conn, id)
        .await?
        .ok_or_else(|| AppError::Internal("change vanished".into()))?;
    audit::record(
        conn,
        actor,
        "change.create",
        &service.name,
        None,
        Some(json!({ "id": id, "kind": change.kind, "summary": change.summary })),
    )
    .await?;
    Ok(change)
}

/// A change event as a sender reported it, already read.
pub struct SentChange<'a> {
    pub integration_id: Uuid,
    pub summary: &'a str,
    /// What the sender calls itself (PagerDuty's `source`): the change's author.
    pub source: &'a str,
    pub occurred_at: chrono::DateTime<chrono::Utc>,
    /// PagerDuty's `custom_details`: `service`, `kind` and `environment` are read from it.
    pub details: &'a Value,
    pub links: &'a Value,
    pub raw: &'a Value,
}

/// Stores a sender's change. Its service is the one `custom_details.service` names; an unknown
/// or missing name stores it without a service rather than losing it.
pub async fn record_sent(conn: &mut PgConnection, s: &SentChange<'_>) -> AppResult<i64> {
    let d = sender_details(s.details);
    let service_id = match d.service {
        Some(name) => services::db::find_by_name(&mut *conn, name)
            .await?
            .map(|svc| svc.id),
        None => None,
    };
    let link = s
        .links
        .get(0)
        .and_then(|l| l.get("href"))
        .and_then(Value::as_str)
        .filter(|h| (h.starts_with("https://") || h.starts_with("http://")) && h.len() <= 2000)
        .unwrap_or_default();
    db::insert(
        conn,
        &NewChange {
            service_id,
            environment: &d.environment,
            kind: d.kind,
            summary: s.summary,
            author: &crate::domain::shorten(s.source, 200),
            link,
            occurred_at: s.occurred_at,
            details: s.details,
            sent: Some((s.integration_id, s.raw)),
        },
    )
    .await
}
