//! Offering a shift, taking one (it becomes an override of the schedule in the same
//! transaction) and withdrawing an offer; each audited.
//!
//! Locks: the schedule, then the swap — so two people taking swaps of one schedule, or a swap
//! taken while the schedule is edited, queue rather than write over each other.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, NewSwap, Swap};
use super::domain::{check_bounds, check_message, check_period};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};
use crate::oncall::domain::OverrideDoc;

/// An offer as a person writes it.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OfferDraft {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Who is asked to take it (a handle or email); absent: anyone who can
    #[serde(default)]
    pub offered_to: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// Who acts: the signed-in person (id and handle) and the audit's actor.
#[derive(Clone, Copy)]
pub struct Me<'a> {
    pub id: i64,
    pub handle: &'a str,
    pub actor: &'a Actor,
}

/// Checks the period against the schedule as it is now: the offerer's whole and alone.
async fn check_now(
    conn: &mut PgConnection,
    schedule_id: i64,
    handle: &str,
    period: (DateTime<Utc>, DateTime<Utc>),
) -> AppResult<crate::oncall::db::StoredSchedule> {
    let s = crate::oncall::db::get(&mut *conn, schedule_id).await?;
    let rules = crate::oncall::actions::rules(&s)?;
    let now = crate::clock::now(&mut *conn).await?;
    check_bounds(period, now)?;
    let spans = rules.spans(period.0, period.1);
    check_period(handle, period, &spans, &s.overrides.0, now)?;
    Ok(s)
}

/// `me` offers `d.from`..`d.to` of their shift in schedule `schedule_id`.
pub async fn offer(
    conn: &mut PgConnection,
    me: Me<'_>,
    schedule_id: i64,
    d: &OfferDraft,
) -> AppResult<Swap> {
    let message = check_message(&d.message)?;
    check_now(conn, schedule_id, me.handle, (d.from, d.to)).await?;
    let offered_to = match d
        .offered_to
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(named) => {
            let p = crate::people::db::find(&mut *conn, named)
                .await?
                .ok_or_else(|| {
                    AppError::invalid("offered_to", format!("there is no person {named:?}"))
                })?;
            if p.id == me.id {
                return Err(AppError::invalid(
                    "offered_to",
                    "offer it to someone else (or to anyone)",
                ));
            }
            if crate::people::db::can_acknowledge(&mut *conn, &[p.id])
                .await?
                .is_empty()
            {
                return Err(AppError::invalid(
                    "offered_to",
                    format!("{} cannot be on call (a viewer, or disabled)", p.name),
                ));
            }
            Some(p.id)
        }
        None => None,
    };
    let new = NewSwap {
        schedule_id,
        offered_by: me.id,
        offered_to,
        from: d.from,
        to: d.to,
        message: &message,
    };
    let id = db::insert(&mut *conn, &new).await?;
    let made = json!({ "schedule_id": schedule_id, "from": d.from, "to": d.to,
                       "offered_to": d.offered_to, "message": message });
    audit::created(conn, me.actor, "shift_swap.offer", &id.to_string(), made).await?;
    one(conn, schedule_id, id).await
}

/// Swap `id` of the schedule.
pub async fn one(conn: &mut PgConnection, schedule_id: i64, id: i64) -> AppResult<Swap> {
    db::list(conn, schedule_id, Some(id))
        .await?
        .pop()
        .ok_or_else(|| AppError::NotFound(format!("There is no shift swap {id}.")))
}

