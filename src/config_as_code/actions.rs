//! Configuration as code: `quell config export` writes Quell's teams, schedules, escalation
//! policies, services, routing rules, runbooks, notification channels and integrations as a
//! file; `quell config apply` makes Quell match a file, through the same actions a person's
//! changes take (checked, audited), in one transaction. A plan (`--plan`) is the same work
//! rolled back, so a name that does not exist, or a schedule Quell would refuse, is refused by
//! the plan too, with the file's line. Secrets come from the environment variables the file
//! names (`url_env`, `key_env`); a secret Quell makes (a new integration's key, a webhook's
//! signing secret) is printed once, when the file is applied.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::domain::{
    self, Change, ChannelFile, Document, IntegrationFile, Kind, Object, RULE_DEFAULT, Refusal,
    SERVICE_POLICY, TEAM_LEADS, TEAM_MEMBERS, Verb, printable,
};
use crate::audit::Actor;
use crate::error::{AppError, AppResult};
use crate::oncall::domain::ScheduleDraft;
use crate::paging::domain::PolicyDraft;
use crate::routing::domain::RuleDraft;
use crate::runbooks::domain::RunbookDraft;
use crate::services::domain::ServiceDraft;
use crate::teams::domain::{TeamDraft, TeamMap, TeamRole};

/// An object's id in Quell, for the change that updates or deletes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Id {
    Row(i64),
    Uuid(Uuid),
}

/// Quell's objects in canonical form, in [`domain::KINDS`] order, with the id of each (teams
/// and services are found by their slug and name).
pub struct Quell {
    pub objects: Vec<Object>,
    ids: HashMap<(Kind, String), Id>,
    /// Objects that share their kind and name with another (rules and runbooks may)
    twice: Vec<(Kind, String)>,
    /// The teams (slugs) whose people an identity provider's group says: their own
    /// `oidc_group`, or the installation's `QUELL_OIDC_TEAM_MAP`
    followed: Vec<String>,
}

impl Quell {
    fn push(&mut self, o: Object, id: Option<Id>) {
        let key = (o.kind, o.name.clone());
        if self
            .objects
            .iter()
            .any(|x| x.kind == o.kind && x.name == o.name)
        {
            self.twice.push(key.clone());
        }
        if let Some(id) = id {
            self.ids.insert(key, id);
        }
        self.objects.push(o);
    }

    fn id(&self, kind: Kind, name: &str) -> Option<Id> {
        self.ids.get(&(kind, name.to_owned())).copied()
    }

    fn row(&self, kind: Kind, name: &str) -> AppResult<i64> {
        match self.id(kind, name) {
            Some(Id::Row(id)) => Ok(id),
            _ => Err(AppError::NotFound(format!(
                "There is no {} {name:?}.",
                kind.one()
            ))),
        }
    }

    fn uuid(&self, kind: Kind, name: &str) -> AppResult<Uuid> {
        match self.id(kind, name) {
            Some(Id::Uuid(id)) => Ok(id),
            _ => Err(AppError::NotFound(format!(
                "There is no {} {name:?}.",
                kind.one()
            ))),
        }
    }
}

