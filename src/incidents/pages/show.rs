//! One incident's page: its state, SLA, durations, timeline, roles and every form that works it.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::clock;
use crate::domain::format_minutes;
use crate::error::{AppError, FieldError};
use crate::http::access::Viewer;
use crate::http::extract::ApiQuery;
use crate::http::page::Chrome;
use crate::http::page::PageResult;
use crate::http::request::PageRequest;
use crate::incidents::db::{self, Incident};
use crate::incidents::domain::{Durations, IncidentKey, Severity, Transition};
use crate::incidents::handlers::parse_key;
use crate::people;
use crate::roles::{self, domain::Role};
use crate::sla::domain::Sla;
use crate::state::AppState;
use crate::timeline::{self, db::Event, domain::headline};

use super::shared::*;

#[derive(Deserialize, Default)]
pub struct ShowQuery {
    /// What a form just saved (see [`SAVED`])
    #[serde(default)]
    saved: Option<String>,
}

struct DurationRow {
    label: &'static str,
    value: String,
    running: bool,
    since_iso: String,
}

/// The figures the incident's header shows; `change_at` is the confirmed trigger's time.
fn duration_rows(
    i: &Incident,
    now: DateTime<Utc>,
    change_at: Option<DateTime<Utc>>,
) -> Vec<DurationRow> {
    let d = Durations::of(&i.milestones(), now);
    let fixed = |label, secs: i64| DurationRow {
        label,
        value: format_minutes(secs),
        running: false,
        since_iso: String::new(),
    };
    let mut rows = vec![fixed("Time to detect", d.time_to_detect_secs)];
    rows.extend(change_at.map(|c| {
        fixed(
            "Time to detect from the change",
            (i.detected_at - c).num_seconds(),
        )
    }));
    rows.extend(
        d.time_to_acknowledge_secs
            .map(|s| fixed("Time to acknowledge", s)),
    );
    rows.extend(
        d.time_to_mitigate_secs
            .map(|s| fixed("Time to mitigate", s)),
    );
    match d.time_to_resolve_secs {
        Some(s) => {
            rows.push(fixed("Time to resolve", s));
            if let Some(line) = d.duration {
                rows.push(DurationRow {
                    label: "Duration",
                    value: line,
                    running: false,
                    since_iso: String::new(),
                });
            }
        }
        None => rows.push(DurationRow {
            label: "Open for",
            value: format_minutes(d.open_for_secs),
            running: true,
            since_iso: i.detected_at.to_rfc3339(),
        }),
    }
    rows
}

pub struct TimelineRow {
    pub(in crate::incidents) date_break: Option<String>,
    pub(in crate::incidents) time: String,
    pub(in crate::incidents) occurred_iso: String,
    pub(in crate::incidents) kind: &'static str,
    pub(in crate::incidents) headline: String,
    pub(in crate::incidents) body: String,
    pub(in crate::incidents) author: String,
    pub(in crate::incidents) recorded: Option<String>,
}

impl TimelineRow {
    /// The headline in runs, its dates marked, so each date stays on one line.
    fn headline_runs(&self) -> Vec<(bool, &str)> {
        crate::domain::date_runs(&self.headline)
    }
}

pub(in crate::incidents) fn timeline_rows(
    events: &[Event],
    detected_at: DateTime<Utc>,
) -> Vec<TimelineRow> {
    let mut last_day = None;
    events
        .iter()
        .map(|e| {
            let day = e.occurred_at.date_naive();
            let date_break = (last_day != Some(day)).then(|| day.format("%A %Y-%m-%d").to_string());
            last_day = Some(day);
            // Show when it was written only where that differs from when it happened.
            let recorded = ((e.recorded_at - e.occurred_at).num_seconds().abs() >= 60)
                .then(|| utc(e.recorded_at));
            TimelineRow {
                date_break,
                time: e.occurred_at.format("%H:%M").to_string(),
                occurred_iso: e.occurred_at.to_rfc3339(),
                kind: e.kind.as_str(),
                headline: headline(e.kind, &e.details, e.occurred_at, detected_at),
                body: e.body.clone(),
                author: e.author.clone(),
                recorded,
            }
        })
        .collect()
}

