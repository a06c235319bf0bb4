//! The on-call load of a period, read and worked out: every person's figures in their own
//! zone, and every team's as the sum of its members'.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use sqlx::PgConnection;
use std::collections::HashMap;

use super::db;
use super::domain::{Ack, Figures, Period, hours_on_call};
use crate::error::AppResult;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PersonLoad {
    pub handle: String,
    pub name: String,
    /// The zone their days and nights are counted in
    pub time_zone: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TeamLoad {
    pub slug: String,
    pub name: String,
    /// How many people the team has
    pub members: usize,
    #[serde(flatten)]
    pub figures: Figures,
}

/// The load of the last `days` days up to now.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = OnCallLoad)]
pub struct Load {
    pub days: i64,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Everyone with hours on call, pages or acknowledgements in the period: most hours first
    pub people: Vec<PersonLoad>,
    /// Every team, by name
    pub teams: Vec<TeamLoad>,
}

/// Works out the load of the last `days` days (the database's clock).
pub async fn load(conn: &mut PgConnection, days: i64) -> AppResult<Load> {
    let to = crate::clock::now(&mut *conn).await?;
    let from = to - Duration::days(days);
    let people = crate::people::db::list(&mut *conn).await?;
    let ids: Vec<i64> = people.iter().map(|p| p.id).collect();
    let prefs = crate::people::db::preferences_of(&mut *conn, &ids).await?;
    let by_handle: HashMap<&str, i64> = people.iter().map(|p| (p.handle.as_str(), p.id)).collect();

    let mut spans: HashMap<i64, Vec<Period>> = HashMap::new();
    for s in crate::oncall::db::list(&mut *conn, None).await? {
        let rules = match crate::oncall::actions::rules(&s) {
            Ok(rules) => rules,
            Err(e) => {
                tracing::warn!(error = %e, "on-call load leaves out a schedule");
                continue;
            }
        };
        for span in rules.spans(from, to) {
            if let Some(id) = by_handle.get(span.person.as_str()) {
                spans.entry(*id).or_default().push((span.from, span.to));
            }
        }
    }
    let mut pages: HashMap<i64, Vec<DateTime<Utc>>> = HashMap::new();
    for (id, at) in db::pages(&mut *conn, from, to).await? {
        pages.entry(id).or_default().push(at);
    }
    let mut acks: HashMap<i64, Vec<Ack>> = HashMap::new();
    for (id, detected, acknowledged) in db::first_acks(&mut *conn, from, to).await? {
        acks.entry(id).or_default().push(Ack {
            detected,
            acknowledged,
        });
    }

    let figures: HashMap<i64, Figures> = people
        .iter()
        .map(|p| {
            let zone = prefs.get(&p.id).cloned().unwrap_or_default().zone();
            let hours = hours_on_call(spans.get(&p.id).map_or(&[][..], |s| s), from, to);
            let none = Vec::new();
            let f = Figures::of_person(
                hours,
                pages.get(&p.id).unwrap_or(&none),
                acks.get(&p.id).map_or(&[][..], |a| a),
                zone,
            );
            (p.id, f)
        })
        .collect();
    let teams = crate::teams::db::list(&mut *conn, None)
        .await?
        .into_iter()
        .map(|t| TeamLoad {
            figures: Figures::of_team(t.members.iter().filter_map(|m| figures.get(&m.person_id))),
            members: t.members.len(),
            slug: t.slug,
            name: t.name,
        })
        .collect();
    let mut people: Vec<PersonLoad> = people
        .into_iter()
        .filter_map(|p| {
            let f = figures.get(&p.id)?.clone();
            let busy = f.hours_on_call > 0.0 || f.pages > 0 || f.incidents_acknowledged > 0;
            busy.then(|| PersonLoad {
                time_zone: prefs
                    .get(&p.id)
                    .map_or_else(|| "UTC".to_owned(), |x| x.time_zone.clone()),
                handle: p.handle,
                name: p.name,
                figures: f,
            })
        })
        .collect();
    people.sort_by(|a, b| {
        (b.figures.hours_on_call, b.figures.pages, &a.name)
            .partial_cmp(&(a.figures.hours_on_call, a.figures.pages, &b.name))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Load {
        days,
        from,
        to,
        people,
        teams,
    })
}
