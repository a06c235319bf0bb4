//! Making and cancelling maintenance windows (audited), the windows as people read them (state,
//! the occurrence going on or next, the next ones), the windows as the alert lanes judge with
//! them, and what the engine does at a window's start and end.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgExecutor};

use super::db::{self, NewWindow, WindowRow};
use super::domain::{self, Active, Edge, EdgeKind, Mode, Window};
use crate::audit::{self, Actor};
use crate::error::{AppError, AppResult};

/// A window as a person writes it (API body or form).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowDraft {
    pub name: String,
    /// The services it covers, by name
    pub services: Vec<String>,
    /// `silence` (alerts are held: no incident, nobody paged) or `quiet` (incidents open but
    /// page nobody until it ends; those still unacknowledged then page)
    pub mode: String,
    /// The (first) start on the zone's wall clock: `2026-12-24T22:00`
    pub starts_at: String,
    /// An IANA zone such as `Europe/Lisbon`; default UTC
    #[serde(default)]
    pub time_zone: String,
    /// How long each occurrence lasts, as amtool writes lengths: `2h`, `90m`, `1h30m` (at most
    /// a week)
    pub duration: String,
    /// Again every week, on `weekdays` (default: the start's weekday)
    #[serde(default)]
    pub weekly: bool,
    /// `mon`, `tue` … or 1 … 7 from Monday
    #[serde(default)]
    pub weekdays: Vec<String>,
    /// The last day (in the zone) a weekly window may start on
    #[serde(default)]
    pub repeat_until: Option<String>,
    #[serde(default)]
    pub comment: String,
}

