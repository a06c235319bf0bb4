//! Pure rules of routing: parsing a condition as written (`labels.severity = critical`,
//! `checkout_success_rate < 90`), reading an alert's field by name, matching ordered rules
//! (first match wins) and filling a title template.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::domain::{DomainError, Severity};

/// How long after a group's first alert others join it, when a rule does not say.
pub const GROUP_WINDOW_MINUTES: i32 = 10;

/// A rule as written by a person (API body or form).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleDraft {
    pub name: String,
    /// Each as written: `<field> <op> <value>` with =, !=, =~, !~ (regular expressions match
    /// the whole value), <, <=, >, >= (numbers), or `<field> exists`. Fields: `labels.x`,
    /// `annotations.x`, `details.x`, `metadata.x`, `summary`, `source`, `severity`,
    /// `integration`, `format`, or a bare name (labels first, then details)
    #[serde(default)]
    pub conditions: Vec<String>,
    /// A service name or a template such as `{labels.service}`
    #[serde(default)]
    pub service: String,
    /// Sev1..Sev4, or empty / "alert" to take the alert's own severity
    #[serde(default)]
    pub severity: Option<String>,
    /// e.g. `{labels.alertname} on {labels.service}`; empty: the alert's summary
    #[serde(default)]
    pub title_template: String,
    /// The team that owns it, by slug or name; empty: the installation's
    #[serde(default)]
    pub team: String,
    /// Fields whose shared values put alerts into one incident whatever their group keys, e.g.
    /// `["labels.service", "labels.cluster"]` (at most 5)
    #[serde(default)]
    pub group_by: Vec<String>,
    /// How long after a group's first alert others join it, 1 to 1440 minutes (default 10,
    /// [`GROUP_WINDOW_MINUTES`])
    #[serde(default)]
    pub group_window_minutes: Option<i32>,
}

impl RuleDraft {
    /// The draft checked, as a rule that can be tried (id 0: not stored yet).
    pub fn rule(&self) -> Result<Rule, DomainError> {
        let (name, conditions, severity) = check_rule(
            &self.name,
            &self.conditions,
            self.severity.as_deref(),
            &self.service,
            &self.title_template,
        )?;
        let window = self.group_window_minutes.unwrap_or(GROUP_WINDOW_MINUTES);
        let group_by = check_grouping(&self.group_by, window)?;
        Ok(Rule {
            id: 0,
            name,
            conditions,
            service: self.service.trim().to_owned(),
            severity,
            title_template: self.title_template.trim().to_owned(),
            group_by,
            group_window_minutes: window,
        })
    }
}

/// The comparison of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Matches,
    NotMatches,
    Lt,
    Le,
    Gt,
    Ge,
    Exists,
}

impl Op {
    /// Longest first, so `<=` is not read as `<`.
    const TOKENS: [(&'static str, Op); 10] = [
        ("exists", Op::Exists),
        ("==", Op::Eq),
        ("=~", Op::Matches),
        ("!~", Op::NotMatches),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("=", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];
}

/// One condition, parsed from its written form and kept with it.
#[derive(Debug, Clone)]
pub struct Condition {
    pub text: String,
    pub field: String,
    pub op: Op,
    pub value: String,
    number: Option<f64>,
    regex: Option<Regex>,
}

fn is_field_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Parses `<field> <op> <value>` or `<field> exists`. Regular expressions match the whole
/// value (as in Prometheus); numeric comparisons need a number on the right.
pub fn parse_condition(field_name: &str, text: &str) -> Result<Condition, DomainError> {
    let text = text.trim();
    let bad = |msg: String| DomainError::invalid(field_name, msg);
    let end = text.find(|c: char| !is_field_char(c)).unwrap_or(text.len());
    let field = &text[..end];
    if field.is_empty() {
        return Err(bad(format!(
            "{text:?} does not start with a field name, e.g. labels.severity = critical"
        )));
    }
    let rest = text[end..].trim_start();
    let Some((token, op)) = Op::TOKENS.iter().find(|(t, _)| rest.starts_with(t)) else {
        return Err(bad(format!(
            "{text:?} has no comparison; use =, !=, =~, !~, <, <=, >, >= or exists"
        )));
    };
    let raw = rest[token.len()..].trim();
    let value = raw
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(raw)
        .to_owned();
    let mut condition = Condition {
        text: text.to_owned(),
        field: field.to_owned(),
        op: *op,
        value,
        number: None,
        regex: None,
    };
    match op {
        Op::Exists if !raw.is_empty() => {
            return Err(bad(format!("{text:?}: nothing may follow exists")));
        }
        Op::Exists => {}
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let n = condition
                .value
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite());
            condition.number =
                Some(n.ok_or_else(|| bad(format!("{text:?}: {token} needs a number")))?);
        }
        Op::Matches | Op::NotMatches => {
            let compile = |pattern: &str| {
                regex::RegexBuilder::new(pattern)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| bad(format!("{text:?}: not a regular expression ({e})")))
            };
            // The value must be a regular expression by itself before it is anchored: otherwise
            // `a)|(?:.*` would close the anchoring group and match anything.
            compile(&condition.value)?;
            condition.regex = Some(compile(&format!("^(?:{})$", condition.value))?);
        }
        Op::Eq | Op::Ne if condition.value.is_empty() => {
            return Err(bad(format!("{text:?} needs a value after {token}")));
        }
        Op::Eq | Op::Ne => {}
    }
    Ok(condition)
}