/// Quell's objects, in canonical form, in [`domain::KINDS`] order (`map`: the installation's
/// `QUELL_OIDC_TEAM_MAP`, whose teams follow a group).
pub async fn current(conn: &mut PgConnection, map: &TeamMap) -> AppResult<Quell> {
    let mut quell = Quell {
        objects: Vec::new(),
        ids: HashMap::new(),
        twice: Vec::new(),
        followed: Vec::new(),
    };
    for t in crate::teams::db::list(&mut *conn, None).await? {
        let d = t.draft();
        let mut o = domain::canonical(Kind::Teams, &d.slug, &d);
        for (field, role) in [
            (TEAM_LEADS, TeamRole::Lead),
            (TEAM_MEMBERS, TeamRole::Member),
        ] {
            let names = t.members.iter().filter(|m| m.role == role);
            let names = names.map(|m| m.handle.clone()).collect();
            // Stored memberships are one a person and team: never named twice.
            let _ = domain::set_people(&mut o, field, names);
        }
        if t.oidc_group.is_some() || map.groups_of(&t.slug).next().is_some() {
            quell.followed.push(t.slug.clone());
        }
        quell.push(o, None);
    }
    for s in crate::oncall::db::list(&mut *conn, None).await? {
        let o = domain::canonical(Kind::Schedules, &s.name, &s.draft());
        quell.push(o, Some(Id::Row(s.id)));
    }
    let policies = crate::paging::db::list(&mut *conn, None).await?;
    for p in &policies {
        let o = domain::canonical(Kind::EscalationPolicies, &p.name, &p.draft());
        quell.push(o, Some(Id::Row(p.id)));
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
        quell.push(o, None);
    }
    for r in crate::routing::db::list(&mut *conn).await? {
        // A stored rule was checked when written; as it is if it no longer passes.
        let d = domain::rule_checked(r.draft()).unwrap_or_else(|_| r.draft());
        quell.push(domain::rule_object(&d, r.is_default), Some(Id::Row(r.id)));
    }
    for b in crate::runbooks::db::list(&mut *conn, Default::default()).await? {
        let (name, d) =
            domain::runbook_checked(b.draft()).unwrap_or_else(|_| (b.name.clone(), b.draft()));
        quell.push(
            domain::canonical(Kind::Runbooks, &name, &d),
            Some(Id::Row(b.id)),
        );
    }
    let subscriptions = crate::notify::db::subscriptions(&mut *conn).await?;
    for c in crate::notify::db::channels(&mut *conn).await? {
        let file = ChannelFile {
            name: c.name.clone(),
            kind: c.kind.clone(),
            url: Some(c.url.clone()),
            team: c.team.clone(),
            subscriptions: subscriptions
                .iter()
                .filter(|s| s.channel_id == c.id)
                .map(|s| s.draft())
                .collect(),
        };
        let file = file.clone().checked().unwrap_or(file);
        let o = domain::canonical(Kind::Channels, &c.name, &file);
        quell.push(o, Some(Id::Row(c.id)));
    }
    // The heartbeats' own integration is Quell's, made when first needed: not configuration.
    let heartbeats = crate::heartbeats::db::source_id(&mut *conn).await?;
    for i in crate::integrations::db::list(&mut *conn).await? {
        if Some(i.id) == heartbeats {
            continue;
        }
        let file = IntegrationFile {
            name: i.name.clone(),
            format: i.format.as_str().to_owned(),
            on_all_resolved: Some(i.on_all_resolved.as_str().to_owned()),
            flapping: Some(i.flapping),
            disabled: !i.enabled,
        };
        let file = file.clone().checked().unwrap_or(file);
        let o = domain::canonical(Kind::Integrations, &i.name, &file);
        quell.push(o, Some(Id::Uuid(i.id)));
    }
    Ok(quell)
}

/// The file for Quell as it is (its secrets named by variable, never written; the people of
/// a team that follows a group left out).
pub async fn export(pool: &PgPool, map: &TeamMap) -> AppResult<String> {
    let mut conn = pool.acquire().await?;
    let quell = current(&mut conn, map).await?;
    Ok(domain::write(&domain::for_file(
        quell.objects,
        &quell.followed,
    )))
}

