//! Changes to the routing rules, each audited in its transaction, and the preview of a draft
//! rule over the alerts of the last week.

use serde::Serialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::db::{self, Draft, RuleRecord};
pub use super::domain::RuleDraft;
use super::domain::{self, Decision, Rule};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

/// What a rule written by a team's lead (not an admin) may do: name at least one condition (a
/// rule for every alert is the installation's) and route to a service of its own team by name
/// (not a template, which could name any service), so it can take no other team's alerts to a
/// service of theirs.
pub async fn check_team_rule(
    e: impl sqlx::PgExecutor<'_>,
    d: &RuleDraft,
    team_id: Option<i64>,
) -> AppResult<()> {
    if d.conditions.iter().all(|c| c.trim().is_empty()) {
        return Err(AppError::invalid(
            "conditions",
            "a team's rule needs at least one condition; a rule for every alert is an admin's",
        ));
    }
    let service = d.service.trim();
    let owned = match crate::services::db::find_by_name(e, service).await? {
        Some(s) => team_id.is_some() && s.team_id == team_id,
        None => false,
    };
    if !owned {
        return Err(AppError::invalid(
            "service",
            format!(
                "a team's rule routes to one of the team's own services by name; {service:?} is not one"
            ),
        ));
    }
    Ok(())
}

/// The draft checked, and as a rule that can be tried.
pub fn check(d: &RuleDraft) -> AppResult<(String, Vec<String>, Rule)> {
    let rule = d.rule()?;
    let conditions: Vec<String> = rule.conditions.iter().map(|c| c.text.clone()).collect();
    Ok((rule.name.clone(), conditions, rule))
}

fn draft_of<'a>(
    name: &'a str,
    conditions: &'a [String],
    rule: &'a Rule,
    team_id: Option<i64>,
) -> Draft<'a> {
    Draft {
        name,
        conditions,
        service: &rule.service,
        severity: rule.severity,
        title_template: &rule.title_template,
        group_by: &rule.group_by,
        group_window_minutes: rule.group_window_minutes,
        team_id,
    }
}

/// The rule with this id, or 404.
pub async fn find(e: impl sqlx::PgExecutor<'_>, id: i64) -> AppResult<RuleRecord> {
    db::list(e)
        .await?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| AppError::NotFound(format!("There is no routing rule {id}.")))
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    d: &RuleDraft,
) -> AppResult<RuleRecord> {
    let (name, conditions, rule) = check(d)?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    let id = db::insert(&mut *conn, &draft_of(&name, &conditions, &rule, team)).await?;
    let created = find(&mut *conn, id).await?;
    audit::created(conn, actor, "routing_rule.create", &created.name, &created).await?;
    Ok(created)
}

/// `expected_version` `None` overwrites whatever is there (`If-Match: *`).
pub async fn update(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    expected_version: Option<i32>,
    d: &RuleDraft,
) -> AppResult<RuleRecord> {
    let before = find(&mut *conn, id).await?;
    let (name, conditions, rule) = check(d)?;
    let team = crate::teams::actions::named(&mut *conn, &d.team).await?;
    if before.is_default && !conditions.is_empty() {
        return Err(AppError::invalid(
            "conditions",
            "the default rule catches every alert no other rule took; it has no conditions",
        ));
    }
    let version = expected_version.unwrap_or(before.version);
    if db::update(
        &mut *conn,
        id,
        version,
        &draft_of(&name, &conditions, &rule, team),
    )
    .await?
    .is_none()
    {
        return Err(AppError::Stale {
            current_version: before.version,
        });
    }
    let after = find(&mut *conn, id).await?;
    audit::changed(
        conn,
        actor,
        "routing_rule.update",
        &after.name,
        &before,
        &after,
    )
    .await?;
    Ok(after)
}

pub async fn delete(conn: &mut PgConnection, actor: &Actor, id: i64) -> AppResult<()> {
    let before = find(&mut *conn, id).await?;
    if before.is_default {
        return Err(AppError::Conflict(
            "The default rule cannot be deleted; edit what it decides instead.".into(),
        ));
    }
    db::delete(&mut *conn, id).await?;
    audit::deleted(conn, actor, "routing_rule.delete", &before.name, &before).await
}

/// Puts the rules (all but the default) in the given order.
pub async fn reorder(
    conn: &mut PgConnection,
    actor: &Actor,
    order: &[i64],
) -> AppResult<Vec<RuleRecord>> {
    let before = db::list(&mut *conn).await?;
    let mut expected: Vec<i64> = before
        .iter()
        .filter(|r| !r.is_default)
        .map(|r| r.id)
        .collect();
    let mut given = order.to_vec();
    expected.sort_unstable();
    given.sort_unstable();
    if expected != given {
        return Err(AppError::invalid(
            "order",
            "list every rule but the default one, each once",
        ));
    }
    db::reorder(&mut *conn, order).await?;
    let after = db::list(&mut *conn).await?;
    let names = |rs: &[RuleRecord]| rs.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    audit::changed(
        conn,
        actor,
        "routing_rule.reorder",
        "routing rules",
        json!(names(&before)),
        json!(names(&after)),
    )
    .await?;
    Ok(after)
}

/// How far back a preview looks, and how many alerts it tries at most.
pub const PREVIEW_DAYS: i64 = 7;
pub const PREVIEW_LIMIT: i64 = 5000;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PreviewItem {
    pub alert_id: i64,
    pub received_at: chrono::DateTime<chrono::Utc>,
    pub integration: String,
    pub summary: String,
    /// What the draft would have decided
    pub would: Decision,
    /// What routing decided when the alert arrived
    #[schema(value_type = Object)]
    pub did: Value,
}

impl PreviewItem {
    /// The rule that routed the alert when it arrived.
    pub fn routed_by(&self) -> &str {
        self.did.get("rule").and_then(Value::as_str).unwrap_or("")
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Preview {
    /// Alerts of the last 7 days tried (newest first, at most 5000)
    pub considered: usize,
    /// How many the draft matches
    pub matched: usize,
    /// The matches, newest first (at most 100 listed)
    pub items: Vec<PreviewItem>,
}

/// Runs a draft rule over the alerts received in the last seven days.
/// What the draft would have done to the alerts of the last days that `seen_by` may see (an
/// alert of a restricted incident is not shown to those it is not kept to).
pub async fn preview(
    conn: &mut PgConnection,
    d: &RuleDraft,
    seen_by: crate::incident_ref::domain::SeenBy,
) -> AppResult<Preview> {
    let (_, _, rule) = check(d)?;
    let now = crate::clock::now(&mut *conn).await?;
    let since = now - chrono::Duration::days(PREVIEW_DAYS);
    let alerts = crate::alert_store::db::received_since(&mut *conn, since, seen_by, PREVIEW_LIMIT);
    let alerts = alerts.await?;
    let rules = [rule];
    let mut matched = 0;
    let mut items = Vec::new();
    for a in &alerts {
        let s = db::subject_of(a);
        if !rules[0].matches(&s) {
            continue;
        }
        matched += 1;
        if items.len() < 100 {
            items.push(PreviewItem {
                alert_id: a.id,
                received_at: a.received_at,
                integration: a.integration.clone(),
                summary: a.summary.clone(),
                would: domain::route(&rules, &s),
                did: a.routed.clone(),
            });
        }
    }
    Ok(Preview {
        considered: alerts.len(),
        matched,
        items,
    })
}
