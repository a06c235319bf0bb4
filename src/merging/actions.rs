//! Merging one incident into another and splitting alerts out of one, each one transaction.
//!
//! Locks: first the alert groups of the incident whose alerts move, as a lane joining alerts
//! to them takes them (alerts joining meanwhile commit first, or wait and then find the groups
//! where the change left them), then both incidents in id order. Paths that lock an incident
//! before its groups (resolving it, a lane's resolutions) can still deadlock with a merge;
//! PostgreSQL breaks that off and both sides run again (`transaction::write`, the lanes'
//! retry), so nothing is lost.

use serde::Serialize;
use serde_json::json;
use sqlx::PgConnection;

use super::domain::{self, Side, Taken};
use crate::audit::{self, Actor};
use crate::domain::{IncidentKey, Severity};
use crate::error::{AppError, AppResult};
use crate::incident_ref::db::IncidentRef;
use crate::incident_ref::domain::SeenBy;
use crate::incidents::actions::{self as incidents, Change};
use crate::incidents::domain::{Status, Transition};
use crate::related::actions::Moved;
use crate::timeline::domain::Kind;

/// What a merge did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Merged {
    /// The incident merged (now resolved as a duplicate)
    #[schema(value_type = String)]
    pub merged: IncidentKey,
    /// The incident kept
    #[schema(value_type = String)]
    pub into: IncidentKey,
    /// The kept incident's version after the merge (its ETag is `"v<version>"`)
    pub into_version: i32,
    /// How many alerts moved to the kept incident
    pub alerts_moved: i64,
    /// Roles the kept incident had nobody in, given to whoever held them in the merged one
    pub roles_copied: Vec<String>,
    /// The kept incident's severity, raised when the merged one's was worse
    pub severity: Severity,
}

/// What a split did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Split {
    /// The incident the alerts left
    #[schema(value_type = String)]
    pub from: IncidentKey,
    /// The new incident they moved to
    #[schema(value_type = String)]
    pub new: IncidentKey,
    pub title: String,
    pub severity: Severity,
    /// How many alerts moved
    pub alerts_moved: i64,
}

/// The incident a person named in `field`, if they may see it; otherwise a bad field.
async fn named(
    conn: &mut PgConnection,
    field: &str,
    text: &str,
    seen_by: SeenBy,
) -> AppResult<IncidentRef> {
    let key = crate::related::domain::other_incident(field, text)?;
    crate::incident_ref::db::by_key(&mut *conn, key, seen_by)
        .await?
        .ok_or_else(|| AppError::invalid(field, format!("there is no incident {key}")))
}

fn side(i: &IncidentRef) -> Side<'_> {
    Side {
        key: i.key,
        status: &i.status,
        restricted: i.restricted,
    }
}

/// Locks the alert groups of `moving`, then both incidents in id order, and checks the
/// version of `checked` (the incident the path names) against the one the person saw.
async fn lock(
    conn: &mut PgConnection,
    moving: &IncidentRef,
    other: Option<&IncidentRef>,
    checked: (&IncidentRef, Option<i32>),
) -> AppResult<()> {
    crate::alert_store::actions::hold_groups_of(&mut *conn, &[moving.id]).await?;
    let mut ids = vec![moving.id];
    ids.extend(other.map(|o| o.id));
    ids.sort_unstable();
    crate::incidents::db::lock_incidents(&mut *conn, &ids).await?;
    let current = crate::incidents::db::get(&mut *conn, checked.0.key).await?;
    match checked.1 {
        Some(v) if v != current.version => Err(AppError::Stale {
            current_version: current.version,
        }),
        _ => Ok(()),
    }
}

