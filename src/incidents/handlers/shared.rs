//! What the incident handlers share: reading a key, answering with the incident as it now
//! stands, and the stakeholder-update cadence.

use axum::http::StatusCode;
use axum::response::Response;
use chrono::{DateTime, Utc};

use crate::clock;
use crate::error::AppResult;
use crate::http::extract::with_etag;
use crate::incidents::db::Incident;
use crate::incidents::views::IncidentView;
use crate::roles::{self};
use crate::state::AppState;

pub use crate::http::extract::incident_key as parse_key;

/// The full view of one incident, with its ETag.
pub(super) async fn respond(
    state: &AppState,
    incident: &Incident,
    status: StatusCode,
) -> AppResult<Response> {
    let view = full_view(state, incident).await?;
    Ok(with_etag(status, incident.version, &view))
}

/// Read on one connection: a pooled connection is checked with a round trip each time it is
/// taken and given back, which would double the statements' own.
pub(super) async fn full_view(state: &AppState, incident: &Incident) -> AppResult<IncidentView> {
    let mut c = state.pool.acquire().await?;
    let roles = roles::db::for_incident(&mut *c, incident.id).await?;
    let now = clock::now(&mut *c).await?;
    let policies = crate::sla::db::all(&mut *c).await?;
    let policy = crate::sla::db::of(&policies, incident.peak_severity)?;
    let mut view = IncidentView::new(incident, Some(&roles), &policy, now);
    view.updates = cadence_of(&mut *c, incident, &policies, now).await?;
    view.alert_count =
        Some(crate::alert_store::db::count_for_incident(&mut *c, incident.id).await?);
    view.flapping = Some(crate::alert_store::db::flapping_of(&mut *c, incident.id).await?);
    view.snoozed_until = Some(crate::incidents::db::snoozed_until(&mut *c, incident.id).await?);
    view.grouped_by = Some(crate::alert_store::db::grouped_by(&mut *c, incident.id).await?);
    view.trigger = crate::changes::db::confirmed_trigger(&mut *c, incident.id)
        .await?
        .map(|t| crate::incidents::views::Trigger::of(&t, incident.detected_at));
    view.bridge = Some(crate::bridge::db::of_incident(&mut *c, incident.id).await?);
    view.claims = Some(crate::claims::db::held(&mut *c, incident.id).await?);
    view.access = Some(crate::incident_ref::db::access(&mut *c, incident.id).await?);
    Ok(view)
}

/// The update cadence record, when the incident's peak severity asks for updates.
pub async fn cadence_of(
    e: impl sqlx::PgExecutor<'_>,
    i: &Incident,
    policies: &[crate::sla::domain::Policy],
    now: DateTime<Utc>,
) -> AppResult<Option<crate::updates::domain::Cadence>> {
    if crate::sla::db::of(policies, i.peak_severity)?
        .update_cadence_secs
        .is_none()
    {
        return Ok(None);
    }
    let sent = crate::updates::db::for_incident(e, i.id).await?;
    cadence_from(i, policies, &sent, now)
}

/// The update cadence record from the updates already read.
pub fn cadence_from(
    i: &Incident,
    policies: &[crate::sla::domain::Policy],
    sent: &[crate::updates::db::Update],
    now: DateTime<Utc>,
) -> AppResult<Option<crate::updates::domain::Cadence>> {
    let Some(every) = crate::sla::db::of(policies, i.peak_severity)?.update_cadence_secs else {
        return Ok(None);
    };
    let sent: Vec<_> = sent.iter().map(|u| u.sent_at).collect();
    Ok(Some(crate::updates::domain::cadence(
        every,
        i.detected_at,
        i.mitigated_at,
        &sent,
        now,
    )))
}
