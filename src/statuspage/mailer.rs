//! Mails the status page's public events to its subscribers, in every replica: each public
//! update, and the closing word when an incident resolves, goes once to every subscriber
//! confirmed by then who chose a component it affects. The first replica to write an event in
//! the ledger (`status_mailings`) queues its messages in the outbox, in the same transaction,
//! so it is mailed once; the outbox's sender delivers them with its retries. Mail still to
//! send about an incident the public may no longer see is called off. Woken by a change to
//! what the public sees (`quell_status`, from the migration's triggers).

use std::time::Duration;

use serde_json::{Value, json};
use sqlx::PgPool;

use super::db::{self, MailEvent};
use super::domain::{self, ComponentStatus, PublicStatus};
use crate::error::AppResult;

pub const CHANNEL: &str = "quell_status";

const POLL: Duration = Duration::from_secs(30);

pub async fn run(pool: PgPool) {
    let what = "could not mail the status page's subscribers";
    crate::engine::rounds(pool, CHANNEL, POLL, what, |pool| async move {
        round(&pool).await.map(|_| None::<f64>)
    })
    .await
}

/// One round: calls off mail about incidents no longer public, mails each public event not
/// yet mailed (each in a transaction of its own), and forgets addresses that never confirmed;
/// returns how many messages were queued.
pub async fn round(pool: &PgPool) -> AppResult<u64> {
    let withdrawn = db::withdrawn_with_mail(pool).await?;
    if !withdrawn.is_empty() {
        crate::transaction::write(pool, |tx, _| {
            let withdrawn = withdrawn.clone();
            Box::pin(async move {
                crate::notify::actions::call_off_subscriber_mail(
                    tx,
                    &withdrawn,
                    super::actions::WITHDRAWN,
                )
                .await
            })
        })
        .await?;
    }
    let mut queued = 0;
    for event in db::unmailed(pool).await? {
        // One event that cannot be mailed holds back none of the others; it is tried again
        // next round.
        match crate::transaction::write(pool, |tx, _| {
            let event = event.clone();
            Box::pin(async move { mail(tx, &event).await })
        })
        .await
        {
            Ok(n) => queued += n,
            Err(e) => {
                tracing::warn!(event = %event.event, error = %e, "could not mail a status page event")
            }
        }
    }
    db::forget_unconfirmed(pool, domain::UNCONFIRMED_KEPT_DAYS).await?;
    db::purge_mailings(pool).await?;
    Ok(queued)
}

/// Mails one event, unless another replica has; how many messages were queued.
async fn mail(conn: &mut sqlx::PgConnection, e: &MailEvent) -> AppResult<u64> {
    // Read again in this transaction: published, and never restricted, now.
    let Some(p) = db::publication(&mut *conn, e.incident_id).await? else {
        return Ok(0);
    };
    if p.restricted {
        return Ok(0);
    }
    let to = db::recipients(&mut *conn, e.incident_id, e.at).await?;
    if !db::take_mailing(&mut *conn, &e.event, e.incident_id, to.len() as i32).await? {
        return Ok(0);
    }
    let settings = db::settings(&mut *conn).await?;
    let turns = db::turns(&mut *conn, &[e.incident_id]).await?;
    let turned: Vec<(&str, chrono::DateTime<chrono::Utc>)> =
        turns.iter().map(|t| (t.kind.as_str(), t.at)).collect();
    let status = if e.resolved {
        PublicStatus::Resolved
    } else {
        PublicStatus::at(e.said_at, &turned)
    };
    let components = db::components(&mut *conn).await?;
    let affects: Vec<String> = db::affected(&mut *conn, &[e.incident_id])
        .await?
        .iter()
        .filter_map(|a| {
            let c = components.iter().find(|c| c.id == a.component_id)?;
            Some(format!(
                "{} ({})",
                c.name,
                ComponentStatus::stored(&a.status).label()
            ))
        })
        .collect();
    let said = domain::event_mail(
        &settings.name,
        (&p.title, &p.public_id),
        status,
        &e.body,
        &affects,
    );
    let messages: Vec<(i64, Value)> = to
        .into_iter()
        .map(|(id, token)| (id, with_links(&said, &token)))
        .collect();
    let kind = if e.resolved {
        "status.resolved"
    } else {
        "status.update"
    };
    crate::notify::actions::tell_subscribers(conn, Some(e.incident_id), kind, &messages).await
}

/// A message with the subscriber's own links: choosing components, and leaving in one click.
fn with_links(said: &Value, token: &str) -> Value {
    let mut m = said.clone();
    if let Some(o) = m.as_object_mut() {
        o.insert(
            "manage_path".into(),
            json!(format!("/status/subscription/{token}")),
        );
        o.insert(
            "unsubscribe_path".into(),
            json!(format!("/status/subscription/{token}/unsubscribe")),
        );
    }
    m
}
