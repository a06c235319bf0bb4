//! Configuration as code: `quell config export` writes Quell's teams, schedules, escalation
//! policies and services as a file; `quell config apply` makes Quell match a file, through the
//! same actions a person's changes take (checked, audited), in one transaction. A plan
//! (`--plan`) is the same work rolled back, so a name that does not exist, or a schedule Quell
//! would refuse, is refused by the plan too, with the file's line.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::{PgConnection, PgPool};

use super::domain::{
    self, Change, Document, Kind, Object, Refusal, SERVICE_POLICY, Verb, printable,
};
use crate::audit::Actor;
use crate::error::{AppError, AppResult};
use crate::oncall::domain::ScheduleDraft;
use crate::paging::domain::PolicyDraft;
use crate::services::domain::ServiceDraft;
use crate::teams::domain::TeamDraft;

/// Quell's objects, in canonical form, in [`domain::KINDS`] order.
pub async fn current(conn: &mut PgConnection) -> AppResult<Vec<Object>> {
    let mut objects = Vec::new();
    for t in crate::teams::db::list(&mut *conn, None).await? {
        let d = t.draft();
        objects.push(domain::canonical(Kind::Teams, &d.slug, &d));
    }
    for s in crate::oncall::db::list(&mut *conn, None).await? {
        objects.push(domain::canonical(Kind::Schedules, &s.name, &s.draft()));
    }
    let policies = crate::paging::db::list(&mut *conn, None).await?;
    for p in &policies {
        objects.push(domain::canonical(
            Kind::EscalationPolicies,
            &p.name,
            &p.draft(),
        ));
    }
    let paged_by: HashMap<String, String> = crate::paging::db::service_policies(&mut *conn)
        .await?
        .into_iter()
        .filter_map(|sp| {
            let name = policies
                .iter()
                .find(|p| Some(p.id) == sp.policy_id)?
                .name
                .clone();
            Some((sp.service, name))
        })
        .collect();
    for s in crate::services::db::list(&mut *conn).await? {
        let mut d = s.draft();
        // In the order a file's are checked in (bytes, whatever the database's collation).
        if let Some(names) = d.depends_on.as_mut() {
            names.sort();
        }
        let mut o = domain::canonical(Kind::Services, &s.name, &d);
        if let Some(p) = paged_by.get(&s.name) {
            o.value
                .insert(SERVICE_POLICY.into(), Value::String(p.clone()));
        }
        objects.push(o);
    }
    Ok(objects)
}

/// The file for Quell as it is.
pub async fn export(pool: &PgPool) -> AppResult<String> {
    let mut conn = pool.acquire().await?;
    Ok(domain::write(&current(&mut conn).await?))
}

/// What applying a file did (or, a plan, would do).
#[derive(Debug, Clone)]
pub struct Applied {
    pub changes: Vec<Change>,
    /// Objects of the file already as Quell has them
    pub unchanged: usize,
    /// false: a plan, nothing was changed
    pub applied: bool,
}

impl Applied {
    /// The plan as lines for a terminal.
    pub fn text(&self, file: &str) -> String {
        let count = |v: Verb| self.changes.iter().filter(|c| c.verb == v).count();
        let mut out = format!(
            "{file}: {} to create, {} to update, {} to delete, {} unchanged{}\n",
            count(Verb::Create),
            count(Verb::Update),
            count(Verb::Delete),
            self.unchanged,
            if self.applied {
                ""
            } else {
                " (plan: nothing changed)"
            }
        );
        for c in &self.changes {
            let at = c.line.map(|l| format!(" (line {l})")).unwrap_or_default();
            let what = match c.verb {
                Verb::Update => format!(": {}", c.fields.join(", ")),
                Verb::Keep => format!(": not in the file, but {}", c.note),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{:<7} {:<18} {}{at}{}\n",
                c.verb.as_str(),
                c.kind.one(),
                printable(&c.name),
                printable(&what)
            ));
        }
        out
    }
}

