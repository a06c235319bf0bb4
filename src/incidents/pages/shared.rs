//! What the incident pages share: times as written, the saved notice, the SLA colour, typed values of a refused form.

use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};

use crate::error::{AppError, FieldError};
use crate::http::page::PageError;
use crate::incidents::db::Incident;
use crate::incidents::domain::IncidentKey;
use crate::services;
use crate::sla::domain::{Policy, Sla};
use crate::state::AppState;

pub(in crate::incidents) fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

pub(in crate::incidents) fn see_other(key: IncidentKey) -> Response {
    Redirect::to(&format!("/incidents/{key}")).into_response()
}

/// What a form on the incident page saves: (what, the part of the page it changed, what the
/// page says there). A form answers with [`saved`], which opens the page at that part with the
/// notice (`?saved=`; quell.js drops it from the address once shown, so a reload is quiet).
pub(super) const SAVED: &[(&str, &str, &str)] = &[
    ("note", "timeline-panel", "Added to the timeline."),
    ("acknowledge", "live-head", "Acknowledged."),
    ("mitigate", "live-head", "Marked mitigated."),
    ("resolve", "live-head", "Resolved."),
    ("reopen", "live-head", "Reopened."),
    ("snooze", "live-head", "Snoozed."),
    (
        "snooze_end",
        "live-head",
        "Snooze ended; it stays acknowledged.",
    ),
    ("escalate", "paging", "Escalated: the next step is due now."),
    (
        "responder",
        "responders",
        "Asked: the people named are paged now.",
    ),
    (
        "responder_accepted",
        "responders",
        "Accepted: the person who asked can see you are coming.",
    ),
    (
        "reassigned",
        "responders",
        "Reassigned: the new target is paged now.",
    ),
    ("details", "live-head", "Details saved."),
    ("severity", "severity", "Severity changed."),
    ("role", "roles", "Role saved."),
    ("update", "updates", "Stakeholder update recorded."),
    ("bridge", "bridge-form", "Bridge saved."),
    ("access", "access", "Who may see it is saved."),
    ("claim", "claims", "Claim saved."),
    ("renew", "claims", "Claim renewed."),
    ("release", "claims", "Claim ended."),
    ("verdict", "suspects", "Verdict saved."),
    ("check", "runbooks", "Checklist saved."),
];

/// What `what` saved says, and the part of the page it changed.
pub(super) fn saved_entry(
    what: &str,
) -> Option<&'static (&'static str, &'static str, &'static str)> {
    SAVED.iter().find(|s| s.0 == what)
}

/// The incident's page after a form saved `what`: at the part that changed, saying so.
pub(in crate::incidents) fn saved(key: IncidentKey, what: &str) -> Response {
    match saved_entry(what) {
        Some((what, part, _)) => saved_at(key, what, part),
        None => see_other(key),
    }
}

/// As [`saved`], opened at `anchor` within the part (one suspect change, one runbook).
pub(in crate::incidents) fn saved_at(key: IncidentKey, what: &str, anchor: &str) -> Response {
    Redirect::to(&format!("/incidents/{key}?saved={what}#{anchor}")).into_response()
}

/// A form of the incident page sent back because a field was wrong: the page again (422), the
/// error beside that form and what was typed still in it.
#[derive(Default)]
pub(in crate::incidents) struct Typed {
    /// The part of the page the form sits in (as in [`SAVED`])
    pub part: &'static str,
    pub values: Vec<(&'static str, String)>,
    pub errors: Vec<FieldError>,
}

pub(super) fn state_class(v: &crate::sla::domain::Verdict) -> &'static str {
    use crate::sla::domain::ClockState::*;
    match v.state {
        Met => "met",
        Breached => "breached",
        Running => "running",
        Overdue => "overdue",
    }
}

/// The SLA of an incident under the current policies.
pub(super) fn sla_of(
    i: &Incident,
    policies: &[Policy],
    now: DateTime<Utc>,
) -> Result<Sla, AppError> {
    let policy = crate::sla::db::of(policies, i.peak_severity)?;
    Ok(Sla::of(
        &policy,
        i.detected_at,
        i.acknowledged_at,
        i.resolved_at,
        now,
    ))
}

/// A form that failed validation is shown again with what the person typed.
pub(in crate::incidents) fn field_errors(err: AppError) -> Result<Vec<FieldError>, PageError> {
    match err {
        AppError::Validation(fields) => Ok(fields),
        other => Err(PageError(other)),
    }
}

pub(in crate::incidents) async fn service_names(state: &AppState) -> Result<Vec<String>, AppError> {
    Ok(services::db::list(&state.pool)
        .await?
        .into_iter()
        .map(|s| s.name)
        .collect())
}
