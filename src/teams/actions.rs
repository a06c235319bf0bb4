//! Changes to teams and their membership, each audited in its transaction, and the check every
//! change to a team's configuration passes first.

use serde_json::json;
use sqlx::PgConnection;

use super::db::{self, Team};
use super::domain::{TeamDraft, TeamMap, TeamRole, may_manage};
use crate::audit::{self, Actor};
use crate::auth::domain::UserRole;
use crate::error::{AppError, AppResult};
use crate::http::access::{Auth, MinRole};
use crate::state::AppState;

/// Who is asking to change a team's configuration: their global role and, when they are a
/// person, their handle (to find their part in the team).
pub struct Asking<'a> {
    pub role: UserRole,
    pub handle: Option<&'a str>,
}

/// Refuses (403, naming the team) someone who may not change the team itself — its members,
/// their parts and its settings: its leads, managers and admins. A team that lets its members
/// change its configuration does not let them make themselves leads.
pub fn check_may_lead(team: &Team, who: &Asking<'_>) -> AppResult<()> {
    let part = who.handle.and_then(|h| team.part_of(h));
    if may_manage(who.role, part, false) {
        return Ok(());
    }
    Err(AppError::Forbidden(format!(
        "You may not change the team {}: only its leads, managers and admins may.",
        team.name
    )))
}

/// Refuses (403, naming the team) someone who may not change `team`'s configuration.
pub fn check_may_manage(team: &Team, who: &Asking<'_>) -> AppResult<()> {
    let part = who.handle.and_then(|h| team.part_of(h));
    if may_manage(who.role, part, team.members_manage) {
        return Ok(());
    }
    let who_may = if team.members_manage {
        "its members, its leads"
    } else {
        "its leads"
    };
    Err(AppError::Forbidden(format!(
        "You may not change the team {}'s configuration: only {who_may}, managers and admins may.",
        team.name
    )))
}

/// The team a draft names by slug or name (`None` for an empty name: the installation's);
/// 422 naming `team` when there is no such team.
pub async fn named(e: impl sqlx::PgExecutor<'_>, name: &str) -> AppResult<Option<i64>> {
    if name.trim().is_empty() {
        return Ok(None);
    }
    match db::find(e, name).await? {
        Some((id, _)) => Ok(Some(id)),
        None => Err(AppError::invalid(
            "team",
            format!("there is no team {:?}; add it on /teams first", name.trim()),
        )),
    }
}

/// The team rule for one person, with every team read once: a page that offers forms on many
/// things asks it for each without a query each.
pub struct Judge {
    teams: Vec<Team>,
    role: UserRole,
    handle: String,
}

impl Judge {
    pub async fn of<R: MinRole>(state: &AppState, auth: &Auth<R>) -> AppResult<Self> {
        Ok(Self {
            teams: db::list(&state.pool, None).await?,
            role: auth.user.role,
            handle: auth.user.handle.clone(),
        })
    }

    /// Why the person may not change configuration owned by each of `owners` — the team it
    /// belongs to now and the one it is to belong to (`None`: the installation's, which takes
    /// the global role `shared`) — or `None` when they may.
    pub fn refusal(
        &self,
        what: &str,
        owners: &[Option<i64>],
        shared: UserRole,
    ) -> Option<AppError> {
        let who = Asking {
            role: self.role,
            handle: Some(&self.handle),
        };
        owners.iter().find_map(|owner| match owner {
            None if self.role.allows(shared) => None,
            None => Some(AppError::Forbidden(format!(
                "A {what} no team owns is the installation's: changing it needs the {} role. Name your team as its owner.",
                shared.as_str()
            ))),
            Some(id) => match self.teams.iter().find(|t| t.id == *id) {
                Some(team) => check_may_manage(team, &who).err(),
                // Deleted meanwhile: what it owned is the installation's now.
                None if self.role.allows(shared) => None,
                None => Some(AppError::Forbidden(format!(
                    "The {what}'s team is gone: changing it needs the {} role.",
                    shared.as_str()
                ))),
            },
        })
    }