/// Why a file was not applied: what is wrong in it, each with its line.
#[derive(Debug)]
pub enum Refused {
    File(Vec<Refusal>),
    Quell(AppError),
}

impl From<AppError> for Refused {
    fn from(e: AppError) -> Self {
        Self::Quell(e)
    }
}

impl From<sqlx::Error> for Refused {
    fn from(e: sqlx::Error) -> Self {
        Self::Quell(e.into())
    }
}

/// Makes Quell match `text` (`prune`: deleting what the file's lists leave out), in one
/// transaction, kept only when `apply`.
pub async fn apply(
    pool: &PgPool,
    actor: &Actor,
    text: &str,
    (apply, prune): (bool, bool),
) -> Result<Applied, Refused> {
    let mut doc = domain::read(text).map_err(Refused::File)?;
    let mut tx = crate::transaction::begin(pool).await?;
    let current = current(&mut tx).await?;
    name_teams_by_slug(&mut doc, &current);
    let changes = domain::plan(&current, &doc, prune);
    let unchanged = doc.entries.len()
        - changes
            .iter()
            .filter(|c| matches!(c.verb, Verb::Create | Verb::Update))
            .count();
    let mut refusals = Vec::new();
    for c in &changes {
        let entry = doc
            .entries
            .iter()
            .find(|e| e.object.kind == c.kind && e.object.name == c.name);
        // Each change on its own savepoint: one refused leaves the others tried, so the
        // plan names every refusal at once.
        sqlx::query("savepoint config_change")
            .execute(&mut *tx)
            .await?;
        let done = match entry {
            Some(e) => write(&mut tx, actor, c, &e.object).await,
            None => remove(&mut tx, actor, c).await,
        };
        match done {
            Ok(()) => {
                sqlx::query("release savepoint config_change")
                    .execute(&mut *tx)
                    .await?;
            }
            Err(err) => {
                sqlx::query("rollback to savepoint config_change")
                    .execute(&mut *tx)
                    .await?;
                let (line, message) = match (&err, entry) {
                    (AppError::Validation(fields), Some(e)) if !fields.is_empty() => {
                        let f = &fields[0];
                        (e.line_of(&f.field), format!("{}: {}", f.field, f.message))
                    }
                    (_, Some(e)) => (e.line, err.to_string()),
                    (_, None) => (0, err.to_string()),
                };
                refusals.push(Refusal {
                    line,
                    message: printable(&format!("{} {:?}: {message}", c.kind.one(), c.name)),
                });
            }
        }
    }
    if !refusals.is_empty() {
        tx.rollback().await?;
        refusals.sort_by_key(|r| r.line);
        return Err(Refused::File(refusals));
    }
    if apply {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(Applied {
        changes,
        unchanged,
        applied: apply,
    })
}

/// A team may be named by its name or its slug wherever a file names one; Quell keeps the
/// slug, so the file's names become slugs before anything is compared.
fn name_teams_by_slug(doc: &mut Document, current: &[Object]) {
    let mut slugs: HashMap<String, String> = HashMap::new();
    let teams = current.iter().filter(|o| o.kind == Kind::Teams).chain(
        doc.entries
            .iter()
            .map(|e| &e.object)
            .filter(|o| o.kind == Kind::Teams),
    );
    for t in teams {
        if let Some(Value::String(name)) = t.value.get("name") {
            slugs.insert(name.trim().to_lowercase(), t.name.clone());
        }
        slugs.insert(t.name.to_lowercase(), t.name.clone());
    }
    for e in &mut doc.entries {
        if e.object.kind == Kind::Teams {
            continue;
        }
        if let Some(Value::String(team)) = e.object.value.get_mut("team")
            && let Some(slug) = slugs.get(&team.trim().to_lowercase())
        {
            *team = slug.clone();
        }
    }
}

fn draft<T: serde::de::DeserializeOwned>(o: &Object) -> AppResult<T> {
    let mut value = o.value.clone();
    value.remove(SERVICE_POLICY);
    serde_json::from_value(Value::Object(value))
        .map_err(|e| AppError::invalid("file", e.to_string()))
}

/// Creates or updates one object as the file has it.
async fn write(conn: &mut PgConnection, actor: &Actor, c: &Change, o: &Object) -> AppResult<()> {
    match c.kind {
        Kind::Teams => {
            let d: TeamDraft = draft(o)?;
            match c.verb {
                Verb::Create => {
                    crate::teams::actions::create(conn, actor, &d).await?;
                }
                _ => {
                    let team = crate::teams::db::get(&mut *conn, &c.name).await?;
                    crate::teams::actions::update(conn, actor, &team, None, &d).await?;
                }
            }
        }
        Kind::Schedules => {
            let d: ScheduleDraft = draft(o)?;
            match schedule_id(conn, &c.name).await? {
                None => {
                    crate::oncall::actions::create(conn, actor, &d).await?;
                }
                Some(id) => {
                    crate::oncall::actions::update(conn, actor, id, None, &d).await?;
                }
            }
        }
        Kind::EscalationPolicies => {
            let d: PolicyDraft = draft(o)?;
            match policy_id(conn, &c.name).await? {
                None => {
                    crate::paging::actions::create(conn, actor, &d).await?;
                }
                Some(id) => {
                    crate::paging::actions::update(conn, actor, id, None, &d).await?;
                }
            }
        }
        Kind::Services => {
            let mut d: ServiceDraft = draft(o)?;
            // The file is the whole truth: no dependencies written is none.
            d.depends_on = Some(d.depends_on.unwrap_or_default());
            let paging_only = c.fields.iter().all(|f| f == SERVICE_POLICY);
            match c.verb {
                Verb::Create => {
                    crate::services::actions::create(conn, actor, &d).await?;
                }
                // Only who pages for it differs: the service itself is left as it is.
                _ if paging_only => {}
                _ => {
                    let s = crate::services::db::get_by_name(&mut *conn, &c.name).await?;
                    let version = s.version;
                    if crate::services::actions::update(conn, actor, &s, version, &d)
                        .await?
                        .is_none()
                    {
                        return Err(AppError::Conflict(format!(
                            "service {:?} changed while the file was applied",
                            c.name
                        )));
                    }
                }
            }
            let policy = o.value.get(SERVICE_POLICY).and_then(Value::as_str);
            if c.verb == Verb::Create || c.fields.iter().any(|f| f == SERVICE_POLICY) {
                crate::paging::actions::assign(conn, actor, &c.name, policy).await?;
            }
        }
    }
    Ok(())
}

/// Deletes one object the file leaves out (a schedule is kept: Quell does not delete them).
async fn remove(conn: &mut PgConnection, actor: &Actor, c: &Change) -> AppResult<()> {
    if c.verb != Verb::Delete {
        return Ok(());
    }
    match c.kind {
        Kind::Teams => {
            let team = crate::teams::db::get(&mut *conn, &c.name).await?;
            crate::teams::actions::delete(conn, actor, &team).await
        }
        Kind::Schedules => Ok(()),
        Kind::EscalationPolicies => match policy_id(conn, &c.name).await? {
            Some(id) => crate::paging::actions::delete(conn, actor, id).await,
            None => Ok(()),
        },
        Kind::Services => {
            let s = crate::services::db::get_by_name(&mut *conn, &c.name).await?;
            crate::services::actions::delete(conn, actor, &s).await
        }
    }
}

async fn schedule_id(conn: &mut PgConnection, name: &str) -> AppResult<Option<i64>> {
    Ok(crate::oncall::db::list(&mut *conn, None)
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.id))
}

async fn policy_id(conn: &mut PgConnection, name: &str) -> AppResult<Option<i64>> {
    Ok(crate::paging::db::list(&mut *conn, None)
        .await?
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| p.id))
}
