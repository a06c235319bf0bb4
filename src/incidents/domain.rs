//! Pure rules of an incident: severities, statuses, the lifecycle state machine, the `at` rules
//! for backdated entries, and the durations computed from timestamps. No I/O here.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use std::fmt;

pub use crate::domain::Severity;
use crate::domain::{DomainError, format_hmm, format_minutes};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Triggered,
    Acknowledged,
    Mitigated,
    Resolved,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Self::Triggered,
        Self::Acknowledged,
        Self::Mitigated,
        Self::Resolved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Triggered => "triggered",
            Self::Acknowledged => "acknowledged",
            Self::Mitigated => "mitigated",
            Self::Resolved => "resolved",
        }
    }

    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == value.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                DomainError::invalid(
                    field,
                    format!(
                        "{value:?} is not a status; use triggered, acknowledged, mitigated or resolved"
                    ),
                )
            })
    }

    pub fn is_open(self) -> bool {
        self != Self::Resolved
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use crate::domain::IncidentKey;

/// The timestamps the lifecycle reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Milestones {
    pub status: Status,
    pub started_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub mitigated_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Acknowledge,
    Mitigate,
    Resolve,
    Reopen,
}

impl Transition {
    pub const ALL: [Transition; 4] = [
        Self::Acknowledge,
        Self::Mitigate,
        Self::Resolve,
        Self::Reopen,
    ];

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == value)
    }

    /// The path segment and form action: `acknowledge`, `mitigate`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acknowledge => "acknowledge",
            Self::Mitigate => "mitigate",
            Self::Resolve => "resolve",
            Self::Reopen => "reopen",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Acknowledge => "Acknowledge",
            Self::Mitigate => "Mark mitigated",
            Self::Resolve => "Resolve",
            Self::Reopen => "Reopen",
        }
    }

    pub fn target(self) -> Status {
        match self {
            Self::Acknowledge => Status::Acknowledged,
            Self::Mitigate => Status::Mitigated,
            Self::Resolve => Status::Resolved,
            Self::Reopen => Status::Acknowledged,
        }
    }

    /// Transitions that are legal from `status`, in the order a responder takes them.
    pub fn legal_from(status: Status) -> Vec<Transition> {
        Self::ALL
            .into_iter()
            .filter(|t| t.refusal(status).is_none())
            .collect()
    }

    /// Why this transition is illegal from `status`, or `None` when it is legal.
    fn refusal(self, status: Status) -> Option<String> {
        use Status::*;
        match (self, status) {
            (Self::Acknowledge, Triggered)
            | (Self::Mitigate, Triggered | Acknowledged)
            | (Self::Resolve, Triggered | Acknowledged | Mitigated)
            | (Self::Reopen, Resolved) => None,
            (Self::Acknowledge, Acknowledged) => {
                Some("the incident is already acknowledged".into())
            }
            (Self::Acknowledge, Mitigated | Resolved) => Some(format!(
                "the incident is already {status}; acknowledging only applies to a triggered incident"
            )),
            (Self::Mitigate, Mitigated) => Some("the incident is already mitigated".into()),
            (Self::Mitigate, Resolved) => {
                Some("the incident is resolved; reopen it first if the problem is back".into())
            }
            (Self::Resolve, Resolved) => Some("the incident is already resolved".into()),
            (Self::Reopen, _) => Some(format!(
                "only a resolved incident can be reopened; this one is {status}"
            )),
        }
    }
}

/// What a transition changes: the new status and stamps, and which steps it stamped on the way
/// because the responder skipped them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionPlan {
    pub transition: Transition,
    pub from: Status,
    pub to: Status,
    pub at: DateTime<Utc>,
    pub milestones: Milestones,
    pub skipped: Vec<Status>,
}

