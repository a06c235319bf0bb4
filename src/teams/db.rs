//! Queries on teams and their members.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgExecutor;
use sqlx::types::Json;

use super::domain::{TeamDraft, TeamRole};
use crate::error::{AppError, AppResult};

/// One member of a team.
#[derive(Debug, Clone, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = TeamMember)]
pub struct Member {
    #[serde(skip_serializing)]
    pub person_id: i64,
    pub handle: String,
    pub name: String,
    /// `member` or `lead`
    pub role: TeamRole,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Team {
    #[serde(skip)]
    pub id: i64,
    pub slug: String,
    pub name: String,
    pub description: String,
    /// Whether members (not only leads) may change the team's configuration
    pub members_manage: bool,
    /// The identity provider's group whose members are this team's members
    pub oidc_group: Option<String>,
    /// Leads first, then by name
    #[schema(value_type = Vec<Member>)]
    pub members: Json<Vec<Member>>,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Team {
    pub fn draft(&self) -> TeamDraft {
        TeamDraft {
            name: self.name.clone(),
            slug: self.slug.clone(),
            description: self.description.clone(),
            members_manage: self.members_manage,
            oidc_group: self.oidc_group.clone(),
        }
    }

    /// The person's part in the team, if they are in it.
    pub fn part_of(&self, handle: &str) -> Option<TeamRole> {
        self.members
            .iter()
            .find(|m| m.handle == handle)
            .map(|m| m.role)
    }
}

impl crate::http::write::Versioned for Team {
    fn version(&self) -> i32 {
        self.version
    }
}

/// Teams whose slug is `slug` (every team when `None`), by name.
pub async fn list(e: impl PgExecutor<'_>, slug: Option<&str>) -> AppResult<Vec<Team>> {
    Ok(sqlx::query_as!(
        Team,
        r#"select t.id, t.slug, t.name, t.description, t.members_manage, t.oidc_group,
                  coalesce((select jsonb_agg(jsonb_build_object('person_id', p.id, 'handle', p.handle,
                                                                'name', p.name, 'role', m.role)
                                             order by m.role = 'lead' desc, p.name)
                            from team_members m join people p on p.id = m.person_id
                            where m.team_id = t.id), '[]') as "members!: Json<Vec<Member>>",
                  t.version, t.created_at, t.updated_at
           from teams t where $1::text is null or t.slug = $1 order by t.name"#,
        slug
    )
    .fetch_all(e)
    .await?)
}

pub async fn get(e: impl PgExecutor<'_>, slug: &str) -> AppResult<Team> {
    AppError::the_one(list(e, Some(slug)).await?, "team", slug)
}

/// The team a service or a form names, by slug or by name (either case); a slug first, so what
/// a stored slug names never changes (and no team's name may be another's slug).
pub async fn find(e: impl PgExecutor<'_>, slug_or_name: &str) -> AppResult<Option<(i64, String)>> {
    Ok(sqlx::query!(
        r#"select id, name from teams where slug = lower($1) or lower(name) = lower($1)
           order by slug = lower($1) desc limit 1"#,
        slug_or_name.trim()
    )
    .fetch_optional(e)
    .await?
    .map(|r| (r.id, r.name)))
}

/// Another team (not `id`) whose slug is this draft's name, or whose name is its slug: a name
/// that reads as another team's slug would make "payments" mean two teams.
pub async fn crossed(
    e: impl PgExecutor<'_>,
    id: Option<i64>,
    d: &TeamDraft,
) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"select name from teams
           where ($1::bigint is null or id <> $1)
             and (slug = lower($2) or lower(name) = $3 or slug = $3)
           limit 1"#,
        id,
        d.name,
        d.slug
    )
    .fetch_optional(e)
    .await?)
}

fn taken(d: &TeamDraft) -> impl FnOnce(sqlx::Error) -> AppError + '_ {
    move |err| match &err {
        sqlx::Error::Database(db) if db.constraint() == Some("teams_slug_key") => {
            AppError::Conflict(format!("The slug {:?} is another team's.", d.slug))
        }
        sqlx::Error::Database(db) if db.constraint() == Some("teams_name_key") => {
            AppError::Conflict(format!("There is a team named {:?} already.", d.name))
        }
        _ => AppError::Database(err),
    }
}

pub async fn insert(e: impl PgExecutor<'_>, d: &TeamDraft) -> AppResult<i64> {
    sqlx::query_scalar!(
        r#"insert into teams (slug, name, description, members_manage, oidc_group)
           values ($1, $2, $3, $4, $5) returning id"#,
        d.slug,
        d.name,
        d.description,
        d.members_manage,
        d.oidc_group
    )
    .fetch_one(e)
    .await
    .map_err(taken(d))
}

/// Rewrites the team if it is still at `expected_version`; `false` when it moved on.
pub async fn update(
    e: impl PgExecutor<'_>,
    id: i64,
    expected_version: i32,
    d: &TeamDraft,
) -> AppResult<bool> {
    let done = sqlx::query!(
        r#"update teams set slug = $3, name = $4, description = $5, members_manage = $6,
                  oidc_group = $7, version = version + 1, updated_at = now()
           where id = $1 and version = $2"#,
        id,
        expected_version,
        d.slug,
        d.name,
        d.description,
        d.members_manage,
        d.oidc_group
    )
    .execute(e)
    .await
    .map_err(taken(d))?;
    Ok(done.rows_affected() == 1)
}

