//! Writing runbooks (checked, audited) and checking their steps on an incident (with its
//! timeline entry and audit row in the same transaction).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Check, Runbook};
use super::domain::{CheckedRunbook, Owner, RunbookDraft};
use crate::audit::{self, Actor};
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// The checked runbook as a row, its owner resolved to ids, and the team whose leads may
/// change it (its service's or its rule's; `None`: the installation's): an unknown service or
/// rule is refused naming the field.
async fn resolve<'a>(
    conn: &mut PgConnection,
    c: &'a CheckedRunbook,
) -> AppResult<(db::Row<'a>, Option<i64>)> {
    let (service_id, rule_id, team_id) = match &c.owner {
        Owner::Service(name) => {
            let s = crate::services::db::find_by_name(&mut *conn, name)
                .await?
                .ok_or_else(|| {
                    AppError::invalid("service", format!("there is no service named {name:?}"))
                })?;
            (Some(s.id), None, s.team_id)
        }
        Owner::Rule(id) => match crate::routing::actions::find(&mut *conn, *id).await {
            Ok(rule) => (None, Some(*id), rule.team_id),
            Err(AppError::NotFound(_)) => {
                return Err(AppError::invalid(
                    "rule_id",
                    format!("there is no routing rule {id}"),
                ));
            }
            Err(other) => return Err(other),
        },
        Owner::RuleNamed(name) => {
            let rules: Vec<_> = crate::routing::db::list(&mut *conn)
                .await?
                .into_iter()
                .filter(|r| r.name == *name)
                .collect();
            match rules.as_slice() {
                [rule] => (None, Some(rule.id), rule.team_id),
                [] => {
                    return Err(AppError::invalid(
                        "rule",
                        format!("there is no routing rule named {name:?}"),
                    ));
                }
                _ => {
                    return Err(AppError::invalid(
                        "rule",
                        format!(
                            "{} routing rules are named {name:?}; rename all but one, or give the one you mean by rule_id",
                            rules.len()
                        ),
                    ));
                }
            }
        }
    };
    let row = db::Row {
        name: &c.name,
        link: &c.link,
        service_id,
        rule_id,
        steps: &c.steps,
    };
    Ok((row, team_id))
}

/// The team whose leads may change a runbook written as `draft` (see [`resolve`]).
pub async fn team_of(conn: &mut PgConnection, draft: &RunbookDraft) -> AppResult<Option<i64>> {
    let c = draft.checked()?;
    Ok(resolve(conn, &c).await?.1)
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    draft: &RunbookDraft,
) -> AppResult<Runbook> {
    let c = draft.checked()?;
    let (row, _) = resolve(conn, &c).await?;
    let id = db::insert(&mut *conn, &row).await?;
    let created = db::get(&mut *conn, id).await?;
    audit::created(conn, actor, "runbook.create", &created.name, &created).await?;
    Ok(created)
}

/// Replaces runbook `id` if it is still at `expected_version`.
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    expected_version: Option<i32>,
    draft: &RunbookDraft,
) -> AppResult<Runbook> {
    let current = db::get(&mut *conn, id).await?;
    let c = draft.checked()?;
    let (row, _) = resolve(conn, &c).await?;
    let version = expected_version.unwrap_or(current.version);
    if !db::update(&mut *conn, id, version, &row).await? {
        return Err(AppError::Stale {
            current_version: current.version,
        });
    }
    let updated = db::get(&mut *conn, id).await?;
    audit::changed(
        conn,
        actor,
        "runbook.update",
        &updated.name,
        &current,
        &updated,
    )
    .await?;
    Ok(updated)
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let current = db::get(&mut *conn, id).await?;
    db::delete(&mut *conn, id).await?;
    audit::deleted(conn, actor, "runbook.delete", &current.name, &current).await
}

/// One step of a runbook on an incident, checked or not.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = ChecklistItem)]
pub struct Item {
    pub position: i32,
    pub step: String,
    pub checked_by: Option<String>,
    pub checked_at: Option<DateTime<Utc>>,
}