/// Merges `from` into the incident named `into`: its alerts, their groups (the next alerts of
/// them join `into`) and flapping keys move; roles `into` has nobody in go to whoever held them
/// in `from`; `into` takes the worse severity; the two are linked, both timelines saying which
/// way it went; and `from` is resolved as a duplicate, which stops its SLA timers and paging.
/// `version`: the one of `from` the person saw (If-Match).
pub async fn merge(
    conn: &mut PgConnection,
    from: &IncidentRef,
    into: &str,
    version: Option<i32>,
    (actor, seen_by): (&Actor, SeenBy),
) -> AppResult<Merged> {
    let into = named(conn, "into", into, seen_by).await?;
    lock(conn, from, Some(&into), (from, version)).await?;
    let (from, into) = (
        again(conn, from, seen_by).await?,
        again(conn, &into, seen_by).await?,
    );
    let same_access = kept_to(conn, &from).await? == kept_to(conn, &into).await?;
    domain::check_merge(side(&from), side(&into), same_access)?;
    let firing: i64 = crate::alert_store::db::open_counts(&mut *conn, &[from.id])
        .await?
        .iter()
        .map(|(_, n)| n)
        .sum();
    let alerts_moved = crate::alert_store::actions::merge_into(conn, from.id, into.id).await?;
    if firing > 0 {
        still_firing(conn, (&from, &into), firing, actor).await?;
    }
    let kept = crate::roles::db::for_incident(&mut *conn, into.id).await?;
    let mut roles_copied = Vec::new();
    for held in crate::roles::db::for_incident(&mut *conn, from.id).await? {
        if kept.iter().any(|k| k.role == held.role) {
            continue;
        }
        let change = Change::now(into.key, actor);
        incidents::set_role(conn, &change, held.role, Some(&held.person.handle)).await?;
        roles_copied.push(held.role.as_str().to_owned());
    }
    if let Some(worse) = domain::raised_severity(from.severity, into.severity) {
        let reason = format!(
            "{} ({}) merged into it as a duplicate",
            from.key,
            from.severity.as_str()
        );
        incidents::change_severity(conn, &Change::now(into.key, actor), worse, &reason).await?;
    }
    let how = (Moved::Merged, same_access);
    crate::related::actions::moved(conn, (&from, &into), how, alerts_moved, actor).await?;
    // The kept incident changed even when no role or severity did: its version moves.
    incidents::touch(conn, into.key).await?;
    // Those who read the duplicate may not be those a restricted incident is kept to.
    let note = if into.restricted && !same_access {
        "Resolved as a duplicate of a restricted incident".to_owned()
    } else {
        format!("Resolved as a duplicate of {}", into.key)
    };
    // Whoever was asked to help with the duplicate is told why nobody needs them now.
    crate::responders::actions::end_with_incident(conn, from.id, &note.to_lowercase()).await?;
    incidents::transition(
        conn,
        &Change::now(from.key, actor),
        Transition::Resolve,
        &note,
    )
    .await?;
    audit::created(
        conn,
        actor,
        "incident.merge",
        &from.key.to_string(),
        json!({ "into": into.key.to_string(), "alerts_moved": alerts_moved,
                "roles_copied": roles_copied }),
    )
    .await?;
    let after = crate::incidents::db::get(&mut *conn, into.key).await?;
    Ok(Merged {
        merged: from.key,
        into: into.key,
        into_version: after.version,
        alerts_moved,
        roles_copied,
        severity: after.severity,
    })
}

/// Firing alerts merged into a mitigated incident: a mitigation its alerts made is taken back
/// (it is not mitigated while they fire), as a flapping alert takes it back; a responder's
/// stands, with a line saying what came.
async fn still_firing(
    conn: &mut PgConnection,
    (from, into): (&IncidentRef, &IncidentRef),
    firing: i64,
    actor: &Actor,
) -> AppResult<()> {
    let kept = crate::incidents::db::get(&mut *conn, into.key).await?;
    let (Status::Mitigated, Some(at)) = (kept.status, kept.mitigated_at) else {
        return Ok(());
    };
    let alerts = if firing == 1 {
        "1 firing alert".to_owned()
    } else {
        format!("{firing} firing alerts")
    };
    if crate::alert_store::db::mitigated_by_alerts(&mut *conn, into.id, at).await? {
        let why = format!(
            "its alerts mitigated it, but {alerts} came with {} merged in: it stays open while \
             they fire",
            from.key
        );
        let change = Change::now(into.key, actor);
        incidents::step_back(conn, &change, Status::Acknowledged, &why).await?;
    } else {
        let now = crate::clock::now(&mut *conn).await?;
        let body = format!(
            "{alerts} came with {} merged in while it is mitigated; the mitigation stands",
            from.key
        );
        let details = json!({ "merged_firing": firing });
        crate::timeline::actions::record(
            &mut *conn,
            crate::timeline::db::NewEvent::by(&actor.name, into.id, now, Kind::Note, details)
                .saying(&body),
        )
        .await?;
    }
    Ok(())
}

/// Whom an incident is kept to: nobody in particular (open to everyone), or these teams and
/// people by name.
async fn kept_to(
    conn: &mut PgConnection,
    i: &IncidentRef,
) -> AppResult<Option<(Vec<String>, Vec<String>)>> {
    if !i.restricted {
        return Ok(None);
    }
    let a = crate::incident_ref::db::access(&mut *conn, i.id).await?;
    let names = |g: &[crate::incident_ref::db::Grantee]| {
        let mut n: Vec<String> = g.iter().map(|g| g.name.clone()).collect();
        n.sort();
        n
    };
    Ok(Some((names(&a.teams), names(&a.people))))
}

/// The incident as it is now (read again under the locks: a resolve or an access change may
/// have been waiting for them).
async fn again(
    conn: &mut PgConnection,
    i: &IncidentRef,
    seen_by: SeenBy,
) -> AppResult<IncidentRef> {
    crate::incident_ref::db::by_key(&mut *conn, i.key, seen_by)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no incident {}.", i.key)))
}