/// What routing can read of an alert.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub labels: &'a Value,
    /// Annotations (Alertmanager, Grafana), custom details (PagerDuty) or metadata (generic).
    pub details: &'a Value,
    pub summary: &'a str,
    pub source: &'a str,
    pub severity: &'a str,
    pub status: &'a str,
    pub integration: &'a str,
    pub format: &'a str,
    pub dedup_key: &'a str,
    pub group_key: &'a str,
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    }
}

fn path<'v>(root: &'v Value, dotted: &str) -> Option<&'v Value> {
    // A key that itself holds dots (a label such as `app.kubernetes.io/name`) is tried whole first.
    if let Some(v) = root.get(dotted) {
        return Some(v);
    }
    dotted.split('.').try_fold(root, |v, part| v.get(part))
}

impl Subject<'_> {
    /// The value of a field: `labels.x`, `annotations.x` / `details.x` / `metadata.x` /
    /// `custom_details.x` (dots go deeper), the fixed `summary`, `source`, `severity`, `status`,
    /// `integration`, `format`, `dedup_key`, `group_key`, or a bare name looked up in the labels,
    /// then in the details.
    pub fn get(&self, field: &str) -> Option<String> {
        let fixed = match field {
            "summary" | "title" => Some(self.summary),
            "source" => Some(self.source),
            "severity" => Some(self.severity),
            "status" => Some(self.status),
            "integration" => Some(self.integration),
            "format" => Some(self.format),
            "dedup_key" => Some(self.dedup_key),
            "group_key" => Some(self.group_key),
            _ => None,
        };
        if let Some(v) = fixed {
            return Some(v.to_owned()).filter(|v| !v.is_empty());
        }
        if let Some(name) = field.strip_prefix("labels.") {
            return self.labels.get(name).and_then(scalar);
        }
        for prefix in ["annotations.", "details.", "metadata.", "custom_details."] {
            if let Some(rest) = field.strip_prefix(prefix) {
                return path(self.details, rest).and_then(scalar);
            }
        }
        self.labels
            .get(field)
            .and_then(scalar)
            .or_else(|| path(self.details, field).and_then(scalar))
    }
}

impl Condition {
    pub fn matches(&self, s: &Subject) -> bool {
        let actual = s.get(&self.field);
        match self.op {
            Op::Exists => actual.is_some(),
            Op::Eq => actual.is_some_and(|a| a == self.value),
            Op::Ne => actual.is_none_or(|a| a != self.value),
            Op::Matches => {
                actual.is_some_and(|a| self.regex.as_ref().is_some_and(|r| r.is_match(&a)))
            }
            Op::NotMatches => {
                actual.is_none_or(|a| self.regex.as_ref().is_some_and(|r| !r.is_match(&a)))
            }
            Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                let (Some(a), Some(b)) = (
                    actual.and_then(|a| a.trim().parse::<f64>().ok()),
                    self.number,
                ) else {
                    return false;
                };
                match self.op {
                    Op::Lt => a < b,
                    Op::Le => a <= b,
                    Op::Gt => a > b,
                    _ => a >= b,
                }
            }
        }
    }
}

