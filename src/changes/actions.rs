//! Recording a change, one transaction step each: from a person or pipeline through the API
//! (checked, audited), and from a sender's change event on the alert path.

use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::db::{self, Change, NewChange, Suspect, SuspectScope};
use super::domain::{ChangeDraft, SUSPECT_WINDOW_HOURS, SuspectRank, Verdict, sender_details};
use crate::audit::{self, Actor};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// Records a change reported through the API: an unknown service or a time in the future is
/// refused naming the field, and nothing is stored.
pub async fn record(
    conn: &mut PgConnection,
    actor: &Actor,
    draft: &ChangeDraft,
) -> AppResult<Change> {
    let now = clock::now(&mut *conn).await?;
    let c = draft.checked(now)?;
    let service_id = db::service_id(&mut *conn, &c.service)
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
            service_id: Some(service_id),
            environment: &c.environment,
            kind: c.kind,
            summary: &c.summary,
            author: &c.author,
            link: &c.link,
            occurred_at: c.occurred_at,
            details: &json!({}),
            capacity: c.capacity.as_ref(),
            sent: None,
        },
    )
    .await?;
    let change = db::get(&mut *conn, id)
        .await?
        .ok_or_else(|| AppError::Internal("change vanished".into()))?;
    audit::created(
        conn,
        actor,
        "change.create",
        &c.service,
        json!({ "id": id, "kind": change.kind, "summary": change.summary,
                     "capacity": change.capacity }),
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
        Some(name) => db::service_id(&mut *conn, name).await?,
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
            capacity: d.capacity.as_ref(),
            sent: Some((s.integration_id, s.raw)),
        },
    )
    .await
}

/// An incident as its suspects need it; the caller, which knows incidents, reads it.
pub struct Suspecting {
    pub incident_id: i64,
    /// `INC-1187`, for messages and the audit log.
    pub key: String,
    pub service_id: Option<i64>,
    pub started_at: chrono::DateTime<chrono::Utc>,
}

impl Suspecting {
    fn scope(&self) -> SuspectScope {
        SuspectScope {
            incident_id: self.incident_id,
            service_id: self.service_id,
            started_at: self.started_at,
            window_hours: SUSPECT_WINDOW_HOURS,
        }
    }
}

/// The incident's suspect changes, best first (see [`SuspectRank`]).
pub async fn suspects(e: impl sqlx::PgExecutor<'_>, i: &Suspecting) -> AppResult<Vec<Suspect>> {
    let mut found = db::suspects(e, &i.scope()).await?;
    found.sort_by_key(|s| {
        SuspectRank::of(
            s.change.capacity_check.is_some(),
            &s.change.environment,
            s.change.occurred_at,
            i.started_at,
        )
    });
    Ok(found)
}

/// A responder's verdict on one suspect change.
pub struct Judgement<'a> {
    pub change_id: i64,
    pub verdict: Verdict,
    /// When it was reached, if earlier than now (a scribe entering the past); not before the
    /// incident started.
    pub at: Option<chrono::DateTime<chrono::Utc>>,
    pub actor: &'a Actor,
}

/// Records a verdict on one of the incident's suspect changes, with its timeline entry and
/// audit row in the same transaction. A change that is not a suspect of the incident is not
/// found; a second confirmed trigger is a conflict.
pub async fn judge(
    conn: &mut PgConnection,
    i: &Suspecting,
    j: &Judgement<'_>,
) -> AppResult<Suspect> {
    let (change_id, verdict, actor) = (j.change_id, j.verdict, j.actor);
    let now = clock::now(&mut *conn).await?;
    let at = j.at.unwrap_or(now);
    if at > now || at < i.started_at {
        return Err(AppError::invalid(
            "at",
            "a verdict is reached after the incident started and not in the future",
        ));
    }
    let suspect = db::suspects(&mut *conn, &i.scope())
        .await?
        .into_iter()
        .find(|s| s.change.id == change_id)
        .ok_or_else(|| {
            AppError::NotFound(format!("Change {change_id} is not a suspect of {}.", i.key))
        })?;
    db::set_verdict(
        &mut *conn,
        &db::NewVerdict {
            incident_id: i.incident_id,
            change_id,
            verdict: verdict.as_str(),
            decided_by: &actor.name,
            decided_at: at,
        },
    )
    .await?;
    let c = &suspect.change;
    let details = json!({
        "verdict": verdict.as_str(),
        "change_id": c.id,
        "summary": c.summary,
        "service": c.service,
        "kind": c.kind,
        "changed_at": c.occurred_at.format("%Y-%m-%d %H:%M UTC").to_string(),
    });
    timeline::actions::record(
        &mut *conn,
        NewEvent::by(
            &actor.name,
            i.incident_id,
            at,
            Kind::SuspectVerdict,
            details.clone(),
        ),
    )
    .await?;
    audit::record(
        conn,
        actor,
        "incident.suspect_verdict",
        &i.key,
        suspect.verdict.as_ref().map(|v| json!({ "verdict": v })),
        Some(details),
    )
    .await?;
    Ok(Suspect {
        verdict: Some(verdict.as_str().to_owned()),
        decided_by: Some(actor.name.clone()),
        decided_at: Some(at),
        ..suspect
    })
}