    /// Whether the person may change configuration owned by `owners` (for a page to offer its
    /// forms; the change is checked again).
    pub fn may(&self, owners: &[Option<i64>], shared: UserRole) -> bool {
        self.refusal("", owners, shared).is_none()
    }

    /// Whether the person may add configuration: they hold `shared`, or lead some team (a page
    /// offers its form; what they add is checked against its team).
    pub fn may_add(&self, shared: UserRole) -> bool {
        self.role.allows(shared)
            || (self.role.allows(UserRole::Responder)
                && self
                    .teams
                    .iter()
                    .any(|t| t.part_of(&self.handle) == Some(TeamRole::Lead)))
    }
}

/// Refuses (403 naming what the person may not change, tallied in the audit log) a change to
/// configuration owned by `owners` that [`Judge::refusal`] finds not theirs.
pub async fn may_configure<R: MinRole>(
    state: &AppState,
    auth: &Auth<R>,
    what: &str,
    owners: &[Option<i64>],
    shared: UserRole,
) -> AppResult<()> {
    match Judge::of(state, auth).await?.refusal(what, owners, shared) {
        None => Ok(()),
        Some(refused) => Err(auth.refused(state, refused).await),
    }
}

/// Refuses a name or slug that another team's slug or name already reads as.
async fn uncrossed(conn: &mut PgConnection, id: Option<i64>, d: &TeamDraft) -> AppResult<()> {
    match db::crossed(&mut *conn, id, d).await? {
        None => Ok(()),
        Some(other) => Err(AppError::Conflict(format!(
            "{:?} or {:?} already names the team {other}; choose another name or slug.",
            d.name, d.slug
        ))),
    }
}

pub async fn create(conn: &mut PgConnection, actor: &Actor, d: &TeamDraft) -> AppResult<Team> {
    let d = d.clone().validated()?;
    uncrossed(conn, None, &d).await?;
    db::insert(&mut *conn, &d).await?;
    let created = db::get(&mut *conn, &d.slug).await?;
    audit::created(conn, actor, "team.create", &created.slug, &d).await?;
    Ok(created)
}

/// Replaces the team's name, slug, description and settings if it is still at `version`
/// (`None`: whatever is there).
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    current: &Team,
    version: Option<i32>,
    d: &TeamDraft,
) -> AppResult<Team> {
    let d = d.clone().validated()?;
    uncrossed(conn, Some(current.id), &d).await?;
    if !db::update(
        &mut *conn,
        current.id,
        version.unwrap_or(current.version),
        &d,
    )
    .await?
    {
        return Err(AppError::Stale {
            current_version: current.version,
        });
    }
    audit::changed(
        conn,
        actor,
        "team.update",
        &d.slug,
        json!(current.draft()),
        &d,
    )
    .await?;
    db::get(conn, &d.slug).await
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, team: &Team) -> AppResult<()> {
    db::delete(&mut *conn, team.id).await?;
    audit::deleted(conn, actor, "team.delete", &team.slug, json!(team.draft())).await
}

/// Puts the person with `handle` in the team as `role` (or changes their role).
pub async fn set_member(
    conn: &mut PgConnection,
    actor: &Actor,
    team: &Team,
    handle: &str,
    role: TeamRole,
) -> AppResult<Team> {
    let person = crate::people::db::find(&mut *conn, handle)
        .await?
        .ok_or_else(|| AppError::invalid("handle", format!("there is no person {handle:?}")))?;
    let before = team.part_of(&person.handle);
    db::set_member(&mut *conn, team.id, person.id, role).await?;
    audit::changed(
        conn,
        actor,
        "team.member",
        &format!("{}/{}", team.slug, person.handle),
        json!({ "role": before }),
        json!({ "role": role }),
    )
    .await?;
    db::get(conn, &team.slug).await
}