/// Plans `transition` at `at` (already checked against the clock by [`check_at`]).
pub fn plan_transition(
    current: &Milestones,
    transition: Transition,
    at: DateTime<Utc>,
) -> Result<TransitionPlan, DomainError> {
    if let Some(reason) = transition.refusal(current.status) {
        return Err(DomainError::Conflict(format!(
            "Cannot {}: {reason}.",
            transition.as_str()
        )));
    }
    let mut next = *current;
    let mut skipped = Vec::new();
    match transition {
        Transition::Acknowledge => {
            not_before(at, current.detected_at, "detection")?;
            // Paging again after a snooze, it keeps its first acknowledgement.
            next.acknowledged_at = Some(current.acknowledged_at.unwrap_or(at));
        }
        Transition::Mitigate | Transition::Resolve => {
            let floor = current
                .acknowledged_at
                .unwrap_or(current.detected_at)
                .max(current.mitigated_at.unwrap_or(current.detected_at));
            let what = if current.mitigated_at.is_some() {
                "mitigation"
            } else if current.acknowledged_at.is_some() {
                "acknowledgement"
            } else {
                "detection"
            };
            not_before(at, floor, what)?;
            if next.acknowledged_at.is_none() {
                next.acknowledged_at = Some(at);
                skipped.push(Status::Acknowledged);
            }
            if next.mitigated_at.is_none() {
                next.mitigated_at = Some(at);
                if transition == Transition::Resolve {
                    skipped.push(Status::Mitigated);
                }
            }
            if transition == Transition::Resolve {
                next.resolved_at = Some(at);
            }
        }
        Transition::Reopen => {
            not_before(
                at,
                current.resolved_at.unwrap_or(current.detected_at),
                "resolution",
            )?;
            next.mitigated_at = None;
            next.resolved_at = None;
        }
    }
    next.status = transition.target();
    Ok(TransitionPlan {
        transition,
        from: current.status,
        to: next.status,
        at,
        milestones: next,
        skipped,
    })
}

/// A snooze: only an acknowledged incident is put aside (a triggered one is still paging,
/// a mitigated or resolved one has nothing to wake for), for a minute to a week.
pub fn check_snooze(status: Status, minutes: i64) -> Result<(), DomainError> {
    if !(1..=10_080).contains(&minutes) {
        return Err(DomainError::invalid(
            "minutes",
            format!("{minutes} is out of bounds; snooze for 1 to 10080 minutes (a week)"),
        ));
    }
    if status != Status::Acknowledged {
        return Err(DomainError::Conflict(format!(
            "Only an acknowledged incident can be snoozed; this one is {status}."
        )));
    }
    Ok(())
}

/// A step the system takes back, never offered to people: a mitigation the alerts made and
/// their flapping withdraws (mitigated → acknowledged: the mitigation stamp is cleared, it was
/// not one), or a snooze ending (acknowledged → triggered: the first acknowledgement stays, as
/// it happened — time to acknowledge and its SLA target were met then, and a second
/// acknowledgement does not move it).
pub fn step_back(current: &Milestones, to: Status) -> Result<Milestones, DomainError> {
    let mut next = *current;
    match (current.status, to) {
        (Status::Mitigated, Status::Acknowledged) => next.mitigated_at = None,
        (Status::Acknowledged, Status::Triggered) => {}
        (from, to) => {
            return Err(DomainError::Conflict(format!(
                "An incident that is {from} does not step back to {to}."
            )));
        }
    }
    next.status = to;
    Ok(next)
}

fn not_before(at: DateTime<Utc>, floor: DateTime<Utc>, what: &str) -> Result<(), DomainError> {
    if at < floor {
        return Err(DomainError::invalid(
            "at",
            format!(
                "{} is before the incident's {what} at {}: a step cannot come before the one it follows, so the earliest allowed is {}. Enter a later time, or correct the {what} time first",
                at.format("%Y-%m-%d %H:%M UTC"),
                floor.format("%Y-%m-%d %H:%M UTC"),
                floor.format("%Y-%m-%d %H:%M UTC")
            ),
        ));
    }
    Ok(())
}

