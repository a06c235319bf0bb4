//! SLA rules: severity policies, and the verdicts of the acknowledge and resolve clocks. Both run
//! from detection against the targets of the highest severity the incident reached, so raising
//! the severity mid-incident tightens the clocks retroactively and lowering it never loosens them.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::domain::{DomainError, Severity, format_minutes};

/// The rule, as shown beside every verdict.
pub const RULE: &str = "Measured from detection against the targets of the highest severity the \
incident reached: raising the severity applies the stricter targets from detection; lowering it \
never relaxes them.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Policy {
    pub severity: Severity,
    pub ack_target_secs: i64,
    pub resolve_target_secs: i64,
    /// How often stakeholders must hear about an open incident; none for quieter severities.
    pub update_cadence_secs: Option<i64>,
}

impl Policy {
    pub fn check(&self) -> Result<(), DomainError> {
        let field = |f: &str| format!("{}.{f}", self.severity);
        if self.ack_target_secs < 60 {
            return Err(DomainError::invalid(
                &field("ack_target_minutes"),
                "at least 1 minute",
            ));
        }
        if self.resolve_target_secs < self.ack_target_secs {
            return Err(DomainError::invalid(
                &field("resolve_target_minutes"),
                "the resolve target cannot be shorter than the acknowledge target",
            ));
        }
        if self.resolve_target_secs > 365 * 86400 {
            return Err(DomainError::invalid(
                &field("resolve_target_minutes"),
                "at most a year",
            ));
        }
        if let Some(c) = self.update_cadence_secs
            && !(5 * 60..=7 * 86400).contains(&c)
        {
            return Err(DomainError::invalid(
                &field("update_cadence_minutes"),
                "between 5 minutes and 7 days, or none",
            ));
        }
        Ok(())
    }
}

