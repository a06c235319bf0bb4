//! An import from PagerDuty or Opsgenie: read everything through its REST API first, then, in one
//! transaction, make or update in Quell what each object becomes, through the same actions a
//! person's changes take (audited). A dry run is the same work rolled back, so its plan is
//! exactly what a run would do. What an import made is remembered with a digest of what it
//! was made from: run again, nothing changes; after a change on the vendor's side, what it made
//! is updated. Objects already in Quell under the same name that no import made are left alone
//! and named in the plan.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, PgPool};

use super::db::{self, Imported};
use super::domain::{
    self as pd, OPSGENIE, PAGERDUTY, Source, Vendor, first_difference, opsgenie, rendered,
    schedule_layers,
};
use super::vendor::{Opsgenie, PagerDuty};
use crate::audit::Actor;
use crate::error::AppResult;
use crate::oncall::domain::ScheduleDraft;
use crate::paging::domain::{PolicyDraft, Step as PolicyStep, Target};
use crate::services::domain::ServiceDraft;

/// How far ahead overrides are read, and imported schedules compared with the vendor's own
/// rendering.
const OVERRIDES_AHEAD_DAYS: i64 = 365;
pub const COMPARED_DAYS: i64 = 28;

/// What the import does with one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    Create,
    Update,
    Unchanged,
    /// An object already in Quell is taken as this one (a person with the same email)
    Link,
    /// Not imported; `detail` says why
    Skip,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Unchanged => "unchanged",
            Self::Link => "link",
            Self::Skip => "skip",
        }
    }
}

/// One line of the plan.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PlanStep {
    pub verb: Verb,
    /// person, schedule, escalation policy, service, integration
    pub kind: &'static str,
    /// What it is (or would be) called in Quell
    pub name: String,
    /// The vendor's object: its kind, id and name
    pub source: String,
    /// How it maps, what differs, or why it is skipped
    pub detail: String,
}

/// What an import did, or (a dry run) would do.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Plan {
    /// pagerduty, opsgenie
    pub vendor: &'static str,
    /// How a person calls the vendor
    #[serde(skip)]
    pub vendor_name: &'static str,
    /// false: a dry run, nothing was changed
    pub applied: bool,
    pub steps: Vec<PlanStep>,
    /// Requests the vendor turned away for its rate limit, each tried again after the wait
    pub rate_limited: u32,
}

impl Plan {
    /// How many steps do `verb`.
    pub fn count(&self, verb: Verb) -> usize {
        self.steps.iter().filter(|s| s.verb == verb).count()
    }

    /// The plan as lines for a terminal.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} import {}: {} to create, {} to update, {} unchanged, {} linked, {} skipped\n",
            self.vendor_name,
            if self.applied {
                "done"
            } else {
                "plan (dry run: nothing changed)"
            },
            self.count(Verb::Create),
            self.count(Verb::Update),
            self.count(Verb::Unchanged),
            self.count(Verb::Link),
            self.count(Verb::Skip),
        );
        // What the vendor's users wrote reaches a terminal: no control characters.
        let clean = |t: &str| -> String {
            t.chars()
                .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                .collect()
        };
        for s in &self.steps {
            out.push_str(&format!(
                "{:<9} {:<17} {:<32} ← {}\n",
                s.verb.as_str(),
                s.kind,
                clean(&s.name),
                clean(&s.source)
            ));
            if !s.detail.is_empty() {
                out.push_str(&format!("{:>28}{}\n", "", clean(&s.detail)));
            }
        }
        if self.rate_limited > 0 {
            out.push_str(&format!(
                "{}'s rate limit turned {} requests away; each was tried again after the wait it asked for.\n",
                self.vendor_name, self.rate_limited
            ));
        }
        out
    }
}

/// Everything read from PagerDuty before anything is written.
async fn read_pagerduty(api: &PagerDuty, now: DateTime<Utc>) -> AppResult<Source> {
    let users = api.users().await?;
    let mut teams = Vec::new();
    for t in api.teams().await? {
        let members = api.members(&t.id).await?;
        teams.push((t, members));
    }
    let mut schedules = Vec::new();
    for s in api.schedules().await? {
        let ahead = now + Duration::days(OVERRIDES_AHEAD_DAYS);
        let overrides = api.overrides(&s.id, now, ahead).await?;
        let since = to_the_minute(now);
        let entries = api
            .rendered(&s.id, since, since + Duration::days(COMPARED_DAYS))
            .await?;
        schedules.push((s, overrides, entries));
    }
    let policies = api.policies().await?;
    let mut services = Vec::new();
    for s in api.services().await? {
        let mut integrations = Vec::new();
        for i in s
            .integrations
            .iter()
            .filter(|i| pd::speaks_events_v2(&i.kind))
        {
            integrations.push(api.integration(&s.id, &i.id).await?);
        }
        services.push((s, integrations));
    }
    Ok(Source {
        users,
        teams,
        schedules,
        policies,
        services,
        unmapped: Vec::new(),
    })
}