/// The rule for every backdated entry: never in the future (by the database clock), never before
/// the incident started. Returns the effective time, `now` when none was given.
pub fn check_at(
    at: Option<DateTime<Utc>>,
    started_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, DomainError> {
    let Some(at) = at else { return Ok(now) };
    check_not_future("at", at, now)?;
    if at < started_at {
        return Err(DomainError::invalid(
            "at",
            format!(
                "{} is before the incident started at {}",
                at.format("%Y-%m-%d %H:%M UTC"),
                started_at.format("%Y-%m-%d %H:%M UTC")
            ),
        ));
    }
    Ok(at)
}

/// A note's time: as [`check_at`], and one before the incident started points to the Background
/// kind, which is what a scribe entering the deploy that preceded it means.
pub fn check_note_at(
    at: Option<DateTime<Utc>>,
    started_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, DomainError> {
    check_at(at, started_at, now).map_err(|e| match e {
        DomainError::Invalid { field, message } if message.contains("before the incident started") => {
            DomainError::Invalid {
                field,
                message: format!(
                    "{message}, the earliest a note may be. For something that happened before the impact (a deploy, a traffic ramp), choose the kind Background, which may predate the incident"
                ),
            }
        }
        other => other,
    })
}

/// Background entries (the deploy that preceded the impact, the traffic ramp) may predate the
/// incident, but not the future.
pub fn check_context_at(
    at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, DomainError> {
    let Some(at) = at else { return Ok(now) };
    check_not_future("at", at, now)?;
    Ok(at)
}

pub fn check_not_future(
    field: &str,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DomainError> {
    // A little slack for clients whose clocks run slightly ahead of the database's.
    if at > now + Duration::seconds(5) {
        return Err(DomainError::invalid(
            field,
            format!(
                "{} is in the future: times are UTC, and the server's time is {}",
                at.format("%Y-%m-%d %H:%M:%S UTC"),
                now.format("%Y-%m-%d %H:%M:%S UTC")
            ),
        ));
    }
    Ok(())
}

/// Checks the start and detection times of a new or edited incident.
pub fn check_opening_times(
    started_at: DateTime<Utc>,
    detected_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DomainError> {
    check_not_future("detected_at", detected_at, now)?;
    check_not_future("started_at", started_at, now)?;
    if started_at > detected_at {
        return Err(DomainError::invalid(
            "started_at",
            "the first customer impact (started_at) cannot come after detection (detected_at)",
        ));
    }
    Ok(())
}

pub fn check_title(title: &str) -> Result<String, DomainError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(DomainError::invalid("title", "a title is required"));
    }
    if title.chars().count() > 200 {
        return Err(DomainError::invalid(
            "title",
            "a title is at most 200 characters",
        ));
    }
    Ok(title.to_owned())
}

pub fn check_text(field: &str, value: &str, max_chars: usize) -> Result<String, DomainError> {
    if value.chars().count() > max_chars {
        return Err(DomainError::invalid(
            field,
            format!("at most {max_chars} characters"),
        ));
    }
    Ok(value.trim().to_owned())
}

/// A severity change: it must change something and say why.
pub fn check_severity_change(
    current: Severity,
    to: Severity,
    reason: &str,
) -> Result<String, DomainError> {
    if current == to {
        return Err(DomainError::Conflict(format!(
            "The incident is already {current}."
        )));
    }
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(DomainError::invalid(
            "reason",
            format!("say why the severity changes from {current} to {to}"),
        ));
    }
    check_text("reason", reason, 2000)
}

/// Durations of PRODUCT.md's table, measured from the incident's own timestamps. `now` is used
/// for the steps still running, so the figures are live while the incident is open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Durations {
    /// detected − started (first customer impact)
    pub time_to_detect_secs: i64,
    /// acknowledged − detected
    pub time_to_acknowledge_secs: Option<i64>,
    /// mitigated − detected
    pub time_to_mitigate_secs: Option<i64>,
    /// resolved − detected
    pub time_to_resolve_secs: Option<i64>,
    /// how long the incident has been (or was) open, from detection
    pub open_for_secs: i64,
    /// The postmortem's duration line, `detection → mitigation 0:45; → resolution 3:33`, once
    /// both are known
    pub duration: Option<String>,
}

/// The postmortem's duration line, `detection → mitigation 0:45; → resolution 3:33`, once
/// the incident has been both mitigated and resolved.
pub fn duration_line(
    detected_at: DateTime<Utc>,
    mitigated_at: Option<DateTime<Utc>>,
    resolved_at: Option<DateTime<Utc>>,
) -> Option<String> {
    let since = |t: DateTime<Utc>| format_hmm((t - detected_at).num_seconds());
    mitigated_at.zip(resolved_at).map(|(m, r)| {
        format!(
            "detection → mitigation {}; → resolution {}",
            since(m),
            since(r)
        )
    })
}

impl Durations {
    pub fn of(m: &Milestones, now: DateTime<Utc>) -> Self {
        let since = |t: DateTime<Utc>| (t - m.detected_at).num_seconds();
        Self {
            time_to_detect_secs: (m.detected_at - m.started_at).num_seconds(),
            time_to_acknowledge_secs: m.acknowledged_at.map(since),
            time_to_mitigate_secs: m.mitigated_at.map(since),
            time_to_resolve_secs: m.resolved_at.map(since),
            open_for_secs: since(m.resolved_at.unwrap_or(now)).max(0),
            duration: duration_line(m.detected_at, m.mitigated_at, m.resolved_at),
        }
    }

    pub fn time_to_detect(&self) -> String {
        format_minutes(self.time_to_detect_secs)
    }
}

/// Why a step deserves a second look before it is taken (a confirmation page, or a dialog with
/// JavaScript), or `None`: resolving an incident nobody has acknowledged.
pub fn confirmation(status: Status, t: Transition) -> Option<&'static str> {
    match (t, status) {
        (Transition::Resolve, Status::Triggered) => Some(
            "Nobody has acknowledged it yet: resolving now closes it without anyone having taken it on, and its acknowledge target is never met.",
        ),
        _ => None,
    }
}

