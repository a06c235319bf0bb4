//! Claims: who is looking into which lead.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::incidents::db::{self};
use crate::incidents::domain::{self};
use crate::timeline::domain::Kind;

/// Other people's held claims on the lead `subject` names (the same words after stemming).
pub async fn others_on_lead(
    conn: &mut PgConnection,
    incident_id: i64,
    person_id: i64,
    subject: &str,
) -> AppResult<Vec<crate::claims::db::Claim>> {
    use crate::claims::{db as claims_db, domain as claims_domain};
    let lead = claims_domain::lead(subject);
    Ok(claims_db::held(&mut *conn, incident_id)
        .await?
        .into_iter()
        .filter(|h| h.person_id != person_id)
        .filter(|h| claims_domain::same_lead(&lead, &claims_domain::lead(&h.subject)))
        .collect())
}

/// `Ana Lima ("processor status page", since 16:10 UTC) is already on this`.
pub fn already_on(others: &[crate::claims::db::Claim]) -> String {
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

/// Says what the actor is looking into. Renewing their own claim on the same lead holds it
/// longer; another person's claim on the same lead refuses (409 naming them) unless `also`
/// (they were told who is on it and want to look too).
pub async fn claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    subject: &str,
    also: bool,
    minutes: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::{db as claims_db, domain as claims_domain};
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    let person_id = actor.person_id.ok_or_else(|| {
        AppError::Forbidden("claims are made by a person signed in to Quell".into())
    })?;
    let subject = claims_domain::check_subject(subject)?;
    if incident.status == domain::Status::Resolved {
        return Err(AppError::Conflict(format!(
            "{key} is resolved; reopen it to claim a lead"
        )));
    }
    let lead = claims_domain::lead(&subject);
    let mine = claims_db::held(&mut *conn, incident.id)
        .await?
        .into_iter()
        .filter(|h| h.person_id == person_id)
        .find(|h| claims_domain::same_lead(&lead, &claims_domain::lead(&h.subject)));
    if let Some(mine) = mine {
        claims_db::renew(&mut *conn, mine.id, minutes).await?;
        return claims_db::find(&mut *conn, incident.id, mine.id)
            .await?
            .ok_or_else(|| AppError::Internal("a renewed claim vanished".into()));
    }
    let others = others_on_lead(conn, incident.id, person_id, &subject).await?;
    if !also && !others.is_empty() {
        return Err(AppError::Conflict(already_on(&others)));
    }
    let claim = claims_db::insert(&mut *conn, incident.id, person_id, &subject, minutes).await?;
    let now = clock::now(&mut *conn).await?;
    let entry = Entry {
        kind: Kind::Claimed,
        at: now,
        body: "",
        details: json!({
            "claim_id": claim.id, "subject": claim.subject,
            "alongside": others.iter().map(|h| &h.name).collect::<Vec<_>>(),
        }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::record(
        conn,
        actor,
        "incident.claim",
        &key.to_string(),
        None,
        Some(json!({ "claim_id": claim.id, "subject": claim.subject })),
    )
    .await?;
    Ok(claim)
}

/// Ends a claim: its holder is done, or someone else frees the lead (named on the timeline).
pub async fn release_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::db as claims_db;
    let (key, actor) = (c.key, c.actor);
    let incident = db::get(&mut *conn, key).await?;
    let claim = claims_db::find(&mut *conn, incident.id, claim_id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no claim {claim_id}")))?;
    if claim.released_at.is_some() {
        return Err(AppError::Gone(format!(
            "that claim was already released by {}",
            claim.released_by.as_deref().unwrap_or("someone")
        )));
    }
    claims_db::release(&mut *conn, claim.id, &actor.name).await?;
    let now = clock::now(&mut *conn).await?;
    let holder = (actor.person_id != Some(claim.person_id)).then_some(&claim.name);
    let entry = Entry {
        kind: Kind::ClaimReleased,
        at: now,
        body: "",
        details: json!({ "claim_id": claim.id, "subject": claim.subject, "holder": holder }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::record(
        conn,
        actor,
        "incident.claim_release",
        &key.to_string(),
        Some(json!({ "claim_id": claim.id, "subject": claim.subject })),
        None,
    )
    .await?;
    claims_db::find(&mut *conn, incident.id, claim.id)
        .await?
        .ok_or_else(|| AppError::Internal("a released claim vanished".into()))
}

/// Holds the actor's claim `minutes` longer; only its holder renews it.
pub async fn renew_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
    minutes: i64,
) -> AppResult<crate::claims::db::Claim> {
    use crate::claims::db as claims_db;
    let key = c.key;
    let incident = db::get(&mut *conn, key).await?;
    let claim = claims_db::find(&mut *conn, incident.id, claim_id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("{key} has no claim {claim_id}")))?;
    if c.actor.person_id != Some(claim.person_id) {
        return Err(AppError::Forbidden(format!(
            "only {} renews their claim; make your own",
            claim.name
        )));
    }
    let now = clock::now(&mut *conn).await?;
    if claim.released_at.is_some() || claim.expires_at <= now {
        return Err(AppError::Gone(
            "that claim was released or lapsed; claim the lead again".into(),
        ));
    }
    claims_db::renew(&mut *conn, claim.id, minutes).await?;
    claims_db::find(&mut *conn, incident.id, claim.id)
        .await?
        .ok_or_else(|| AppError::Internal("a renewed claim vanished".into()))
}
