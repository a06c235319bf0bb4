//! Who may see an incident: restricted to named teams and people (a security incident, an
//! incident about a person), or open to everyone.

use super::shared::*;
use serde_json::json;
use sqlx::PgConnection;

use crate::audit;
use crate::clock;
use crate::error::{AppError, AppResult};
use crate::incident_ref::db::Access;
use crate::incidents::db::{self, Incident};
use crate::timeline::domain::Kind;

/// Who may see an incident, as a person asks for it: teams by slug or name, people by handle.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessDraft {
    /// Kept to the teams and people below (and admins); false opens it to everyone
    pub restricted: bool,
    /// Teams (slug or name) whose members may see it
    #[serde(default)]
    pub teams: Vec<String>,
    /// People (handle) who may see it
    #[serde(default)]
    pub people: Vec<String>,
}

impl AccessDraft {
    /// Whom a form keeps an incident to: teams and people each as text with commas between
    /// them; not `restricted`, it is open to everyone and names nobody.
    pub fn of_form(restricted: bool, teams: &str, people: &str) -> Self {
        let listed = |text: &str| -> Vec<String> {
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        Self {
            restricted,
            teams: if restricted { listed(teams) } else { vec![] },
            people: if restricted { listed(people) } else { vec![] },
        }
    }
}

/// The most teams, and the most people, one incident names.
const MOST: usize = 50;

/// The draft's teams and people as ids, checked: unknown ones are refused naming the field; a
/// restricted incident names someone; an open one names nobody. Whoever restricts it keeps
/// sight of it: named in none of it (by a team of theirs or by handle), they are added.
async fn resolve(
    conn: &mut PgConnection,
    d: &AccessDraft,
    actor: Option<i64>,
) -> AppResult<(Vec<i64>, Vec<i64>)> {
    if !d.restricted {
        if let Some((field, _)) = [("teams", &d.teams), ("people", &d.people)]
            .into_iter()
            .find(|(_, names)| names.iter().any(|n| !n.trim().is_empty()))
        {
            return Err(AppError::invalid(
                field,
                "an incident open to everyone names nobody; set restricted to true to keep it to those named",
            ));
        }
        return Ok((Vec::new(), Vec::new()));
    }
    let named = |names: &[String]| -> Vec<String> {
        let mut out: Vec<String> = names
            .iter()
            .map(|n| n.trim().trim_start_matches('@').to_owned())
            .filter(|n| !n.is_empty())
            .collect();
        out.dedup();
        out
    };
    let (team_names, handles) = (named(&d.teams), named(&d.people));
    for (field, names) in [("teams", &team_names), ("people", &handles)] {
        if names.len() > MOST {
            return Err(AppError::invalid(
                field,
                format!("name at most {MOST}; a team stands for its members"),
            ));
        }
    }
    if team_names.is_empty() && handles.is_empty() {
        return Err(AppError::invalid(
            "teams",
            "name at least one team or person who may see a restricted incident",
        ));
    }
    let mut teams = Vec::new();
    for name in &team_names {
        let (id, _) = crate::teams::db::find(&mut *conn, name)
            .await?
            .ok_or_else(|| AppError::invalid("teams", format!("there is no team {name:?}")))?;
        teams.push(id);
    }
    let mut people = Vec::new();
    for handle in &handles {
        let p = crate::people::db::find(&mut *conn, handle)
            .await?
            .ok_or_else(|| {
                AppError::invalid("people", format!("there is nobody called {handle:?}"))
            })?;
        people.push(p.id);
    }
    if let Some(me) = actor
        && !people.contains(&me)
    {
        let mine = crate::teams::db::ids_of_person(&mut *conn, me).await?;
        if !teams.iter().any(|t| mine.contains(t)) {
            people.push(me);
        }
    }
    teams.sort_unstable();
    teams.dedup();
    people.sort_unstable();
    people.dedup();
    Ok((teams, people))
}

/// Sets who may see the incident. A change is on the timeline and in the audit log; the same
/// access again changes nothing.
pub async fn set_access(
    conn: &mut PgConnection,
    c: &Change<'_>,
    draft: &AccessDraft,
) -> AppResult<Incident> {
    let incident = db::lock(&mut *conn, c.key).await?;
    check_version(&incident, c.expected_version)?;
    if apply(conn, &incident, draft, c.actor).await?.is_none() {
        return Ok(incident);
    }
    db::get(&mut *conn, c.key).await
}

/// Writes the draft's access to the incident with its timeline entry and audit row; the new
/// version, or `None` when it already had that access.
pub(super) async fn apply(
    conn: &mut PgConnection,
    incident: &Incident,
    draft: &AccessDraft,
    actor: &crate::audit::Actor,
) -> AppResult<Option<i32>> {
    let (teams, people) = resolve(conn, draft, actor.person_id).await?;
    let before = crate::incident_ref::db::access(&mut *conn, incident.id).await?;
    let ids = |a: &Access| -> (Vec<i64>, Vec<i64>) {
        let mut t: Vec<i64> = a.teams.iter().map(|g| g.id).collect();
        let mut p: Vec<i64> = a.people.iter().map(|g| g.id).collect();
        t.sort_unstable();
        p.sort_unstable();
        (t, p)
    };
    if before.restricted == draft.restricted && ids(&before) == (teams.clone(), people.clone()) {
        return Ok(None);
    }
    let (id, by) = (incident.id, &actor.name);
    let version = db::set_access(&mut *conn, id, draft.restricted, &teams, &people, by).await?;
    let after = crate::incident_ref::db::access(&mut *conn, id).await?;
    let now = clock::now(&mut *conn).await?;
    let to: Vec<String> = after
        .teams
        .iter()
        .map(|g| g.title.clone())
        .chain(after.people.iter().map(|g| format!("@{}", g.name)))
        .collect();
    let entry = Entry {
        kind: Kind::Access,
        at: now,
        body: "",
        details: json!({
            "restricted": after.restricted,
            "to": to.join(", "),
            "teams": after.teams.iter().map(|g| &g.name).collect::<Vec<_>>(),
            "people": after.people.iter().map(|g| &g.name).collect::<Vec<_>>(),
        }),
        version: Some(version),
    };
    append(conn, id, actor, entry).await?;
    let key = incident.key.to_string();
    if after.restricted {
        crate::timeline::actions::unname_links_to(conn, &key, id).await?;
        // Mail to the status page's subscribers about it, not yet sent, goes no further.
        let why = "the incident was restricted to some people";
        crate::notify::actions::call_off_subscriber_mail(conn, &[id], why).await?;
    }
    audit::changed(conn, actor, "incident.access", &key, &before, &after).await?;
    Ok(Some(version))
}
