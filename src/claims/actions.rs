//! Changes to claims and their rules: one claim a person and lead (claiming the same lead
//! again renews it), another person's claim on the same lead refuses unless they want to look
//! as well, only the holder renews, a released or lapsed claim is gone. The incident's side
//! (its lock, timeline entry and audit row) is `incidents::actions::claims`; an incident's
//! claims end with it.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::db::{self, Claim};
use super::domain;
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};

/// A claim made: the claim, and whether it renewed the person's own claim on the lead or is
/// new, made alongside `alongside` (others on the same lead).
pub struct Claimed {
    pub claim: Claim,
    pub renewed: bool,
    pub alongside: Vec<Claim>,
}

/// Other people's held claims on the lead `subject` names (the same words after stemming).
pub async fn others_on_lead(
    conn: &mut PgConnection,
    incident_id: i64,
    person_id: i64,
    subject: &str,
) -> AppResult<Vec<Claim>> {
    let lead = domain::lead(subject);
    Ok(db::held(&mut *conn, incident_id)
        .await?
        .into_iter()
        .filter(|h| h.person_id != person_id)
        .filter(|h| domain::same_lead(&lead, &domain::lead(&h.subject)))
        .collect())
}

/// `Ana Lima ("processor status page", since 16:10 UTC) is already on this`.
pub fn already_on(others: &[Claim]) -> String {
    let who = others
        .iter()
        .map(|h| {
            format!(
                "{} (\u{201c}{}\u{201d}, since {} UTC)",
                h.name,
                h.subject,
                h.claimed_at.format("%H:%M")
            )
        })
        .collect::<Vec<_>>()
        .join(" and ");
    let verb = if others.len() == 1 { "is" } else { "are" };
    format!("{who} {verb} already on this; talk to them first, or claim it as well")
}

/// The person claims the lead `subject` names for `minutes`. Their own claim on the same lead
/// is renewed; another person's refuses (409 naming them) unless `also`.
pub async fn claim(
    conn: &mut PgConnection,
    incident_id: i64,
    person_id: i64,
    subject: &str,
    also: bool,
    minutes: i64,
) -> AppResult<Claimed> {
    let subject = domain::check_subject(subject)?;
    let lead = domain::lead(&subject);
    let mine = db::held(&mut *conn, incident_id)
        .await?
        .into_iter()
        .filter(|h| h.person_id == person_id)
        .find(|h| domain::same_lead(&lead, &domain::lead(&h.subject)));
    if let Some(mine) = mine {
        db::renew(&mut *conn, mine.id, minutes).await?;
        let claim = reread(conn, incident_id, mine.id).await?;
        return Ok(Claimed {
            claim,
            renewed: true,
            alongside: Vec::new(),
        });
    }
    let others = others_on_lead(conn, incident_id, person_id, &subject).await?;
    if !also && !others.is_empty() {
        return Err(AppError::Conflict(already_on(&others)));
    }
    let claim = db::insert(&mut *conn, incident_id, person_id, &subject, minutes).await?;
    Ok(Claimed {
        claim,
        renewed: false,
        alongside: others,
    })
}

/// The incident's claim `claim_id`, or 404 naming the incident.
async fn held_by(
    conn: &mut PgConnection,
    key: IncidentKey,
    incident_id: i64,
    claim_id: i64,
) -> AppResult<Claim> {
    db::find(&mut *conn, incident_id, claim_id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no claim {claim_id}")))
}

async fn reread(conn: &mut PgConnection, incident_id: i64, id: i64) -> AppResult<Claim> {
    db::find(&mut *conn, incident_id, id)
        .await?
        .ok_or_else(|| AppError::Internal("a claim vanished while it was changed".into()))
}

/// Ends a claim, released by `by` (its holder, or someone freeing the lead); an already
/// released claim is gone (410 naming who released it).
pub async fn release(
    conn: &mut PgConnection,
    key: IncidentKey,
    incident_id: i64,
    claim_id: i64,
    by: &str,
) -> AppResult<Claim> {
    let claim = held_by(conn, key, incident_id, claim_id).await?;
    if claim.released_at.is_some() {
        return Err(AppError::Gone(format!(
            "that claim was already released by {}",
            claim.released_by.as_deref().unwrap_or("someone")
        )));
    }
    db::release(&mut *conn, claim.id, by).await?;
    reread(conn, incident_id, claim.id).await
}

/// Holds a claim `minutes` longer; only its holder (`person_id`) renews it, and only while it
/// holds at `now`.
pub async fn renew(
    conn: &mut PgConnection,
    key: IncidentKey,
    incident_id: i64,
    claim_id: i64,
    person_id: Option<i64>,
    minutes: i64,
    now: DateTime<Utc>,
) -> AppResult<Claim> {
    let claim = held_by(conn, key, incident_id, claim_id).await?;
    if person_id != Some(claim.person_id) {
        return Err(AppError::Forbidden(format!(
            "only {} renews their claim; make your own",
            claim.name
        )));
    }
    if claim.released_at.is_some() || claim.expires_at <= now {
        return Err(AppError::Gone(
            "that claim was released or lapsed; claim the lead again".into(),
        ));
    }
    db::renew(&mut *conn, claim.id, minutes).await?;
    reread(conn, incident_id, claim.id).await
}

/// Ends the incident's held claims, released by `by` (who resolved it), in the caller's
/// transaction: a resolved incident has nobody still looking into anything. Returns the ids of
/// the claims ended.
pub async fn end_with_incident(
    conn: &mut PgConnection,
    incident_id: i64,
    by: &str,
) -> AppResult<Vec<i64>> {
    db::release_held(conn, incident_id, by).await
}