/// A runbook as an incident shows it: its steps with this incident's checks.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Checklist {
    pub runbook: Runbook,
    pub items: Vec<Item>,
}

impl Checklist {
    pub fn done(&self) -> usize {
        self.items.iter().filter(|i| i.checked_at.is_some()).count()
    }
}

/// Puts the incident's checks on its runbooks' steps.
pub fn assemble(runbooks: Vec<Runbook>, checks: &[Check]) -> Vec<Checklist> {
    runbooks
        .into_iter()
        .map(|runbook| {
            let items = runbook
                .steps
                .iter()
                .enumerate()
                .map(|(n, step)| {
                    let check = checks
                        .iter()
                        .find(|c| c.runbook_id == runbook.id && c.position as usize == n);
                    Item {
                        position: n as i32,
                        step: step.clone(),
                        checked_by: check.map(|c| c.checked_by.clone()),
                        checked_at: check.map(|c| c.checked_at),
                    }
                })
                .collect();
            Checklist { runbook, items }
        })
        .collect()
}

/// An incident as its checklist needs it; the caller, which knows incidents, reads it.
pub struct Checking {
    pub incident_id: i64,
    /// `INC-1187`, for messages and the audit log.
    pub key: String,
    pub service_id: Option<i64>,
}

/// The incident's runbooks with its checks, its service's first.
pub async fn checklist(conn: &mut PgConnection, i: &Checking) -> AppResult<Vec<Checklist>> {
    let runbooks = db::for_incident(&mut *conn, i.incident_id, i.service_id).await?;
    let checks = db::checks(&mut *conn, i.incident_id).await?;
    Ok(assemble(runbooks, &checks))
}

/// Which step to tick or untick.
pub struct Tick<'a> {
    pub runbook_id: i64,
    pub position: i32,
    pub checked: bool,
    pub actor: &'a Actor,
}

/// Checks or unchecks one step of one of the incident's runbooks, recording who and when on the
/// timeline; doing what is already done changes nothing. A runbook the incident does not show is
/// not found; a position past its steps is refused naming `position`.
pub async fn tick(conn: &mut PgConnection, i: &Checking, t: &Tick<'_>) -> AppResult<Checklist> {
    let runbook = db::for_incident(&mut *conn, i.incident_id, i.service_id)
        .await?
        .into_iter()
        .find(|r| r.id == t.runbook_id)
        .ok_or_else(|| {
            AppError::NotFound(format!(
                "Runbook {} is not one of {}'s.",
                t.runbook_id, i.key
            ))
        })?;
    let step = usize::try_from(t.position)
        .ok()
        .and_then(|p| runbook.steps.get(p))
        .cloned()
        .ok_or_else(|| {
            AppError::invalid(
                "position",
                format!(
                    "{} has steps 0 to {}",
                    runbook.name,
                    runbook.steps.len().saturating_sub(1)
                ),
            )
        })?;
    let now = clock::now(&mut *conn).await?;
    let changed = if t.checked {
        let check = Check {
            runbook_id: runbook.id,
            position: t.position,
            step: step.clone(),
            checked_by: t.actor.name.clone(),
            checked_at: now,
        };
        db::check(&mut *conn, i.incident_id, &check).await?
    } else {
        db::uncheck(&mut *conn, i.incident_id, runbook.id, t.position).await?
    };
    if changed {
        let details = json!({
            "runbook": runbook.name,
            "runbook_id": runbook.id,
            "position": t.position,
            "step": step,
            "checked": t.checked,
        });
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(
                &t.actor.name,
                i.incident_id,
                now,
                Kind::Checklist,
                details.clone(),
            ),
        )
        .await?;
        audit::created(conn, t.actor, "incident.checklist", &i.key, &details).await?;
    }
    let checks = db::checks(&mut *conn, i.incident_id).await?;
    Ok(assemble(vec![runbook], &checks).remove(0))
}