/// The policies Quell starts with.
pub fn default_policies() -> [Policy; 4] {
    let p = |severity, ack, resolve, cadence| Policy {
        severity,
        ack_target_secs: ack,
        resolve_target_secs: resolve,
        update_cadence_secs: cadence,
    };
    [
        p(Severity::Sev1, 15 * 60, 4 * 3600, Some(30 * 60)),
        p(Severity::Sev2, 30 * 60, 8 * 3600, Some(60 * 60)),
        p(Severity::Sev3, 2 * 3600, 3 * 86400, None),
        p(Severity::Sev4, 86400, 14 * 86400, None),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClockState {
    /// Stopped within the target.
    Met,
    /// Stopped after the target.
    Breached,
    /// Still running, target not yet passed.
    Running,
    /// Still running, target passed.
    Overdue,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Verdict {
    pub state: ClockState,
    pub target_secs: i64,
    /// Detection to the stop, or to now while running.
    pub elapsed_secs: i64,
    pub due_at: DateTime<Utc>,
    /// `Met (9 min of 15)`, `Breached (46 min of 30)`, `due in 6 min`, `overdue by 3 min`
    pub text: String,
}

/// The target as the reference document writes it: bare minutes beside a figure in minutes
/// (`9 min of 15`), with its unit otherwise (`3 h 33 min of 4 h`).
fn target_text(target_secs: i64, elapsed_secs: i64) -> String {
    if target_secs < 3600 && elapsed_secs < 3600 && target_secs % 60 == 0 {
        (target_secs / 60).to_string()
    } else {
        format_minutes(target_secs)
    }
}

/// One clock: from `detected_at` until `stopped_at` (or `now`), against `target_secs`.
pub fn verdict(
    target_secs: i64,
    detected_at: DateTime<Utc>,
    stopped_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Verdict {
    let due_at = detected_at + Duration::seconds(target_secs);
    let end = stopped_at.unwrap_or(now);
    let elapsed = (end - detected_at).num_seconds().max(0);
    let (state, text) = match stopped_at {
        Some(_) if elapsed <= target_secs => (
            ClockState::Met,
            format!(
                "Met ({} of {})",
                format_minutes(elapsed),
                target_text(target_secs, elapsed)
            ),
        ),
        Some(_) => (
            ClockState::Breached,
            format!(
                "Breached ({} of {})",
                format_minutes(elapsed),
                target_text(target_secs, elapsed)
            ),
        ),
        None if elapsed <= target_secs => (
            ClockState::Running,
            format!("due in {}", format_minutes(target_secs - elapsed)),
        ),
        None => (
            ClockState::Overdue,
            format!("overdue by {}", format_minutes(elapsed - target_secs)),
        ),
    };
    Verdict {
        state,
        target_secs,
        elapsed_secs: elapsed,
        due_at,
        text,
    }
}

/// Both clocks of an incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Sla {
    /// The severity whose targets apply: the highest the incident reached.
    pub basis: Severity,
    pub ack: Verdict,
    pub resolve: Verdict,
    pub rule: &'static str,
}

impl Sla {
    pub fn of(
        policy: &Policy,
        detected_at: DateTime<Utc>,
        acknowledged_at: Option<DateTime<Utc>>,
        resolved_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            basis: policy.severity,
            ack: verdict(policy.ack_target_secs, detected_at, acknowledged_at, now),
            resolve: verdict(policy.resolve_target_secs, detected_at, resolved_at, now),
            rule: RULE,
        }
    }

    /// The header line of a postmortem: `ack Met (9 min of 15), resolve Met (3 h 33 min of 4 h)`.
    pub fn summary(&self) -> String {
        format!("ack {}, resolve {}", self.ack.text, self.resolve.text)
    }

    /// The clock a responder should watch now: the running acknowledge clock, else the running
    /// resolve clock, else the summary.
    pub fn headline(&self) -> String {
        match (self.ack.state, self.resolve.state) {
            (ClockState::Running | ClockState::Overdue, _) => format!("ack {}", self.ack.text),
            (_, ClockState::Running | ClockState::Overdue) => {
                format!("resolve {}", self.resolve.text)
            }
            _ => self.summary(),
        }
    }
}

/// The persisted timers of an incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    Ack,
    Resolve,
    /// The next stakeholder update.
    Update,
}

impl TimerKind {
    pub const ALL: [TimerKind; 3] = [Self::Ack, Self::Resolve, Self::Update];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ack => "ack",
            Self::Resolve => "resolve",
            Self::Update => "update",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }
}