/// The swap locked after its schedule, still offered.
async fn open(conn: &mut PgConnection, schedule_id: i64, id: i64) -> AppResult<db::Locked> {
    crate::oncall::db::lock(&mut *conn, schedule_id).await?;
    let w = db::lock(&mut *conn, schedule_id, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no shift swap {id}.")))?;
    if w.state != "offered" {
        return Err(AppError::Conflict(format!(
            "This swap is {} already.",
            w.state
        )));
    }
    Ok(w)
}

/// `me` takes swap `id`: checked again against the schedule as it is now (the offerer still on
/// call through all of it, no override there), it becomes an override — `me` in the offerer's
/// place for the period — in the same transaction.
pub async fn take(
    conn: &mut PgConnection,
    me: Me<'_>,
    schedule_id: i64,
    id: i64,
) -> AppResult<Swap> {
    let w = open(conn, schedule_id, id).await?;
    if w.offered_by == me.id {
        return Err(AppError::Conflict(
            "This is your own offer; withdraw it instead.".into(),
        ));
    }
    if w.offered_to.is_some_and(|t| t != me.id) {
        return Err(AppError::Forbidden(
            "This shift is offered to someone else.".into(),
        ));
    }
    if crate::people::db::can_acknowledge(&mut *conn, &[me.id])
        .await?
        .is_empty()
    {
        return Err(AppError::Forbidden(
            "You cannot be on call (a viewer, or disabled).".into(),
        ));
    }
    let offerer = crate::people::db::list(&mut *conn)
        .await?
        .into_iter()
        .find(|p| p.id == w.offered_by)
        .ok_or_else(|| AppError::Internal("a swap's offerer vanished".into()))?;
    // Taken after it began, the cover starts now (the hours gone by stay as they were).
    let now = crate::clock::now(&mut *conn).await?;
    let from = w.from.max(now);
    // The schedule may have changed since the offer: checked as it is now, and said why not.
    let no_longer = |fields: Vec<crate::error::FieldError>| {
        let why = fields.first().map_or(String::new(), |f| f.message.clone());
        AppError::Conflict(format!(
            "This swap can no longer be taken as offered: {why}."
        ))
    };
    let s = match check_now(conn, schedule_id, &offerer.handle, (from, w.to)).await {
        Ok(s) => s,
        Err(AppError::Validation(fields)) => return Err(no_longer(fields)),
        Err(other) => return Err(other),
    };
    let mut draft = s.draft();
    draft.overrides.push(OverrideDoc {
        from,
        to: w.to,
        replaces: Some(offerer.handle.clone()),
        with: me.handle.to_owned(),
    });
    // Refused by the schedule's own rules (a person since removed, too many overrides): why.
    match crate::oncall::actions::update(conn, me.actor, schedule_id, Some(s.version), &draft).await
    {
        Err(AppError::Validation(fields)) => return Err(no_longer(fields)),
        other => other?,
    };
    db::taken(&mut *conn, id, me.id).await?;
    // The offerer's other open offers of any of these hours can no longer be taken.
    db::withdraw_overlapping(&mut *conn, (schedule_id, w.offered_by), (from, w.to)).await?;
    let took = json!({ "schedule_id": schedule_id, "from": from, "to": w.to,
                       "offered_by": offerer.handle, "taken_by": me.handle });
    audit::created(conn, me.actor, "shift_swap.take", &id.to_string(), took).await?;
    one(conn, schedule_id, id).await
}

/// The offerer withdraws swap `id` while nobody has taken it.
pub async fn withdraw(
    conn: &mut PgConnection,
    me: Me<'_>,
    schedule_id: i64,
    id: i64,
) -> AppResult<Swap> {
    let w = open(conn, schedule_id, id).await?;
    if w.offered_by != me.id {
        return Err(AppError::Forbidden(
            "Only the person who offered it withdraws it.".into(),
        ));
    }
    db::withdrawn(&mut *conn, id).await?;
    audit::created(
        conn,
        me.actor,
        "shift_swap.withdraw",
        &id.to_string(),
        json!({ "schedule_id": schedule_id }),
    )
    .await?;
    one(conn, schedule_id, id).await
}

/// What a person does with an open swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Take,
    Withdraw,
}

/// Takes or withdraws swap `id` (see [`take`] and [`withdraw`]).
pub async fn answer(
    conn: &mut PgConnection,
    me: Me<'_>,
    (schedule_id, id): (i64, i64),
    answer: Answer,
) -> AppResult<Swap> {
    match answer {
        Answer::Take => take(conn, me, schedule_id, id).await,
        Answer::Withdraw => withdraw(conn, me, schedule_id, id).await,
    }
}
