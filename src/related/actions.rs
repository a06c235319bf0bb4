//! Linking and unlinking related incidents: the link, an entry on both timelines and the audit
//! row in one transaction; and the suggestions an incident's page offers.

use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, IncidentRef, Related, Suggestion};
use super::domain::{self, SUGGESTIONS};
use crate::audit::{self, Actor};
use crate::clock;
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// The incident a key names, if `seen_by` may see it; or 404.
pub async fn incident(
    e: impl sqlx::PgExecutor<'_>,
    key: IncidentKey,
    seen_by: SeenBy,
) -> AppResult<IncidentRef> {
    db::find(e, key, seen_by)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {key}.")))
}

/// The other incident of a link as a person named it; an unknown one is a bad field, not a
/// missing page.
async fn other(
    conn: &mut PgConnection,
    field: &str,
    named: &str,
    seen_by: SeenBy,
) -> AppResult<IncidentRef> {
    let key = domain::other_incident(field, named)?;
    db::find(conn, key, seen_by)
        .await?
        .ok_or_else(|| AppError::invalid(field, format!("there is no incident {key}")))
}

async fn on_both_timelines(
    conn: &mut PgConnection,
    this: &IncidentRef,
    that: &IncidentRef,
    details: serde_json::Value,
    actor: &Actor,
) -> AppResult<()> {
    let both = (this, details.clone());
    on_each_timeline(conn, both, (that, details), false, actor).await
}

/// A link's entry on each incident's timeline, each with what it says there. `same_access`:
/// the two are kept to the same people, so each may name the other though restricted.
async fn on_each_timeline(
    conn: &mut PgConnection,
    (this, on_this): (&IncidentRef, serde_json::Value),
    (that, on_that): (&IncidentRef, serde_json::Value),
    same_access: bool,
    actor: &Actor,
) -> AppResult<()> {
    let now = clock::now(&mut *conn).await?;
    // A restricted incident is named on no other's timeline: those who read that one may not
    // be those it is kept to. Its own timeline names the other.
    for (on, other, details) in [(this, that, on_this), (that, this, on_that)] {
        if other.restricted && !same_access {
            continue;
        }
        let mut details = details;
        details["other"] = json!(other.key.to_string());
        details["title"] = json!(other.title);
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(&actor.name, on.id, now, Kind::Related, details),
        )
        .await?;
    }
    Ok(())
}

/// Links `this` incident to the one `named` (`INC-184` or `184`) with a note; both timelines say
/// so. Linking to itself, to an unknown incident or a note too long is refused naming the field;
/// a link that exists already is a conflict. Returns the other incident as `this` now lists it.
pub async fn link(
    conn: &mut PgConnection,
    this: &IncidentRef,
    named: &str,
    note: &str,
    (actor, seen_by): (&Actor, SeenBy),
) -> AppResult<Related> {
    let note = domain::check_note(note)?;
    let that = other(conn, "incident", named, seen_by).await?;
    domain::check_pair(this.key, that.key)?;
    let now = clock::now(&mut *conn).await?;
    if !db::insert(&mut *conn, this.id, that.id, &note, &actor.name, now).await? {
        return Err(AppError::Conflict(format!(
            "{} and {} are related already.",
            this.key, that.key
        )));
    }
    on_both_timelines(
        conn,
        this,
        &that,
        json!({ "action": "linked", "note": note }),
        actor,
    )
    .await?;
    audit::created(
        conn,
        actor,
        "incident.relate",
        &this.key.to_string(),
        json!({ "related": that.key.to_string(), "note": note }),
    )
    .await?;
    db::list(&mut *conn, this.id, seen_by)
        .await?
        .into_iter()
        .find(|r| r.key == that.key)
        .ok_or_else(|| AppError::Internal("the new link vanished".into()))
}

/// Two incidents one became part of the other: `from` merged into `into` (as a duplicate) or
/// split off into it, with how many alerts moved. They are linked (an existing link's note
/// becomes this one), and each timeline says which way it went — but a restricted incident is
/// named on the other's only when the two are kept to the same people (`same_access`).
pub async fn moved(
    conn: &mut PgConnection,
    (from, into): (&IncidentRef, &IncidentRef),
    (how, same_access): (Moved, bool),
    alerts: i64,
    actor: &Actor,
) -> AppResult<()> {
    let now = clock::now(&mut *conn).await?;
    let (note, away, here) = match how {
        Moved::Merged => (
            format!("{} merged into {} as a duplicate", from.key, into.key),
            "merged_into",
            "merged_from",
        ),
        Moved::Split => (
            format!("{} split off from {}", into.key, from.key),
            "split_to",
            "split_from",
        ),
    };
    db::upsert(&mut *conn, from.id, into.id, &note, &actor.name, now).await?;
    on_each_timeline(
        conn,
        (from, json!({ "action": away, "alerts": alerts })),
        (into, json!({ "action": here, "alerts": alerts })),
        same_access,
        actor,
    )
    .await
}

/// Which way alerts went between two incidents ([`moved`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    Merged,
    Split,
}

/// Removes the link between `this` and the incident `named`; 404 when they are not linked.
pub async fn unlink(
    conn: &mut PgConnection,
    this: &IncidentRef,
    named: &str,
    (actor, seen_by): (&Actor, SeenBy),
) -> AppResult<()> {
    let key = domain::other_incident("incident", named)
        .map_err(|_| AppError::NotFound(format!("There is no incident {named:?}.")))?;
    let that = incident(&mut *conn, key, seen_by).await?;
    let Some(note) = db::delete(&mut *conn, this.id, that.id).await? else {
        return Err(AppError::NotFound(format!(
            "{} and {} are not related.",
            this.key, that.key
        )));
    };
    on_both_timelines(conn, this, &that, json!({ "action": "unlinked" }), actor).await?;
    audit::deleted(
        conn,
        actor,
        "incident.unrelate",
        &this.key.to_string(),
        json!({ "related": that.key.to_string(), "note": note }),
    )
    .await
}

/// Incidents that may be related to `this` one: its service's or its dependencies', whose text
/// matches its title and summary, not linked yet; best first. None without a service.
pub async fn suggestions(
    e: impl sqlx::PgExecutor<'_>,
    this: &IncidentRef,
    seen_by: SeenBy,
) -> AppResult<Vec<Suggestion>> {
    let (Some(service_id), Some(terms)) = (
        this.service_id,
        domain::search_terms(&format!("{} {}", this.title, this.summary)),
    ) else {
        return Ok(vec![]);
    };
    db::suggestions(e, this.id, service_id, &terms, seen_by, SUGGESTIONS).await
}