/// A description as Quell keeps one: at most 2000 characters.
fn described(text: Option<&str>) -> String {
    text.unwrap_or_default().chars().take(2000).collect()
}

/// Schedules are compared from the minute (the vendors render whole seconds).
fn to_the_minute(t: DateTime<Utc>) -> DateTime<Utc> {
    t - Duration::seconds(t.timestamp().rem_euclid(60))
        - Duration::nanoseconds(i64::from(t.timestamp_subsec_nanos()))
}

fn digest(v: &impl Serialize) -> String {
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    format!("{:x}", Sha256::digest(bytes))
}

/// How an import runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Make the changes (otherwise a dry run: the same work, rolled back)
    pub apply: bool,
    /// Import a schedule even where it differs from the vendor's own rendering
    pub accept_differences: bool,
    /// The addresses the API's host was checked to resolve to, which requests then go to
    /// (an import started from a page); `None` resolves as usual (the command line)
    pub pinned: Option<Vec<std::net::SocketAddr>>,
}

/// Imports from PagerDuty at `api_url` with `token`; a dry run changes nothing.
pub async fn pagerduty(
    pool: &PgPool,
    actor: &Actor,
    (api_url, token): (&str, &str),
    options: Options,
) -> AppResult<Plan> {
    let api = PagerDuty::new(api_url, token, options.pinned.as_deref())?;
    let now = crate::clock::now(pool).await?;
    let source = read_pagerduty(&api, now).await?;
    let waits = api.api.rate_limited();
    import(pool, actor, (PAGERDUTY, source, waits), &options, now).await
}

/// Imports from Opsgenie at `api_url` with an API key `key`; a dry run changes nothing.
pub async fn opsgenie(
    pool: &PgPool,
    actor: &Actor,
    (api_url, key): (&str, &str),
    options: Options,
) -> AppResult<Plan> {
    let api = Opsgenie::new(api_url, key, options.pinned.as_deref())?;
    let now = crate::clock::now(pool).await?;
    let since = to_the_minute(now);
    let account = api.account(since, COMPARED_DAYS).await?;
    let source = opsgenie::source(&account, (since, since + Duration::days(COMPARED_DAYS)));
    let waits = api.api.rate_limited();
    import(pool, actor, (OPSGENIE, source, waits), &options, now).await
}

/// Makes in Quell what `source` (read from `vendor`, whose rate limit turned `waits` requests
/// away) becomes, in one transaction, kept only with `options.apply`.
async fn import(
    pool: &PgPool,
    actor: &Actor,
    (vendor, read, waits): (Vendor, Source, u32),
    options: &Options,
    now: DateTime<Utc>,
) -> AppResult<Plan> {
    let apply = options.apply;
    let mut tx = crate::transaction::begin(pool).await?;
    db::take_turn(&mut *tx).await?;
    let known = db::all(&mut *tx, vendor.key).await?;
    let mut work = Work {
        conn: &mut tx,
        actor,
        vendor,
        known: known
            .into_iter()
            .map(|i| ((i.kind.clone(), i.external_id.clone()), i))
            .collect(),
        steps: Vec::new(),
        now,
        owners: HashMap::new(),
    };
    for u in &read.unmapped {
        let (source, why) = (u.source.clone(), u.why.clone());
        work.step(Verb::Skip, u.kind, &u.name, source, why);
    }
    let handles = work.people(&read.users).await?;
    work.owners = work.teams(&read.teams, &handles).await?;
    let schedules = work
        .schedules(&read.schedules, &handles, options.accept_differences)
        .await?;
    let policies = work.policies(&read.policies, &handles, &schedules).await?;
    work.services(&read.services, &policies).await?;
    let steps = work.steps;
    if apply {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(Plan {
        vendor: vendor.key,
        vendor_name: vendor.name,
        applied: apply,
        steps,
        rate_limited: waits,
    })
}

/// One object's writes, as [`Work::settled`] records them.
struct Object<'s> {
    /// How `imported_objects` and the plan name its kind
    kind: (&'static str, &'static str),
    id: &'s str,
    name: &'s str,
    source: String,
    detail: String,
    digest: &'s str,
}

struct Work<'a, 'c> {
    conn: &'c mut PgConnection,
    actor: &'a Actor,
    vendor: Vendor,
    known: HashMap<(String, String), Imported>,
    steps: Vec<PlanStep>,
    now: DateTime<Utc>,
    /// Imported teams' slugs, by the vendor's team id
    owners: HashMap<String, String>,
}

impl Work<'_, '_> {
    fn step(&mut self, verb: Verb, kind: &'static str, name: &str, source: String, detail: String) {
        self.steps.push(PlanStep {
            verb,
            kind,
            name: name.to_owned(),
            source,
            detail,
        });
    }

