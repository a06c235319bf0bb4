//! `GET /`: the dashboard.

use askama::Template;
use askama_web::WebTemplate;
use chrono::{DateTime, Utc};

use crate::clock;
use crate::dashboard::db;
use crate::dashboard::domain::{Chart, HEIGHT, Trend, WIDTH, chart};
use crate::domain::Severity;
use crate::http::access::Viewer;
use crate::http::page::{Chrome, PageResult};
use crate::http::request::PageRequest;
use crate::incident_ref::domain::SeenBy;
use crate::incidents::db::{Filter, Incident};
use crate::incidents::domain::Status;
use crate::roles::domain::Role;
use crate::sla::domain::{ClockState, Sla, Verdict};

/// An open incident with the clock to watch.
pub struct OpenRow {
    pub key: String,
    pub title: String,
    pub status: Status,
    pub service: Option<String>,
    /// `acknowledge` or `resolve`: the clock still running
    pub clock: &'static str,
    pub due_at: DateTime<Utc>,
    /// `due in 6 min`, `overdue by 3 min`
    pub due_text: String,
    pub overdue: bool,
}

pub struct SeverityGroup {
    severity: Severity,
    rows: Vec<OpenRow>,
}

pub struct MineRow {
    key: String,
    title: String,
    severity: String,
    status: String,
    what: String,
}

