//! Pure rules of access: the four user roles and what each may do, the password policy, the
//! growing delay after failed sign-ins, the shape of API tokens, and where sign-in may lead.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::DomainError;

/// What a signed-in person may do. Each role includes the ones before it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UserRole {
    /// Reads everything.
    Viewer,
    /// Opens and works incidents.
    Responder,
    /// Reviews and publishes postmortems, sees reports.
    Manager,
    /// Users, integrations, services, policies, the audit log.
    Admin,
}

impl UserRole {
    pub const ALL: [UserRole; 4] = [Self::Viewer, Self::Responder, Self::Manager, Self::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Responder => "responder",
            Self::Manager => "manager",
            Self::Admin => "admin",
        }
    }

    pub fn parse(field: &str, value: &str) -> Result<Self, DomainError> {
        let v = value.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == v)
            .ok_or_else(|| {
                DomainError::invalid(
                    field,
                    format!("{value:?} is not a role; use viewer, responder, manager or admin"),
                )
            })
    }

    /// Whether this role includes `needed`.
    pub fn allows(self, needed: UserRole) -> bool {
        self >= needed
    }
}

pub const PASSWORD_MIN_CHARS: usize = 10;
pub const PASSWORD_MAX_CHARS: usize = 128;

/// NIST-style: length only, no composition rules.
pub fn check_password(field: &str, password: &str) -> Result<(), DomainError> {
    let n = password.chars().count();
    if !(PASSWORD_MIN_CHARS..=PASSWORD_MAX_CHARS).contains(&n) {
        return Err(DomainError::invalid(
            field,
            format!(
                "a password is {PASSWORD_MIN_CHARS} to {PASSWORD_MAX_CHARS} characters long (this one has {n})"
            ),
        ));
    }
    Ok(())
}

/// How single sign-on claims become a Quell role: `QUELL_OIDC_ROLE_MAP`, a comma-separated list of
/// `claim-value=role`, e.g. `sre-admins=admin,oncall=responder,staff=viewer`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RoleMap(Vec<(String, UserRole)>);

impl RoleMap {
    pub fn parse(spec: &str) -> Result<Self, DomainError> {
        let mut entries = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (value, role) = part.rsplit_once('=').ok_or_else(|| {
                DomainError::invalid(
                    "QUELL_OIDC_ROLE_MAP",
                    format!("{part:?} is not claim-value=role"),
                )
            })?;
            entries.push((
                value.trim().to_owned(),
                UserRole::parse("QUELL_OIDC_ROLE_MAP", role)?,
            ));
        }
        Ok(Self(entries))
    }

    /// The highest role any of `values` maps to, else `default`.
    pub fn role_for(&self, values: &[String], default: Option<UserRole>) -> Option<UserRole> {
        self.0
            .iter()
            .filter(|(v, _)| values.iter().any(|x| x == v))
            .map(|(_, r)| *r)
            .max()
            .or(default)
    }
}

/// The values of a claim that may be a string or a list of strings (`groups`, `roles`).
pub fn claim_values(claims: &serde_json::Value, name: &str) -> Vec<String> {
    match claims.get(name) {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => vec![],
    }
}

/// Failures allowed before delays start.
pub const FREE_FAILURES: i32 = 3;
/// The longest delay, however many failures.
pub const MAX_DELAY_SECS: i64 = 15 * 60;

/// After `failures` failed sign-ins in a row, how long further attempts are refused: nothing for
/// the first few, then 1 s, 2 s, 4 s … doubling up to 15 minutes.
pub fn delay_after(failures: i32) -> Duration {
    if failures < FREE_FAILURES {
        return Duration::zero();
    }
    let exp = (failures - FREE_FAILURES).min(20) as u32;
    Duration::seconds((1_i64 << exp).min(MAX_DELAY_SECS))
}

/// Seconds left to wait, if `blocked_until` is still ahead of `now`.
pub fn wait_left(blocked_until: DateTime<Utc>, now: DateTime<Utc>) -> Option<i64> {
    let left = (blocked_until - now).num_seconds();
    (blocked_until > now).then_some(left.max(1))
}

/// The prefix every Quell API token starts with, so leaked tokens are recognisable.
pub const TOKEN_PREFIX: &str = "quell_";

