//! What the public sees, from whichever replica: components and their status now (the worst
//! an unresolved published incident says of them, or under maintenance while a maintenance
//! window covers their services), published incidents with their public updates newest first
//! (the customers-audience stakeholder updates, and the closing word once resolved), each
//! component's last 90 days, and maintenance an admin announced — named only by the
//! components it touches, never by the window's own name.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Serialize;
use sqlx::PgPool;

use super::db::{self, Publication, Settings};
use super::domain::{self, ComponentStatus, HISTORY_DAYS, PublicStatus};
use crate::error::AppResult;

/// An incident's impact window on a component: first impact until resolved (or now), and how.
type Impact = (DateTime<Utc>, DateTime<Utc>, ComponentStatus);

/// How far ahead maintenance is announced.
pub const MAINTENANCE_AHEAD_DAYS: i64 = 14;

#[derive(Debug, Clone, Serialize)]
pub struct Day {
    pub date: NaiveDate,
    /// None: before the component was made
    pub status: Option<ComponentStatus>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ComponentView {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub group: String,
    pub position: i32,
    pub status: ComponentStatus,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The last 90 days, oldest first
    pub days: Vec<Day>,
    /// Days of the 90 (since it was made) on which nothing touched it
    pub quiet_days: usize,
    /// Days of the 90 since it was made
    pub known_days: usize,
}

/// Components under one heading (the empty heading: on their own).
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub name: String,
    pub components: Vec<ComponentView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UpdateView {
    /// `<incident's public id>-<n>` for the n-th update, `…-resolved` for the closing word
    pub id: String,
    pub status: PublicStatus,
    pub body: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IncidentView {
    /// How the public names it (random)
    pub public_id: String,
    pub title: String,
    pub status: PublicStatus,
    /// none, minor, major or critical
    pub impact: &'static str,
    pub started_at: DateTime<Utc>,
    pub published_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// The components it affects: (id, name, how)
    pub components: Vec<(i64, String, ComponentStatus)>,
    /// Newest first
    pub updates: Vec<UpdateView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MaintenanceView {
    /// `<window>-<start as unix seconds>`
    pub id: String,
    pub name: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// scheduled or in_progress
    pub status: &'static str,
    pub components: Vec<(i64, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct View {
    pub settings: Settings,
    /// Statuspage's indicator: none, minor, major, critical or maintenance
    pub indicator: &'static str,
    pub description: &'static str,
    pub groups: Vec<Group>,
    pub components: Vec<ComponentView>,
    /// Unresolved, newest first
    pub open: Vec<IncidentView>,
    /// Resolved within the last 90 days, newest first
    pub past: Vec<IncidentView>,
    pub maintenance: Vec<MaintenanceView>,
    pub generated_at: DateTime<Utc>,
    /// When what the page shows last changed
    pub updated_at: DateTime<Utc>,
}

fn incident_view(
    p: &Publication,
    affected: &[(i64, String, ComponentStatus)],
    updates: &[&db::PublicUpdate],
    turns: &[(&str, DateTime<Utc>)],
    now: DateTime<Utc>,
) -> IncidentView {
    // Numbered in the order they were written (ids only grow), shown newest first.
    let mut said: Vec<UpdateView> = updates
        .iter()
        .enumerate()
        .map(|(n, u)| UpdateView {
            id: format!("{}-{}", p.public_id, n + 1),
            status: PublicStatus::at(u.sent_at, turns),
            body: u.body.clone(),
            at: u.sent_at,
        })
        .collect();
    said.sort_by_key(|u| std::cmp::Reverse(u.at));
    // Resolved: the closing word is the last said, whatever was sent after.
    if let Some(resolved) = p.resolved_at {
        said.insert(
            0,
            UpdateView {
                id: format!("{}-resolved", p.public_id),
                status: PublicStatus::Resolved,
                body: p.closing.clone(),
                at: resolved,
            },
        );
    }
    let latest = said
        .iter()
        .map(|u| u.at)
        .max()
        .map_or(p.updated_at, |at| at.max(p.updated_at));
    let statuses: Vec<ComponentStatus> = affected.iter().map(|a| a.2).collect();
    IncidentView {
        public_id: p.public_id.clone(),
        title: p.title.clone(),
        status: PublicStatus::at(now, turns),
        impact: domain::impact(&statuses),
        started_at: p.started_at,
        published_at: p.published_at,
        updated_at: latest,
        mitigated_at: p.mitigated_at,
        resolved_at: p.resolved_at,
        components: affected.to_vec(),
        updates: said,
    }
}

/// Everything the public page and its JSON show, at the database's now.
pub async fn view(pool: &PgPool) -> AppResult<View> {
    let now = crate::clock::now(pool).await?;
    let settings = db::settings(pool).await?;
    let components = db::components(pool).await?;
    let since = now - Duration::days(HISTORY_DAYS);
    let published = db::public_incidents(pool, since).await?;
    let ids: Vec<i64> = published.iter().map(|p| p.incident_id).collect();
    let affected = db::affected(pool, &ids).await?;
    let updates = db::public_updates(pool, &ids).await?;
    let turns = db::turns(pool, &ids).await?;
    let names: HashMap<i64, &str> = components.iter().map(|c| (c.id, c.name.as_str())).collect();

    // Maintenance: the windows an admin announced, over the components' services.
    let announced = db::announcements(pool).await?;
    let windows = if announced.is_empty() {
        vec![]
    } else {
        crate::maintenance::db::list(pool, None).await?
    };
    let ahead = now + Duration::days(MAINTENANCE_AHEAD_DAYS);
    let mut under: Vec<i64> = Vec::new();
    let mut maintenance = Vec::new();
    for (w, a) in windows.iter().filter_map(|w| {
        let a = announced.iter().find(|a| a.window_id == w.id)?;
        Some((w, a))
    }) {
        let touched: Vec<(i64, String)> = components
            .iter()
            .filter(|c| c.services.iter().any(|s| w.services.contains(s)))
            .map(|c| (c.id, c.name.clone()))
            .collect();
        if touched.is_empty() {
            continue;
        }
        let rules = crate::maintenance::actions::rules_of(w);
        for (from, to) in rules.occurrences(now, ahead) {
            let going = from <= now && now < to;
            if going {
                under.extend(touched.iter().map(|t| t.0));
            }
            let list: Vec<&str> = touched.iter().map(|t| t.1.as_str()).collect();
            maintenance.push(MaintenanceView {
                id: format!("{}-{}", a.public_id, from.timestamp()),
                name: format!("Scheduled maintenance: {}", list.join(", ")),
                starts_at: from,
                ends_at: to,
                status: if going { "in_progress" } else { "scheduled" },
                components: touched.clone(),
            });
        }
    }
    maintenance.sort_by_key(|m| m.starts_at);

    let mut open = Vec::new();
    let mut past = Vec::new();
    let mut spans: HashMap<i64, Vec<Impact>> = HashMap::new();
    let mut now_worst: HashMap<i64, ComponentStatus> = HashMap::new();
    // How bad the open incidents are, those naming no component too.
    let mut open_worst = ComponentStatus::Operational;
    for p in &published {
        let mine: Vec<(i64, String, ComponentStatus)> = affected
            .iter()
            .filter(|a| a.incident_id == p.incident_id)
            .filter_map(|a| {
                let name = names.get(&a.component_id)?;
                Some((
                    a.component_id,
                    (*name).to_owned(),
                    ComponentStatus::stored(&a.status),
                ))
            })
            .collect();
        for (id, _, status) in &mine {
            // Its impact lasted from the first until mitigation.
            let end = p.mitigated_at.or(p.resolved_at).unwrap_or(now);
            spans
                .entry(*id)
                .or_default()
                .push((p.started_at, end, *status));
            if p.resolved_at.is_none() {
                let slot = now_worst.entry(*id).or_insert(*status);
                *slot = (*slot).max(*status);
            }
        }
        let said: Vec<&db::PublicUpdate> = updates
            .iter()
            .filter(|u| u.incident_id == p.incident_id)
            .collect();
        let turned: Vec<(&str, DateTime<Utc>)> = turns
            .iter()
            .filter(|t| t.incident_id == p.incident_id)
            .map(|t| (t.kind.as_str(), t.at))
            .collect();
        let v = incident_view(p, &mine, &said, &turned, now);
        if p.resolved_at.is_none() {
            let worst = mine
                .iter()
                .map(|m| m.2)
                .max()
                .unwrap_or(ComponentStatus::DegradedPerformance);
            open_worst = open_worst.max(worst);
            open.push(v);
        } else {
            past.push(v);
        }
    }
    past.sort_by_key(|i| std::cmp::Reverse(i.resolved_at));

    let today = now.date_naive();
    let views: Vec<ComponentView> = components
        .iter()
        .map(|c| {
            let mut status = now_worst
                .get(&c.id)
                .copied()
                .unwrap_or(ComponentStatus::Operational);
            if under.contains(&c.id) {
                status = status.max(ComponentStatus::UnderMaintenance);
            }
            // Its history begins when it was made, or with the first impact published on it.
            let impacts = spans.get(&c.id).map_or(&[][..], |v| v.as_slice());
            let since = impacts
                .iter()
                .map(|i| i.0)
                .chain(std::iter::once(c.created_at))
                .min()
                .unwrap_or(c.created_at)
                .date_naive();
            let bars = domain::day_bars((since, today), HISTORY_DAYS, impacts);
            let quiet_days = bars
                .iter()
                .filter(|b| b.1 == Some(ComponentStatus::Operational))
                .count();
            let known_days = bars.iter().filter(|b| b.1.is_some()).count();
            ComponentView {
                id: c.id,
                name: c.name.clone(),
                description: c.description.clone(),
                group: c.group.clone(),
                position: c.position,
                status,
                created_at: c.created_at,
                updated_at: c.updated_at,
                days: bars
                    .into_iter()
                    .map(|(date, status)| Day { date, status })
                    .collect(),
                quiet_days,
                known_days,
            }
        })
        .collect();
    let mut groups: Vec<Group> = Vec::new();
    for c in &views {
        match groups
            .iter_mut()
            .find(|g| !c.group.is_empty() && g.name == c.group)
        {
            Some(g) => g.components.push(c.clone()),
            None => groups.push(Group {
                name: c.group.clone(),
                components: vec![c.clone()],
            }),
        }
    }
    let worst = views
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(ComponentStatus::Operational)
        .max(open_worst);
    let (indicator, description) = domain::indicator(worst);
    let changed = db::changed_at(pool).await?.unwrap_or(settings.updated_at);
    let updated_at = open
        .iter()
        .chain(past.iter())
        .map(|i| i.updated_at)
        .chain(std::iter::once(changed))
        .max()
        .unwrap_or(changed);
    Ok(View {
        settings,
        indicator,
        description,
        groups,
        components: views,
        open,
        past,
        maintenance,
        generated_at: now,
        updated_at,
    })
}

/// One published incident the public may see, however long ago it resolved (the page keeps
/// 90 days; a link to an older one still opens it); none when there is no such publication.
pub async fn incident(pool: &PgPool, public_id: &str) -> AppResult<Option<IncidentView>> {
    let Some(p) = db::public_incident(pool, public_id).await? else {
        return Ok(None);
    };
    let now = crate::clock::now(pool).await?;
    let components = db::components(pool).await?;
    let ids = [p.incident_id];
    let mine: Vec<(i64, String, ComponentStatus)> = db::affected(pool, &ids)
        .await?
        .into_iter()
        .filter_map(|a| {
            let c = components.iter().find(|c| c.id == a.component_id)?;
            Some((c.id, c.name.clone(), ComponentStatus::stored(&a.status)))
        })
        .collect();
    let updates = db::public_updates(pool, &ids).await?;
    let said: Vec<&db::PublicUpdate> = updates.iter().collect();
    let turns = db::turns(pool, &ids).await?;
    let turned: Vec<(&str, DateTime<Utc>)> =
        turns.iter().map(|t| (t.kind.as_str(), t.at)).collect();
    Ok(Some(incident_view(&p, &mine, &said, &turned, now)))
}