pub struct UpdateDue {
    key: String,
    title: String,
    severity: Severity,
    due_at: DateTime<Utc>,
    text: String,
    overdue: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/index.html")]
pub struct DashboardPage {
    chrome: Chrome,
    open_total: usize,
    unacknowledged: usize,
    groups: Vec<SeverityGroup>,
    mine: Vec<MineRow>,
    updates_due: Vec<UpdateDue>,
    overdue_items: Vec<crate::action_items::db::ListedItem>,
    my_handle: String,
    charts: Vec<Chart>,
    width: i64,
    height: i64,
    newest: i64,
    /// The teams to narrow it to: (slug, name); and the choice (a slug, `mine`, or blank)
    teams: Vec<(String, String)>,
    filter_team: String,
    /// Maintenance going on or within a week
    maintenance: Vec<crate::maintenance::actions::Announcement>,
}

/// The clock a responder watches on an open incident: acknowledge until acknowledged, then
/// resolve.
fn watched(sla: &Sla) -> (&'static str, &Verdict) {
    match sla.ack.state {
        ClockState::Running | ClockState::Overdue => ("acknowledge", &sla.ack),
        _ => ("resolve", &sla.resolve),
    }
}

/// The incident's severity policy and its SLA clocks at `now`.
pub fn clocks(
    policies: &[crate::sla::domain::Policy],
    i: &Incident,
    now: DateTime<Utc>,
) -> PageResult<(crate::sla::domain::Policy, Sla)> {
    let policy = crate::sla::db::of(policies, i.peak_severity)?;
    let sla = Sla::of(
        &policy,
        i.detected_at,
        i.acknowledged_at,
        i.resolved_at,
        now,
    );
    Ok((policy, sla))
}

pub fn open_row(i: &Incident, sla: &Sla) -> OpenRow {
    let (clock, v) = watched(sla);
    OpenRow {
        key: i.key.to_string(),
        title: i.title.clone(),
        status: i.status,
        service: i.service.clone(),
        clock,
        due_at: v.due_at,
        due_text: v.text.clone(),
        overdue: matches!(v.state, ClockState::Overdue | ClockState::Breached),
    }
}

/// The trends of the last `span` days, of the services `teams` own or of all.
pub async fn trends(
    pool: &sqlx::PgPool,
    span: i32,
    teams: Option<&[i64]>,
) -> PageResult<Vec<Chart>> {
    let (days, ack_mean, resolve_mean) = db::last_days(pool, span, teams).await?;
    Ok(Trend::ALL
        .into_iter()
        .map(|t| {
            let mean = match t {
                Trend::Opened => None,
                Trend::Acknowledge => ack_mean,
                Trend::Resolve => resolve_mean,
            };
            chart(t, &days, mean)
        })
        .collect())
}

/// The open incidents (of one team's services, or of all), up to 200: unacknowledged first,
/// then the worst severity, then the longest open.
pub async fn open_incidents(
    pool: &sqlx::PgPool,
    sees: SeenBy,
    teams: Option<Vec<i64>>,
) -> PageResult<Vec<Incident>> {
    let filter = Filter {
        statuses: Some(vec![
            "triggered".into(),
            "acknowledged".into(),
            "mitigated".into(),
        ]),
        teams,
        ..Filter::default()
    };
    let mut open = crate::incidents::db::list(pool, &filter, sees, None, 200).await?;
    open.sort_by_key(|i| (i.status != Status::Triggered, i.severity, i.detected_at));
    Ok(open)
}

pub async fn show(
    PageRequest(state, chrome, auth): PageRequest<Viewer>,
    crate::http::extract::ApiQuery(q): crate::http::extract::ApiQuery<
        crate::teams::domain::TeamQuery,
    >,
) -> PageResult<DashboardPage> {
    let now = clock::now(&state.pool).await?;
    let sees = SeenBy::of(&auth.user);
    let asked = q.team.as_deref();
    let narrowed = crate::teams::actions::narrowed_page(&state.pool, auth.user.id, asked).await?;
    let open = open_incidents(&state.pool, sees, narrowed.ids.clone()).await?;
    let policies = crate::sla::db::all(&state.pool).await?;
    let mut groups: Vec<SeverityGroup> = Severity::ALL
        .into_iter()
        .map(|severity| SeverityGroup {
            severity,
            rows: vec![],
        })
        .collect();
    let ids: Vec<i64> = open.iter().map(|i| i.id).collect();
    let sent = crate::updates::db::sent_for(&state.pool, &ids).await?;
    let mut updates_due = Vec::new();
    for i in &open {
        let (policy, sla) = clocks(&policies, i, now)?;
        if let Some(g) = groups.iter_mut().find(|g| g.severity == i.severity) {
            g.rows.push(open_row(i, &sla));
        }
        if let Some(every) = policy.update_cadence_secs
            && i.mitigated_at.is_none()
        {
            let times: Vec<DateTime<Utc>> = sent
                .iter()
                .filter(|(id, _)| *id == i.id)
                .map(|(_, t)| *t)
                .collect();
            let c = crate::updates::domain::cadence(every, i.detected_at, None, &times, now);
            if let Some(due_at) = c.next_due_at {
                updates_due.push(UpdateDue {
                    key: i.key.to_string(),
                    title: i.title.clone(),
                    severity: i.severity,
                    due_at,
                    overdue: due_at <= now,
                    text: c.next_text,
                });
            }
        }
    }
    updates_due.sort_by_key(|u| u.due_at);
    let mine = db::mine(&state.pool, auth.user.id, sees)
        .await?
        .into_iter()
        .map(|m| {
            let mut what: Vec<String> = m
                .roles
                .iter()
                .map(|r| Role::parse(r).map_or_else(|_| r.clone(), |r| r.label().to_owned()))
                .collect();
            what.extend(m.claims.iter().map(|c| format!("looking into {c}")));
            MineRow {
                key: crate::domain::IncidentKey(m.number).to_string(),
                title: m.title,
                severity: m.severity,
                status: m.status,
                what: what.join(", "),
            }
        })
        .collect();
    let overdue_items =
        crate::action_items::db::owned_unfinished(&state.pool, &auth.user.handle, true, sees)
            .await?;
    let charts = trends(&state.pool, 30, narrowed.ids.as_deref()).await?;
    let teams = crate::teams::db::choices(&state.pool).await?;
    let maintenance = {
        let mut conn = state.pool.acquire().await?;
        crate::maintenance::actions::announcements(&mut conn, 7, None).await?
    };
    Ok(DashboardPage {
        maintenance,
        chrome,
        open_total: open.len(),
        unacknowledged: open
            .iter()
            .filter(|i| i.status == Status::Triggered)
            .count(),
        groups,
        mine,
        updates_due,
        overdue_items,
        my_handle: auth.user.handle.clone(),
        charts,
        width: WIDTH,
        height: HEIGHT,
        newest: crate::timeline::db::newest_id(&state.pool, None).await?,
        teams,
        filter_team: narrowed.team.unwrap_or_default(),
    })
}