/// A split as asked: which alerts, and the new incident's title and severity (blank: the
/// first alert's summary, and the incident's own severity).
#[derive(Debug, Clone, Default)]
pub struct SplitDraft {
    pub alerts: Vec<i64>,
    pub lines: Vec<String>,
    pub title: String,
    pub severity: String,
}

/// Moves the chosen alerts of `from` out into a new incident of the same service (and the
/// same access, when `from` is restricted), which pages as any new incident does; the two
/// are linked and both timelines say so. `version`: the one of `from` the person saw.
pub async fn split(
    conn: &mut PgConnection,
    from: &IncidentRef,
    draft: &SplitDraft,
    version: Option<i32>,
    actor: &Actor,
) -> AppResult<Split> {
    let taken = domain::check_taken(&draft.alerts, &draft.lines)?;
    let severity = match draft.severity.trim() {
        "" => from.severity,
        s => Severity::parse("severity", s)?,
    };
    if from.status == "resolved" {
        return Err(AppError::Conflict(format!(
            "{} is resolved: its alerts have ended with it. Reopen it first to move any out.",
            from.key
        )));
    }
    lock(conn, from, None, (from, version)).await?;
    let from = again(conn, from, SeenBy::ALL).await?;
    if from.status == "resolved" {
        return Err(AppError::Conflict(format!(
            "{} was resolved meanwhile; its alerts have ended with it.",
            from.key
        )));
    }
    let from = &from;
    let ids = match &taken {
        Taken::Alerts(ids) => ids.clone(),
        Taken::Lines(lines) => {
            let most = i64::try_from(domain::MAX_SPLIT + 1).unwrap_or(i64::MAX);
            crate::alert_store::db::ids_of_lines(&mut *conn, from.id, lines, most).await?
        }
    };
    let among = crate::alert_store::db::among(&mut *conn, from.id, &ids).await?;
    let found = usize::try_from(among.chosen).unwrap_or(usize::MAX);
    domain::check_split(from.key, &taken, found, among.all)?;
    domain::check_firing(&taken, among.chosen_open)?;
    let first = among.first;
    let title = domain::split_title(&draft.title, first.as_deref().unwrap_or_default());
    let access = crate::incident_ref::db::access(&mut *conn, from.id).await?;
    let kept_to = access.restricted.then(|| incidents::AccessDraft {
        restricted: true,
        teams: access.teams.iter().map(|t| t.name.clone()).collect(),
        people: access.people.iter().map(|p| p.name.clone()).collect(),
    });
    let service = match (from.service_id, from.service.as_deref()) {
        (Some(id), Some(name)) => incidents::ServiceChoice::Known { id, name },
        _ => incidents::ServiceChoice::None,
    };
    let now = crate::clock::now(&mut *conn).await?;
    let note = format!("Opened for alerts {} moved out of {}", actor.name, from.key);
    let opening = incidents::Opening {
        number: None,
        title: &title,
        severity,
        service,
        summary: "",
        impact: "",
        started_at: None,
        detected_at: None,
        note: &note,
        restricted_to: kept_to.as_ref(),
        quiet: false,
        now,
    };
    let new = incidents::open(conn, &opening, actor).await?;
    let moved = crate::alert_store::actions::split_off(conn, from.id, new.id, &ids).await?;
    let new_ref = crate::incident_ref::db::by_key(&mut *conn, new.key, SeenBy::ALL)
        .await?
        .ok_or_else(|| AppError::Internal("the split-off incident vanished".into()))?;
    // The new incident is kept to the same people as the one it came from.
    let how = (Moved::Split, true);
    crate::related::actions::moved(conn, (from, &new_ref), how, moved, actor).await?;
    if crate::alert_store::db::open_counts(&mut *conn, &[from.id])
        .await?
        .is_empty()
    {
        let body = format!(
            "No alert of {} is firing now that its firing ones moved to {}: nothing will \
             mitigate it by itself, so mitigate or resolve it when its work is done",
            from.key, new.key
        );
        let details = json!({ "split": new.key.to_string() });
        crate::timeline::actions::record(
            &mut *conn,
            crate::timeline::db::NewEvent::by(&actor.name, from.id, now, Kind::Note, details)
                .saying(&body),
        )
        .await?;
    }
    // The incident the alerts left changed: its version moves, so a stale copy is refused.
    incidents::touch(conn, from.key).await?;
    audit::created(
        conn,
        actor,
        "incident.split",
        &from.key.to_string(),
        json!({ "new": new.key.to_string(), "alerts_moved": moved }),
    )
    .await?;
    Ok(Split {
        from: from.key,
        new: new.key,
        title: new.title,
        severity: new.severity,
        alerts_moved: moved,
    })
}