struct RoleRow {
    role: &'static str,
    label: &'static str,
    holder: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "incidents/show.html")]
pub struct ShowPage {
    chrome: Chrome,
    key: String,
    i: Incident,
    started: String,
    detected: String,
    durations: Vec<DurationRow>,
    transitions: Vec<Transition>,
    timeline: Vec<TimelineRow>,
    roles: Vec<RoleRow>,
    people: Vec<people::db::Person>,
    severities: [Severity; 4],
    sla: Sla,
    ack_class: &'static str,
    resolve_class: &'static str,
    updates: Vec<crate::updates::db::Update>,
    cadence: Option<crate::updates::domain::Cadence>,
    audiences: [crate::updates::domain::Audience; 3],
    deliveries: Vec<crate::notify::db::Delivery>,
    escalation: Option<crate::paging::db::Escalation>,
    /// Responders asked for by hand, newest first, and what the forms may name
    responders: Vec<crate::responders::db::Request>,
    schedule_names: Vec<String>,
    policy_names: Vec<String>,
    alert_lines: Vec<crate::alert_store::db::AlertGroupLine>,
    alert_total: i64,
    flapping: Vec<crate::alert_store::db::FlappingAlert>,
    grouped_by: Vec<String>,
    snoozed_until: Option<chrono::DateTime<chrono::Utc>>,
    /// The changes that may have caused it, best first.
    suspects: Vec<crate::changes::db::Suspect>,
    verdicts: [crate::changes::domain::Verdict; 3],
    /// Linked incidents, and incidents that may be related.
    related: Vec<crate::related::db::Related>,
    suggestions: Vec<crate::related::db::Suggestion>,
    /// Its runbooks with their checklists.
    checklists: Vec<crate::runbooks::actions::Checklist>,
    /// What a Sev1 or Sev2 lacks before it is resolved (shown beside Resolve)
    before_resolving: Vec<&'static str>,
    /// Why resolving now asks first, if it does
    confirm_resolve: Option<&'static str>,
    /// Why lowering the severity asks first (a Sev1), if it does
    confirm_lower: Option<&'static str>,
    /// The signed-in person's handle, when they may take incident commander in one click
    take_commander: Option<String>,
    /// Who may see it, and every team's (slug, name) to name in the form
    access: crate::incident_ref::db::Access,
    teams: Vec<(String, String)>,
    /// Where responders meet, and whether its absence is worth saying (a Sev1 or Sev2)
    bridge: crate::bridge::domain::Bridge,
    bridge_wanted: bool,
    /// Who is looking into what
    claims: Vec<crate::claims::db::Claim>,
    claim_minutes: i64,
    /// The signed-in person's id, to offer renewing their own claims
    me: Option<i64>,
    /// The newest timeline entry shown: the live stream starts after it
    newest: i64,
    /// What a form just saved: the part and what the page says there
    saved: Option<(&'static str, &'static str)>,
    /// A form sent back refused, with what was typed
    sent_back: Typed,
}