/// Deletes the team; what it owned is then the installation's (owned by nobody).
pub async fn delete(e: impl PgExecutor<'_>, id: i64) -> AppResult<()> {
    sqlx::query!("delete from teams where id = $1", id)
        .execute(e)
        .await?;
    Ok(())
}

/// Makes the person a member of the team in `role` (or changes their role); the team's version
/// moves on, so a stale membership form is told.
pub async fn set_member(
    e: impl PgExecutor<'_>,
    team_id: i64,
    person_id: i64,
    role: TeamRole,
) -> AppResult<()> {
    sqlx::query!(
        r#"with member as (
               insert into team_members (team_id, person_id, role) values ($1, $2, $3)
               on conflict (team_id, person_id) do update set role = excluded.role)
           update teams set version = version + 1, updated_at = now() where id = $1"#,
        team_id,
        person_id,
        role.as_str()
    )
    .execute(e)
    .await?;
    Ok(())
}

/// Takes the person out of the team; `false` when they were not in it.
pub async fn remove_member(
    e: impl PgExecutor<'_>,
    team_id: i64,
    person_id: i64,
) -> AppResult<bool> {
    let removed = sqlx::query_scalar!(
        r#"with gone as (
               delete from team_members where team_id = $1 and person_id = $2 returning 1)
           update teams set version = version + 1, updated_at = now()
           where id = $1 and exists (select 1 from gone) returning id"#,
        team_id,
        person_id
    )
    .fetch_optional(e)
    .await?;
    Ok(removed.is_some())
}

/// Every team's (slug, name), by name: what a list's team choice offers (without their members).
pub async fn choices(e: impl PgExecutor<'_>) -> AppResult<Vec<(String, String)>> {
    Ok(sqlx::query!("select slug, name from teams order by name")
        .fetch_all(e)
        .await?
        .into_iter()
        .map(|r| (r.slug, r.name))
        .collect())
}

/// The ids of the teams a person is in.
pub async fn ids_of_person(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<i64>> {
    Ok(sqlx::query_scalar!(
        "select team_id from team_members where person_id = $1 order by team_id",
        person_id
    )
    .fetch_all(e)
    .await?)
}

/// The teams a person is in, with their part in each.
pub async fn of_person(
    e: impl PgExecutor<'_>,
    person_id: i64,
) -> AppResult<Vec<(String, String, TeamRole)>> {
    let rows = sqlx::query!(
        r#"select t.slug, t.name, m.role from team_members m join teams t on t.id = m.team_id
           where m.person_id = $1 order by t.name"#,
        person_id
    )
    .fetch_all(e)
    .await?;
    rows.into_iter()
        .map(|r| {
            let role = TeamRole::parse("role", &r.role).map_err(|_| {
                AppError::Internal(format!("team role {:?} no longer reads", r.role))
            })?;
            Ok((r.slug, r.name, role))
        })
        .collect()
}

/// Every team, with whether the person is in it.
pub async fn with_person(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Vec<(Team, bool)>> {
    let teams = list(e, None).await?;
    Ok(teams
        .into_iter()
        .map(|t| {
            let member = t.members.iter().any(|m| m.person_id == person_id);
            (t, member)
        })
        .collect())
}

/// The slug of the team a slug or a name names (either case; a slug first).
pub async fn slug_named(e: impl PgExecutor<'_>, slug_or_name: &str) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        r#"select slug from teams where slug = lower($1) or lower(name) = lower($1)
           order by slug = lower($1) desc limit 1"#,
        slug_or_name.trim()
    )
    .fetch_optional(e)
    .await?)
}

/// The team a person last narrowed lists to (a slug, or `mine`), if any.
pub async fn chosen(e: impl PgExecutor<'_>, person_id: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        "select team from team_choices where person_id = $1",
        person_id
    )
    .fetch_optional(e)
    .await?
    .flatten())
}

/// Remembers what a person narrowed lists to (`None`: everything).
pub async fn choose(e: impl PgExecutor<'_>, person_id: i64, team: Option<&str>) -> AppResult<()> {
    sqlx::query!(
        r#"insert into team_choices (person_id, team) values ($1, $2)
           on conflict (person_id) do update set team = excluded.team, chosen_at = now()
           where team_choices.team is distinct from excluded.team"#,
        person_id,
        team
    )
    .execute(e)
    .await?;
    Ok(())
}

/// The ids of the teams `team` names for a person: `mine`, the teams they are in; a slug or
/// name, that team (none when there is no such team).
pub async fn scope(
    e: impl PgExecutor<'_> + Copy,
    person_id: i64,
    team: &str,
) -> AppResult<Vec<i64>> {
    if team == super::domain::MINE {
        return ids_of_person(e, person_id).await;
    }
    Ok(find(e, team)
        .await?
        .map(|(id, _)| vec![id])
        .unwrap_or_default())
}