/// A window as the API and pages show it: as stored, with where it stands now.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct WindowView {
    #[serde(flatten)]
    pub window: WindowRow,
    /// active, upcoming or over, by the database's clock
    pub state: String,
    /// The occurrence going on, else the next one
    pub current: Option<Occurrence>,
    /// The next occurrences after it (at most 4)
    pub next: Vec<Occurrence>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Occurrence {
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

/// The stored window as the rules read it (a zone no longer known reads as UTC).
pub fn rules_of(w: &WindowRow) -> Window {
    Window {
        id: w.id,
        mode: Mode::parse("mode", &w.mode).unwrap_or(Mode::Quiet),
        local_start: w.local_start,
        zone: w.time_zone.parse().unwrap_or(chrono_tz::UTC),
        duration: Duration::minutes(w.duration_minutes.into()),
        weekly: w.weekly,
        weekdays: w.weekdays.iter().map(|d| *d as u32).collect(),
        repeat_until: w.repeat_until,
        cancelled_at: w.cancelled_at,
    }
}

pub fn view(w: WindowRow, now: DateTime<Utc>) -> WindowView {
    let rules = rules_of(&w);
    let current = rules.current_or_next(now);
    let state = match current {
        Some((s, _)) if s <= now => "active",
        Some(_) => "upcoming",
        None => "over",
    };
    let next = current
        .map(|(_, e)| {
            rules
                .occurrences(e, e + Duration::days(35))
                .into_iter()
                .filter(|(s, _)| *s >= e)
                .take(4)
                .map(|(starts_at, ends_at)| Occurrence { starts_at, ends_at })
                .collect()
        })
        .unwrap_or_default();
    WindowView {
        window: w,
        state: state.to_owned(),
        current: current.map(|(starts_at, ends_at)| Occurrence { starts_at, ends_at }),
        next,
    }
}

/// Every window as seen now, newest first.
pub async fn list(conn: &mut PgConnection) -> AppResult<Vec<WindowView>> {
    let now = crate::clock::now(&mut *conn).await?;
    Ok(db::list(&mut *conn, None)
        .await?
        .into_iter()
        .map(|w| view(w, now))
        .collect())
}

/// Windows going on or starting within `days`, soonest first, optionally of one service: what
/// the dashboard and a service's page announce.
pub async fn ahead(
    conn: &mut PgConnection,
    days: i64,
    service: Option<&str>,
) -> AppResult<Vec<WindowView>> {
    let now = crate::clock::now(&mut *conn).await?;
    let mut out: Vec<WindowView> = list(conn)
        .await?
        .into_iter()
        .filter(|v| {
            v.current
                .as_ref()
                .is_some_and(|c| c.starts_at <= now + Duration::days(days))
                && service.is_none_or(|s| v.window.services.iter().any(|n| n == s))
        })
        .collect();
    out.sort_by_key(|v| v.current.as_ref().map(|c| c.starts_at));
    Ok(out)
}

/// The window with this id, or 404.
pub async fn find(conn: &mut PgConnection, id: i64) -> AppResult<WindowView> {
    let now = crate::clock::now(&mut *conn).await?;
    db::list(&mut *conn, Some(id))
        .await?
        .pop()
        .map(|w| view(w, now))
        .ok_or_else(|| AppError::NotFound(format!("There is no maintenance window {id}.")))
}

fn local_time(field: &str, text: &str) -> AppResult<NaiveDateTime> {
    let text = text.trim();
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .ok_or_else(|| {
            AppError::invalid(
                field,
                "a date and wall-clock time in the window's zone, e.g. 2026-12-24T22:00",
            )
        })
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    d: &WindowDraft,
) -> AppResult<WindowView> {
    let name = d.name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(AppError::invalid(
            "name",
            "name it in 1 to 200 characters (the work planned)",
        ));
    }
    let mode = Mode::parse("mode", &d.mode)?;
    let zone_name = if d.time_zone.trim().is_empty() {
        "UTC"
    } else {
        d.time_zone.trim()
    };
    let zone = domain::zone("time_zone", zone_name)?;
    let local_start = local_time("starts_at", &d.starts_at)?;
    let duration = crate::silences::domain::parse_length("duration", &d.duration)?;
    if duration > Duration::minutes(domain::MAX_MINUTES) || duration < Duration::minutes(1) {
        return Err(AppError::invalid(
            "duration",
            "a window lasts from a minute to a week each time",
        ));
    }
    let mut weekdays = domain::weekdays("weekdays", &d.weekdays)?;
    if d.weekly && weekdays.is_empty() {
        weekdays.push(chrono::Datelike::weekday(&local_start).number_from_monday());
    }
    if d.weekly && duration > domain::longest_weekly(&weekdays) {
        return Err(AppError::invalid(
            "duration",
            format!(
                "each occurrence must end at least two hours before the next starts; on these \
                 weekdays that is at most {}",
                crate::domain::format_minutes(domain::longest_weekly(&weekdays).num_seconds())
            ),
        ));
    }
    if mode == Mode::Silence {
        // Holding alerts is a silence: the admin's longest silence bounds it.
        let most = crate::silences::db::policy(&mut *conn).await?.max_hours;
        if duration > Duration::hours(most.into()) {
            return Err(AppError::invalid(
                "duration",
                format!(
                    "a window that holds alerts lasts at most {} each time, as a silence does \
                     (an admin sets it); a quiet window may last longer",
                    crate::domain::format_minutes(i64::from(most) * 3600)
                ),
            ));
        }
    }
    if !d.weekly && !weekdays.is_empty() {
        return Err(AppError::invalid(
            "weekdays",
            "weekdays are for a weekly window; set weekly or leave them out",
        ));
    }
    let repeat_until = match d.repeat_until.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => {
            if !d.weekly {
                return Err(AppError::invalid(
                    "repeat_until",
                    "only a weekly window repeats",
                ));
            }
            let day = NaiveDate::parse_from_str(t, "%Y-%m-%d")
                .map_err(|_| AppError::invalid("repeat_until", "a date such as 2027-03-31"))?;
            if day < local_start.date() {
                return Err(AppError::invalid(
                    "repeat_until",
                    "the last day comes on or after the first start",
                ));
            }
            Some(day)
        }
        _ => None,
    };
    if d.comment.chars().count() > 2000 {
        return Err(AppError::invalid("comment", "at most 2000 characters"));
    }
    if d.services.iter().all(|s| s.trim().is_empty()) {
        return Err(AppError::invalid(
            "services",
            "name at least one service the work touches",
        ));
    }
    let mut service_ids = Vec::new();
    for name in d
        .services
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        let found = crate::services::db::find_by_name(&mut *conn, name)
            .await?
            .ok_or_else(|| {
                AppError::invalid("services", format!("there is no service {name:?}"))
            })?;
        service_ids.push(found.id);
    }
    let now = crate::clock::now(&mut *conn).await?;
    let rules = Window {
        id: 0,
        mode,
        local_start,
        zone,
        duration,
        weekly: d.weekly,
        weekdays: weekdays.clone(),
        repeat_until,
        cancelled_at: None,
    };
    let Some(edge) = rules.next_edge(now, None) else {
        return Err(AppError::invalid(
            "starts_at",
            "this window would be over already; plan one that is still to come or going on",
        ));
    };
    let weekdays: Vec<i16> = weekdays.iter().map(|d| *d as i16).collect();
    let id = db::insert(
        &mut *conn,
        &NewWindow {
            name,
            mode: mode.as_str(),
            local_start,
            time_zone: zone_name,
            duration_minutes: duration.num_minutes() as i32,
            weekly: d.weekly,
            weekdays: &weekdays,
            repeat_until,
            comment: d.comment.trim(),
            created_by: &actor.name,
            services: &service_ids,
            next_edge_at: Some(edge.at),
            next_edge: Some(edge.kind.as_str()),
            edge_occurrence: Some(edge.occurrence),
        },
    )
    .await?;
    let created = find(&mut *conn, id).await?;
    let target = format!("maintenance window {id}");
    audit::created(conn, actor, "maintenance.create", &target, &created.window).await?;
    Ok(created)
}