/// Why lowering the severity deserves a second look: a Sev1 made less severe.
pub fn severity_confirmation(from: Severity, to: Severity) -> Option<&'static str> {
    (from == Severity::Sev1 && to > from).then_some(
        "It is a Sev1: lowering it relaxes the targets it is measured against and how often stakeholders hear about it.",
    )
}

/// What an incident of `severity` should have before it is resolved, and lacks: a warning to
/// show beside Resolve, never a block. Only Sev1 and Sev2 are held to it.
pub fn before_resolving(
    severity: Severity,
    has_commander: bool,
    has_impact: bool,
    has_update: bool,
) -> Vec<&'static str> {
    if severity > Severity::Sev2 {
        return vec![];
    }
    [
        (has_commander, "no incident commander"),
        (has_impact, "no impact written"),
        (has_update, "no stakeholder update sent"),
    ]
    .into_iter()
    .filter(|(has, _)| !has)
    .map(|(_, what)| what)
    .collect()
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn transition() -> impl Strategy<Value = Transition> {
        prop::sample::select(vec![
            Transition::Acknowledge,
            Transition::Mitigate,
            Transition::Resolve,
            Transition::Reopen,
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Any sequence of steps at any times: each is applied or refused (a conflict, or a
        /// time naming `at`), and what is applied keeps the lifecycle's order — acknowledged,
        /// then mitigated, then resolved, never before detection; reopening clears the last two.
        #[test]
        fn the_lifecycle_keeps_its_order(
            steps in prop::collection::vec((transition(), -120i64..600), 0..12),
            at_offset in -600i64..600,
        ) {
            let detected = DateTime::from_timestamp(1_758_000_000, 0).unwrap();
            let now = detected + chrono::Duration::minutes(600);
            let mut m = Milestones {
                status: Status::Triggered,
                started_at: detected - chrono::Duration::minutes(5),
                detected_at: detected,
                acknowledged_at: None,
                mitigated_at: None,
                resolved_at: None,
            };
            for (t, minutes) in steps {
                let at = detected + chrono::Duration::minutes(minutes);
                match plan_transition(&m, t, at) {
                    Ok(plan) => {
                        m = plan.milestones;
                        prop_assert_eq!(m.status, t.target());
                    }
                    Err(DomainError::Invalid { field, .. }) => prop_assert_eq!(field, "at"),
                    Err(DomainError::Conflict(_)) => {}
                }
                let order = [Some(m.detected_at), m.acknowledged_at, m.mitigated_at, m.resolved_at];
                let known: Vec<_> = order.iter().flatten().collect();
                prop_assert!(known.windows(2).all(|w| w[0] <= w[1]), "{m:?}");
                match m.status {
                    Status::Triggered => prop_assert!(m.mitigated_at.is_none() && m.resolved_at.is_none()),
                    Status::Acknowledged => prop_assert!(m.acknowledged_at.is_some() && m.resolved_at.is_none()),
                    Status::Mitigated => prop_assert!(m.mitigated_at.is_some() && m.resolved_at.is_none()),
                    Status::Resolved => prop_assert!(m.resolved_at.is_some()),
                }
            }
            // The at-rule: a time is accepted only within [started, now].
            let at = detected + chrono::Duration::minutes(at_offset * 2);
            match check_at(Some(at), m.started_at, now) {
                Ok(t) => prop_assert!(t >= m.started_at && t <= now),
                Err(DomainError::Invalid { field, .. }) => prop_assert_eq!(field, "at"),
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn dangerous_steps_ask_first_and_a_bare_sev1_is_warned_about() {
        assert!(confirmation(Status::Triggered, Transition::Resolve).is_some());
        assert!(confirmation(Status::Acknowledged, Transition::Resolve).is_none());
        assert!(confirmation(Status::Triggered, Transition::Acknowledge).is_none());
        assert!(severity_confirmation(Severity::Sev1, Severity::Sev3).is_some());
        assert!(severity_confirmation(Severity::Sev2, Severity::Sev3).is_none());
        assert!(severity_confirmation(Severity::Sev1, Severity::Sev1).is_none());
        assert_eq!(
            before_resolving(Severity::Sev1, false, true, false),
            ["no incident commander", "no stakeholder update sent"]
        );
        assert!(before_resolving(Severity::Sev3, false, false, false).is_empty());
    }

    fn t(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 17, h, m, 0).unwrap()
    }

    fn triggered() -> Milestones {
        Milestones {
            status: Status::Triggered,
            started_at: t(16, 2),
            detected_at: t(16, 7),
            acknowledged_at: None,
            mitigated_at: None,
            resolved_at: None,
        }
    }

    fn after(m: &Milestones, tr: Transition, at: DateTime<Utc>) -> Milestones {
        plan_transition(m, tr, at).unwrap().milestones
    }

    #[test]
    fn only_an_acknowledged_incident_snoozes_for_a_minute_to_a_week() {
        assert!(check_snooze(Status::Acknowledged, 60).is_ok());
        assert!(check_snooze(Status::Triggered, 60).is_err());
        assert!(check_snooze(Status::Mitigated, 60).is_err());
        assert!(check_snooze(Status::Acknowledged, 0).is_err());
        assert!(check_snooze(Status::Acknowledged, 10_081).is_err());
    }

    #[test]
    fn a_step_back_clears_a_withdrawn_mitigation_and_keeps_the_first_acknowledgement() {
        let acked = after(&triggered(), Transition::Acknowledge, t(16, 9));
        let mitigated = after(&acked, Transition::Mitigate, t(16, 30));
        let back = step_back(&mitigated, Status::Acknowledged).unwrap();
        assert_eq!(back.status, Status::Acknowledged);
        assert_eq!(back.acknowledged_at, Some(t(16, 9)));
        assert_eq!(back.mitigated_at, None);
        let snoozed_out = step_back(&acked, Status::Triggered).unwrap();
        assert_eq!(snoozed_out.status, Status::Triggered);
        assert_eq!(snoozed_out.acknowledged_at, Some(t(16, 9)));
        let again = after(&snoozed_out, Transition::Acknowledge, t(18, 0));
        assert_eq!(again.acknowledged_at, Some(t(16, 9)), "the first stays");
        assert!(step_back(&mitigated, Status::Triggered).is_err());
        let resolved = after(&mitigated, Transition::Resolve, t(17, 0));
        assert!(step_back(&resolved, Status::Acknowledged).is_err());
    }

    #[test]
    fn severities_parse_leniently_and_order_worst_first() {
        assert_eq!(Severity::parse("severity", "sev1").unwrap(), Severity::Sev1);
        assert_eq!(Severity::parse("severity", "2").unwrap(), Severity::Sev2);
        assert!(Severity::parse("severity", "Sev5").is_err());
        assert!(Severity::Sev1.is_more_severe_than(Severity::Sev2));
    }

    #[test]
    fn incident_keys_parse_only_inc_and_a_number() {
        assert_eq!(IncidentKey::parse("INC-1187"), Some(IncidentKey(1187)));
        assert_eq!(IncidentKey::parse("inc-7"), Some(IncidentKey(7)));
        for bad in [
            "INC-",
            "INC-0",
            "INC-1a",
            "1187",
            "INC--1",
            "INC-99999999999999999",
        ] {
            assert_eq!(IncidentKey::parse(bad), None, "{bad}");
        }
        assert_eq!(IncidentKey(1187).to_string(), "INC-1187");
    }

    #[test]
    fn every_legal_transition_from_every_status() {
        use Status::*;
        use Transition::*;
        assert_eq!(
            Transition::legal_from(Triggered),
            vec![Acknowledge, Mitigate, Resolve]
        );
        assert_eq!(
            Transition::legal_from(Acknowledged),
            vec![Mitigate, Resolve]
        );
        assert_eq!(Transition::legal_from(Mitigated), vec![Resolve]);
        assert_eq!(Transition::legal_from(Resolved), vec![Reopen]);
    }

    #[test]
    fn illegal_transitions_are_conflicts_with_a_reason() {
        let m = after(&triggered(), Transition::Acknowledge, t(16, 16));
        let err = plan_transition(&m, Transition::Acknowledge, t(16, 20)).unwrap_err();
        assert_eq!(
            err,
            DomainError::Conflict(
                "Cannot acknowledge: the incident is already acknowledged.".into()
            )
        );
        let err = plan_transition(&triggered(), Transition::Reopen, t(16, 20)).unwrap_err();
        assert!(matches!(err, DomainError::Conflict(s) if s.contains("only a resolved incident")));
    }

    #[test]
    fn resolving_a_triggered_incident_stamps_the_skipped_steps() {
        let plan = plan_transition(&triggered(), Transition::Resolve, t(17, 0)).unwrap();
        assert_eq!(plan.to, Status::Resolved);
        assert_eq!(plan.skipped, vec![Status::Acknowledged, Status::Mitigated]);
        assert_eq!(plan.milestones.acknowledged_at, Some(t(17, 0)));
        assert_eq!(plan.milestones.mitigated_at, Some(t(17, 0)));
        assert_eq!(plan.milestones.resolved_at, Some(t(17, 0)));
    }

    #[test]
    fn mitigating_after_ack_skips_nothing_and_keeps_the_ack_time() {
        let m = after(&triggered(), Transition::Acknowledge, t(16, 16));
        let plan = plan_transition(&m, Transition::Mitigate, t(16, 52)).unwrap();
        assert!(plan.skipped.is_empty());
        assert_eq!(plan.milestones.acknowledged_at, Some(t(16, 16)));
        assert_eq!(plan.milestones.mitigated_at, Some(t(16, 52)));
    }

    #[test]
    fn a_step_cannot_be_dated_before_the_previous_one() {
        let m = after(&triggered(), Transition::Acknowledge, t(16, 16));
        let err = plan_transition(&m, Transition::Mitigate, t(16, 10)).unwrap_err();
        assert!(
            matches!(err, DomainError::Invalid { ref field, ref message }
            if field == "at" && message.contains("acknowledgement"))
        );
        let err = plan_transition(&triggered(), Transition::Acknowledge, t(16, 5)).unwrap_err();
        assert!(matches!(err, DomainError::Invalid { .. }));
    }

    #[test]
    fn reopen_clears_mitigation_and_resolution_but_keeps_the_first_ack() {
        let m = after(&triggered(), Transition::Resolve, t(19, 40));
        let plan = plan_transition(&m, Transition::Reopen, t(20, 0)).unwrap();
        assert_eq!(plan.to, Status::Acknowledged);
        assert_eq!(plan.milestones.acknowledged_at, Some(t(19, 40)));
        assert_eq!(plan.milestones.mitigated_at, None);
        assert_eq!(plan.milestones.resolved_at, None);
        let again = plan_transition(&plan.milestones, Transition::Mitigate, t(20, 10)).unwrap();
        assert_eq!(again.milestones.mitigated_at, Some(t(20, 10)));
    }

    #[test]
    fn at_is_never_in_the_future_nor_before_the_start() {
        let now = t(18, 0);
        assert_eq!(check_at(None, t(16, 2), now).unwrap(), now);
        assert_eq!(check_at(Some(t(16, 2)), t(16, 2), now).unwrap(), t(16, 2));
        assert!(check_at(Some(t(18, 1)), t(16, 2), now).is_err());
        assert!(check_at(Some(t(16, 1)), t(16, 2), now).is_err());
        assert_eq!(check_context_at(Some(t(14, 5)), now).unwrap(), t(14, 5));
        assert!(check_context_at(Some(t(18, 1)), now).is_err());
    }

    #[test]
    fn opening_times_must_be_in_order() {
        let now = t(18, 0);
        assert!(check_opening_times(t(16, 2), t(16, 7), now).is_ok());
        assert!(check_opening_times(t(16, 8), t(16, 7), now).is_err());
        assert!(check_opening_times(t(16, 2), t(18, 30), now).is_err());
    }

    #[test]
    fn severity_changes_need_a_reason_and_a_change() {
        assert!(check_severity_change(Severity::Sev2, Severity::Sev1, "checkout failing").is_ok());
        assert!(matches!(
            check_severity_change(Severity::Sev2, Severity::Sev1, "  "),
            Err(DomainError::Invalid { ref field, .. }) if field == "reason"
        ));
        assert!(matches!(
            check_severity_change(Severity::Sev2, Severity::Sev2, "why"),
            Err(DomainError::Conflict(_))
        ));
    }

    #[test]
    fn inc_1187_durations_come_from_its_timestamps() {
        let m = after(&triggered(), Transition::Acknowledge, t(16, 16));
        let m = after(&m, Transition::Mitigate, t(16, 52));
        let m = after(&m, Transition::Resolve, t(19, 40));
        let d = Durations::of(&m, t(23, 0));
        assert_eq!(d.time_to_detect(), "5 min");
        assert_eq!(d.time_to_acknowledge_secs, Some(9 * 60));
        assert_eq!(d.time_to_mitigate_secs, Some(45 * 60));
        assert_eq!(d.time_to_resolve_secs, Some(3 * 3600 + 33 * 60));
        assert_eq!(d.open_for_secs, 3 * 3600 + 33 * 60);
        assert_eq!(
            d.duration.as_deref(),
            Some("detection → mitigation 0:45; → resolution 3:33")
        );
    }
}
