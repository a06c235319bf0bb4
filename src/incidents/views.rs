//! The JSON shapes of the incidents API, documented in the OpenAPI description.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::db::Incident;
use super::domain::{Durations, Severity, Status, Transition};
use crate::roles::{db::Assignment, domain::Role};
use crate::sla::domain::{Policy, Sla};
use crate::timeline::{db::Event, domain::headline};

#[derive(Serialize, ToSchema)]
pub struct RoleHolder {
    pub name: String,
    pub handle: String,
    pub email: String,
    pub assigned_at: DateTime<Utc>,
}

/// Who holds each role now; `null` when unassigned.
#[derive(Serialize, ToSchema)]
pub struct Roles {
    pub incident_commander: Option<RoleHolder>,
    pub comms_lead: Option<RoleHolder>,
    pub scribe: Option<RoleHolder>,
    pub postmortem_owner: Option<RoleHolder>,
}

impl Roles {
    fn of(assigned: &[Assignment]) -> Self {
        let holder = |role: Role| {
            assigned
                .iter()
                .find(|a| a.role == role)
                .map(|a| RoleHolder {
                    name: a.person.name.clone(),
                    handle: a.person.handle.clone(),
                    email: a.person.email.clone(),
                    assigned_at: a.assigned_at,
                })
        };
        Self {
            incident_commander: holder(Role::IncidentCommander),
            comms_lead: holder(Role::CommsLead),
            scribe: holder(Role::Scribe),
            postmortem_owner: holder(Role::PostmortemOwner),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct IncidentLinks {
    #[serde(rename = "self")]
    pub this: String,
    pub timeline: String,
    pub page: String,
}

#[derive(Serialize, ToSchema)]
pub struct IncidentView {
    /// `INC-<n>`
    #[schema(example = "INC-1187")]
    pub key: String,
    pub title: String,
    pub severity: Severity,
    pub status: Status,
    /// The service's name
    pub service: Option<String>,
    pub summary: String,
    pub impact: String,
    /// First customer impact
    pub started_at: DateTime<Utc>,
    /// When the incident was opened, by alert or by hand
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Bumped by every change; the ETag is `"v<version>"`
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Present on single-incident answers, left out of lists
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<Roles>,
    /// How the stakeholder update cadence was kept, when the severity has one (single-incident
    /// answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<crate::updates::domain::Cadence>,
    /// How many alerts were grouped into it (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert_count: Option<i64>,
    /// Its alerts found flapping, those still flapping first (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flapping: Option<Vec<crate::alert_store::db::FlappingAlert>>,
    /// How routing rules grouped its alerts by shared fields, e.g. `service = payments-gateway
    /// within 10 min` (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grouped_by: Option<Vec<String>>,
    /// When a snooze ends: then, still acknowledged, it returns to triggered and pages again;
    /// null when it is not snoozed (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub snoozed_until: Option<Option<DateTime<Utc>>>,
    pub metrics: Durations,
    /// The change confirmed as the trigger among the suspects, with the time from it to
    /// detection (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Trigger>,
    /// Where responders meet (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge: Option<crate::bridge::domain::Bridge>,
    /// Who is looking into what, held claims only (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<crate::claims::db::Claim>>,
    /// Kept to named teams and people (and admins); nobody else finds it anywhere
    pub restricted: bool,
    /// Who may see it, when restricted (single-incident answers only)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<crate::incident_ref::db::Access>,
    /// The acknowledge and resolve clocks against the targets of `peak_severity`
    pub sla: Sla,
    /// The highest severity the incident reached
    pub peak_severity: Severity,
    /// The transitions legal from the current status, e.g. `["mitigate", "resolve"]`
    pub allowed_transitions: Vec<String>,
    pub links: IncidentLinks,
}

/// The change confirmed as an incident's trigger.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Trigger {
    pub change_id: i64,
    pub summary: String,
    pub service: Option<String>,
    pub changed_at: DateTime<Utc>,
    /// detected − the change's time
    pub time_to_detect_from_change_secs: i64,
    /// The same, for people: `2 h 2 min`
    pub time_to_detect_from_change: String,
}

impl Trigger {
    pub fn of(c: &crate::changes::db::Change, detected_at: DateTime<Utc>) -> Self {
        let secs = (detected_at - c.occurred_at).num_seconds();
        Self {
            change_id: c.id,
            summary: c.summary.clone(),
            service: c.service.clone(),
            changed_at: c.occurred_at,
            time_to_detect_from_change_secs: secs,
            time_to_detect_from_change: crate::domain::format_minutes(secs),
        }
    }
}

/// The incident as its suspect changes need it.
pub fn suspecting(i: &Incident) -> crate::changes::actions::Suspecting {
    crate::changes::actions::Suspecting {
        incident_id: i.id,
        key: i.key.to_string(),
        service_id: i.service_id,
        started_at: i.started_at,
    }
}

/// The incident as the rooms below `incidents` name it (its related incidents' suggestions).
pub fn reference(i: &Incident) -> crate::incident_ref::db::IncidentRef {
    crate::incident_ref::db::IncidentRef {
        id: i.id,
        key: i.key,
        title: i.title.clone(),
        summary: i.summary.clone(),
        severity: i.severity,
        status: i.status.as_str().to_owned(),
        service_id: i.service_id,
        service: i.service.clone(),
        restricted: i.restricted,
    }
}

/// The incident as its runbooks' checklist needs it.
pub fn checking(i: &Incident) -> crate::runbooks::actions::Checking {
    crate::runbooks::actions::Checking {
        incident_id: i.id,
        key: i.key.to_string(),
        service_id: i.service_id,
    }
}

impl IncidentView {
    /// `policy` is the policy of the incident's peak severity.
    pub fn new(
        i: &Incident,
        roles: Option<&[Assignment]>,
        policy: &Policy,
        now: DateTime<Utc>,
    ) -> Self {
        let key = i.key.to_string();
        Self {
            links: IncidentLinks {
                this: format!("/api/v1/incidents/{key}"),
                timeline: format!("/api/v1/incidents/{key}/timeline"),
                page: format!("/incidents/{key}"),
            },
            key,
            title: i.title.clone(),
            severity: i.severity,
            status: i.status,
            service: i.service.clone(),
            summary: i.summary.clone(),
            impact: i.impact.clone(),
            started_at: i.started_at,
            detected_at: i.detected_at,
            acknowledged_at: i.acknowledged_at,
            mitigated_at: i.mitigated_at,
            resolved_at: i.resolved_at,
            version: i.version,
            created_at: i.created_at,
            updated_at: i.updated_at,
            roles: roles.map(Roles::of),
            updates: None,
            alert_count: None,
            flapping: None,
            grouped_by: None,
            snoozed_until: None,
            trigger: None,
            bridge: None,
            claims: None,
            restricted: i.restricted,
            access: None,
            metrics: Durations::of(&i.milestones(), now),
            sla: Sla::of(policy, i.detected_at, i.acknowledged_at, i.resolved_at, now),
            peak_severity: i.peak_severity,
            allowed_transitions: Transition::legal_from(i.status)
                .into_iter()
                .map(|t| t.as_str().to_owned())
                .collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct IncidentList {
    pub items: Vec<IncidentView>,
    /// Pass as `cursor` to get the next page; `null` on the last page
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct EventView {
    pub id: i64,
    /// When it happened (may be backdated)
    pub occurred_at: DateTime<Utc>,
    /// When it was written
    pub recorded_at: DateTime<Utc>,
    /// `opened`, `acknowledged`, `mitigated`, `resolved`, `reopened`, `severity_changed`,
    /// `role_assigned`, `role_unassigned`, `edited`, `note` or `context`
    pub kind: String,
    pub author: String,
    /// The event as a sentence, with figures computed from the timestamps
    pub headline: String,
    pub body: String,
    #[schema(value_type = Object)]
    pub details: Value,
}

impl EventView {
    pub fn new(e: &Event, detected_at: DateTime<Utc>) -> Self {
        Self {
            id: e.id,
            occurred_at: e.occurred_at,
            recorded_at: e.recorded_at,
            kind: e.kind.as_str().to_owned(),
            author: e.author.clone(),
            headline: headline(e.kind, &e.details, e.occurred_at, detected_at),
            body: e.body.clone(),
            details: e.details.clone(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct EventList {
    pub items: Vec<EventView>,
}