/// Cancels a window from now: an occurrence going on ends now (its end is written at once),
/// later ones do not happen.
pub async fn cancel(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
) -> AppResult<WindowView> {
    // Held against the engine, so an end it is writing and this cancellation do not cross.
    db::lock(&mut *conn, id).await?;
    let before = find(&mut *conn, id).await?;
    if before.window.cancelled_at.is_some() || before.state == "over" {
        return Err(AppError::Conflict(format!(
            "Maintenance window {id} is already over."
        )));
    }
    let version = version.unwrap_or(before.window.version);
    if db::cancel(&mut *conn, id, version, &actor.name)
        .await?
        .is_none()
    {
        return Err(AppError::Stale {
            current_version: before.window.version,
        });
    }
    // Going on: its end is due now; else nothing more is.
    if before.state == "active" {
        let occurrence = before.current.as_ref().map(|c| c.starts_at);
        let now = crate::clock::now(&mut *conn).await?;
        db::set_edge(&mut *conn, id, Some(now), Some("end"), occurrence).await?;
    } else {
        db::set_edge(&mut *conn, id, None, None, None).await?;
    }
    let after = find(&mut *conn, id).await?;
    let target = format!("maintenance window {id}");
    audit::changed(
        conn,
        actor,
        "maintenance.cancel",
        &target,
        &before.window,
        &after.window,
    )
    .await?;
    Ok(after)
}

/// The windows as the alert lanes judge with them: read again only when
/// `maintenance_revision` moved; which are going on is worked out at each batch's instant.
pub struct Compiled {
    inner: Mutex<(i64, Arc<Vec<Judged>>)>,
}

/// A window with its services' names and its name, as the lanes keep it.
type Judged = (Window, Vec<String>, String);

impl Default for Compiled {
    fn default() -> Self {
        Self {
            inner: Mutex::new((0, Arc::new(Vec::new()))),
        }
    }
}

impl Compiled {
    pub async fn active(&self, conn: &mut PgConnection, now: DateTime<Utc>) -> AppResult<Active> {
        let revision = db::revision(&mut *conn).await?;
        let held = {
            let held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            (held.0 == revision).then(|| held.1.clone())
        };
        let windows = match held {
            Some(w) => w,
            None => {
                let rows = db::list(&mut *conn, None).await?;
                let windows: Vec<Judged> = rows
                    .into_iter()
                    .filter(|w| w.cancelled_at.is_none() || w.next_edge_at.is_some())
                    .map(|w| (rules_of(&w), w.services.clone(), w.name.clone()))
                    .collect();
                let windows = Arc::new(windows);
                *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = (revision, windows.clone());
                windows
            }
        };
        if windows.is_empty() {
            return Ok(Active::default());
        }
        Ok(Active::at(
            windows
                .iter()
                .map(|(w, s, n)| (w, s.as_slice(), n.as_str())),
            now,
        ))
    }
}