    /// Skips an object whose name a Quell object no import made already has.
    fn taken(&mut self, kind: &'static str, name: &str, source: String) {
        let why = format!(
            "Quell has a {kind} of this name that no import made; rename one and run again"
        );
        self.step(Verb::Skip, kind, name, source, why);
    }

    /// Settles one object's writes since [`db::mark`]: kept, remembered (with the version it
    /// left the object at) and in the plan; or undone and skipped with the reason. Whether
    /// they were kept.
    async fn settled(
        &mut self,
        done: AppResult<(Verb, i64, Option<i32>)>,
        o: Object<'_>,
    ) -> AppResult<bool> {
        db::settle(&mut *self.conn, done.is_ok()).await?;
        let (store, label) = o.kind;
        match done {
            Ok((verb, id, version)) => {
                if let Some(version) = version {
                    let sum = format!("{}@{version}", o.digest);
                    self.remember(store, o.id, &id.to_string(), &sum).await?;
                }
                self.step(verb, label, o.name, o.source, o.detail);
                Ok(true)
            }
            Err(e) => {
                self.step(Verb::Skip, label, o.name, o.source, e.to_string());
                Ok(false)
            }
        }
    }

    fn known(&self, kind: &str, id: &str) -> Option<&Imported> {
        self.known.get(&(kind.to_owned(), id.to_owned()))
    }

    async fn remember(
        &mut self,
        kind: &str,
        id: &str,
        quell_id: &str,
        digest: &str,
    ) -> AppResult<()> {
        let vendor = self.vendor.key;
        db::remember(&mut *self.conn, vendor, kind, id, (quell_id, digest)).await
    }

    /// A new person for a user, audited.
    async fn person(&mut self, u: &pd::User) -> AppResult<crate::people::db::Person> {
        let p = crate::people::actions::add_for_email(
            &mut *self.conn,
            Some(u.name.trim()),
            u.email.trim(),
        )
        .await?;
        crate::audit::created(&mut *self.conn, self.actor, "person.create", &p.handle, &p).await?;
        Ok(p)
    }

    /// Users become people (one with the same email in Quell already is linked); their handles
    /// by the vendor's user id.
    async fn people(&mut self, users: &[pd::User]) -> AppResult<HashMap<String, String>> {
        let everyone = crate::people::db::list(&mut *self.conn).await?;
        let mut handles = HashMap::new();
        for u in users {
            let source = format!("user {} {:?} <{}>", u.id, u.name, u.email);
            let earlier = self.known("user", &u.id).and_then(|k| {
                everyone
                    .iter()
                    .find(|p| p.id.to_string() == k.quell_id)
                    .map(|p| p.handle.clone())
            });
            if let Some(handle) = earlier {
                self.step(Verb::Unchanged, "person", &handle, source, String::new());
                handles.insert(u.id.clone(), handle);
                continue;
            }
            let same = everyone
                .iter()
                .find(|p| p.email.eq_ignore_ascii_case(u.email.trim()));
            let (verb, person, detail) = match same {
                Some(p) => (
                    Verb::Link,
                    p.clone(),
                    "a person with this email is in Quell".to_owned(),
                ),
                None => {
                    db::mark(&mut *self.conn).await?;
                    let p = self.person(u).await;
                    db::settle(&mut *self.conn, p.is_ok()).await?;
                    match p {
                        Ok(p) => (Verb::Create, p, String::new()),
                        Err(e) => {
                            self.step(Verb::Skip, "person", &u.email, source, e.to_string());
                            continue;
                        }
                    }
                }
            };
            // A new person keeps the time zone the vendor knew them by (one Quell does not know
            // leaves theirs as it is).
            if let Some(zone) = u.time_zone.as_deref().filter(|_| verb == Verb::Create) {
                let now = crate::people::db::preferences(&mut *self.conn, person.id).await?;
                let asked = crate::people::domain::Preferences {
                    time_zone: zone.to_owned(),
                    ..now
                };
                db::mark(&mut *self.conn).await?;
                let set = crate::people::actions::set_preferences(
                    &mut *self.conn,
                    self.actor,
                    person.id,
                    asked,
                )
                .await;
                db::settle(&mut *self.conn, set.is_ok()).await?;
            }
            self.remember("user", &u.id, &person.id.to_string(), "")
                .await?;
            self.step(verb, "person", &person.handle, source, detail);
            handles.insert(u.id.clone(), person.handle);
        }
        Ok(handles)
    }

    /// What the import made earlier of their object `id`, if it is still in Quell at the
    /// version the import left it: `Ok(Some((quell id, digest of its source)))`; `Err(version)`
    /// when someone changed it in Quell since (the import then leaves it alone).
    fn earlier(
        &self,
        kind: &str,
        id: &str,
        versions: &HashMap<i64, i32>,
    ) -> Result<Option<(i64, String)>, i32> {
        let Some(k) = self.known(kind, id) else {
            return Ok(None);
        };
        let Ok(quell) = k.quell_id.parse::<i64>() else {
            return Ok(None);
        };
        let Some(now) = versions.get(&quell) else {
            return Ok(None);
        };
        let (digest, left) = k.digest.rsplit_once('@').unwrap_or((&k.digest, ""));
        if left.parse::<i32>().ok() != Some(*now) {
            return Err(*now);
        }
        Ok(Some((quell, digest.to_owned())))
    }

