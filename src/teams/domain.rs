//! What makes a valid team (a name, a slug to address it by, a description) and the rules of
//! membership: a member is a `member` or a `lead`, and who may change a team's configuration.

use serde::{Deserialize, Serialize};

use crate::auth::domain::UserRole;
use crate::domain::DomainError;

/// A team as written by a person (API body or form).
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamDraft {
    /// e.g. `Payments`
    #[serde(default)]
    pub name: String,
    /// How addresses name it, e.g. `payments`; left out, made from the name
    #[serde(default)]
    pub slug: String,
    #[serde(default)]
    pub description: String,
    /// Whether members (not only leads) may change the team's configuration
    #[serde(default)]
    pub members_manage: bool,
    /// The identity provider's group whose members are this team's members, kept in step at
    /// every single sign-on
    #[serde(default)]
    pub oidc_group: Option<String>,
}

/// The most characters of a team's name.
const NAME_CHARS: usize = 80;
/// The most characters of a team's description.
const DESCRIPTION_CHARS: usize = 2000;

/// `Data Platform & ML` → `data-platform-ml`: lowercase letters and digits, runs of anything
/// else one dash, none at either end.
pub fn slug_of(name: &str) -> String {
    let mut slug = String::new();
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-')
        .chars()
        .take(40)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// 1–40 lowercase letters, digits and single dashes, starting with a letter or digit.
pub fn check_slug(slug: &str) -> Result<(), DomainError> {
    let ok = !slug.is_empty()
        && slug.len() <= 40
        && !slug.starts_with('-')
        && !slug.ends_with('-')
        && !slug.contains("--")
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !ok {
        return Err(DomainError::invalid(
            "slug",
            "use 1–40 lowercase letters, digits and single dashes (e.g. payments)",
        ));
    }
    if slug == MINE {
        return Err(DomainError::invalid(
            "slug",
            "\"mine\" means the teams you are in wherever a team is asked for; choose another",
        ));
    }
    Ok(())
}

/// What a list's `team` means when it is not a team's slug: the teams the person is in.
pub const MINE: &str = "mine";

impl TeamDraft {
    pub fn validated(mut self) -> Result<Self, DomainError> {
        self.name = self.name.trim().to_owned();
        if self.name.is_empty() || self.name.chars().count() > NAME_CHARS {
            return Err(DomainError::invalid(
                "name",
                format!("a name of 1 to {NAME_CHARS} characters is required"),
            ));
        }
        self.slug = match self.slug.trim() {
            "" => slug_of(&self.name),
            given => given.to_owned(),
        };
        if self.slug.is_empty() {
            return Err(DomainError::invalid(
                "slug",
                "the name has no letters or digits to make a slug from; give one (e.g. payments)",
            ));
        }
        check_slug(&self.slug)?;
        self.description = self.description.trim().to_owned();
        if self.description.chars().count() > DESCRIPTION_CHARS {
            return Err(DomainError::invalid(
                "description",
                format!("at most {DESCRIPTION_CHARS} characters"),
            ));
        }
        self.oidc_group = self
            .oidc_group
            .map(|g| g.trim().to_owned())
            .filter(|g| !g.is_empty());
        if self
            .oidc_group
            .as_ref()
            .is_some_and(|g| g.chars().count() > 200)
        {
            return Err(DomainError::invalid("oidc_group", "at most 200 characters"));
        }
        Ok(self)
    }
}

/// A list of configuration narrowed to one team's (`?team=payments`).
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TeamQuery {
    /// Only what this team (by its slug) owns
    pub team: Option<String>,
}

impl TeamQuery {
    /// Whether something owned by the team `owner` (a slug; `None`: nobody) stays in the list.
    pub fn keeps(&self, owner: Option<&str>) -> bool {
        match self
            .team
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            None => true,
            Some(slug) => owner == Some(slug),
        }
    }
}

/// `group=team-slug` pairs (`QUELL_OIDC_TEAM_MAP`), e.g. `payments-eng=payments,sre=platform`:
/// the identity provider's groups whose members are a team's, beside each team's own
/// `oidc_group`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamMap(Vec<(String, String)>);

impl TeamMap {
    pub fn parse(spec: &str) -> Result<Self, DomainError> {
        let mut pairs = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((group, slug)) = part.rsplit_once('=') else {
                return Err(DomainError::invalid(
                    "QUELL_OIDC_TEAM_MAP",
                    format!("{part:?} is not group=team-slug"),
                ));
            };
            let slug = slug.trim();
            check_slug(slug).map_err(|_| {
                DomainError::invalid(
                    "QUELL_OIDC_TEAM_MAP",
                    format!("{slug:?} in {part:?} is not a team's slug"),
                )
            })?;
            pairs.push((group.trim().to_owned(), slug.to_owned()));
        }
        Ok(Self(pairs))
    }

    /// The groups the map gives the team `slug`.
    pub fn groups_of<'a>(&'a self, slug: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(_, s)| s == slug)
            .map(|(g, _)| g.as_str())
    }
}