/// What applying a file did (or, a plan, would do).
#[derive(Debug, Clone)]
pub struct Applied {
    pub changes: Vec<Change>,
    /// Objects of the file already as Quell has them
    pub unchanged: usize,
    /// false: a plan, nothing was changed
    pub applied: bool,
    /// Secrets Quell made (a new integration's key, a webhook channel's signing secret), each
    /// a line naming its object: shown this once
    pub shown: Vec<String>,
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
            let line = match c.verb {
                Verb::Reorder => format!(
                    "{:<7} routing rules, tried in this order{at}: {}",
                    c.verb.as_str(),
                    c.fields.join(", ")
                ),
                verb => {
                    let what = match verb {
                        Verb::Update => format!(": {}", c.fields.join(", ")),
                        Verb::Keep => format!(": not in the file, but {}", c.note),
                        _ => String::new(),
                    };
                    format!(
                        "{:<7} {:<18} {}{at}{what}",
                        verb.as_str(),
                        c.kind.one(),
                        c.name
                    )
                }
            };
            out.push_str(&printable(&line));
            out.push('\n');
        }
        if self.applied && !self.shown.is_empty() {
            out.push_str(
                "Made by Quell and shown this once (Quell keeps only a hash of a key); put them \
                 in your secret store:\n",
            );
            for s in &self.shown {
                out.push_str(&format!("  {}\n", printable(s)));
            }
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

/// What a file is applied with from outside it: the places channels may reach
/// (`QUELL_WEBHOOK_ALLOW`), the teams that follow a group and the environment its `url_env`
/// and `key_env` name.
pub struct Outside<'a> {
    pub allow: &'a crate::egress::Allow,
    /// `QUELL_OIDC_TEAM_MAP`: the teams it names follow a group, as `oidc_group` does
    pub team_map: &'a TeamMap,
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// The work of one apply: what each change needs besides its object.
struct Work<'a> {
    actor: &'a Actor,
    allow: &'a crate::egress::Allow,
    quell: &'a Quell,
    /// Secrets read from the environment, by object (a channel's address is its `url`)
    keys: HashMap<String, String>,
    shown: Vec<String>,
}