/// A routing rule, ready to match.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: i64,
    pub name: String,
    pub conditions: Vec<Condition>,
    /// A service name or a template such as `{labels.service}`; empty for none.
    pub service: String,
    /// `None`: the alert's own severity decides.
    pub severity: Option<Severity>,
    pub title_template: String,
    /// Fields whose values, shared, put alerts into one incident (none: their own group keys)
    pub group_by: Vec<String>,
    /// How long after a group's first alert others join it
    pub group_window_minutes: i32,
}

impl Rule {
    pub fn matches(&self, s: &Subject) -> bool {
        self.conditions.iter().all(|c| c.matches(s))
    }
}

/// What routing decided for an alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Decision {
    pub rule_id: Option<i64>,
    pub rule: String,
    /// The service name the rule gave (it may not exist; the incident then has none).
    pub service: Option<String>,
    pub severity: Severity,
    pub title: String,
    /// The group the rule puts the alert in, when it groups by fields
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grouping: Option<Grouping>,
}

/// A group formed by a rule's fields: the key alerts sharing the values share, and the words
/// the incident shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Grouping {
    pub key: String,
    /// e.g. `service = payments-gateway, cluster = eu-1 within 10 min`
    pub words: String,
    pub window_minutes: i32,
}

/// The group `rule` puts the alert in: the values of its fields (a missing one reads as
/// empty), each shortened, so alerts sharing them share the key.
pub fn grouping(rule: &Rule, s: &Subject) -> Option<Grouping> {
    use sha2::{Digest, Sha256};
    if rule.group_by.is_empty() {
        return None;
    }
    let values: Vec<String> = rule
        .group_by
        .iter()
        .map(|f| s.get(f).unwrap_or_default())
        .collect();
    let pairs: Vec<String> = rule
        .group_by
        .iter()
        .zip(&values)
        .map(|(f, v)| {
            let shown = f.strip_prefix("labels.").unwrap_or(f);
            format!("{shown} = {}", crate::domain::shorten(v, 200))
        })
        .collect();
    // The whole values, hashed: a fixed length whatever they hold, and no two sets alike.
    let digest = Sha256::digest(serde_json::to_vec(&values).unwrap_or_default());
    Some(Grouping {
        key: format!("quell-group:{}:{digest:x}", rule.id),
        words: format!(
            "{} within {} min",
            pairs.join(", "),
            rule.group_window_minutes
        ),
        window_minutes: rule.group_window_minutes,
    })
}

/// Checks the fields a rule groups by (at most 5, each a field name routing reads) and its
/// window (1 to 1440 minutes); returns the fields trimmed, empty ones dropped.
pub fn check_grouping(fields: &[String], window_minutes: i32) -> Result<Vec<String>, DomainError> {
    let fields: Vec<String> = fields
        .iter()
        .map(|f| f.trim().to_owned())
        .filter(|f| !f.is_empty())
        .collect();
    if fields.len() > 5 {
        return Err(DomainError::invalid(
            "group_by",
            "group by at most 5 fields",
        ));
    }
    let named = |f: &str| {
        let rest = [
            "labels.",
            "annotations.",
            "details.",
            "metadata.",
            "custom_details.",
        ]
        .iter()
        .find_map(|p| f.strip_prefix(p))
        .unwrap_or(f);
        f.chars().count() <= 100
            && f.chars().all(is_field_char)
            && !rest.is_empty()
            && !f.starts_with('.')
            && !f.ends_with('.')
    };
    if let Some(bad) = fields.iter().find(|f| !named(f)) {
        return Err(DomainError::invalid(
            "group_by",
            format!("{bad:?} is not a field name such as labels.service"),
        ));
    }
    if let Some(twice) = fields
        .iter()
        .enumerate()
        .find_map(|(i, f)| fields[..i].contains(f).then_some(f))
    {
        return Err(DomainError::invalid(
            "group_by",
            format!("{twice:?} is named twice"),
        ));
    }
    if !(1..=1440).contains(&window_minutes) {
        return Err(DomainError::invalid(
            "group_window_minutes",
            format!("{window_minutes} is out of bounds; give 1 to 1440 minutes"),
        ));
    }
    Ok(fields)
}

