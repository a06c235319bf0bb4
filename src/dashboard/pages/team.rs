//! `GET /teams/{slug}`: a team's own page — its people, the services it owns and who is on
//! call for each now, its open incidents with their clocks, its overdue action items, and how
//! it has responded over 90 days.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;

use super::home::{OpenRow, clocks, open_incidents, open_row, trends};
use crate::clock;
use crate::dashboard::domain::{Chart, HEIGHT, WIDTH};
use crate::http::access::Viewer;
use crate::http::page::{Chrome, PageResult};
use crate::http::request::PageRequest;
use crate::incident_ref::domain::SeenBy;
use crate::teams::db::Team;

/// How many days the team's trends span.
const SPAN: i32 = 90;

/// A service the team owns, with who its escalation pages first now.
pub struct OwnedService {
    name: String,
    tier: i16,
    policy: Option<String>,
    /// Who is paged first now, by name
    on_call: Vec<String>,
    /// Schedules of the first step with nobody on call now
    gaps: Vec<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/team.html")]
pub struct TeamPage {
    chrome: Chrome,
    team: Team,
    services: Vec<OwnedService>,
    open: Vec<OpenRow>,
    overdue_items: Vec<crate::action_items::db::ListedItem>,
    charts: Vec<Chart>,
    width: i64,
    height: i64,
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    Path(slug): Path<String>,
) -> PageResult<TeamPage> {
    let team = crate::teams::db::get(&state.pool, &slug).await?;
    let owned = crate::services::db::select(
        &state.pool,
        crate::services::db::Filter {
            team: Some(&team.slug),
            ..Default::default()
        },
    )
    .await?;
    let on_call = {
        let mut conn = state.pool.acquire().await?;
        crate::paging::actions::on_call_now(&mut conn).await?
    };
    let services = owned
        .iter()
        .map(|s| {
            let now = on_call.iter().find(|o| o.service == s.name);
            OwnedService {
                name: s.name.clone(),
                tier: s.tier,
                policy: now.and_then(|o| o.policy.clone()),
                on_call: now.map_or_else(Vec::new, |o| {
                    o.first.iter().map(|f| f.name.clone()).collect()
                }),
                gaps: now.map_or_else(Vec::new, |o| o.gaps.clone()),
            }
        })
        .collect();
    let open = open_incidents(&state.pool, SeenBy::of(&auth.user), Some(vec![team.id])).await?;
    let now = clock::now(&state.pool).await?;
    let policies = crate::sla::db::all(&state.pool).await?;
    let mut rows = Vec::with_capacity(open.len());
    for i in &open {
        rows.push(open_row(i, &clocks(&policies, i, now)?.1));
    }
    let items = crate::action_items::db::ItemFilter {
        status: Some("unfinished".into()),
        overdue: true,
        teams: Some(vec![team.id]),
        ..Default::default()
    };
    let (overdue_items, _) =
        crate::action_items::db::list_items(&state.pool, &items, SeenBy::of(&auth.user), None, 50)
            .await?;
    Ok(TeamPage {
        chrome,
        services,
        open: rows,
        overdue_items,
        charts: trends(&state.pool, SPAN, Some(&[team.id])).await?,
        width: WIDTH,
        height: HEIGHT,
        team,
    })
}