/// A new token from 32 random bytes: `quell_` and 64 hex digits.
pub fn token_from_bytes(bytes: &[u8; 32]) -> String {
    let mut s = String::with_capacity(TOKEN_PREFIX.len() + 64);
    s.push_str(TOKEN_PREFIX);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// What is stored of a token: its SHA-256. Lookups compare hashes, never the token itself.
pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The key failed sign-ins are counted under: a kind (`account`, `addr`) and a hash of what was
/// typed or seen, so a 50 KB email is a 71-character key like any other.
pub fn throttle_key(kind: &str, value: &str) -> String {
    let hash: String = token_hash(value)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{kind}:{hash}")
}

/// The part of a token shown in lists.
pub fn token_display_prefix(token: &str) -> String {
    token.chars().take(TOKEN_PREFIX.len() + 6).collect()
}

/// Compares two secrets in time independent of where they differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Where sign-in leads when `next` is missing or not a path on this site.
pub const HOME: &str = "/incidents";

/// The page to go to after sign-in: `next` only if it is a path on this site once resolved as a
/// browser resolves it, written back normalised and percent-encoded so it is a safe `Location`.
/// Control characters (browsers drop tabs and newlines, so `/\t/evil.example` would become
/// `//evil.example`), backslashes (read as slashes) and scheme-relative forms are refused.
pub fn safe_next(next: Option<&str>) -> String {
    let Some(next) = next else {
        return HOME.to_owned();
    };
    if !next.starts_with('/')
        || next.starts_with("//")
        || next.chars().any(|c| c.is_control() || c == '\\')
    {
        return HOME.to_owned();
    }
    let base = url::Url::parse("http://quell.invalid/").expect("a valid base URL");
    match base.join(next) {
        Ok(url) if url.origin() == base.origin() => {
            let mut out = url.path().to_owned();
            if let Some(query) = url.query() {
                out.push('?');
                out.push_str(query);
            }
            out
        }
        _ => HOME.to_owned(),
    }
}

/// The person a request acts as.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub handle: String,
    pub role: UserRole,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_maps_pick_the_highest_matching_role() {
        let map = RoleMap::parse("sre-admins=admin, oncall=responder,staff=viewer").unwrap();
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            map.role_for(&v(&["staff", "oncall"]), None),
            Some(UserRole::Responder)
        );
        assert_eq!(
            map.role_for(&v(&["sre-admins"]), None),
            Some(UserRole::Admin)
        );
        assert_eq!(map.role_for(&v(&["other"]), None), None);
        assert_eq!(
            map.role_for(&v(&[]), Some(UserRole::Viewer)),
            Some(UserRole::Viewer)
        );
        assert!(RoleMap::parse("oncall").is_err());
        assert!(RoleMap::parse("oncall=captain").is_err());
        assert_eq!(RoleMap::parse("").unwrap(), RoleMap::default());
    }

    #[test]
    fn claims_may_be_a_string_or_a_list() {
        let c = serde_json::json!({"groups": ["a", "b", 3], "role": "x"});
        assert_eq!(claim_values(&c, "groups"), vec!["a", "b"]);
        assert_eq!(claim_values(&c, "role"), vec!["x"]);
        assert!(claim_values(&c, "missing").is_empty());
    }

    #[test]
    fn roles_include_the_ones_below() {
        assert!(UserRole::Admin.allows(UserRole::Viewer));
        assert!(UserRole::Responder.allows(UserRole::Responder));
        assert!(!UserRole::Viewer.allows(UserRole::Responder));
        assert!(!UserRole::Manager.allows(UserRole::Admin));
        assert_eq!(UserRole::parse("role", "Admin").unwrap(), UserRole::Admin);
        assert!(UserRole::parse("role", "root").is_err());
    }

    #[test]
    fn passwords_are_judged_by_length_only() {
        assert!(check_password("password", "correct horse").is_ok());
        assert!(check_password("password", "short").is_err());
        assert!(check_password("password", &"x".repeat(129)).is_err());
        assert!(
            check_password("password", "ääääääääää").is_ok(),
            "characters, not bytes"
        );
    }

    #[test]
    fn delays_grow_after_a_few_failures_and_are_capped() {
        assert_eq!(delay_after(0), Duration::zero());
        assert_eq!(delay_after(2), Duration::zero());
        assert_eq!(delay_after(3), Duration::seconds(1));
        assert_eq!(delay_after(4), Duration::seconds(2));
        assert_eq!(delay_after(8), Duration::seconds(32));
        assert_eq!(delay_after(40), Duration::seconds(MAX_DELAY_SECS));
    }

    #[test]
    fn tokens_look_like_quell_tokens_and_hash_stably() {
        let t = token_from_bytes(&[0xab; 32]);
        assert!(t.starts_with("quell_abab"));
        assert_eq!(t.len(), 6 + 64);
        assert_eq!(token_hash(&t), token_hash(&t));
        assert_ne!(token_hash(&t), token_hash("quell_other"));
        assert_eq!(token_display_prefix(&t), "quell_ababab");
    }

    #[test]
    fn constant_time_eq_compares_whole_values() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn sign_in_leads_only_to_paths_on_this_site() {
        assert_eq!(
            safe_next(Some("/incidents/INC-1187")),
            "/incidents/INC-1187"
        );
        assert_eq!(safe_next(Some("/search?q=a b")), "/search?q=a%20b");
        assert_eq!(safe_next(Some("/a/../admin/users")), "/admin/users");
        for hostile in [
            "/\t/evil.example",
            "/\n/x",
            "/\r\nSet-Cookie: x=1",
            "//evil.example",
            "/\\evil.example",
            "/\\/evil.example",
            "https://evil.example/",
            "evil.example",
            "javascript:alert(1)",
            "",
        ] {
            assert_eq!(safe_next(Some(hostile)), HOME, "{hostile:?}");
        }
        assert_eq!(safe_next(None), HOME);
    }
}