    /// The Quell id an import gave their object `id`.
    fn quell_id(&self, kind: &str, id: &str) -> Option<i64> {
        self.known(kind, id)?.quell_id.parse().ok()
    }

    /// The plan's line for an object changed in Quell since the import made it.
    fn edited(&mut self, kind: &'static str, name: &str, source: String, version: i32) {
        let why = format!(
            "changed in Quell since the import made it (now version {version}); the import leaves it as it is"
        );
        self.step(Verb::Skip, kind, name, source, why);
    }

    /// The team that owns an object the vendor gives to exactly one team, when that team was
    /// imported; otherwise the installation's.
    fn owner(&self, teams: &[pd::Reference]) -> String {
        match teams {
            [one] => self.owners.get(&one.id).cloned().unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// Teams with their members (PagerDuty's managers and Opsgenie's admins lead); the
    /// imported teams' slugs by the vendor's team id. Members are added or given their role, never taken out.
    async fn teams(
        &mut self,
        teams: &[(pd::Team, Vec<pd::TeamMember>)],
        handles: &HashMap<String, String>,
    ) -> AppResult<HashMap<String, String>> {
        use crate::teams::domain::{TeamDraft, TeamRole, slug_of};
        let existing = crate::teams::db::list(&mut *self.conn, None).await?;
        let versions: HashMap<i64, i32> = existing.iter().map(|e| (e.id, e.version)).collect();
        let mut slugs = HashMap::new();
        for (t, members) in teams {
            let source = format!("team {} {:?}", t.id, t.name);
            if let Some(id) = self.quell_id("team", &t.id)
                && let Some(e) = existing.iter().find(|e| e.id == id)
            {
                slugs.insert(t.id.clone(), e.slug.clone());
            }
            let earlier = match self.earlier("team", &t.id, &versions) {
                Ok(e) => e,
                Err(version) => {
                    self.edited("team", &t.name, source, version);
                    continue;
                }
            };
            let mut wanted: Vec<(String, TeamRole)> = members
                .iter()
                .filter_map(|m| {
                    let role = if m.role == "manager" {
                        TeamRole::Lead
                    } else {
                        TeamRole::Member
                    };
                    handles.get(&m.user.id).map(|h| (h.clone(), role))
                })
                .collect();
            wanted.sort_by(|a, b| a.0.cmp(&b.0));
            let name = t.name.trim().to_owned();
            let description = described(t.description.as_deref());
            let roles: Vec<(&str, &str)> = wanted
                .iter()
                .map(|(h, r)| (h.as_str(), r.as_str()))
                .collect();
            let sum = digest(&(&name, &description, &roles));
            let current = earlier
                .as_ref()
                .and_then(|(id, _)| existing.iter().find(|e| e.id == *id))
                .cloned();
            let clash = existing.iter().any(|e| {
                Some(e.id) != current.as_ref().map(|c| c.id)
                    && (e.name.eq_ignore_ascii_case(&name) || e.slug == slug_of(&name))
            });
            if clash {
                self.taken("team", &name, source);
                continue;
            }
            let detail = format!(
                "{} member(s), {} lead(s)",
                wanted.len(),
                wanted.iter().filter(|(_, r)| *r == TeamRole::Lead).count()
            );
            db::mark(&mut *self.conn).await?;
            let done = match (&earlier, current) {
                (Some((_, d)), Some(c)) if *d == sum => Ok((Verb::Unchanged, c)),
                (_, current) => {
                    let made = match current {
                        Some(c) => {
                            let draft = TeamDraft {
                                name: name.clone(),
                                description: description.clone(),
                                ..c.draft()
                            };
                            let version = Some(c.version);
                            crate::teams::actions::update(
                                &mut *self.conn,
                                self.actor,
                                &c,
                                version,
                                &draft,
                            )
                            .await
                            .map(|t| (Verb::Update, t))
                        }
                        None => {
                            let draft = TeamDraft {
                                name: name.clone(),
                                description: description.clone(),
                                ..Default::default()
                            };
                            crate::teams::actions::create(&mut *self.conn, self.actor, &draft)
                                .await
                                .map(|t| (Verb::Create, t))
                        }
                    };
                    match made {
                        Ok((verb, mut team)) => {
                            let mut failed = None;
                            for (handle, role) in &wanted {
                                if team.part_of(handle) == Some(*role) {
                                    continue;
                                }
                                match crate::teams::actions::set_member(
                                    &mut *self.conn,
                                    self.actor,
                                    &team,
                                    handle,
                                    *role,
                                )
                                .await
                                {
                                    Ok(t) => team = t,
                                    Err(e) => {
                                        failed = Some(e);
                                        break;
                                    }
                                }
                            }
                            match failed {
                                Some(e) => Err(e),
                                None => Ok((verb, team)),
                            }
                        }
                        Err(e) => Err(e),
                    }
                }
            };
            let slug = done.as_ref().ok().map(|(_, t)| t.slug.clone());
            let done = done.map(|(verb, t)| (verb, t.id, Some(t.version)));
            let object = Object {
                kind: ("team", "team"),
                id: &t.id,
                name: &name,
                source,
                detail,
                digest: &sum,
            };
            if self.settled(done, object).await?
                && let Some(slug) = slug
            {
                slugs.insert(t.id.clone(), slug);
            }
        }
        Ok(slugs)
    }

    /// Schedules; the names of those in Quell from this import or an earlier one, by
    /// the vendor's schedule id.
    async fn schedules(
        &mut self,
        schedules: &[(pd::Schedule, Vec<pd::PdOverride>, Vec<pd::Entry>)],
        handles: &HashMap<String, String>,
        accept_differences: bool,
    ) -> AppResult<HashMap<String, String>> {
        let existing = crate::oncall::db::list(&mut *self.conn, None).await?;
        let versions: HashMap<i64, i32> = existing.iter().map(|e| (e.id, e.version)).collect();
        let mut names = HashMap::new();
        let from = to_the_minute(self.now);
        let until = from + Duration::days(COMPARED_DAYS);
        for (s, overrides, entries) in schedules {
            let source = format!("schedule {} {:?}", s.id, s.name);
            let earlier = self.earlier("schedule", &s.id, &versions);
            // What an import made stays a target, changed in Quell since or not.
            if let Some(id) = self.quell_id("schedule", &s.id)
                && let Some(e) = existing.iter().find(|e| e.id == id)
            {
                names.insert(s.id.clone(), e.name.clone());
            }
            if let Err(version) = earlier {
                self.edited("schedule", &s.name, source, version);
                continue;
            }
            let theirs = rendered(entries, handles);
            // PagerDuty lists a schedule's layers highest first; should an account list them
            // the other way, its own rendering says which order is meant.
            let mut tried = Vec::new();
            for highest_first in [true, false] {
                let layers = match schedule_layers(
                    self.vendor.name,
                    s,
                    overrides,
                    handles,
                    self.now,
                    highest_first,
                ) {
                    Ok(l) => l,
                    Err(why) => {
                        tried.push(Err(why));
                        break;
                    }
                };
                let draft = ScheduleDraft {
                    name: s.name.trim().to_owned(),
                    team: self.owner(&s.teams),
                    layers: layers.layers.clone(),
                    overrides: layers.overrides.clone(),
                };
                let spans = match draft.schedule() {
                    Ok(rules) => rules.spans(from, until),
                    Err(e) => {
                        tried.push(Err(crate::error::AppError::from(e).to_string()));
                        break;
                    }
                };
                let difference = first_difference(&spans, &theirs, self.vendor.name);
                let agrees = difference.is_none();
                tried.push(Ok((draft, layers.caveats, difference)));
                if agrees || s.schedule_layers.len() < 2 {
                    break;
                }
            }
            let chosen = tried
                .iter()
                .find(|t| matches!(t, Ok((_, _, None))))
                .or(tried.first())
                .cloned();
            let (draft, mut caveats, difference) = match chosen {
                Some(Ok(c)) => c,
                Some(Err(why)) => {
                    let why = format!("cannot map: {why}");
                    self.step(Verb::Skip, "schedule", &s.name, source, why);
                    continue;
                }
                None => continue,
            };
            let compared = match &difference {
                None => format!(
                    "who is on call over the next {COMPARED_DAYS} days matches {}'s own rendering",
                    self.vendor.name
                ),
                Some(d) => format!(
                    "differs from {}'s own rendering of the next {COMPARED_DAYS} days: {d}",
                    self.vendor.name
                ),
            };
            caveats.insert(
                0,
                format!(
                    "{} layer(s), {} override(s) ahead; {compared}",
                    draft.layers.len(),
                    draft.overrides.len()
                ),
            );
            let detail = caveats.join("; ");
            if difference.is_some() && !accept_differences {
                let why = format!("{detail}; not imported unless differences are accepted");
                self.step(Verb::Skip, "schedule", &draft.name, source, why);
                continue;
            }
            // The layers are compared by digest; the overrides as they stand ahead (those
            // passed drop out of both as time goes by).
            let sum = digest(&draft.layers);
            let earlier = earlier.ok().flatten();
            let same = earlier.as_ref().is_some_and(|(id, d)| {
                *d == sum
                    && existing.iter().any(|e| {
                        e.id == *id
                            && e.name == draft.name
                            && e.overrides
                                .iter()
                                .filter(|o| o.to > self.now)
                                .eq(draft.overrides.iter())
                    })
            });
            let taken = existing
                .iter()
                .any(|e| e.name.eq_ignore_ascii_case(draft.name.trim()));
            if earlier.is_none() && taken {
                self.taken("schedule", &draft.name, source);
                continue;
            }
            db::mark(&mut *self.conn).await?;
            let done = match earlier {
                Some((id, _)) if same => Ok((Verb::Unchanged, id, None)),
                Some((id, _)) => {
                    let version = versions.get(&id).copied();
                    crate::oncall::actions::update(&mut *self.conn, self.actor, id, version, &draft)
                        .await
                        .map(|s| (Verb::Update, id, Some(s.version)))
                }
                None => match crate::oncall::actions::create(&mut *self.conn, self.actor, &draft)
                    .await
                {
                    Ok(id) => crate::oncall::db::get(&mut *self.conn, id)
                        .await
                        .map(|s| (Verb::Create, id, Some(s.version))),
                    Err(e) => Err(e),
                },
            };
            let object = Object {
                kind: ("schedule", "schedule"),
                id: &s.id,
                name: &draft.name,
                source,
                detail,
                digest: &sum,
            };
            if self.settled(done, object).await? {
                names.insert(s.id.clone(), draft.name.clone());
            }
        }
        Ok(names)
    }

    /// Escalation policies; the names of those in Quell from this import or an earlier one,
    /// by the vendor's policy id.
    async fn policies(
        &mut self,
        policies: &[pd::Policy],
        handles: &HashMap<String, String>,
        schedules: &HashMap<String, String>,
    ) -> AppResult<HashMap<String, String>> {
        let existing = crate::paging::db::list(&mut *self.conn, None).await?;
        let versions: HashMap<i64, i32> = existing.iter().map(|e| (e.id, e.version)).collect();
        let mut names = HashMap::new();
        for p in policies {
            let source = format!("escalation policy {} {:?}", p.id, p.name);
            let earlier = self.earlier("escalation_policy", &p.id, &versions);
            // What an import made stays a target, changed in Quell since or not.
            if let Some(id) = self.quell_id("escalation_policy", &p.id)
                && let Some(e) = existing.iter().find(|e| e.id == id)
            {
                names.insert(p.id.clone(), e.name.clone());
            }
            if let Err(version) = earlier {
                self.edited("escalation policy", &p.name, source, version);
                continue;
            }
            let mut missing = Vec::new();
            let steps: Vec<PolicyStep> = p
                .escalation_rules
                .iter()
                .map(|r| PolicyStep {
                    targets: r
                        .targets
                        .iter()
                        .filter_map(|t| {
                            let kind = t.kind.trim_end_matches("_reference");
                            let found = match kind {
                                "user" => handles.get(&t.id).cloned().map(Target::Person),
                                "schedule" => schedules.get(&t.id).cloned().map(Target::Schedule),
                                _ => None,
                            };
                            if found.is_none() {
                                let named = if t.summary.is_empty() {
                                    t.id.clone()
                                } else {
                                    format!("{:?} ({})", t.summary, t.id)
                                };
                                missing.push(format!("{kind} {named}"));
                            }
                            found
                        })
                        .collect(),
                    delay_minutes: r.escalation_delay_in_minutes.clamp(1, 1440) as u32,
                })
                .collect();
            let draft = PolicyDraft {
                name: p.name.trim().to_owned(),
                team: self.owner(&p.teams),
                steps,
                repeat: p.num_loops.clamp(0, 9) as u32,
            };
            let mut detail = format!(
                "{} step(s), repeated {} time(s)",
                draft.steps.len(),
                draft.repeat
            );
            if !missing.is_empty() {
                detail.push_str(&format!(
                    "; pages {}, not imported or not something a Quell step pages (people and schedules)",
                    missing.join(", ")
                ));
            }
            for note in &p.notes {
                detail.push_str(&format!("; {note}"));
            }
            if p.num_loops > 9 {
                detail.push_str(&format!(
                    "; repeats {} times in {}, Quell at most 9",
                    p.num_loops, self.vendor.name
                ));
            }
            // A step that would page nobody would hand straight to the next: not imported.
            if draft.steps.is_empty() || draft.steps.iter().any(|s| s.targets.is_empty()) {
                let why = format!("a step would page nobody imported; {detail}");
                self.step(Verb::Skip, "escalation policy", &draft.name, source, why);
                continue;
            }
            let sum = digest(&draft);
            let earlier = earlier.ok().flatten();
            let taken = existing
                .iter()
                .any(|e| e.name.eq_ignore_ascii_case(&draft.name));
            if earlier.is_none() && taken {
                self.taken("escalation policy", &draft.name, source);
                continue;
            }
            db::mark(&mut *self.conn).await?;
            let done = match earlier {
                Some((id, d)) if d == sum => Ok((Verb::Unchanged, id, None)),
                Some((id, _)) => {
                    let version = versions.get(&id).copied();
                    crate::paging::actions::update(&mut *self.conn, self.actor, id, version, &draft)
                        .await
                        .map(|p| (Verb::Update, id, Some(p.version)))
                }
                None => match crate::paging::actions::create(&mut *self.conn, self.actor, &draft)
                    .await
                {
                    Ok(id) => crate::paging::db::get(&mut *self.conn, id)
                        .await
                        .map(|p| (Verb::Create, id, Some(p.version))),
                    Err(e) => Err(e),
                },
            };
            let object = Object {
                kind: ("escalation_policy", "escalation policy"),
                id: &p.id,
                name: &draft.name,
                source,
                detail,
                digest: &sum,
            };
            if self.settled(done, object).await? {
                names.insert(p.id.clone(), draft.name.clone());
            }
        }
        Ok(names)
    }

    /// Services with their policies, and their integrations (keeping their keys,
    /// each with a routing rule to its service, ahead of the other rules).
    async fn services(
        &mut self,
        services: &[(pd::Service, Vec<pd::Integration>)],
        policies: &HashMap<String, String>,
    ) -> AppResult<()> {
        let existing = crate::services::db::list(&mut *self.conn).await?;
        let versions: HashMap<i64, i32> = existing.iter().map(|e| (e.id, e.version)).collect();
        let mut taken: HashSet<String> = HashSet::new();
        for (s, integrations) in services {
            let source = format!("service {} {:?}", s.id, s.name);
            let earlier = match self.earlier("service", &s.id, &versions) {
                Ok(e) => e,
                Err(version) => {
                    self.edited("service", &s.name, source, version);
                    // Its integrations still reach it, as it is named now.
                    let now = self.quell_id("service", &s.id).and_then(|id| {
                        existing.iter().find(|e| e.id == id).map(|e| e.name.clone())
                    });
                    match now {
                        Some(name) => {
                            for i in integrations {
                                self.integration(&name, i).await?;
                            }
                        }
                        None => self.homeless(integrations),
                    }
                    continue;
                }
            };
            let current = earlier
                .as_ref()
                .and_then(|(id, _)| existing.iter().find(|e| e.id == *id))
                .cloned();
            let mut name = pd::service_name(&s.name);
            let base = name.clone();
            let mut n = 2;
            // Two of theirs that read alike: the later in the vendor's list takes -2, -3, …
            while !taken.insert(name.clone()) {
                name = format!("{}-{n}", base.chars().take(60).collect::<String>());
                n += 1;
            }
            // A Quell service of that name the import did not make keeps it.
            let mine = current.as_ref().map(|c| c.id);
            if existing
                .iter()
                .any(|e| e.name == name && Some(e.id) != mine)
            {
                self.taken("service", &name, source);
                self.homeless(integrations);
                continue;
            }
            let policy = s
                .escalation_policy
                .as_ref()
                .and_then(|p| policies.get(&p.id))
                .cloned();
            let description = described(s.description.as_deref());
            let sum = digest(&(&name, &description, &policy));
            let mut detail = match &policy {
                Some(p) => format!("paged through escalation policy {p:?}"),
                None => "no imported escalation policy pages it".to_owned(),
            };
            for note in &s.notes {
                detail.push_str(&format!("; {note}"));
            }
            let others = s.integrations.len() - integrations.len();
            if others > 0 {
                detail.push_str(&format!(
                    "; {others} integration(s) of other kinds (email, Events API v1, vendor-specific) are not imported: Quell takes PagerDuty's Events API v2"
                ));
            }
            db::mark(&mut *self.conn).await?;
            let done = match (&earlier, &current) {
                (Some((_, d)), Some(c)) if *d == sum => Ok((Verb::Unchanged, c.id, None)),
                (Some(_), Some(c)) => {
                    // Only what the import sets changes; what Quell keeps of its own stays.
                    let draft = ServiceDraft {
                        name: name.clone(),
                        description: description.clone(),
                        ..c.draft()
                    };
                    match crate::services::actions::update(
                        &mut *self.conn,
                        self.actor,
                        c,
                        c.version,
                        &draft,
                    )
                    .await
                    {
                        Ok(Some(_)) => {
                            self.assigned(&name, policy.as_deref(), Verb::Update, c.id)
                                .await
                        }
                        Ok(None) => Err(crate::error::AppError::Stale {
                            current_version: c.version,
                        }),
                        Err(e) => Err(e),
                    }
                }
                _ => {
                    let draft = ServiceDraft {
                        name: name.clone(),
                        tier: 2,
                        team: self.owner(&s.teams),
                        description: description.clone(),
                        ..Default::default()
                    };
                    match crate::services::actions::create(&mut *self.conn, self.actor, &draft)
                        .await
                    {
                        Ok(made) => {
                            self.assigned(&name, policy.as_deref(), Verb::Create, made.id)
                                .await
                        }
                        Err(e) => Err(e),
                    }
                }
            };
            let object = Object {
                kind: ("service", "service"),
                id: &s.id,
                name: &name,
                source,
                detail,
                digest: &sum,
            };
            if !self.settled(done, object).await? {
                self.homeless(integrations);
                continue;
            }
            for i in integrations {
                self.integration(&name, i).await?;
            }
        }
        Ok(())
    }

    /// The plan's lines for the integrations of a service that is not imported.
    fn homeless(&mut self, integrations: &[pd::Integration]) {
        for i in integrations {
            let source = format!("integration {} {:?}", i.id, i.name);
            let why = "its service is not imported, so nothing says where its alerts go; import the service, or add an integration on /admin/integrations and a routing rule".to_owned();
            self.step(Verb::Skip, "integration", &i.name, source, why);
        }
    }

    /// Points a service the import made or updated at its policy (one no longer imported
    /// leaves the assignment as it is); the service's version after.
    async fn assigned(
        &mut self,
        name: &str,
        policy: Option<&str>,
        verb: Verb,
        id: i64,
    ) -> AppResult<(Verb, i64, Option<i32>)> {
        if policy.is_some() {
            crate::paging::actions::assign(&mut *self.conn, self.actor, name, policy).await?;
        }
        let after = crate::services::db::get_by_name(&mut *self.conn, name).await?;
        Ok((verb, id, Some(after.version)))
    }

    async fn integration(&mut self, service: &str, i: &pd::Integration) -> AppResult<()> {
        let label = if i.name.trim().is_empty() {
            self.vendor.api
        } else {
            i.name.trim()
        };
        let source = format!("integration {} {:?}", i.id, label);
        let name: String = format!("{service}: {label}").chars().take(100).collect();
        let Some(key) = i.integration_key.as_deref() else {
            let why = format!("{} did not give its key", self.vendor.name);
            self.step(Verb::Skip, "integration", &name, source, why);
            return Ok(());
        };
        let sum = digest(&(service, key));
        let kept = format!(
            "keeps its key, so {} senders need no change",
            self.vendor.api
        );
        if let Some(k) = self.known("integration", &i.id).cloned() {
            let still = match uuid::Uuid::parse_str(&k.quell_id) {
                Ok(id) => crate::integrations::db::get(&mut *self.conn, id)
                    .await
                    .is_ok(),
                Err(_) => false,
            };
            if still {
                let (verb, detail) = if k.digest.split('@').next() == Some(sum.as_str()) {
                    (Verb::Unchanged, kept)
                } else {
                    (
                        Verb::Skip,
                        format!(
                            "its key or service changed in {}; Quell keeps the one it has (for the new key, add an integration on /admin/integrations and a routing rule by hand)",
                            self.vendor.name
                        ),
                    )
                };
                self.step(verb, "integration", &name, source, detail);
                return Ok(());
            }
        }
        db::mark(&mut *self.conn).await?;
        let made = self.keyed(&name, service, key).await;
        db::settle(&mut *self.conn, made.is_ok()).await?;
        match made {
            Ok(m) => {
                let id = m.integration.id.to_string();
                self.remember("integration", &i.id, &id, &sum).await?;
                let tail: String = key
                    .chars()
                    .skip(key.chars().count().saturating_sub(4))
                    .collect();
                let detail = format!(
                    "{kept} (…{tail}); a routing rule ahead of the others takes its alerts to {service}"
                );
                self.step(Verb::Create, "integration", &name, source, detail);
            }
            Err(e) => self.step(Verb::Skip, "integration", &name, source, e.to_string()),
        }
        Ok(())
    }

    /// An integration keeping `key`, and a routing rule taking its alerts to `service`, put
    /// first (the vendors send an integration's alerts to its service or team whatever
    /// else is configured).
    async fn keyed(
        &mut self,
        name: &str,
        service: &str,
        key: &str,
    ) -> AppResult<crate::integrations::actions::WithSecrets> {
        let made = crate::integrations::actions::adopt(
            &mut *self.conn,
            self.actor,
            name,
            self.vendor.format,
            key,
        )
        .await?;
        let rule = crate::routing::actions::RuleDraft {
            name: format!("{}: {name}", self.vendor.name)
                .chars()
                .take(100)
                .collect(),
            conditions: vec![format!("integration = \"{name}\"")],
            service: service.to_owned(),
            ..Default::default()
        };
        let rule = crate::routing::actions::create(&mut *self.conn, self.actor, &rule).await?;
        let mut order: Vec<i64> = crate::routing::db::list(&mut *self.conn)
            .await?
            .into_iter()
            .filter(|r| !r.is_default && r.id != rule.id)
            .map(|r| r.id)
            .collect();
        order.insert(0, rule.id);
        crate::routing::actions::reorder(&mut *self.conn, self.actor, &order).await?;
        Ok(made)
    }
}