/// What an incident's timers should be now: a deadline per kind, or `None` when that clock has
/// stopped (acknowledged, resolved, mitigated, or no cadence).
pub fn desired_timers(
    policy: &Policy,
    detected_at: DateTime<Utc>,
    acknowledged_at: Option<DateTime<Utc>>,
    mitigated_at: Option<DateTime<Utc>>,
    resolved_at: Option<DateTime<Utc>>,
    last_update_at: Option<DateTime<Utc>>,
) -> [(TimerKind, Option<DateTime<Utc>>); 3] {
    let after = |secs: i64| detected_at + Duration::seconds(secs);
    let update_from = last_update_at.map_or(detected_at, |u| u.max(detected_at));
    [
        (
            TimerKind::Ack,
            acknowledged_at
                .is_none()
                .then(|| after(policy.ack_target_secs)),
        ),
        (
            TimerKind::Resolve,
            resolved_at
                .is_none()
                .then(|| after(policy.resolve_target_secs)),
        ),
        (
            TimerKind::Update,
            policy
                .update_cadence_secs
                .filter(|_| mitigated_at.is_none() && resolved_at.is_none())
                .map(|c| update_from + Duration::seconds(c)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn timers_follow_the_incident_and_the_policy() {
        let p = policy(Severity::Sev1);
        let open = desired_timers(&p, t(16, 7), None, None, None, None);
        assert_eq!(open[0], (TimerKind::Ack, Some(t(16, 22))));
        assert_eq!(open[1], (TimerKind::Resolve, Some(t(20, 7))));
        assert_eq!(open[2], (TimerKind::Update, Some(t(16, 37))));
        let acked = desired_timers(&p, t(16, 7), Some(t(16, 16)), None, None, Some(t(16, 24)));
        assert_eq!(acked[0].1, None);
        assert_eq!(
            acked[2].1,
            Some(t(16, 54)),
            "an update restarts the cadence"
        );
        let mitigated = desired_timers(&p, t(16, 7), Some(t(16, 16)), Some(t(16, 52)), None, None);
        assert_eq!(mitigated[2].1, None);
        assert_eq!(mitigated[1].1, Some(t(20, 7)));
        let quiet = desired_timers(&policy(Severity::Sev3), t(16, 7), None, None, None, None);
        assert_eq!(quiet[2].1, None);
    }

    use super::*;
    use chrono::TimeZone;

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 17, h, m, 0).unwrap()
    }

    fn policy(sev: Severity) -> Policy {
        default_policies()
            .into_iter()
            .find(|p| p.severity == sev)
            .unwrap()
    }

    #[test]
    fn inc_1187_reads_like_the_reference_document() {
        // Opened Sev2 at 16:07, raised to Sev1: Sev1 targets from detection.
        let sla = Sla::of(
            &policy(Severity::Sev1),
            t(16, 7),
            Some(t(16, 16)),
            Some(t(19, 40)),
            t(23, 0),
        );
        assert_eq!(sla.ack.text, "Met (9 min of 15)");
        assert_eq!(sla.resolve.text, "Met (3 h 33 min of 4 h)");
        assert_eq!(
            sla.summary(),
            "ack Met (9 min of 15), resolve Met (3 h 33 min of 4 h)"
        );
    }

    #[test]
    fn a_late_ack_is_breached_in_the_documents_form() {
        let v = verdict(30 * 60, t(10, 0), Some(t(10, 46)), t(12, 0));
        assert_eq!(v.state, ClockState::Breached);
        assert_eq!(v.text, "Breached (46 min of 30)");
        let v = verdict(15 * 60, t(10, 0), Some(t(11, 10)), t(12, 0));
        assert_eq!(
            v.text, "Breached (1 h 10 min of 15 min)",
            "units once the figure passes an hour"
        );
    }

    #[test]
    fn running_clocks_say_when_they_are_due_or_how_late_they_are() {
        let v = verdict(15 * 60, t(10, 0), None, t(10, 9));
        assert_eq!(
            (v.state, v.text.as_str()),
            (ClockState::Running, "due in 6 min")
        );
        assert_eq!(v.due_at, t(10, 15));
        let v = verdict(15 * 60, t(10, 0), None, t(10, 18));
        assert_eq!(
            (v.state, v.text.as_str()),
            (ClockState::Overdue, "overdue by 3 min")
        );
        let v = verdict(15 * 60, t(10, 0), Some(t(10, 15)), t(10, 18));
        assert_eq!(v.state, ClockState::Met, "exactly on target is met");
    }

    #[test]
    fn raising_the_severity_tightens_and_lowering_never_loosens() {
        // Opened Sev3, acknowledged at 40 min: met for Sev3 (2 h) …
        let sev3 = Sla::of(
            &policy(Severity::Sev3),
            t(10, 0),
            Some(t(10, 40)),
            None,
            t(11, 0),
        );
        assert_eq!(sev3.ack.state, ClockState::Met);
        // … but once it reached Sev2 (30 min), the same ack is breached, even if lowered again.
        let sev2 = Sla::of(
            &policy(Severity::Sev2),
            t(10, 0),
            Some(t(10, 40)),
            None,
            t(11, 0),
        );
        assert_eq!(sev2.ack.text, "Breached (40 min of 30)");
        assert_eq!(sev2.headline(), "resolve due in 7 h");
    }

    #[test]
    fn policies_refuse_impossible_targets() {
        let mut p = policy(Severity::Sev1);
        assert!(p.check().is_ok());
        p.resolve_target_secs = 60;
        assert!(
            matches!(p.check(), Err(DomainError::Invalid { field, .. }) if field == "Sev1.resolve_target_minutes")
        );
        let mut p = policy(Severity::Sev2);
        p.update_cadence_secs = Some(60);
        assert!(p.check().is_err());
    }
}
