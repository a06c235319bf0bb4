//! What makes a valid service: a slug name, a tier 1–3, an SLO as a percentage, a request rate
//! and an http(s) runbook link.

use serde::{Deserialize, Serialize};

use crate::changes::domain::{check_latency, check_rate};
use crate::domain::{DomainError, about, grouped, percent};

/// Every field of a service as a person or a script submits it, before checking.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceDraft {
    pub name: String,
    pub tier: i64,
    #[serde(default)]
    pub team: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub slo_target_percent: Option<f64>,
    #[serde(default)]
    pub avg_requests_per_second: Option<f64>,
    /// Arrival rate at the busiest hour, requests per second: the capacity check's λ
    #[serde(default)]
    pub peak_requests_per_second: Option<f64>,
    /// Latency at the busiest hour, seconds: the capacity check's W
    #[serde(default)]
    pub peak_latency_seconds: Option<f64>,
    #[serde(default)]
    pub runbook_url: Option<String>,
    /// The services this one depends on, by name (a change to one of them is a suspect in this
    /// one's incidents); left out, they stay as they are
    #[serde(default)]
    pub depends_on: Option<Vec<String>>,
}

impl ServiceDraft {
    /// Checks every field and returns the draft normalised (trimmed, empty link → none), or the
    /// first field that is wrong.
    pub fn validated(mut self) -> Result<Self, DomainError> {
        self.name = self.name.trim().to_owned();
        let name_ok =
            !self.name.is_empty()
                && self.name.len() <= 63
                && self.name.bytes().enumerate().all(|(i, b)| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && b == b'-')
                });
        if !name_ok {
            return Err(DomainError::invalid(
                "name",
                "use 1–63 lowercase letters, digits and dashes, starting with a letter or digit (e.g. payments-gateway)",
            ));
        }
        if !(1..=3).contains(&self.tier) {
            return Err(DomainError::invalid(
                "tier",
                "tier is 1 (most critical), 2 or 3",
            ));
        }
        self.team = self.team.trim().to_owned();
        if self.team.chars().count() > 100 {
            return Err(DomainError::invalid("team", "at most 100 characters"));
        }
        if self.description.chars().count() > 2000 {
            return Err(DomainError::invalid(
                "description",
                "at most 2000 characters",
            ));
        }
        if let Some(slo) = self.slo_target_percent
            && !(slo > 0.0 && slo < 100.0)
        {
            return Err(DomainError::invalid(
                "slo_target_percent",
                "an SLO target is a percentage above 0 and below 100, e.g. 99.9",
            ));
        }
        if let Some(rate) = self.avg_requests_per_second
            && !(rate.is_finite() && rate >= 0.0)
        {
            return Err(DomainError::invalid(
                "avg_requests_per_second",
                "the average request rate is a number of requests per second, 0 or more",
            ));
        }
        check_rate("peak_requests_per_second", self.peak_requests_per_second)?;
        check_latency("peak_latency_seconds", self.peak_latency_seconds)?;
        self.runbook_url = self
            .runbook_url
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty());
        if let Some(url) = &self.runbook_url
            && (!(url.starts_with("https://") || url.starts_with("http://"))
                || url.len() > 2000
                || url.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(DomainError::invalid(
                "runbook_url",
                "a runbook link is an http:// or https:// URL without spaces",
            ));
        }
        if let Some(deps) = &mut self.depends_on {
            for d in deps.iter_mut() {
                *d = d.trim().to_owned();
            }
            deps.retain(|d| !d.is_empty());
            deps.sort();
            deps.dedup();
            if deps.len() > 50 {
                return Err(DomainError::invalid("depends_on", "at most 50 services"));
            }
        }
        Ok(self)
    }
}

/// Seconds in the month an SLO is counted over (30 days).
pub const MONTH_SECS: f64 = 30.0 * 86_400.0;

/// A service's monthly error budget and the share of it an incident consumed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ErrorBudget {
    /// Failed requests the SLO allows in a month: `(1 − SLO) × average req/s × seconds`.
    pub budget_requests: f64,
    /// failed ÷ budget (1.0 is the whole month's budget)
    pub consumed: f64,
}

impl ErrorBudget {
    /// The share consumed in whole percent: `70`.
    pub fn consumed_percent(&self) -> i64 {
        (self.consumed * 100.0).round() as i64
    }
}

/// `(1 − SLO) × rate × 30 days`, and the failed requests' share of it. `None` when the service
/// has no SLO or rate, or nothing failed is known.
pub fn error_budget(
    slo_percent: Option<f64>,
    rate_per_sec: Option<f64>,
    failed: Option<i64>,
) -> Option<ErrorBudget> {
    let (slo, rate, failed) = (slo_percent?, rate_per_sec?, failed?);
    let budget_requests = (1.0 - slo / 100.0) * rate * MONTH_SECS;
    if budget_requests <= 0.0 {
        return None;
    }
    Some(ErrorBudget {
        budget_requests,
        consumed: failed as f64 / budget_requests,
    })
}

/// The Impact section's budget line:
/// `payments-gateway availability SLO (99.9% monthly): about 70% of the monthly error budget
/// consumed (budget ≈ 155 000 failed requests at 60 req/s average).`
pub fn budget_line(service: &str, slo_percent: f64, rate_per_sec: f64, b: &ErrorBudget) -> String {
    let rate = percent(rate_per_sec);
    format!(
        "{service} availability SLO ({} monthly): about {}% of the monthly error budget consumed (budget ≈ {} failed requests at {} req/s average).",
        percent(slo_percent),
        b.consumed_percent(),
        about(b.budget_requests),
        rate.trim_end_matches('%'),
    )
}

