//! What an import reads from a vendor before anything is written, in the same shapes whichever
//! vendor it came from, and the vendor it came from.

use super::pagerduty::{
    Entry, Integration, PdOverride, Policy, Schedule, Service, Team, TeamMember, User,
};

/// A tool an import reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vendor {
    /// How `imported_objects` and the plan's JSON name it
    pub key: &'static str,
    /// How a person calls it
    pub name: &'static str,
    /// The Quell integration format its integrations' senders speak
    pub format: &'static str,
    /// The API those senders call
    pub api: &'static str,
}

pub const PAGERDUTY: Vendor = Vendor {
    key: "pagerduty",
    name: "PagerDuty",
    format: "pagerduty-events-v2",
    api: "Events API v2",
};

pub const OPSGENIE: Vendor = Vendor {
    key: "opsgenie",
    name: "Opsgenie",
    format: "opsgenie",
    api: "Alert API",
};

/// Something of the vendor's that reading found cannot become anything in Quell, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    /// person, team, schedule, escalation policy, service, integration
    pub kind: &'static str,
    pub name: String,
    /// The vendor's object: its kind, id and name
    pub source: String,
    pub why: String,
}

/// Everything an import read, each schedule with its overrides and the vendor's own rendering
/// of the days compared, each service with the integrations that come across.
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub users: Vec<User>,
    pub teams: Vec<(Team, Vec<TeamMember>)>,
    pub schedules: Vec<(Schedule, Vec<PdOverride>, Vec<Entry>)>,
    pub policies: Vec<Policy>,
    pub services: Vec<(Service, Vec<Integration>)>,
    pub unmapped: Vec<Unmapped>,
}
