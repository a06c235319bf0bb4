//! Claims on an incident: its lock, its timeline entries and audit rows around the claim rules
//! of `claims::actions`.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit::{self};
use crate::claims::{actions as claims, db::Claim};
use crate::error::{AppError, AppResult};
use crate::incidents::db::{self};
use crate::incidents::domain::{self};
use crate::timeline::domain::Kind;

pub use crate::claims::actions::{already_on, others_on_lead};

/// Says what the actor is looking into. Renewing their own claim on the same lead holds it
/// longer; another person's claim on the same lead refuses (409 naming them) unless `also`
/// (they were told who is on it and want to look too).
pub async fn claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    subject: &str,
    also: bool,
    minutes: i64,
) -> AppResult<Claim> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::lock(&mut *conn, key).await?;
    let person_id = actor.person_id.ok_or_else(|| {
        AppError::Forbidden("claims are made by a person signed in to Quell".into())
    })?;
    let subject = crate::claims::domain::check_subject(subject)?;
    if incident.status == domain::Status::Resolved {
        return Err(AppError::Conflict(format!(
            "{key} is resolved; reopen it to claim a lead"
        )));
    }
    let made = claims::claim(conn, incident.id, person_id, &subject, also, minutes).await?;
    if made.renewed {
        return Ok(made.claim);
    }
    let claim = made.claim;
    let now = c.clock(conn).await?;
    let entry = Entry {
        kind: Kind::Claimed,
        at: now,
        body: "",
        details: json!({
            "claim_id": claim.id, "subject": claim.subject,
            "alongside": made.alongside.iter().map(|h| &h.name).collect::<Vec<_>>(),
        }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::created(
        conn,
        actor,
        "incident.claim",
        &key.to_string(),
        json!({ "claim_id": claim.id, "subject": claim.subject }),
    )
    .await?;
    Ok(claim)
}

/// Ends a claim: its holder is done, or someone else frees the lead (named on the timeline).
pub async fn release_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
) -> AppResult<Claim> {
    let (key, actor) = (c.key, c.actor);
    let incident = db::get(&mut *conn, key).await?;
    let claim = claims::release(conn, key, incident.id, claim_id, &actor.name).await?;
    let now = c.clock(conn).await?;
    let holder = (actor.person_id != Some(claim.person_id)).then_some(&claim.name);
    let entry = Entry {
        kind: Kind::ClaimReleased,
        at: now,
        body: "",
        details: json!({ "claim_id": claim.id, "subject": claim.subject, "holder": holder }),
        version: None,
    };
    append(conn, incident.id, actor, entry).await?;
    audit::deleted(
        conn,
        actor,
        "incident.claim_release",
        &key.to_string(),
        json!({ "claim_id": claim.id, "subject": claim.subject }),
    )
    .await?;
    Ok(claim)
}

/// Holds the actor's claim `minutes` longer; only its holder renews it.
pub async fn renew_claim(
    conn: &mut PgConnection,
    c: &Change<'_>,
    claim_id: i64,
    minutes: i64,
) -> AppResult<Claim> {
    let key = c.key;
    let incident = db::get(&mut *conn, key).await?;
    let now = c.clock(conn).await?;
    let person = c.actor.person_id;
    claims::renew(conn, key, incident.id, claim_id, person, minutes, now).await
}