/// Takes the person with `handle` out of the team.
pub async fn remove_member(
    conn: &mut PgConnection,
    actor: &Actor,
    team: &Team,
    handle: &str,
) -> AppResult<Team> {
    let person = crate::people::db::find(&mut *conn, handle).await?;
    let Some(person) = person.filter(|p| team.part_of(&p.handle).is_some()) else {
        return Err(AppError::NotFound(format!(
            "{handle} is not a member of {}.",
            team.name
        )));
    };
    db::remove_member(&mut *conn, team.id, person.id).await?;
    audit::deleted(
        conn,
        actor,
        "team.member",
        &format!("{}/{}", team.slug, person.handle),
        json!({ "role": team.part_of(&person.handle) }),
    )
    .await?;
    db::get(conn, &team.slug).await
}

/// Keeps the person's memberships in step with the groups the identity provider says they are
/// in, at every single sign-on: a team that follows a group (its `oidc_group`, or one
/// `QUELL_OIDC_TEAM_MAP` gives it) gains them as a member when they are in one, and loses them
/// when they are in none (a lead stays a lead while in it). Teams that follow no group are
/// left as they are.
pub async fn follow_groups(
    conn: &mut PgConnection,
    actor: &Actor,
    who: (&str, i64),
    groups: &[String],
    map: &TeamMap,
) -> AppResult<()> {
    let (handle, person_id) = who;
    for (team, member) in db::with_person(&mut *conn, person_id).await? {
        let followed: Vec<&str> = team
            .oidc_group
            .as_deref()
            .into_iter()
            .chain(map.groups_of(&team.slug))
            .collect();
        if followed.is_empty() {
            continue;
        }
        let in_group = followed.iter().any(|g| groups.iter().any(|v| v == g));
        match (in_group, member) {
            (true, false) => {
                set_member(conn, actor, &team, handle, TeamRole::Member).await?;
            }
            (false, true) => {
                remove_member(conn, actor, &team, handle).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a list is narrowed to: the team asked for (a slug or `mine`; `None`, everything) and
/// the ids of the teams that means (`None`, every team's and nobody's).
#[derive(Debug, Clone, Default)]
pub struct Narrowed {
    pub team: Option<String>,
    pub ids: Option<Vec<i64>>,
}

/// A list narrowed to what `asked` says (`team=` in an address: a slug, `mine`, or blank for
/// everything), for the API, which remembers nothing.
pub async fn narrowed(
    pool: &sqlx::PgPool,
    person_id: i64,
    asked: Option<&str>,
) -> AppResult<Narrowed> {
    let team = asked.map(str::trim).filter(|t| !t.is_empty());
    let ids = match team {
        Some(t) => Some(db::scope(pool, person_id, t).await?),
        None => None,
    };
    Ok(Narrowed {
        team: team.map(str::to_owned),
        ids,
    })
}

/// A page's list narrowed as its address asks — remembered as the person's choice for every
/// list that narrows by team (the dashboard, incidents, action items, postmortems, reports) —
/// or, when the address does not say, as the person chose last.
pub async fn narrowed_page(
    pool: &sqlx::PgPool,
    person_id: i64,
    asked: Option<&str>,
) -> AppResult<Narrowed> {
    let Some(asked) = asked else {
        let chosen = db::chosen(pool, person_id).await?;
        return narrowed(pool, person_id, chosen.as_deref()).await;
    };
    let n = narrowed(pool, person_id, Some(asked)).await?;
    // Remembered: everything, "mine", or a team there is (by its slug); not a name of none.
    let remembered = match n.team.as_deref() {
        None => Some(None),
        Some(super::domain::MINE) => Some(Some(super::domain::MINE.to_owned())),
        Some(t) => db::slug_named(pool, t).await?.map(Some),
    };
    if let Some(choice) = remembered {
        db::choose(pool, person_id, choice.as_deref()).await?;
    }
    Ok(n)
}