/// Makes Quell match `text` (`prune`: deleting what the file's lists leave out), in one
/// transaction, kept only when `apply`.
pub async fn apply(
    pool: &PgPool,
    actor: &Actor,
    text: &str,
    (apply, prune): (bool, bool),
    outside: &Outside<'_>,
) -> Result<Applied, Refused> {
    let mut doc = domain::read(text).map_err(Refused::File)?;
    let mut tx = crate::transaction::begin(pool).await?;
    let mut quell = current(&mut tx, outside.team_map).await?;
    name_teams_by_slug(&mut doc, &quell.objects);
    let mut refusals = named_twice(&quell, &doc);
    name_people(&mut tx, &quell, &mut doc, &mut refusals).await?;
    refusals.extend(match_default_rule(&mut quell, &doc));
    let keys = read_secrets(&mut tx, &mut quell, &mut doc, outside, &mut refusals).await?;
    if !refusals.is_empty() {
        tx.rollback().await?;
        refusals.sort_by_key(|r| r.line);
        return Err(Refused::File(refusals));
    }
    let changes = domain::plan(&quell.objects, &doc, prune);
    let unchanged = doc.entries.len()
        - changes
            .iter()
            .filter(|c| matches!(c.verb, Verb::Create | Verb::Update))
            .count();
    let mut work = Work {
        actor,
        allow: outside.allow,
        quell: &quell,
        keys,
        shown: Vec::new(),
    };
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
        let done = match (c.verb, entry) {
            // A rule refused before it was made: the order cannot be, and saying so again
            // would only add noise.
            (Verb::Reorder, _) if !refusals.is_empty() => Ok(()),
            (Verb::Reorder, _) => reorder(&mut tx, &work, c).await,
            (Verb::Create | Verb::Update, Some(e)) => write(&mut tx, &mut work, c, &e.object).await,
            (Verb::Delete, _) => remove(&mut tx, &work, c).await,
            _ => Ok(()),
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
                let entry = entry.filter(|_| c.verb != Verb::Reorder);
                let (line, message) = match (&err, entry) {
                    (AppError::Validation(fields), Some(e)) if !fields.is_empty() => {
                        let f = &fields[0];
                        // A secret's field is the file's variable for it (`key` → `key_env`).
                        let field = match e.secrets.contains_key(&f.field) {
                            true => format!("{}_env", f.field),
                            false => f.field.clone(),
                        };
                        (e.line_of(&field), format!("{field}: {}", f.message))
                    }
                    (_, Some(e)) => (e.line, err.to_string()),
                    (_, None) => (c.line.unwrap_or(0), err.to_string()),
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
        shown: if apply { work.shown } else { Vec::new() },
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

/// A team's people are named by handle or email; Quell keeps handles, so the file's become
/// handles before anything is compared (a name nobody has, or one person named twice, is
/// refused at its line). A list the file does not write stays as Quell has it; a team that
/// follows a group may not be given people.
async fn name_people(
    conn: &mut PgConnection,
    quell: &Quell,
    doc: &mut Document,
    refusals: &mut Vec<Refusal>,
) -> AppResult<()> {
    if !doc.entries.iter().any(|e| e.object.kind == Kind::Teams) {
        return Ok(());
    }
    let people = crate::people::db::list(&mut *conn).await?;
    let handle_of = |name: &str| {
        let name = name.to_lowercase();
        people
            .iter()
            .find(|p| p.handle.to_lowercase() == name || p.email.to_lowercase() == name)
            .map(|p| p.handle.clone())
    };
    for e in doc
        .entries
        .iter_mut()
        .filter(|e| e.object.kind == Kind::Teams)
    {
        let slug = e.object.name.clone();
        let have = quell
            .objects
            .iter()
            .find(|o| o.kind == Kind::Teams && o.name == slug);
        let mut refuse = |line: usize, message: String| {
            refusals.push(Refusal {
                line,
                message: printable(&format!("team {slug:?}: {message}")),
            });
        };
        let mut seen: HashMap<String, String> = HashMap::new();
        for f in [TEAM_LEADS, TEAM_MEMBERS] {
            if !e.fields.contains_key(f) {
                match have.and_then(|o| o.value.get(f)) {
                    Some(v) => e.object.value.insert(f.into(), v.clone()),
                    None => e.object.value.remove(f),
                };
                continue;
            }
            if quell.followed.contains(&slug) {
                refuse(
                    e.line_of(f),
                    format!(
                        "{f}: the team follows an identity provider's group (QUELL_OIDC_TEAM_MAP), which says who is in it; leave leads and members out"
                    ),
                );
                continue;
            }
            let mut handles = Vec::new();
            for name in domain::names_in(&e.object, f) {
                let line = e.line_of(&format!("{f}[{name}]"));
                match handle_of(&name) {
                    None => refuse(
                        line,
                        format!("{f}: there is no person {name:?} (a handle or an email)"),
                    ),
                    Some(h) => match seen.insert(h.clone(), name.clone()) {
                        Some(first) => refuse(
                            line,
                            format!(
                                "{f}: {name:?} is {h:?}, named already as {first:?}; a person is in a team once"
                            ),
                        ),
                        None => handles.push(h),
                    },
                }
            }
            let _ = domain::set_people(&mut e.object, f, handles);
        }
    }
    Ok(())
}

/// A file names an object by its name: where Quell has two of a kind the file lists by one
/// name (routing rules and runbooks may share names), the file cannot say which it means.
fn named_twice(quell: &Quell, doc: &Document) -> Vec<Refusal> {
    let mut seen: Vec<&(Kind, String)> = Vec::new();
    quell
        .twice
        .iter()
        .filter(|(kind, _)| doc.kinds.contains(kind))
        .filter(|key| {
            let first = !seen.contains(key);
            seen.push(key);
            first
        })
        .map(|(kind, name)| Refusal {
            line: doc
                .entries
                .iter()
                .find(|e| e.object.kind == *kind && e.object.name == *name)
                .map_or(0, |e| e.line),
            message: printable(&format!(
                "Quell has more than one {} named {name:?}: rename all but one (in the browser or the API) so the file can name each",
                kind.one()
            )),
        })
        .collect()
}

/// The file's default rule (`default: true`) is Quell's, whatever each calls it: Quell's is
/// taken under the file's name, so a different name plans a rename.
fn match_default_rule(quell: &mut Quell, doc: &Document) -> Vec<Refusal> {
    let Some(wanted) = doc
        .entries
        .iter()
        .find(|e| domain::is_default_rule(&e.object))
    else {
        return Vec::new();
    };
    let Some(at) = quell.objects.iter().position(domain::is_default_rule) else {
        return Vec::new();
    };
    let name = wanted.object.name.clone();
    let was = quell.objects[at].name.clone();
    if was == name {
        return Vec::new();
    }
    if quell.id(Kind::RoutingRules, &name).is_some() {
        return vec![Refusal {
            line: wanted.line,
            message: printable(&format!(
                "routing rule {name:?}: it is a rule of its own in Quell, not the default rule ({was:?}); Quell's default rule cannot change"
            )),
        }];
    }
    quell.objects[at].name = name.clone();
    rename(quell, Kind::RoutingRules, &was, &name);
    // Its runbooks go by their rule's name: taken under the new one too, so each is updated
    // (to the renamed rule) rather than made again.
    let of_rule: Vec<(String, String)> = quell
        .objects
        .iter()
        .filter(|o| {
            o.kind == Kind::Runbooks && o.value.get("rule") == Some(&Value::String(was.clone()))
        })
        .filter_map(|o| {
            let own = o.value.get("name")?.as_str()?;
            Some((o.name.clone(), format!("{own} (rule {name})")))
        })
        .collect();
    for (old, new) in of_rule {
        if let Some(o) = quell
            .objects
            .iter_mut()
            .find(|o| o.kind == Kind::Runbooks && o.name == old)
        {
            o.name = new.clone();
        }
        rename(quell, Kind::Runbooks, &old, &new);
    }
    Vec::new()
}

fn rename(quell: &mut Quell, kind: Kind, was: &str, name: &str) {
    if let Some(id) = quell.ids.remove(&(kind, was.to_owned())) {
        quell.ids.insert((kind, name.to_owned()), id);
    }
}

/// The secrets the file names by environment variable, read: a channel's address becomes its
/// `url` (checked as the API checks it), kept as Quell has it when the variable is not set; an
/// integration's key is compared by its hash (`key` on both sides, so a different key plans an
/// update). Returns the keys read, by integration. A new object whose variable is not set is
/// refused, naming the line.
async fn read_secrets(
    conn: &mut PgConnection,
    quell: &mut Quell,
    doc: &mut Document,
    outside: &Outside<'_>,
    refusals: &mut Vec<Refusal>,
) -> AppResult<HashMap<String, String>> {
    let mut keys = HashMap::new();
    for e in &mut doc.entries {
        let kind = e.object.kind;
        let name = e.object.name.clone();
        let have = quell
            .objects
            .iter()
            .position(|o| o.kind == kind && o.name == name);
        let mut refuse = |field: &str, message: String| {
            refusals.push(Refusal {
                line: e.line_of(field),
                message: printable(&format!("{} {name:?}: {field}: {message}", kind.one())),
            });
        };
        match kind {
            Kind::Channels => {
                let read = match e.secrets.get("url") {
                    None => None,
                    Some(var) => match (outside.var)(var).filter(|v| !v.trim().is_empty()) {
                        Some(v) => Some(v),
                        None => match have {
                            // Not set here: the address stays as Quell has it (not checked
                            // again: this machine may not list the place the server does).
                            Some(i) => {
                                if let Some(url) = quell.objects[i].value.get("url").cloned() {
                                    e.object.value.insert("url".into(), url);
                                }
                                continue;
                            }
                            None => {
                                refuse(
                                    "url_env",
                                    format!("{var} is not set: a new channel needs its address"),
                                );
                                continue;
                            }
                        },
                    },
                };
                let url = read.or_else(|| {
                    e.object
                        .value
                        .get("url")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
                let kind_of = e
                    .object
                    .value
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let field = if e.secrets.contains_key("url") {
                    "url_env"
                } else {
                    "url"
                };
                let checked = crate::notify::domain::ChannelKind::parse(kind_of).and_then(|k| {
                    crate::notify::domain::check_address(
                        k,
                        "url",
                        url.as_deref().unwrap_or_default(),
                        outside.allow,
                    )
                });
                match checked {
                    Ok(address) => {
                        e.object.value.insert("url".into(), Value::String(address));
                    }
                    Err(crate::domain::DomainError::Invalid { message, .. }) => {
                        refuse(field, message)
                    }
                    Err(crate::domain::DomainError::Conflict(message)) => refuse(field, message),
                }
            }
            Kind::Integrations => {
                let Some(var) = e.secrets.get("key") else {
                    continue;
                };
                match ((outside.var)(var).filter(|v| !v.trim().is_empty()), have) {
                    (Some(key), have) => {
                        let key = key.trim().to_owned();
                        e.object.value.insert(
                            "key".into(),
                            Value::String(hex(&crate::auth::domain::token_hash(&key))),
                        );
                        if let Some(i) = have {
                            let id = quell.uuid(kind, &name)?;
                            let stored =
                                crate::integrations::db::credentials(&mut *conn, &[id], &[])
                                    .await?;
                            if let Some(c) = stored.first() {
                                quell.objects[i]
                                    .value
                                    .insert("key".into(), Value::String(hex(&c.key_hash)));
                            }
                        }
                        keys.insert(name.clone(), key);
                    }
                    // Not set here: the key stays as Quell has it.
                    (None, Some(_)) => {}
                    (None, None) => refuse(
                        "key_env",
                        format!(
                            "{var} is not set: set it to the new integration's key, or leave key_env out and Quell makes one (shown once)"
                        ),
                    ),
                }
            }
            _ => {}
        }
    }
    Ok(keys)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The draft an object was read from (the fields that are not the draft's left out).
fn draft<T: serde::de::DeserializeOwned>(o: &Object) -> AppResult<T> {
    let mut value = o.value.clone();
    for field in [
        SERVICE_POLICY,
        RULE_DEFAULT,
        "key",
        TEAM_LEADS,
        TEAM_MEMBERS,
    ] {
        value.remove(field);
    }
    serde_json::from_value(Value::Object(value))
        .map_err(|e| AppError::invalid("file", e.to_string()))
}

/// Creates or updates one object as the file has it.
async fn write(
    conn: &mut PgConnection,
    work: &mut Work<'_>,
    c: &Change,
    o: &Object,
) -> AppResult<()> {
    let actor = work.actor;
    let quell = work.quell;
    let create = c.verb == Verb::Create;
    let changed = |field: &str| create || c.fields.iter().any(|f| f == field);
    // The kinds whose capability creates from the draft and updates by id alike.
    macro_rules! create_or_update {
        ($($actions:ident)::+, $draft:ty) => {{
            let d: $draft = draft(o)?;
            if create {
                $($actions)::+::create(conn, actor, &d).await?;
            } else {
                let id = quell.row(c.kind, &c.name)?;
                $($actions)::+::update(conn, actor, id, None, &d).await?;
            }
        }};
    }
    match c.kind {
        Kind::Teams => {
            let d: TeamDraft = draft(o)?;
            let people = [TEAM_LEADS, TEAM_MEMBERS];
            let team = if create {
                crate::teams::actions::create(conn, actor, &d).await?
            } else {
                let team = crate::teams::db::get(&mut *conn, &c.name).await?;
                // Only who is in it differs: the team itself is left as it is.
                match c.fields.iter().all(|f| people.contains(&f.as_str())) {
                    true => team,
                    false => crate::teams::actions::update(conn, actor, &team, None, &d).await?,
                }
            };
            if people.iter().any(|f| changed(f)) {
                set_members(conn, actor, team, o).await?;
            }
        }
        Kind::Schedules => create_or_update!(crate::oncall::actions, ScheduleDraft),
        Kind::EscalationPolicies => create_or_update!(crate::paging::actions, PolicyDraft),
        Kind::Services => {
            let mut d: ServiceDraft = draft(o)?;
            // The file is the whole truth: no dependencies written is none.
            d.depends_on = Some(d.depends_on.unwrap_or_default());
            let paging_only = c.fields.iter().all(|f| f == SERVICE_POLICY);
            if create {
                crate::services::actions::create(conn, actor, &d).await?;
            } else if !paging_only {
                // (Only who pages for it differs: the service itself is left as it is.)
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
            let policy = o.value.get(SERVICE_POLICY).and_then(Value::as_str);
            if changed(SERVICE_POLICY) {
                crate::paging::actions::assign(conn, actor, &c.name, policy).await?;
            }
        }
        Kind::RoutingRules => {
            if create && domain::is_default_rule(o) {
                return Err(AppError::invalid(
                    RULE_DEFAULT,
                    "Quell has one default rule already; name it here instead",
                ));
            }
            if !create && changed(RULE_DEFAULT) {
                return Err(AppError::invalid(
                    RULE_DEFAULT,
                    "the default rule stays the default, and no other rule becomes it",
                ));
            }
            create_or_update!(crate::routing::actions, RuleDraft)
        }
        Kind::Runbooks => create_or_update!(crate::runbooks::actions, RunbookDraft),
        Kind::Channels => write_channel(conn, work, c, &draft(o)?).await?,
        Kind::Integrations => write_integration(conn, work, c, &draft(o)?).await?,
    }
    Ok(())
}

/// Makes a team's members those `o` names, each in their part: who is left out is taken out,
/// who is new or in another part is put in.
async fn set_members(
    conn: &mut PgConnection,
    actor: &Actor,
    mut team: crate::teams::db::Team,
    o: &Object,
) -> AppResult<()> {
    let mut wanted: Vec<(String, TeamRole)> = Vec::new();
    for (field, role) in [
        (TEAM_LEADS, TeamRole::Lead),
        (TEAM_MEMBERS, TeamRole::Member),
    ] {
        wanted.extend(domain::names_in(o, field).into_iter().map(|h| (h, role)));
    }
    let gone: Vec<String> = team
        .members
        .iter()
        .filter(|m| !wanted.iter().any(|(h, _)| *h == m.handle))
        .map(|m| m.handle.clone())
        .collect();
    for handle in gone {
        team = crate::teams::actions::remove_member(conn, actor, &team, &handle).await?;
    }
    for (handle, role) in &wanted {
        if team.part_of(handle) != Some(*role) {
            team = crate::teams::actions::set_member(conn, actor, &team, handle, *role).await?;
        }
    }
    Ok(())
}

async fn write_channel(
    conn: &mut PgConnection,
    work: &mut Work<'_>,
    c: &Change,
    d: &ChannelFile,
) -> AppResult<()> {
    use crate::notify::actions as notify;
    let actor = work.actor;
    let create = c.verb == Verb::Create;
    let changed = |field: &str| create || c.fields.iter().any(|f| f == field);
    if !create && changed("kind") {
        return Err(AppError::invalid(
            "kind",
            "a channel's kind does not change; give the new channel another name",
        ));
    }
    let team_id = match d.team.as_deref() {
        Some(team) => crate::teams::actions::named(&mut *conn, team).await?,
        None => None,
    };
    let url = d.url.as_deref().unwrap_or_default();
    let id = if create {
        let asked = notify::ChannelRequest {
            name: &d.name,
            kind: &d.kind,
            url,
            events: None,
            team_id,
        };
        let (channel, secret) = notify::create_channel(conn, actor, asked, work.allow).await?;
        if let Some(secret) = secret {
            work.shown
                .push(format!("channel {:?}: signing secret {secret}", d.name));
        }
        channel.id
    } else {
        let id = work.quell.row(c.kind, &c.name)?;
        if changed("url") || changed("team") {
            let url = changed("url").then_some(url);
            notify::update_channel(conn, actor, id, (url, team_id), work.allow).await?;
        }
        id
    };
    if changed("subscriptions") {
        for s in notify::subscriptions_of(&mut *conn, id).await? {
            notify::unsubscribe(conn, actor, s.id).await?;
        }
        for s in &d.subscriptions {
            // Named by its events: the file's order is not kept (subscriptions are a set).
            notify::subscribe(conn, actor, id, s)
                .await
                .map_err(|e| match e {
                    AppError::Validation(fields) => AppError::Validation(
                        fields
                            .into_iter()
                            .map(|mut f| {
                                f.message = format!(
                                    "the subscription to {}: {}: {}",
                                    s.events.join(", "),
                                    f.field,
                                    f.message
                                );
                                f.field = "subscriptions".into();
                                f
                            })
                            .collect(),
                    ),
                    other => other,
                })?;
        }
    }
    Ok(())
}

async fn write_integration(
    conn: &mut PgConnection,
    work: &mut Work<'_>,
    c: &Change,
    d: &IntegrationFile,
) -> AppResult<()> {
    use crate::integrations::actions as integrations;
    let actor = work.actor;
    let key = work.keys.get(&d.name).map(String::as_str);
    let on_all_resolved = d.on_all_resolved.as_deref().unwrap_or("mitigate");
    let flapping = d.flapping.unwrap_or_default();
    if c.verb == Verb::Create {
        let made = integrations::create(
            conn,
            actor,
            &d.name,
            &d.format,
            Some(on_all_resolved),
            Some(flapping),
            key,
        )
        .await?;
        if d.disabled {
            let id = made.integration.id;
            integrations::update(conn, actor, id, None, Some(false), None, None).await?;
        }
        if key.is_none() {
            work.shown
                .push(format!("integration {:?}: key {}", d.name, made.key));
        }
        if let Some(secret) = made.signing_secret {
            work.shown
                .push(format!("integration {:?}: signing secret {secret}", d.name));
        }
        return Ok(());
    }
    let changed = |field: &str| c.fields.iter().any(|f| f == field);
    if changed("format") {
        return Err(AppError::invalid(
            "format",
            "an integration's format does not change (its senders post in it); give a new one another name",
        ));
    }
    let id = work.quell.uuid(c.kind, &c.name)?;
    if changed("on_all_resolved") || changed("flapping") || changed("disabled") {
        let enabled = Some(!d.disabled);
        integrations::update(
            conn,
            actor,
            id,
            None,
            enabled,
            Some(on_all_resolved),
            Some(flapping),
        )
        .await?;
    }
    if changed("key") {
        // The key the variable holds; the old one stops working at commit.
        integrations::rekey(conn, actor, id, key).await?;
    }
    Ok(())
}

/// Deletes one object the file leaves out (what Quell cannot delete is a [`Verb::Keep`]).
async fn remove(conn: &mut PgConnection, work: &Work<'_>, c: &Change) -> AppResult<()> {
    let actor = work.actor;
    let quell = work.quell;
    match c.kind {
        Kind::Teams => {
            let team = crate::teams::db::get(&mut *conn, &c.name).await?;
            crate::teams::actions::delete(conn, actor, &team).await
        }
        Kind::Schedules | Kind::Integrations => Ok(()),
        Kind::EscalationPolicies => {
            let id = quell.row(c.kind, &c.name)?;
            crate::paging::actions::delete(conn, actor, id).await
        }
        Kind::Services => {
            let s = crate::services::db::get_by_name(&mut *conn, &c.name).await?;
            crate::services::actions::delete(conn, actor, &s).await
        }
        Kind::RoutingRules => {
            let id = quell.row(c.kind, &c.name)?;
            crate::routing::actions::delete(conn, actor, id).await
        }
        Kind::Runbooks => {
            let id = quell.row(c.kind, &c.name)?;
            crate::runbooks::actions::delete(conn, actor, id).await
        }
        Kind::Channels => {
            let id = quell.row(c.kind, &c.name)?;
            crate::notify::actions::delete_channel(conn, actor, id).await
        }
    }
}

/// Puts the routing rules in the order the plan names (rules made by this apply included).
async fn reorder(conn: &mut PgConnection, work: &Work<'_>, c: &Change) -> AppResult<()> {
    let rules = crate::routing::db::list(&mut *conn).await?;
    let order = c
        .fields
        .iter()
        .map(|name| {
            rules
                .iter()
                .find(|r| !r.is_default && r.name == *name)
                .map(|r| r.id)
                .ok_or_else(|| AppError::NotFound(format!("There is no routing rule {name:?}.")))
        })
        .collect::<AppResult<Vec<i64>>>()?;
    crate::routing::actions::reorder(conn, work.actor, &order).await?;
    Ok(())
}
