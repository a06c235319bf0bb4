//! Who is looking at incidents, for the rule every read for a person keeps: an incident
//! restricted to named teams and people is seen only by them and by admins.

use crate::auth::CurrentUser;
use crate::auth::domain::UserRole;

/// Who reads: a person, who sees the incidents open to everyone and the restricted ones opened
/// to them or to a team of theirs; or everyone's eyes (an admin, who must be able to mend a
/// restricted incident's access; the engines; aggregate figures), who see all. Queries pass
/// [`SeenBy::sql`] to `incident_visible(i.restricted, i.id, $n)`, where null is "all".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenBy(Option<i64>);

impl SeenBy {
    /// Everything: the engines, counts in reports, admins.
    pub const ALL: SeenBy = SeenBy(None);

    /// What is open to everyone, and no restricted incident: for what everyone may read
    /// (a postmortem's related incidents, a challenge). No person has id 0 (ids start at 1).
    pub const EVERYONE: SeenBy = SeenBy(Some(0));

    /// The person with this id, whatever their role.
    pub fn person(id: i64) -> Self {
        Self(Some(id))
    }

    /// The signed-in user: admins see every incident, everyone else what is open to them.
    pub fn of(user: &CurrentUser) -> Self {
        if user.role == UserRole::Admin {
            Self::ALL
        } else {
            Self::person(user.id)
        }
    }

    /// The value `incident_visible` takes: the person's id, or null for all.
    pub fn sql(self) -> Option<i64> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: UserRole) -> CurrentUser {
        CurrentUser {
            id: 7,
            name: "Ana".into(),
            email: "ana@example.com".into(),
            handle: "ana".into(),
            role,
        }
    }

    #[test]
    fn admins_see_all_and_everyone_else_is_themselves() {
        assert_eq!(SeenBy::of(&user(UserRole::Admin)).sql(), None);
        for role in [UserRole::Viewer, UserRole::Responder, UserRole::Manager] {
            assert_eq!(SeenBy::of(&user(role)).sql(), Some(7));
        }
        assert_eq!(SeenBy::ALL.sql(), None);
        assert_eq!(SeenBy::EVERYONE.sql(), Some(0));
    }
}