/// The severity an alert's own word stands for: `critical` → Sev1, `error` → Sev2,
/// `warning` → Sev3, `info` → Sev4; `Sev2`, `2`, `P2` are read as written, and Opsgenie's
/// lowest, `P5`, as Sev4.
pub fn severity_from_alert(word: &str) -> Option<Severity> {
    let w = word.trim().to_ascii_lowercase();
    match w.as_str() {
        "critical" | "crit" | "page" | "fatal" | "emergency" => Some(Severity::Sev1),
        "error" | "high" | "major" => Some(Severity::Sev2),
        "warning" | "warn" | "medium" | "minor" => Some(Severity::Sev3),
        "info" | "low" | "informational" | "p5" => Some(Severity::Sev4),
        _ => Severity::parse("severity", w.strip_prefix('p').unwrap_or(&w)).ok(),
    }
}

/// The severity when neither the rule nor the alert says.
pub const FALLBACK_SEVERITY: Severity = Severity::Sev3;

/// Fills `{field}` placeholders with the alert's values (missing ones become empty).
pub fn render(template: &str, s: &Subject) -> String {
    crate::domain::fill_placeholders(template, |name| {
        (!name.is_empty() && name.chars().all(is_field_char))
            .then(|| s.get(name).unwrap_or_default())
    })
}

/// An incident title: at most 200 characters, one line, never empty.
pub fn fit_title(title: &str, fallback: &str) -> String {
    let clean = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut t = clean(title);
    if t.is_empty() {
        t = clean(fallback);
    }
    if t.is_empty() {
        t = "Alert".to_owned();
    }
    crate::domain::shorten(&t, 200)
}

/// Runs the rules in order; the first whose conditions all hold decides. With no match (only
/// possible when there is no default rule) the alert's own words decide.
pub fn route(rules: &[Rule], s: &Subject) -> Decision {
    let own = severity_from_alert(s.severity).unwrap_or(FALLBACK_SEVERITY);
    match rules.iter().find(|r| r.matches(s)) {
        Some(rule) => {
            let service = render(&rule.service, s).trim().to_owned();
            Decision {
                rule_id: Some(rule.id),
                rule: rule.name.clone(),
                service: Some(service).filter(|v| !v.is_empty()),
                severity: rule.severity.unwrap_or(own),
                title: fit_title(&render(&rule.title_template, s), s.summary),
                grouping: grouping(rule, s),
            }
        }
        None => Decision {
            rule_id: None,
            rule: "none".to_owned(),
            service: None,
            severity: own,
            title: fit_title(s.summary, ""),
            grouping: None,
        },
    }
}