/// Notes the incidents a quiet window opened without paging.
pub async fn kept_quiet(
    e: impl PgExecutor<'_>,
    incidents: &[i64],
    windows: &[i64],
) -> AppResult<()> {
    if incidents.is_empty() {
        return Ok(());
    }
    db::kept_quiet(e, incidents, windows).await
}

/// One start or end of a window the engine acts on, claimed for this transaction.
pub struct DueEdge {
    pub window: WindowRow,
    pub edge: Edge,
}

/// Claims windows whose start or end is due (one replica each) and moves each to its next
/// edge; returns what was due, for the engine to write and act on in the same transaction.
pub async fn take_due(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<DueEdge>> {
    let ids = db::claim_due(&mut *conn, limit).await?;
    let mut out = Vec::new();
    for id in ids {
        let Some(w) = db::list(&mut *conn, Some(id)).await?.pop() else {
            continue;
        };
        let (Some(at), Some(kind), Some(occurrence)) = (
            w.next_edge_at,
            w.next_edge.as_deref().and_then(EdgeKind::parse),
            w.edge_occurrence,
        ) else {
            db::set_edge(&mut *conn, id, None, None, None).await?;
            continue;
        };
        let edge = Edge {
            at,
            kind,
            occurrence,
        };
        let rules = rules_of(&w);
        let next = match kind {
            EdgeKind::Start => rules.next_edge(at, Some(occurrence)),
            EdgeKind::End => rules.next_edge(at, Some(occurrence)).filter(|e| e.at > at),
        };
        db::set_edge(
            &mut *conn,
            id,
            next.map(|e| e.at),
            next.map(|e| e.kind.as_str()),
            next.map(|e| e.occurrence),
        )
        .await?;
        out.push(DueEdge { window: w, edge });
    }
    Ok(out)
}

/// Quiet incidents a lane opened just as their window ended: paged now.
pub async fn quiet_stranded(e: impl PgExecutor<'_>) -> AppResult<Vec<(i64, Option<i64>)>> {
    db::quiet_stranded(e).await
}

/// Seconds until the next start or end of any window.
pub async fn next_due(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    db::next_due(e).await
}

/// The incidents a window's start or end is written on.
pub async fn touched(e: impl PgExecutor<'_>, window_id: i64) -> AppResult<Vec<i64>> {
    db::touched(e, window_id).await
}

/// The incidents a quiet window kept from paging that nobody has acknowledged, marked paged.
pub async fn quiet_to_page(
    e: impl PgExecutor<'_>,
    window_id: i64,
) -> AppResult<Vec<(i64, Option<i64>)>> {
    db::quiet_to_page(e, window_id).await
}

/// The incident was reassigned while a quiet window held its paging: someone pages it by
/// hand now, so the window's end leaves its escalation as it is.
pub async fn paged_by_hand(e: impl PgExecutor<'_>, incident_id: i64) -> AppResult<()> {
    db::paged_by_hand(e, incident_id).await
}

/// A window going on or coming soon, in one line for the dashboard and a service's page.
#[derive(Debug, Clone)]
pub struct Announcement {
    pub id: i64,
    pub active: bool,
    pub line: String,
}

/// Windows going on or starting within `days` (of one service, or all), soonest first.
pub async fn announcements(
    conn: &mut PgConnection,
    days: i64,
    service: Option<&str>,
) -> AppResult<Vec<Announcement>> {
    let now = crate::clock::now(&mut *conn).await?;
    Ok(ahead(conn, days, service)
        .await?
        .into_iter()
        .filter_map(|v| {
            let c = v.current.as_ref()?;
            let active = c.starts_at <= now;
            let when = if active {
                format!("now until {}", c.ends_at.format("%a %Y-%m-%d %H:%M UTC"))
            } else {
                format!(
                    "{} → {}",
                    c.starts_at.format("%a %Y-%m-%d %H:%M"),
                    c.ends_at.format("%H:%M UTC")
                )
            };
            let what = if v.window.mode == "silence" {
                "alerts held"
            } else {
                "incidents page nobody"
            };
            Some(Announcement {
                id: v.window.id,
                active,
                line: format!(
                    "{} on {}: {when} ({what})",
                    v.window.name,
                    v.window.services.join(", ")
                ),
            })
        })
        .collect())
}