/// A member's part in a team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TeamRole {
    Member,
    Lead,
}

impl TeamRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Lead => "lead",
        }
    }

    pub fn parse(field: &str, s: &str) -> Result<Self, DomainError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "member" => Ok(Self::Member),
            "lead" => Ok(Self::Lead),
            other => Err(DomainError::invalid(
                field,
                format!("{other:?} is not a team role; use member or lead"),
            )),
        }
    }
}

/// Whether someone may change a team's configuration (its membership, and the schedules,
/// policies, rules, runbooks and channels it owns): global managers and admins always; the
/// team's leads; its members when the team lets them. `part` is the person's part in the team,
/// if they are in it.
pub fn may_manage(role: UserRole, part: Option<TeamRole>, members_manage: bool) -> bool {
    role.allows(UserRole::Manager)
        || (role.allows(UserRole::Responder)
            && match part {
                Some(TeamRole::Lead) => true,
                Some(TeamRole::Member) => members_manage,
                None => false,
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_is_made_from_the_name() {
        assert_eq!(slug_of("Payments"), "payments");
        assert_eq!(slug_of("  Data Platform & ML "), "data-platform-ml");
        assert_eq!(slug_of("Ops / SRE!!"), "ops-sre");
        assert_eq!(slug_of("Équipe Réseau"), "quipe-r-seau");
        assert_eq!(slug_of("!!!"), "");
    }

    #[test]
    fn a_given_slug_must_be_one() {
        assert!(check_slug("payments").is_ok());
        assert!(check_slug("data-platform-2").is_ok());
        for bad in [
            "",
            "-x",
            "x-",
            "a--b",
            "Payments",
            "pay ments",
            &"x".repeat(41),
        ] {
            assert!(check_slug(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_draft_without_a_slug_takes_one_from_its_name() {
        let d = TeamDraft {
            name: " Payments ".into(),
            ..Default::default()
        }
        .validated()
        .unwrap();
        assert_eq!((d.name.as_str(), d.slug.as_str()), ("Payments", "payments"));
        let nameless = TeamDraft {
            name: "!!!".into(),
            ..Default::default()
        };
        assert!(
            matches!(nameless.validated(), Err(DomainError::Invalid { field, .. }) if field == "slug")
        );
        let blank = TeamDraft::default();
        assert!(
            matches!(blank.validated(), Err(DomainError::Invalid { field, .. }) if field == "name")
        );
    }

    #[test]
    fn a_team_map_pairs_groups_with_slugs_and_names_a_wrong_part() {
        let map = TeamMap::parse(" payments-eng=payments, sre=platform ,ops=platform").unwrap();
        assert_eq!(
            map.groups_of("platform").collect::<Vec<_>>(),
            ["sre", "ops"]
        );
        assert_eq!(map.groups_of("data").count(), 0);
        assert_eq!(TeamMap::parse("").unwrap(), TeamMap::default());
        for bad in ["payments", "g=Not A Slug"] {
            assert!(
                matches!(TeamMap::parse(bad), Err(DomainError::Invalid { field, .. }) if field == "QUELL_OIDC_TEAM_MAP"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_team_filter_keeps_only_that_teams_and_no_filter_keeps_all() {
        let payments = TeamQuery {
            team: Some(" payments ".into()),
        };
        assert!(payments.keeps(Some("payments")));
        assert!(!payments.keeps(Some("checkout")));
        assert!(!payments.keeps(None), "the installation's are no team's");
        for none in [
            TeamQuery::default(),
            TeamQuery {
                team: Some(String::new()),
            },
        ] {
            assert!(none.keeps(None) && none.keeps(Some("checkout")));
        }
    }

    #[test]
    fn leads_manage_members_only_when_allowed_and_managers_always() {
        use TeamRole::*;
        assert!(may_manage(UserRole::Manager, None, false));
        assert!(may_manage(UserRole::Admin, None, false));
        assert!(may_manage(UserRole::Responder, Some(Lead), false));
        assert!(!may_manage(UserRole::Responder, Some(Member), false));
        assert!(may_manage(UserRole::Responder, Some(Member), true));
        assert!(!may_manage(UserRole::Responder, None, true));
        // A viewer reads; whatever their part in a team, they change nothing.
        assert!(!may_manage(UserRole::Viewer, Some(Lead), true));
    }
}