/// The service page's line: `Error budget this month: 12 000 of ≈ 155 000 failed requests
/// used (8%); 92% left (from 1 postmortem).`
pub fn budget_left_line(b: &ErrorBudget, failed: i64, postmortems: i64) -> String {
    let used = b.consumed_percent();
    format!(
        "Error budget this month: {} of ≈ {} failed requests used ({used}%); {}% left (from {postmortems} postmortem{}).",
        grouped(failed),
        about(b.budget_requests),
        (100 - used).max(0),
        if postmortems == 1 { "" } else { "s" },
    )
}

/// Checks that `service` may depend on `depends_on` given every other dependency (`edges`, as
/// (service, depends on) names): not on itself, and closing no cycle. The error names the cycle.
pub fn check_dependencies(
    service: &str,
    depends_on: &[String],
    edges: &[(String, String)],
) -> Result<(), DomainError> {
    if depends_on.iter().any(|d| d == service) {
        return Err(DomainError::invalid(
            "depends_on",
            format!("{service} cannot depend on itself"),
        ));
    }
    // A path from one of its new dependencies back to the service closes a cycle.
    let next = |from: &str| -> Vec<&str> {
        edges
            .iter()
            .filter(|(s, _)| s == from && s != service)
            .map(|(_, d)| d.as_str())
            .collect()
    };
    for start in depends_on {
        let mut paths: Vec<Vec<&str>> = vec![vec![service, start.as_str()]];
        let mut seen = std::collections::HashSet::new();
        while let Some(path) = paths.pop() {
            let last = *path.last().expect("paths are never empty");
            if last == service {
                return Err(DomainError::invalid(
                    "depends_on",
                    format!("that would be a cycle: {}", path.join(" → ")),
                ));
            }
            if !seen.insert(last) {
                continue;
            }
            for n in next(last) {
                let mut longer = path.clone();
                longer.push(n);
                paths.push(longer);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> ServiceDraft {
        ServiceDraft {
            name: "payments-gateway".into(),
            tier: 1,
            slo_target_percent: Some(99.9),
            avg_requests_per_second: Some(60.0),
            runbook_url: Some(" https://runbooks.example/pg ".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_good_draft_is_normalised() {
        let d = draft().validated().unwrap();
        assert_eq!(
            d.runbook_url.as_deref(),
            Some("https://runbooks.example/pg")
        );
    }

    #[test]
    fn each_bad_field_is_named() {
        let cases: Vec<(ServiceDraft, &str)> = vec![
            (
                ServiceDraft {
                    name: "Payments Gateway".into(),
                    ..draft()
                },
                "name",
            ),
            (
                ServiceDraft {
                    name: "-x".into(),
                    ..draft()
                },
                "name",
            ),
            (ServiceDraft { tier: 4, ..draft() }, "tier"),
            (
                ServiceDraft {
                    slo_target_percent: Some(100.0),
                    ..draft()
                },
                "slo_target_percent",
            ),
            (
                ServiceDraft {
                    avg_requests_per_second: Some(-1.0),
                    ..draft()
                },
                "avg_requests_per_second",
            ),
            (
                ServiceDraft {
                    runbook_url: Some("javascript:alert(1)".into()),
                    ..draft()
                },
                "runbook_url",
            ),
        ];
        for (d, field) in cases {
            match d.validated() {
                Err(DomainError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_inc_1187_error_budget_is_155_000_requests_and_70_percent_of_it() {
        let b = error_budget(Some(99.9), Some(60.0), Some(109_400)).unwrap();
        assert_eq!(about(b.budget_requests), "155 000");
        assert_eq!(b.consumed_percent(), 70);
        assert_eq!(
            budget_line("payments-gateway", 99.9, 60.0, &b),
            "payments-gateway availability SLO (99.9% monthly): about 70% of the monthly error budget consumed (budget ≈ 155 000 failed requests at 60 req/s average)."
        );
        assert!(error_budget(None, Some(60.0), Some(1)).is_none());
        let month = error_budget(Some(99.9), Some(60.0), Some(12_000)).unwrap();
        assert_eq!(
            budget_left_line(&month, 12_000, 1),
            "Error budget this month: 12 000 of ≈ 155 000 failed requests used (8%); 92% left (from 1 postmortem)."
        );
        assert!(error_budget(Some(100.0), Some(60.0), Some(1)).is_none());
    }

    #[test]
    fn dependencies_may_not_close_a_cycle_and_the_error_names_it() {
        let edges = vec![
            ("checkout-api".to_owned(), "payments-worker".to_owned()),
            ("payments-worker".to_owned(), "payments-gateway".to_owned()),
        ];
        let deps = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(check_dependencies("payments-gateway", &deps(&["ledger"]), &edges).is_ok());
        assert!(check_dependencies("checkout-api", &deps(&["payments-gateway"]), &edges).is_ok());
        match check_dependencies("payments-gateway", &deps(&["checkout-api"]), &edges) {
            Err(DomainError::Invalid { field, message }) => {
                assert_eq!(field, "depends_on");
                assert!(
                    message.ends_with(
                        "payments-gateway → checkout-api → payments-worker → payments-gateway"
                    ),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(check_dependencies("ledger", &deps(&["ledger"]), &edges).is_err());
        // The service's own old edges do not count: they are being replaced.
        let mine = vec![("ledger".to_owned(), "checkout-api".to_owned())];
        assert!(check_dependencies("ledger", &deps(&[]), &mine).is_ok());
    }
}