/// Checks a rule as written: a name, conditions that parse, a known severity.
pub fn check_rule(
    name: &str,
    conditions: &[String],
    severity: Option<&str>,
    service: &str,
    title_template: &str,
) -> Result<(String, Vec<Condition>, Option<Severity>), DomainError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(DomainError::invalid(
            "name",
            "give the rule a name of 1 to 100 characters",
        ));
    }
    if conditions.len() > 20 {
        return Err(DomainError::invalid(
            "conditions",
            "a rule has at most 20 conditions",
        ));
    }
    let parsed = conditions
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.trim().is_empty())
        .map(|(i, c)| parse_condition(&format!("conditions[{i}]"), c))
        .collect::<Result<Vec<_>, _>>()?;
    let severity = match severity.map(str::trim).filter(|s| !s.is_empty()) {
        None | Some("alert") => None,
        Some(s) => Some(Severity::parse("severity", s)?),
    };
    if service.chars().count() > 200 {
        return Err(DomainError::invalid("service", "at most 200 characters"));
    }
    if title_template.chars().count() > 500 {
        return Err(DomainError::invalid(
            "title_template",
            "at most 500 characters",
        ));
    }
    Ok((name.to_owned(), parsed, severity))
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::domain::arbitrary::{json, text};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Any condition text parses or is refused naming its field; any rule built from the
        /// accepted ones routes any alert without panicking, to a title that fits.
        #[test]
        fn conditions_and_routing_take_anything(
            conditions in prop::collection::vec(text(), 0..4),
            template in text(),
            labels in json(),
            details in json(),
            summary in text(),
        ) {
            let mut parsed = Vec::new();
            for c in &conditions {
                match parse_condition("conditions[0]", c) {
                    Ok(cond) => parsed.push(cond),
                    Err(DomainError::Invalid { field, .. }) => prop_assert_eq!(field, "conditions[0]"),
                    Err(other) => prop_assert!(false, "not a field error: {other:?}"),
                }
            }
            let rule = Rule {
                id: 1,
                name: "r".into(),
                conditions: parsed,
                service: template.clone(),
                severity: None,
                title_template: template,
                group_by: vec![],
                group_window_minutes: 10,
            };
            let subject = Subject {
                labels: &labels,
                details: &details,
                summary: &summary,
                source: "s",
                severity: "critical",
                status: "firing",
                integration: "i",
                format: "alertmanager",
                dedup_key: "d",
                group_key: "g",
            };
            let decision = route(&[rule], &subject);
            prop_assert!(decision.title.chars().count() <= 300);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subject<'a>(labels: &'a Value, details: &'a Value) -> Subject<'a> {
        Subject {
            labels,
            details,
            summary: "payments-gateway 5xx > 5% for 5 min",
            source: "prometheus",
            severity: "warning",
            status: "firing",
            integration: "prod-alertmanager",
            format: "alertmanager",
            dedup_key: "f1",
            group_key: "g1",
        }
    }

    #[test]
    fn a_rule_grouping_by_fields_gives_alerts_sharing_them_one_key() {
        let details = json!({});
        let (a, b, c) = (
            json!({"service": "payments-gateway", "cluster": "eu-1", "alertname": "A"}),
            json!({"service": "payments-gateway", "cluster": "eu-1", "alertname": "B"}),
            json!({"service": "payments-gateway"}),
        );
        let mut r = rule(7, &[], None);
        assert_eq!(grouping(&r, &subject(&a, &details)), None);
        r.group_by = vec!["labels.service".into(), "labels.cluster".into()];
        let ga = grouping(&r, &subject(&a, &details)).unwrap();
        assert_eq!(Some(&ga), grouping(&r, &subject(&b, &details)).as_ref());
        assert_eq!(
            ga.words,
            "service = payments-gateway, cluster = eu-1 within 10 min"
        );
        let gc = grouping(&r, &subject(&c, &details)).unwrap();
        assert_ne!(ga.key, gc.key, "a missing field reads as empty");
        assert_eq!(route(&[r], &subject(&a, &details)).grouping, Some(ga));
        let fields = vec![" labels.service ".to_owned(), String::new()];
        assert_eq!(check_grouping(&fields, 5).unwrap(), ["labels.service"]);
        assert!(check_grouping(&["a b".to_owned()], 5).is_err());
        assert!(check_grouping(&["labels.".to_owned()], 5).is_err());
        assert!(check_grouping(&["x".to_owned(), "x".to_owned()], 5).is_err());
        assert!(check_grouping(&["x".repeat(101)], 5).is_err());
        assert!(check_grouping(&vec!["x".to_owned(); 6], 5).is_err());
        assert!(check_grouping(&[], 0).is_err());
    }

    fn rule(id: i64, conditions: &[&str], severity: Option<Severity>) -> Rule {
        Rule {
            id,
            name: format!("rule {id}"),
            conditions: conditions
                .iter()
                .map(|c| parse_condition("c", c).unwrap())
                .collect(),
            service: "{labels.service}".into(),
            severity,
            title_template: "{labels.alertname} on {labels.service}".into(),
            group_by: vec![],
            group_window_minutes: 10,
        }
    }

    #[test]
    fn conditions_parse_with_and_without_spaces_and_refuse_nonsense() {
        let c = parse_condition("c", "checkout_success_rate<90").unwrap();
        assert_eq!(
            (c.field.as_str(), c.op, c.value.as_str()),
            ("checkout_success_rate", Op::Lt, "90")
        );
        let c = parse_condition("c", r#"labels.env = "prod""#).unwrap();
        assert_eq!((c.op, c.value.as_str()), (Op::Eq, "prod"));
        assert_eq!(parse_condition("c", "labels.x >= 3").unwrap().op, Op::Ge);
        assert_eq!(
            parse_condition("c", "labels.x exists").unwrap().op,
            Op::Exists
        );
        assert!(parse_condition("c", "rate < ninety").is_err());
        assert!(parse_condition("c", "labels.x =~ (").is_err());
        assert!(parse_condition("c", "= 3").is_err());
        assert!(parse_condition("c", "labels.x").is_err());
        assert!(parse_condition("c", "labels.x =").is_err());
    }

    #[test]
    fn fields_are_read_from_labels_details_and_fixed_names() {
        let labels = json!({"service": "payments-gateway", "severity": "critical"});
        let details = json!({"checkout_success_rate": 87.5, "values": {"B": 12}});
        let s = subject(&labels, &details);
        assert_eq!(s.get("labels.service").as_deref(), Some("payments-gateway"));
        assert_eq!(s.get("checkout_success_rate").as_deref(), Some("87.5"));
        assert_eq!(s.get("details.values.B").as_deref(), Some("12"));
        assert_eq!(s.get("integration").as_deref(), Some("prod-alertmanager"));
        assert_eq!(s.get("labels.nothing"), None);
    }

    #[test]
    fn numeric_regex_and_equality_conditions_match_as_written() {
        let labels = json!({"service": "checkout-api", "alertname": "CheckoutSuccessLow"});
        let details = json!({"checkout_success_rate": "87.5"});
        let s = subject(&labels, &details);
        let holds = |c: &str| parse_condition("c", c).unwrap().matches(&s);
        assert!(holds("checkout_success_rate < 90"));
        assert!(!holds("checkout_success_rate >= 90"));
        assert!(holds("labels.alertname =~ Checkout.*"));
        assert!(
            !holds("labels.alertname =~ Checkout"),
            "regexes match the whole value"
        );
        assert!(
            parse_condition("c", "labels.alertname =~ zzz)|(?:.*").is_err(),
            "a value that closes the anchoring group is not a regular expression"
        );
        assert!(!holds("labels.alertname =~ zzz|Checkout"));
        assert!(holds("labels.alertname =~ zzz|CheckoutSuccessLow"));
        assert!(holds("labels.service != payments-gateway"));
        assert!(
            holds("labels.team !~ payments"),
            "a missing field does not match"
        );
        assert!(!holds("labels.team = payments"));
        assert!(
            !holds("labels.service < 3"),
            "text never compares as a number"
        );
    }

    #[test]
    fn the_first_matching_rule_decides_service_severity_and_title() {
        let labels = json!({"service": "payments-gateway", "alertname": "Http5xxHigh"});
        let details = json!({"checkout_success_rate": 80});
        let s = subject(&labels, &details);
        let rules = [
            rule(1, &["labels.service = checkout-api"], Some(Severity::Sev4)),
            rule(2, &["checkout_success_rate < 90"], Some(Severity::Sev1)),
            rule(3, &[], None),
        ];
        let d = route(&rules, &s);
        assert_eq!(d.rule_id, Some(2));
        assert_eq!(d.severity, Severity::Sev1);
        assert_eq!(d.service.as_deref(), Some("payments-gateway"));
        assert_eq!(d.title, "Http5xxHigh on payments-gateway");
        let d = route(&rules[2..], &s);
        assert_eq!(
            d.severity,
            Severity::Sev3,
            "warning → Sev3 when the rule leaves it to the alert"
        );
    }

    #[test]
    fn titles_fall_back_to_the_summary_and_stay_short() {
        let labels = json!({});
        let details = json!({});
        let s = subject(&labels, &details);
        assert_eq!(render("{labels.alertname}", &s), "");
        assert_eq!(
            fit_title(&render("{labels.alertname}", &s), s.summary),
            s.summary
        );
        assert_eq!(render("a {b c} {", &s), "a {b c} {");
        assert_eq!(fit_title(&"x".repeat(500), "").chars().count(), 200);
    }

    #[test]
    fn alert_severity_words_map_to_severities() {
        assert_eq!(severity_from_alert("critical"), Some(Severity::Sev1));
        assert_eq!(severity_from_alert("P1"), Some(Severity::Sev1));
        assert_eq!(severity_from_alert("P5"), Some(Severity::Sev4));
        assert_eq!(severity_from_alert("error"), Some(Severity::Sev2));
        assert_eq!(severity_from_alert("Warning"), Some(Severity::Sev3));
        assert_eq!(severity_from_alert("info"), Some(Severity::Sev4));
        assert_eq!(severity_from_alert("P2"), Some(Severity::Sev2));
        assert_eq!(severity_from_alert("sev1"), Some(Severity::Sev1));
        assert_eq!(severity_from_alert("whatever"), None);
    }
}