impl ShowPage {
    /// The notice for `part`, when a form just saved something there.
    fn notice(&self, part: &str) -> Option<&'static str> {
        self.saved.filter(|(p, _)| *p == part).map(|(_, text)| text)
    }

    /// What was typed into `field` of the form in `part`, when it came back refused.
    fn typed(&self, part: &str, field: &str) -> &str {
        if self.sent_back.part != part {
            return "";
        }
        self.sent_back
            .values
            .iter()
            .find(|(f, _)| *f == field)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Whether `value` was chosen in `field` of the form in `part`, refused; else `default`.
    fn chosen(&self, part: &str, field: &str, value: &str, default: bool) -> bool {
        if self.sent_back.part == part {
            self.typed(part, field) == value
        } else {
            default
        }
    }

    /// The version a form in `part` carries: the one it was first rendered from when it came
    /// back refused (so a change made meanwhile is still caught as stale), else the incident's.
    fn version_in(&self, part: &str) -> String {
        match self.typed(part, "version") {
            "" => self.i.version.to_string(),
            seen => seen.to_owned(),
        }
    }

    /// What a person calls a form's field, for a refusal beside the form.
    fn label_of<'a>(&self, field: &'a str) -> &'a str {
        match field {
            "at" => "When",
            "body" => "Text",
            "kind" => "Kind",
            "note" => "Note",
            "reason" => "Reason",
            "severity" => "Severity",
            "audience" => "Audience",
            "role" => "Role",
            "person" => "Person",
            "schedule" => "Schedule",
            "policy" => "Escalation policy",
            "message" => "Message",
            "subject" => "What you are looking into",
            "call_url" => "Call link",
            "chat_url" => "Chat channel link",
            "teams" => "Teams",
            "people" => "People",
            "version" => "Version",
            other => other,
        }
    }

    /// Why the form in `part` was refused, field by field.
    fn errors_in(&self, part: &str) -> &[FieldError] {
        if self.sent_back.part == part {
            &self.sent_back.errors
        } else {
            &[]
        }
    }

    /// What the access form's `field` (teams or people) holds: as typed when it came back
    /// refused, else whom the incident is kept to now.
    fn access_field(&self, field: &str) -> String {
        if self.sent_back.part == "access" {
            return self.typed("access", field).to_owned();
        }
        let named = if field == "teams" {
            &self.access.teams
        } else {
            &self.access.people
        };
        named
            .iter()
            .map(|g| g.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whom a restricted incident is kept to, as a sentence's list.
    fn kept_to(&self) -> String {
        self.access
            .teams
            .iter()
            .map(|g| g.title.clone())
            .chain(self.access.people.iter().map(|g| format!("@{}", g.name)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether a claim is the signed-in person's own.
    fn mine(&self, person_id: impl std::borrow::Borrow<i64>) -> bool {
        self.me == Some(*person_id.borrow())
    }

    fn verdict_label(&self, verdict: &str) -> &'static str {
        crate::changes::domain::Verdict::parse("verdict", verdict)
            .map_or("", crate::changes::domain::Verdict::label)
    }

    fn change_kind_label(&self, kind: &str) -> &'static str {
        crate::changes::domain::ChangeKind::parse("kind", kind)
            .map_or("change", crate::changes::domain::ChangeKind::label)
    }
}

pub async fn show(
    PageRequest(state, chrome, _): PageRequest<Viewer>,
    Path(key): Path<String>,
    ApiQuery(q): ApiQuery<ShowQuery>,
) -> PageResult<ShowPage> {
    let saved = q
        .saved
        .and_then(|what| saved_entry(&what))
        .map(|(_, part, text)| (*part, *text));
    Ok(page(&state, chrome, parse_key(&key)?, saved, Typed::default()).await?)
}

/// The incident's page, with what a form just saved or a refused form's typing.
async fn page(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    saved: Option<(&'static str, &'static str)>,
    typed: Typed,
) -> Result<ShowPage, AppError> {
    // Read on one connection: a pooled connection is checked with a round trip each time it is
    // taken and given back, which would double the page's thirty-odd statements.
    let mut c = state.pool.acquire().await?;
    let i = db::get(&mut *c, key).await?;
    let sees = chrome.user.as_ref().map_or(
        crate::incident_ref::domain::SeenBy::EVERYONE,
        crate::incident_ref::domain::SeenBy::of,
    );
    let events = timeline::db::for_incident(&mut *c, i.id).await?;
    let assigned = roles::db::for_incident(&mut *c, i.id).await?;
    let now = clock::now(&mut *c).await?;
    let policies = crate::sla::db::all(&mut *c).await?;
    let sla = sla_of(&i, &policies, now)?;
    let updates = crate::updates::db::for_incident(&mut *c, i.id).await?;
    let cadence = crate::incidents::handlers::cadence_from(&i, &policies, &updates, now)?;
    let suspects =
        crate::changes::actions::suspects(&mut *c, &crate::incidents::views::suspecting(&i))
            .await?;
    let trigger = suspects
        .iter()
        .find(|s| s.verdict.as_deref() == Some("confirmed_trigger"))
        .map(|s| s.change.occurred_at);
    let checklists =
        crate::runbooks::actions::checklist(&mut c, &crate::incidents::views::checking(&i)).await?;
    let people = people::db::list(&mut *c).await?;
    let commander = assigned
        .iter()
        .find(|a| a.role == Role::IncidentCommander)
        .map(|a| a.person.handle.clone());
    let take_commander = chrome
        .user
        .as_ref()
        .filter(|u| people.iter().any(|p| p.handle == u.handle))
        .filter(|u| commander.as_deref() != Some(u.handle.as_str()))
        .filter(|_| i.status != crate::incidents::domain::Status::Resolved)
        .map(|u| u.handle.clone());
    let transitions = Transition::legal_from(i.status);
    let before_resolving = if transitions.contains(&Transition::Resolve) {
        crate::incidents::domain::before_resolving(
            i.severity,
            commander.is_some(),
            !i.impact.trim().is_empty(),
            !updates.is_empty(),
        )
    } else {
        vec![]
    };
    let bridge = crate::bridge::db::of_incident(&mut *c, i.id).await?;
    let access = crate::incident_ref::db::access(&mut *c, i.id).await?;
    let teams = crate::teams::db::choices(&mut *c).await?;
    Ok(ShowPage {
        access,
        teams,
        bridge_wanted: crate::bridge::domain::wanted(i.severity)
            && i.status != crate::incidents::domain::Status::Resolved,
        bridge,
        claims: crate::claims::db::held(&mut *c, i.id).await?,
        claim_minutes: state.config.live.claim_minutes,
        me: chrome.user.as_ref().map(|u| u.id),
        newest: events.iter().map(|e| e.id).max().unwrap_or(0),
        before_resolving,
        confirm_resolve: crate::incidents::domain::confirmation(i.status, Transition::Resolve),
        confirm_lower: crate::incidents::domain::severity_confirmation(i.severity, Severity::Sev4),
        take_commander,
        checklists,
        related: crate::related::db::list(&mut *c, i.id, sees).await?,
        suggestions: crate::related::actions::suggestions(
            &mut *c,
            &crate::incidents::views::reference(&i),
            sees,
        )
        .await?,
        suspects,
        verdicts: crate::changes::domain::Verdict::ALL,
        chrome,
        updates,
        cadence,
        audiences: crate::updates::domain::Audience::ALL,
        deliveries: crate::notify::db::for_incident(&mut *c, i.id).await?,
        escalation: crate::paging::db::escalation(&mut *c, i.id).await?,
        responders: crate::responders::db::for_incident(&mut c, i.id).await?,
        schedule_names: crate::oncall::db::list(&mut *c, None)
            .await?
            .into_iter()
            .map(|s| s.name)
            .collect(),
        policy_names: crate::paging::db::list(&mut *c, None)
            .await?
            .into_iter()
            .map(|p| p.name)
            .collect(),
        alert_lines: crate::alert_store::db::lines_for_incident(&mut *c, i.id).await?,
        alert_total: crate::alert_store::db::count_for_incident(&mut *c, i.id).await?,
        flapping: crate::alert_store::db::flapping_of(&mut *c, i.id).await?,
        grouped_by: crate::alert_store::db::grouped_by(&mut *c, i.id).await?,
        snoozed_until: crate::incidents::db::snoozed_until(&mut *c, i.id).await?,
        ack_class: state_class(&sla.ack),
        resolve_class: state_class(&sla.resolve),
        sla,
        key: i.key.to_string(),
        started: utc(i.started_at),
        detected: utc(i.detected_at),
        durations: duration_rows(&i, now, trigger),
        transitions,
        timeline: timeline_rows(&events, i.detected_at),
        roles: Role::ALL
            .into_iter()
            .map(|role| RoleRow {
                role: role.as_str(),
                label: role.label(),
                holder: assigned
                    .iter()
                    .find(|a| a.role == role)
                    .map(|a| a.person.name.clone()),
            })
            .collect(),
        people,
        severities: Severity::ALL,
        i,
        saved,
        sent_back: typed,
    })
}

/// A form of the page refused: the page again with the error beside it and what was typed, or
/// the error page when what went wrong is not a field.
pub(in crate::incidents) async fn refused(
    state: &AppState,
    chrome: Chrome,
    key: IncidentKey,
    err: AppError,
    part: &'static str,
    values: Vec<(&'static str, String)>,
) -> PageResult<Response> {
    let errors = field_errors(err)?;
    let typed = Typed {
        part,
        values,
        errors,
    };
    let page = page(state, chrome, key, None, typed).await?;
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}
