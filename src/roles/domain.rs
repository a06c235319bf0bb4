//! The four incident roles.

use serde::Serialize;

use crate::domain::DomainError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    IncidentCommander,
    CommsLead,
    Scribe,
    PostmortemOwner,
}

impl Role {
    pub const ALL: [Role; 4] = [
        Self::IncidentCommander,
        Self::CommsLead,
        Self::Scribe,
        Self::PostmortemOwner,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::IncidentCommander => "incident_commander",
            Self::CommsLead => "comms_lead",
            Self::Scribe => "scribe",
            Self::PostmortemOwner => "postmortem_owner",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::IncidentCommander => "Incident commander",
            Self::CommsLead => "Comms lead",
            Self::Scribe => "Scribe",
            Self::PostmortemOwner => "Postmortem owner",
        }
    }

    /// Accepts `incident_commander` and `incident-commander`.
    pub fn parse(value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == v)
            .ok_or_else(|| {
                DomainError::invalid(
                    "role",
                    format!(
                        "{value:?} is not a role; use incident_commander, comms_lead, scribe or postmortem_owner"
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_with_dashes_or_underscores() {
        assert_eq!(
            Role::parse("incident-commander").unwrap(),
            Role::IncidentCommander
        );
        assert_eq!(Role::parse("scribe").unwrap(), Role::Scribe);
        assert!(Role::parse("captain").is_err());
    }
}
