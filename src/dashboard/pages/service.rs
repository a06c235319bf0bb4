//! One service's page: its facts and team, who is on call for it now, its error budget,
//! change-failure rate, capacity changes and incidents. The dashboard's, as the team page is:
//! who is on call comes from paging, a room above the services'.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;

use crate::changes::db::Change;
use crate::changes::domain::{FailureGroup, FailureRate};
use crate::http::access::Viewer;
use crate::http::page::{Chrome, PageResult};
use crate::http::request::PageRequest;
use crate::services::db::Service;

struct IncidentRow {
    key: String,
    title: String,
    severity: String,
    status: String,
    detected: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "services/show.html")]
pub struct ShowPage {
    chrome: Chrome,
    s: Service,
    incidents: Vec<IncidentRow>,
    /// This month's error budget as the postmortems' failed requests consumed it.
    budget: Option<String>,
    /// Its latest changes that touch capacity, with their checks.
    capacity_changes: Vec<Change>,
    /// Its change-failure rate over the last 90 days, and all time.
    failure_recent: FailureRate,
    failure_all: FailureRate,
    /// Who its escalation policy pages first now, the policy, and its schedules with nobody on
    /// call
    on_call: Vec<String>,
    policy: Option<String>,
    gaps: Vec<String>,
    /// Its maintenance going on or within a week
    maintenance: Vec<crate::maintenance::actions::Announcement>,
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    Path(name): Path<String>,
) -> PageResult<ShowPage> {
    let s = crate::services::db::get_by_name(&state.pool, &name).await?;
    let sees = crate::incident_ref::domain::SeenBy::of(&auth.user);
    let rows = crate::services::db::incidents_of(&state.pool, s.id, sees, 100).await?;
    let (failed, counted) = crate::services::db::failed_this_month(&state.pool, s.id).await?;
    let budget = crate::services::domain::error_budget(
        s.slo_target_percent,
        s.avg_requests_per_second,
        Some(failed),
    )
    .map(|b| crate::services::domain::budget_left_line(&b, failed, counted));
    let capacity_changes = crate::changes::db::capacity_changes(&state.pool, &s.name, 10).await?;
    let since = crate::clock::now(&state.pool).await? - chrono::Duration::days(90);
    let rate = |from| {
        crate::changes::db::failure_rates(
            &state.pool,
            FailureGroup::Service,
            Some(&s.name),
            from,
            None,
        )
    };
    let failure_recent = FailureRate::overall(&rate(Some(since)).await?);
    let failure_all = FailureRate::overall(&rate(None).await?);
    let (now, maintenance) = {
        let mut conn = state.pool.acquire().await?;
        let now = crate::paging::actions::on_call_now(&mut conn)
            .await?
            .into_iter()
            .find(|o| o.service == s.name);
        let ahead = crate::maintenance::actions::announcements(&mut conn, 7, Some(&s.name)).await?;
        (now, ahead)
    };
    Ok(ShowPage {
        chrome,
        on_call: now.as_ref().map_or_else(Vec::new, |o| {
            o.first.iter().map(|f| f.name.clone()).collect()
        }),
        policy: now.as_ref().and_then(|o| o.policy.clone()),
        gaps: now.map_or_else(Vec::new, |o| o.gaps),
        maintenance,
        budget,
        capacity_changes,
        failure_recent,
        failure_all,
        incidents: rows
            .into_iter()
            .map(|i| IncidentRow {
                key: crate::domain::IncidentKey(i.number).to_string(),
                title: i.title,
                severity: i.severity,
                status: i.status,
                detected: i.detected_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            })
            .collect(),
        s,
    })
}
