//! Configuration as code, the pure part: reading a `quell.yaml` (each object with the line it
//! starts on, each refusal naming its line), the canonical form objects are compared in, the
//! plan (what to create, update or delete, which fields differ, and the routing rules' order),
//! and writing the file.
//!
//! Secrets are never in the file: a channel's address may be named by `url_env` and an
//! integration's key by `key_env`, environment variables read when the file is applied.
//!
//! An object's canonical form is its draft as the API takes it, checked, serialised, with the
//! fields left at their defaults (null, "", [], false) left out: so a file written by hand and
//! one `quell config export` wrote compare alike, and an exported file reads back as itself.

use std::collections::BTreeMap;
use std::fmt;

use marked_yaml::{LoaderOptions, Node};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::domain::DomainError;
use crate::integrations::domain::{Flapping, Format, OnAllResolved};
use crate::notify::domain::{ChannelKind, SubscriptionDraft};
use crate::oncall::domain::ScheduleDraft;
use crate::paging::domain::PolicyDraft;
use crate::routing::domain::{GROUP_WINDOW_MINUTES, RuleDraft};
use crate::runbooks::domain::{Owner, RunbookDraft};
use crate::services::domain::ServiceDraft;
use crate::teams::domain::TeamDraft;

/// What a file may hold, in the order they are made (a later kind names earlier ones: a
/// policy names schedules, a service its team and policy, a runbook its service or rule, a
/// channel's subscription services); deleted in the reverse order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Teams,
    Schedules,
    EscalationPolicies,
    Services,
    RoutingRules,
    Runbooks,
    Channels,
    Integrations,
}

pub const KINDS: [Kind; 8] = [
    Kind::Teams,
    Kind::Schedules,
    Kind::EscalationPolicies,
    Kind::Services,
    Kind::RoutingRules,
    Kind::Runbooks,
    Kind::Channels,
    Kind::Integrations,
];

impl Kind {
    /// The file's key for its list.
    pub fn key(self) -> &'static str {
        match self {
            Self::Teams => "teams",
            Self::Schedules => "schedules",
            Self::EscalationPolicies => "escalation_policies",
            Self::Services => "services",
            Self::RoutingRules => "routing_rules",
            Self::Runbooks => "runbooks",
            Self::Channels => "channels",
            Self::Integrations => "integrations",
        }
    }

    /// One of them, as the plan says it.
    pub fn one(self) -> &'static str {
        match self {
            Self::Teams => "team",
            Self::Schedules => "schedule",
            Self::EscalationPolicies => "escalation policy",
            Self::Services => "service",
            Self::RoutingRules => "routing rule",
            Self::Runbooks => "runbook",
            Self::Channels => "channel",
            Self::Integrations => "integration",
        }
    }

    fn of_key(key: &str) -> Option<Self> {
        KINDS.into_iter().find(|k| k.key() == key)
    }
}

/// A field of a service that is not its draft's: the escalation policy that pages for it.
pub const SERVICE_POLICY: &str = "escalation_policy";

/// The fields of a team that are not its draft's: who leads it and who else is in it, each a
/// list of people (by handle or email; each name's line is kept as the field `leads[name]`). A
/// list the file does not write is left as Quell has it (`members: []` empties it); a team that
/// follows an identity provider's group (`oidc_group`, or the installation's team map) takes
/// its people from there, and its entry may not name them.
pub const TEAM_LEADS: &str = "leads";
pub const TEAM_MEMBERS: &str = "members";

/// A field of a routing rule that is not its draft's: `default: true` marks the rule that
/// takes every alert no other rule took (Quell has exactly one; it is tried last).
pub const RULE_DEFAULT: &str = "default";

/// The fields that name an environment variable holding a secret, and the field each one
/// stands for: a channel's address (a Slack or webhook URL carries its token), an
/// integration's key.
pub const SECRET_REFERENCES: [(Kind, &str, &str); 2] = [
    (Kind::Channels, "url_env", "url"),
    (Kind::Integrations, "key_env", "key"),
];

/// Whether `name` can name an environment variable: letters, digits and `_`, not starting
/// with a digit, at most 200.
fn variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 200
}

/// The variable an exported file names for a channel's address: `QUELL_CHANNEL_<NAME>_URL`,
/// the name upper-cased with every other character `_`.
pub fn url_variable(channel: &str) -> String {
    let name: String = channel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("QUELL_CHANNEL_{name}_URL")
}

/// A channel as a file has it: its address (`url`, or `url_env` naming the variable that
/// holds it), its owning team and what it is told.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelFile {
    pub name: String,
    /// webhook, slack or email
    pub kind: String,
    /// An email address, or a URL; a channel from the file without it must name `url_env`
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub team: Option<String>,
    #[serde(default)]
    pub subscriptions: Vec<SubscriptionDraft>,
}

impl ChannelFile {
    /// Checked, in canonical form: the kind in lower case, each subscription's lists sorted,
    /// the subscriptions in one order (they are a set), an email address without `mailto:`.
    pub fn checked(self) -> Result<Self, DomainError> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(DomainError::invalid("name", "1 to 100 characters"));
        }
        let kind = ChannelKind::parse(&self.kind)?;
        let url = self.url.map(|u| {
            let u = u.trim();
            match kind {
                ChannelKind::Email => u.strip_prefix("mailto:").unwrap_or(u).to_owned(),
                _ => u.to_owned(),
            }
        });
        let mut subscriptions = Vec::new();
        for (i, sub) in self.subscriptions.iter().enumerate() {
            let mut sub = sub.checked().map_err(|e| match e {
                DomainError::Invalid { field, message } => {
                    DomainError::invalid(&format!("subscriptions[{i}].{field}"), message)
                }
                other => other,
            })?;
            for list in [
                &mut sub.events,
                &mut sub.services,
                &mut sub.severities,
                &mut sub.audiences,
            ] {
                list.sort();
            }
            subscriptions.push(sub);
        }
        subscriptions.sort_by_key(|s| serde_json::to_string(s).unwrap_or_default());
        subscriptions.dedup();
        Ok(Self {
            name: name.to_owned(),
            kind: kind.as_str().to_owned(),
            url,
            team: self
                .team
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty()),
            subscriptions,
        })
    }
}

/// An integration as a file has it: its key is never here (`key_env` may name the variable
/// that holds it); `disabled: true` stops it taking alerts.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntegrationFile {
    pub name: String,
    /// alertmanager, grafana, pagerduty-events-v2, generic or opsgenie
    pub format: String,
    /// mitigate (the default), resolve or nothing
    #[serde(default)]
    pub on_all_resolved: Option<String>,
    #[serde(default)]
    pub flapping: Option<Flapping>,
    #[serde(default)]
    pub disabled: bool,
}

impl IntegrationFile {
    /// Checked, in canonical form: what is at its default left out.
    pub fn checked(self) -> Result<Self, DomainError> {
        let name = crate::integrations::domain::check_name(&self.name)?;
        let format = Format::parse(&self.format)?;
        let on_all_resolved = match self.on_all_resolved.as_deref() {
            None => OnAllResolved::Mitigate,
            Some(v) => OnAllResolved::parse(v)?,
        };
        let flapping = self.flapping.unwrap_or_default().check()?;
        Ok(Self {
            name,
            format: format.as_str().to_owned(),
            on_all_resolved: (on_all_resolved != OnAllResolved::Mitigate)
                .then(|| on_all_resolved.as_str().to_owned()),
            flapping: (flapping != Flapping::default()).then_some(flapping),
            disabled: self.disabled,
        })
    }
}

/// A routing rule checked, in canonical form (its conditions as Quell keeps them, the
/// severity named as Quell names it, the window left out at its default).
pub fn rule_checked(d: RuleDraft) -> Result<RuleDraft, DomainError> {
    let rule = d.rule()?;
    let window = rule.group_window_minutes;
    Ok(RuleDraft {
        name: rule.name,
        conditions: rule.conditions.into_iter().map(|c| c.text).collect(),
        service: rule.service,
        severity: rule.severity.map(|s| s.as_str().to_owned()),
        title_template: rule.title_template,
        team: d.team.trim().to_owned(),
        group_by: rule.group_by,
        group_window_minutes: (window != GROUP_WINDOW_MINUTES).then_some(window),
    })
}

/// A runbook checked, in canonical form, with the name it goes by in a plan: its own name and
/// its owner's, as several services may each have a "High error rate". A file names a rule
/// by its name (`rule:`), never by an id, which differs between installations.
pub fn runbook_checked(d: RunbookDraft) -> Result<(String, RunbookDraft), DomainError> {
    let c = d.checked()?;
    let (service, rule, owner) = match c.owner {
        Owner::Service(s) => (Some(s.clone()), None, s),
        Owner::RuleNamed(r) => (None, Some(r.clone()), format!("rule {r}")),
        Owner::Rule(_) => {
            return Err(DomainError::invalid(
                "rule_id",
                "name the routing rule by its name (rule: …); ids differ between installations",
            ));
        }
    };
    let name = format!("{} ({owner})", c.name);
    let d = RunbookDraft {
        name: c.name,
        link: Some(c.link).filter(|l| !l.is_empty()),
        service,
        rule_id: None,
        rule,
        steps: c.steps,
    };
    Ok((name, d))
}

/// One object, in canonical form.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub kind: Kind,
    pub name: String,
    pub value: Map<String, Value>,
}

/// One object of a file: where it starts, where each of its fields is, and the environment
/// variables it names for its secrets (by the field each stands for: `url`, `key`).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub object: Object,
    pub line: usize,
    pub fields: BTreeMap<String, usize>,
    pub secrets: BTreeMap<String, String>,
}

impl Entry {
    /// The line of `field` (a refusal's field may be `layers[0].start`: its first part), or
    /// the object's own.
    pub fn line_of(&self, field: &str) -> usize {
        if let Some(line) = self.fields.get(field) {
            return *line;
        }
        let top = field.split(['.', '[']).next().unwrap_or(field);
        self.fields.get(top).copied().unwrap_or(self.line)
    }
}

/// A file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The kinds the file has a list for (only these are pruned)
    pub kinds: Vec<Kind>,
    pub entries: Vec<Entry>,
}

/// Why a file (or one object in it) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub line: usize,
    pub message: String,
}

impl Refusal {
    fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

impl Refusal {
    /// As a compiler says it: `quell.yaml:12: service: tier: …` (no line: about no object of
    /// the file, such as a delete).
    pub fn in_file(&self, file: &str) -> String {
        match self.line {
            0 => format!("{file}: {}", self.message),
            n => format!("{file}:{n}: {}", self.message),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

fn line_of(node: &Node) -> usize {
    node.span().start().map_or(1, |m| m.line())
}

/// Reads a file: every object checked as the API would check it (fields, lengths, a
/// schedule's layers), each refusal naming its line. Names that must exist in Quell (people,
/// teams, schedules) are checked when the plan is tried.
pub fn read(text: &str) -> Result<Document, Vec<Refusal>> {
    // A quoted value is text: `"null"` is not null, `"1"` not a number.
    let options = LoaderOptions::default()
        .error_on_duplicate_keys(true)
        .prevent_coercion(true);
    let root = match marked_yaml::parse_yaml_with_options(0, text, options) {
        Ok(root) => root,
        Err(e) => return Err(vec![load_refusal(&e)]),
    };
    let Some(top) = root.as_mapping() else {
        return Err(vec![Refusal::at(1, "the file must be a mapping of lists")]);
    };
    let mut doc = Document::default();
    let mut refusals = Vec::new();
    for (key, list) in top.iter() {
        let Some(kind) = Kind::of_key(key.as_str()) else {
            let known: Vec<&str> = KINDS.iter().map(|k| k.key()).collect();
            refusals.push(Refusal::at(
                line_of(&Node::Scalar(key.clone())),
                format!(
                    "unknown list {:?}: a file holds {}",
                    key.as_str(),
                    known.join(", ")
                ),
            ));
            continue;
        };
        doc.kinds.push(kind);
        let items: Vec<&Node> = match list {
            Node::Sequence(s) => s.iter().collect(),
            // `teams:` with nothing under it: an empty list.
            Node::Scalar(s) if s.as_str().is_empty() => Vec::new(),
            _ => {
                refusals.push(Refusal::at(
                    line_of(list),
                    format!("{} must be a list", kind.key()),
                ));
                continue;
            }
        };
        for item in items {
            match entry(kind, item) {
                Ok(e) => doc.entries.push(e),
                Err(r) => refusals.push(r),
            }
        }
    }
    refusals.extend(default_rule_refusals(&doc));
    // One variable, one secret: two channels reading one address would send one team's
    // incidents to another's.
    let mut variables: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &doc.entries {
        for (field, var) in &e.secrets {
            let at = e.line_of(&format!("{field}_env"));
            if let Some(first) = variables.insert(var.as_str(), at) {
                refusals.push(Refusal::at(
                    at,
                    format!(
                        "{}: {field}_env: {var} is named at line {first} too; each secret has a variable of its own",
                        e.object.kind.one()
                    ),
                ));
            }
        }
    }
    let mut seen: BTreeMap<(Kind, &str), usize> = BTreeMap::new();
    for e in &doc.entries {
        let key = (e.object.kind, e.object.name.as_str());
        if let Some(first) = seen.insert(key, e.line) {
            refusals.push(Refusal::at(
                e.line,
                format!(
                    "{} {:?} is written twice (first at line {first})",
                    e.object.kind.one(),
                    e.object.name
                ),
            ));
        }
    }
    if refusals.is_empty() {
        Ok(doc)
    } else {
        refusals.sort_by_key(|r| r.line);
        Err(refusals)
    }
}

/// The default rule is written once at most, and last: it is tried after every other rule.
fn default_rule_refusals(doc: &Document) -> Vec<Refusal> {
    let rules: Vec<&Entry> = doc
        .entries
        .iter()
        .filter(|e| e.object.kind == Kind::RoutingRules)
        .collect();
    let defaults: Vec<&&Entry> = rules
        .iter()
        .filter(|e| e.object.value.get(RULE_DEFAULT) == Some(&Value::Bool(true)))
        .collect();
    let mut refusals = Vec::new();
    if let [first, rest @ ..] = defaults.as_slice() {
        for e in rest {
            refusals.push(Refusal::at(
                e.line_of(RULE_DEFAULT),
                format!(
                    "routing rule: default: Quell has one default rule, and line {} names it",
                    first.line
                ),
            ));
        }
        if rules.last().map(|e| e.line) != Some(first.line) {
            refusals.push(Refusal::at(
                first.line_of(RULE_DEFAULT),
                "routing rule: default: the default rule is tried after every other, so it is the last of routing_rules",
            ));
        }
    }
    refusals
}

fn load_refusal(e: &marked_yaml::LoadError) -> Refusal {
    use marked_yaml::LoadError as L;
    let (mark, what) = match e {
        L::TopLevelMustBeMapping(m) => (m, "the file must be a mapping of lists".to_owned()),
        L::TopLevelMustBeSequence(m) => (m, "a sequence was not expected here".to_owned()),
        L::UnexpectedAnchor(m) => (m, "anchors and aliases are not taken".to_owned()),
        L::MappingKeyMustBeScalar(m) => (m, "a key must be a plain value".to_owned()),
        L::UnexpectedTag(m) => (m, "tags are not taken".to_owned()),
        L::ScanError(m, s) => (m, format!("not YAML: {s}")),
        L::DuplicateKey(d) => {
            let key = &d.key;
            return Refusal::at(
                key.span().start().map_or(1, |m| m.line()),
                format!("{:?} is written twice in one mapping", key.as_str()),
            );
        }
    };
    Refusal::at(mark.line(), what)
}

/// Whether a scalar is YAML's null written plainly (`null`, `~`, or nothing): a field so
/// written is taken as left out (marked-yaml reads every scalar as text).
fn plain_null(node: &Node) -> bool {
    matches!(node, Node::Scalar(s)
        if s.may_coerce() && matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL"))
}

/// The node with every mapping's plain-null fields left out, at every depth.
fn without_nulls(node: &Node) -> Node {
    match node {
        Node::Mapping(m) => {
            let mut kept = m.clone();
            kept.retain(|_, v| !plain_null(v));
            for v in kept.values_mut() {
                *v = without_nulls(v);
            }
            Node::Mapping(kept)
        }
        Node::Sequence(items) => Node::Sequence(marked_yaml::types::MarkedSequenceNode::new(
            *items.span(),
            items.iter().map(without_nulls).collect(),
        )),
        scalar => scalar.clone(),
    }
}

/// One object of `kind` from its node, checked.
fn entry(kind: Kind, node: &Node) -> Result<Entry, Refusal> {
    let line = line_of(node);
    let node = &without_nulls(node);
    let Some(map) = node.as_mapping() else {
        return Err(Refusal::at(
            line,
            format!("each of {} is a mapping of fields", kind.key()),
        ));
    };
    let fields: BTreeMap<String, usize> = map
        .iter()
        .map(|(k, v)| {
            let at = k.span().start().map_or_else(|| line_of(v), |m| m.line());
            (k.as_str().to_owned(), at)
        })
        .collect();
    let fail = |field: &str, message: String| {
        let top = field.split(['.', '[']).next().unwrap_or(field);
        let at = fields.get(top).copied().unwrap_or(line);
        Refusal::at(at, format!("{}: {field}: {message}", kind.one()))
    };
    // The fields that are not the draft's: taken out before the draft is read.
    let mut map = map.clone();
    let mut text_of = |field: &str, what: &str| match map.remove(field) {
        None => Ok(None),
        Some(Node::Scalar(s)) => Ok(Some(s.as_str().trim().to_owned())),
        Some(_) => Err(fail(field, what.to_owned())),
    };
    let mut secrets = BTreeMap::new();
    for (of, field, stands_for) in SECRET_REFERENCES {
        if of != kind {
            continue;
        }
        if let Some(name) = text_of(field, "the name of an environment variable")? {
            if !variable_name(&name) {
                return Err(fail(
                    field,
                    format!("{name:?} cannot name an environment variable (letters, digits and _)"),
                ));
            }
            secrets.insert(stands_for.to_owned(), name);
        }
    }
    let policy = match kind {
        Kind::Services => text_of(SERVICE_POLICY, "the name of an escalation policy")?,
        _ => None,
    };
    let mut people: Vec<(&str, Vec<String>)> = Vec::new();
    let mut person_lines: Vec<(String, usize)> = Vec::new();
    if kind == Kind::Teams {
        for field in [TEAM_LEADS, TEAM_MEMBERS] {
            let not_people = || fail(field, "a list of people, by handle or email".to_owned());
            let mut names = Vec::new();
            match map.remove(field) {
                None => {}
                Some(Node::Sequence(items)) => {
                    for n in items.iter() {
                        let Node::Scalar(s) = n else {
                            return Err(not_people());
                        };
                        let name = s.as_str().trim().to_owned();
                        if name.is_empty() {
                            return Err(not_people());
                        }
                        person_lines.push((format!("{field}[{name}]"), line_of(n)));
                        names.push(name);
                    }
                }
                Some(_) => return Err(not_people()),
            }
            people.push((field, names));
        }
    }
    let default_rule = if kind == Kind::RoutingRules {
        match map.remove(RULE_DEFAULT) {
            None => false,
            Some(Node::Scalar(s)) if s.may_coerce() && s.as_str() == "true" => true,
            Some(Node::Scalar(s)) if s.may_coerce() && s.as_str() == "false" => false,
            Some(_) => return Err(fail(RULE_DEFAULT, "true or false (unquoted)".to_owned())),
        }
    } else {
        false
    };
    if kind == Kind::Channels && secrets.contains_key("url") && map.contains_key("url") {
        return Err(fail(
            "url_env",
            "give the address (url) or the variable that holds it (url_env), not both".to_owned(),
        ));
    }
    if kind == Kind::Channels && !secrets.contains_key("url") && !map.contains_key("url") {
        return Err(fail(
            "url",
            "give the channel's address (url) or the environment variable that holds it (url_env)"
                .to_owned(),
        ));
    }
    let node = &Node::Mapping(map);
    let object = match kind {
        Kind::Teams => {
            let d: TeamDraft = draft(kind, node, line)?;
            let d = d.validated().map_err(|e| invalid(&fail, e))?;
            let mut o = canonical(kind, &d.slug, &d);
            let named = people.iter().any(|(_, names)| !names.is_empty());
            if named && d.oidc_group.is_some() {
                return Err(fail(
                    if people[0].1.is_empty() { TEAM_MEMBERS } else { TEAM_LEADS },
                    "this team follows the identity provider's group (oidc_group), which says who is in it; leave leads and members out".to_owned(),
                ));
            }
            for (field, names) in people {
                set_people(&mut o, field, names).map_err(|m| fail(field, m))?;
            }
            if let Some(both) = both_lead_and_member(&o) {
                return Err(fail(
                    TEAM_MEMBERS,
                    format!("{both:?} is a lead already; a person is in a team once"),
                ));
            }
            o
        }
        Kind::Schedules => {
            let d: ScheduleDraft = draft(kind, node, line)?;
            d.schedule().map_err(|e| invalid(&fail, e))?;
            let d = ScheduleDraft {
                name: d.name.trim().to_owned(),
                ..d
            };
            canonical(kind, &d.name, &d)
        }
        Kind::EscalationPolicies => {
            let d: PolicyDraft = draft(kind, node, line)?;
            let d = d.checked().map_err(|e| invalid(&fail, e))?;
            canonical(kind, &d.name, &d)
        }
        Kind::Services => {
            let d: ServiceDraft = draft(kind, node, line)?;
            let d = d.validated().map_err(|e| invalid(&fail, e))?;
            let mut o = canonical(kind, &d.name, &d);
            if let Some(p) = policy.filter(|p| !p.is_empty()) {
                o.value.insert(SERVICE_POLICY.into(), Value::String(p));
            }
            o
        }
        Kind::RoutingRules => {
            let d: RuleDraft = draft(kind, node, line)?;
            let d = rule_checked(d).map_err(|e| invalid(&fail, e))?;
            rule_object(&d, default_rule)
        }
        Kind::Runbooks => {
            let d: RunbookDraft = draft(kind, node, line)?;
            let (name, d) = runbook_checked(d).map_err(|e| invalid(&fail, e))?;
            canonical(kind, &name, &d)
        }
        Kind::Channels => {
            let d: ChannelFile = draft(kind, node, line)?;
            let d = d.checked().map_err(|e| invalid(&fail, e))?;
            canonical(kind, &d.name, &d)
        }
        Kind::Integrations => {
            let d: IntegrationFile = draft(kind, node, line)?;
            let d = d.checked().map_err(|e| invalid(&fail, e))?;
            canonical(kind, &d.name, &d)
        }
    };
    let mut fields = fields;
    fields.extend(person_lines);
    Ok(Entry {
        object,
        line,
        fields,
        secrets,
    })
}

fn invalid(fail: &impl Fn(&str, String) -> Refusal, e: DomainError) -> Refusal {
    match e {
        DomainError::Invalid { field, message } => fail(&field, message),
        DomainError::Conflict(message) => fail("name", message),
    }
}

/// A routing rule's object: its draft, and `default: true` for the default rule.
pub fn rule_object(d: &RuleDraft, default_rule: bool) -> Object {
    let mut o = canonical(Kind::RoutingRules, &d.name, d);
    if default_rule {
        o.value.insert(RULE_DEFAULT.into(), Value::Bool(true));
    }
    o
}

/// Sets a team's `leads` or `members` (sorted; none: the field left out); an error when one
/// person is named twice.
pub fn set_people(team: &mut Object, field: &str, mut names: Vec<String>) -> Result<(), String> {
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{:?} is named twice", w[0]));
    }
    if names.is_empty() {
        team.value.remove(field);
    } else {
        team.value.insert(field.into(), Value::from(names));
    }
    Ok(())
}

/// The texts of a list field: the people a team's `leads` or `members` names, the services a
/// service's `depends_on` does.
pub fn names_in(o: &Object, field: &str) -> Vec<String> {
    o.value
        .get(field)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A person a team's entry names both as a lead and as a member.
pub fn both_lead_and_member(team: &Object) -> Option<String> {
    let leads = names_in(team, TEAM_LEADS);
    names_in(team, TEAM_MEMBERS)
        .into_iter()
        .find(|m| leads.contains(m))
}

/// Whether `o` is the default routing rule.
pub fn is_default_rule(o: &Object) -> bool {
    o.kind == Kind::RoutingRules && o.value.get(RULE_DEFAULT) == Some(&Value::Bool(true))
}

fn draft<T: DeserializeOwned>(kind: Kind, node: &Node, line: usize) -> Result<T, Refusal> {
    marked_yaml::from_node(node).map_err(|e| {
        let at = e.start_mark().map_or(line, |m| m.line());
        let path = e
            .path()
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_owned);
        let error = e.into_inner();
        let message = match path {
            Some(p) => format!("{}: {p}: {error}", kind.one()),
            None => format!("{}: {error}", kind.one()),
        };
        Refusal::at(at, message)
    })
}

/// An object in canonical form: its draft serialised, fields at their defaults left out.
pub fn canonical(kind: Kind, name: &str, draft: &impl Serialize) -> Object {
    let value = match serde_json::to_value(draft) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let value = value
        .into_iter()
        .filter(|(_, v)| !at_default(v))
        .map(|(k, mut v)| {
            strip_nulls(&mut v);
            (k, v)
        })
        .collect();
    Object {
        kind,
        name: name.to_owned(),
        value,
    }
}

/// Leaves out every null field of the objects within (a field left out reads back as none).
fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

fn at_default(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

/// What applying does with one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Create,
    Update,
    Delete,
    /// In Quell, not in the file, and pruning was asked for, but Quell cannot delete it
    Keep,
    /// The routing rules put in the file's order (`fields`: the names, as they will be tried)
    Reorder,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Keep => "keep",
            Self::Reorder => "reorder",
        }
    }
}

/// One line of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub verb: Verb,
    pub kind: Kind,
    pub name: String,
    /// Where the object is in the file (none for a delete)
    pub line: Option<usize>,
    /// The fields that differ (an update), in alphabetical order
    pub fields: Vec<String>,
    /// Why an object left out is kept
    pub note: String,
}

/// The plan: each object of the file that differs from Quell's (created or updated, in the
/// order of [`KINDS`]), then, when `prune`, each object of a kind the file lists that the
/// file does not have (deleted, in the reverse order). `current` is Quell's, in canonical form.
pub fn plan(current: &[Object], doc: &Document, prune: bool) -> Vec<Change> {
    let mut changes = Vec::new();
    for kind in KINDS {
        for e in doc.entries.iter().filter(|e| e.object.kind == kind) {
            let o = &e.object;
            match current.iter().find(|c| c.kind == kind && c.name == o.name) {
                None => changes.push(Change {
                    verb: Verb::Create,
                    kind,
                    name: o.name.clone(),
                    line: Some(e.line),
                    fields: Vec::new(),
                    note: String::new(),
                }),
                Some(c) if c.value != o.value => {
                    let mut fields: Vec<String> = o
                        .value
                        .keys()
                        .chain(c.value.keys().filter(|k| !o.value.contains_key(*k)))
                        .filter(|k| o.value.get(*k) != c.value.get(*k))
                        .cloned()
                        .collect();
                    fields.dedup();
                    changes.push(Change {
                        verb: Verb::Update,
                        kind,
                        name: o.name.clone(),
                        line: Some(e.line),
                        fields,
                        note: String::new(),
                    });
                }
                Some(_) => {}
            }
        }
    }
    in_dependency_order(&mut changes, doc);
    if prune {
        for kind in KINDS.into_iter().rev().filter(|k| doc.kinds.contains(k)) {
            for c in current.iter().filter(|c| c.kind == kind) {
                let kept = doc
                    .entries
                    .iter()
                    .any(|e| e.object.kind == kind && e.object.name == c.name);
                if !kept {
                    let note = keep_because(c, current, doc);
                    changes.push(Change {
                        verb: if note.is_empty() {
                            Verb::Delete
                        } else {
                            Verb::Keep
                        },
                        kind,
                        name: c.name.clone(),
                        line: None,
                        fields: Vec::new(),
                        note,
                    });
                }
            }
        }
    }
    if let Some(order) = rule_order(current, doc, &changes) {
        changes.push(order);
    }
    changes
}

/// The routing rules are tried in the file's order: its rules first, as written, then those
/// Quell has that it leaves out (kept without `--prune`), in their order; the default rule
/// last. A change when that is not the order they will be in once the rest is applied (new
/// rules are added after the others).
fn rule_order(current: &[Object], doc: &Document, changes: &[Change]) -> Option<Change> {
    if !doc.kinds.contains(&Kind::RoutingRules) {
        return None;
    }
    let deleted = |name: &str| {
        changes
            .iter()
            .any(|c| c.kind == Kind::RoutingRules && c.verb == Verb::Delete && c.name == name)
    };
    let listed: Vec<&Entry> = doc
        .entries
        .iter()
        .filter(|e| e.object.kind == Kind::RoutingRules && !is_default_rule(&e.object))
        .collect();
    let mut then: Vec<&str> = current
        .iter()
        .filter(|o| o.kind == Kind::RoutingRules && !is_default_rule(o) && !deleted(&o.name))
        .map(|o| o.name.as_str())
        .collect();
    let mut wanted: Vec<&str> = listed.iter().map(|e| e.object.name.as_str()).collect();
    for name in &wanted {
        if !then.contains(name) {
            then.push(name);
        }
    }
    for name in &then {
        if !wanted.contains(name) {
            wanted.push(name);
        }
    }
    (wanted != then).then(|| Change {
        verb: Verb::Reorder,
        kind: Kind::RoutingRules,
        name: "order".to_owned(),
        line: listed.first().map(|e| e.line),
        fields: wanted.iter().map(|n| (*n).to_owned()).collect(),
        note: String::new(),
    })
}

/// Why an object the file leaves out is not deleted (empty: it is): Quell has no deletion for
/// schedules or integrations (their alerts name them), the default routing rule takes what
/// no other rule does, and a team the file still names is not deleted (it has a new slug, or
/// it is missing from `teams:` by mistake; deleting it would take its members and its hold on
/// private incidents with it).
fn keep_because(current: &Object, all: &[Object], doc: &Document) -> String {
    let name = current.name.as_str();
    if let Some(why) = runbook_would_go(current, all, doc) {
        return why;
    }
    match current.kind {
        Kind::Schedules => "Quell does not delete schedules".to_owned(),
        Kind::Integrations => {
            "Quell does not delete integrations (their alerts name them); write it with disabled: true"
                .to_owned()
        }
        Kind::RoutingRules if is_default_rule(current) => {
            "it is the default rule, which takes every alert no other rule took".to_owned()
        }
        Kind::Teams => doc
            .entries
            .iter()
            .find(|e| e.object.value.get("team").and_then(Value::as_str) == Some(name))
            .map(|e| {
                format!(
                    "the file's {} {:?} (line {}) names it",
                    e.object.kind.one(),
                    e.object.name,
                    e.line
                )
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// A service's or rule's runbooks go when it is deleted (and their checks on incidents with
/// them): it is deleted only when each of them is deleted as well, so a plan shows every
/// deletion. Why not, when one would go unlisted or the file still has it.
fn runbook_would_go(owner: &Object, all: &[Object], doc: &Document) -> Option<String> {
    let field = match owner.kind {
        Kind::Services => "service",
        Kind::RoutingRules => "rule",
        _ => return None,
    };
    let owned = all.iter().filter(|o| {
        o.kind == Kind::Runbooks && o.value.get(field).and_then(Value::as_str) == Some(&owner.name)
    });
    for runbook in owned {
        if let Some(e) = doc
            .entries
            .iter()
            .find(|e| e.object.kind == Kind::Runbooks && e.object.name == runbook.name)
        {
            return Some(format!(
                "the file's runbook {:?} (line {}) names it",
                runbook.name, e.line
            ));
        }
        if !doc.kinds.contains(&Kind::Runbooks) {
            return Some(format!(
                "its runbook {:?} would go with it; list runbooks: in the file (without it) to delete both",
                runbook.name
            ));
        }
    }
    None
}

/// Services made or changed after those of the file they depend on that are made or changed
/// too (a service cannot depend on one that does not exist yet); the rest keep their order.
fn in_dependency_order(changes: &mut Vec<Change>, doc: &Document) {
    let depends = |name: &str| -> Vec<String> {
        doc.entries
            .iter()
            .find(|e| e.object.kind == Kind::Services && e.object.name == name)
            .map(|e| names_in(&e.object, "depends_on"))
            .unwrap_or_default()
    };
    // Only services wait on each other: the kinds before them keep their place, and those
    // after (which may name them) follow them.
    let (mut done, rest): (Vec<Change>, Vec<Change>) = std::mem::take(changes)
        .into_iter()
        .partition(|c| c.kind < Kind::Services);
    let (mut waiting, after): (Vec<Change>, Vec<Change>) =
        rest.into_iter().partition(|c| c.kind == Kind::Services);
    while !waiting.is_empty() {
        let pending: Vec<String> = waiting.iter().map(|c| c.name.clone()).collect();
        let ready = waiting
            .iter()
            .position(|c| {
                !depends(&c.name)
                    .iter()
                    .any(|d| *d != c.name && pending.contains(d))
            })
            // A cycle: Quell refuses it, naming the services.
            .unwrap_or(0);
        done.push(waiting.remove(ready));
    }
    done.extend(after);
    *changes = done;
}

/// Text from a file or a stored name, safe for a terminal: control characters replaced.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// Quell's objects as a file shows them: a Slack or webhook channel's address (which carries
/// its token) becomes the variable to read it from, `url_env: QUELL_CHANNEL_<NAME>_URL`; an
/// email channel keeps its address.
/// Two names that read alike as a variable (`Payments Slack`, `payments-slack`) get `_2`, `_3`…
/// A team's people are written, both lists even when empty (so the file says who is in it),
/// but for a team in `followed`, whose identity provider's group says who is in it.
pub fn for_file(mut objects: Vec<Object>, followed: &[String]) -> Vec<Object> {
    for o in objects.iter_mut().filter(|o| o.kind == Kind::Teams) {
        for field in [TEAM_LEADS, TEAM_MEMBERS] {
            if followed.contains(&o.name) {
                o.value.remove(field);
            } else if !o.value.contains_key(field) {
                o.value.insert(field.into(), Value::Array(Vec::new()));
            }
        }
    }
    let mut taken: Vec<String> = Vec::new();
    for o in objects.iter_mut().filter(|o| o.kind == Kind::Channels) {
        if o.value.get("kind").and_then(Value::as_str) != Some(ChannelKind::Email.as_str())
            && o.value.remove("url").is_some()
        {
            let first = url_variable(&o.name);
            let mut var = first.clone();
            let mut n = 1;
            while taken.contains(&var) {
                n += 1;
                var = format!("{}_{n}_URL", first.trim_end_matches("_URL"));
            }
            taken.push(var.clone());
            o.value.insert("url_env".into(), Value::String(var));
        }
    }
    objects
}

/// The file for `objects` (Quell's, in canonical form): one list per kind, in [`KINDS`]
/// order, each object's name first and its other fields in alphabetical order. Strings are written as JSON strings
/// (YAML's double-quoted form), so nothing in them is read back as anything else.
pub fn write(objects: &[Object]) -> String {
    let mut out = String::from(
        "# Quell's configuration, as `quell config export` wrote it. Apply a changed copy with\n\
         # `quell config apply -f quell.yaml --plan` (then without --plan); --prune deletes what\n\
         # the file's lists leave out.\n",
    );
    for kind in KINDS {
        let of_kind: Vec<&Object> = objects.iter().filter(|o| o.kind == kind).collect();
        if of_kind.is_empty() {
            out.push_str(&format!("{}: []\n", kind.key()));
            continue;
        }
        out.push_str(&format!("{}:\n", kind.key()));
        for o in of_kind {
            let mut first = true;
            // The name first, then the other fields in order.
            let named = o.value.get_key_value("name");
            let rest = o.value.iter().filter(|(k, _)| k.as_str() != "name");
            for (k, v) in named.into_iter().chain(rest) {
                let lead = if first { "  - " } else { "    " };
                first = false;
                out.push_str(lead);
                field(&mut out, k, v, 4);
            }
        }
    }
    out
}

fn key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        k.to_owned()
    } else {
        Value::String(k.to_owned()).to_string()
    }
}

/// `key: value` at `indent` (the key already indented), a block below it for a non-empty
/// list or mapping.
fn field(out: &mut String, k: &str, v: &Value, indent: usize) {
    out.push_str(&key(k));
    out.push(':');
    block(out, v, indent);
}

fn block(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            for item in items {
                out.push_str(&" ".repeat(indent));
                out.push_str("- ");
                item_of(out, item, indent + 2);
            }
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            for (k, v) in map {
                out.push_str(&" ".repeat(indent + 2));
                field(out, k, v, indent + 2);
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

/// A list item after its `- ` (its fields at `indent`).
fn item_of(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            let mut first = true;
            for (k, v) in map {
                if !first {
                    out.push_str(&" ".repeat(indent));
                }
                first = false;
                field(out, k, v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            // A list in a list: written inline, as JSON (which YAML reads).
            out.push_str(&v.to_string());
            out.push('\n');
            let _ = items;
        }
        scalar => {
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"teams:
  - name: Payments
    description: Card payments
services:
  - name: payments-gateway
    tier: 1
    team: payments
    escalation_policy: Payments
  - name: checkout-api
    tier: 2
"#;

    /// The objects of a file, as if Quell had them.
    fn objects_of(text: &str) -> Vec<Object> {
        read(text)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.object)
            .collect()
    }

    #[test]
    fn a_file_reads_with_each_object_at_its_line() {
        let doc = read(FILE).unwrap();
        assert_eq!(doc.kinds, [Kind::Teams, Kind::Services]);
        let lines: Vec<(Kind, &str, usize)> = doc
            .entries
            .iter()
            .map(|e| (e.object.kind, e.object.name.as_str(), e.line))
            .collect();
        assert_eq!(
            lines,
            [
                (Kind::Teams, "payments", 2),
                (Kind::Services, "payments-gateway", 5),
                (Kind::Services, "checkout-api", 9)
            ]
        );
        assert_eq!(doc.entries[1].line_of("tier"), 6);
        assert_eq!(
            doc.entries[1].object.value.get(SERVICE_POLICY),
            Some(&Value::String("Payments".into()))
        );
    }

    #[test]
    fn refusals_name_the_line_and_the_field() {
        let bad = FILE.replace("tier: 2", "tier: 7");
        let r = read(&bad).unwrap_err();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].line, 10);
        assert!(r[0].message.starts_with("service: tier: "), "{}", r[0]);

        let bad = FILE.replace("    tier: 2\n", "    tier: 2\n    colour: red\n");
        let r = read(&bad).unwrap_err();
        assert_eq!(r[0].line, 11, "{r:?}");
        assert!(r[0].message.contains("colour"), "{}", r[0]);

        let bad = FILE.replace("tier: 1", "tier: one");
        let r = read(&bad).unwrap_err();
        assert_eq!(r[0].line, 6, "{r:?}");

        let r = read("servicez: []\n").unwrap_err();
        assert_eq!(r[0].line, 1);
        assert!(r[0].message.contains("servicez"), "{}", r[0]);

        let twice = format!("{FILE}  - name: checkout-api\n    tier: 3\n");
        let r = read(&twice).unwrap_err();
        assert_eq!(r[0].line, 11, "{r:?}");
        assert!(r[0].message.contains("first at line 9"), "{}", r[0]);

        let r = read("teams: [\n").unwrap_err();
        assert!(r[0].message.starts_with("not YAML"), "{}", r[0]);
    }

    #[test]
    fn a_written_file_reads_back_as_itself_and_plans_nothing() {
        let doc = read(FILE).unwrap();
        let objects: Vec<Object> = doc.entries.iter().map(|e| e.object.clone()).collect();
        let text = write(&objects);
        let again = read(&text).unwrap();
        let back: Vec<Object> = again.entries.iter().map(|e| e.object.clone()).collect();
        assert_eq!(back, objects, "{text}");
        assert!(plan(&objects, &again, true).is_empty());
    }

    #[test]
    fn nulls_are_fields_left_out_at_every_depth() {
        // A plain null (or nothing) is a field left out, not the text "null".
        let file = "teams:\n  - name: Payments\n    oidc_group: null\n    description: ~\n";
        let doc = read(file).unwrap();
        let team = &doc.entries[0].object;
        assert!(!team.value.contains_key("oidc_group"), "{team:?}");
        assert!(!team.value.contains_key("description"), "{team:?}");
        // A quoted one is text.
        let file = "teams:\n  - name: Payments\n    description: \"null\"\n";
        let team = &read(file).unwrap().entries[0].object;
        assert_eq!(team.value["description"], "null");
        // A null within (an override replacing nobody) is left out when written, and the file
        // reads back as the same object.
        let o = Object {
            kind: Kind::Schedules,
            name: "s".into(),
            value: serde_json::from_value(serde_json::json!({
                "name": "s",
                "overrides": [{"person": "ana", "replaces": null}],
            }))
            .unwrap(),
        };
        let mut stripped = o.clone();
        for v in stripped.value.values_mut() {
            strip_nulls(v);
        }
        let text = write(std::slice::from_ref(&stripped));
        assert!(!text.contains("null"), "{text}");
    }

    #[test]
    fn a_service_is_made_after_those_it_depends_on() {
        let file = "services:\n  - name: gateway\n    tier: 1\n    depends_on: [ledger]\n  - name: ledger\n    tier: 2\n";
        let p = plan(&[], &read(file).unwrap(), false);
        let order: Vec<&str> = p.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(order, ["ledger", "gateway"]);
    }

    #[test]
    fn a_team_the_file_still_names_is_kept_when_pruning() {
        let current = objects_of(FILE);
        // The team renamed (a new slug) while a service still names the old one.
        let renamed = FILE.replace(
            "  - name: Payments\n",
            "  - name: Payments\n    slug: pay\n",
        );
        let p = plan(&current, &read(&renamed).unwrap(), true);
        let kept: Vec<(Verb, &str)> = p
            .iter()
            .filter(|c| c.kind == Kind::Teams)
            .map(|c| (c.verb, c.name.as_str()))
            .collect();
        assert_eq!(kept, [(Verb::Create, "pay"), (Verb::Keep, "payments")]);
        assert!(
            p.iter().any(|c| c.note.contains("payments-gateway")),
            "{p:?}"
        );
    }

    #[test]
    fn the_plan_lists_exactly_what_differs() {
        let current = objects_of(FILE);
        let changed = FILE.replace("tier: 2", "tier: 3").replace(
            "  - name: checkout-api",
            "  - name: ledger\n    tier: 3\n  - name: checkout-api",
        );
        let doc = read(&changed).unwrap();
        let p = plan(&current, &doc, false);
        let said: Vec<(Verb, &str, Vec<String>)> = p
            .iter()
            .map(|c| (c.verb, c.name.as_str(), c.fields.clone()))
            .collect();
        assert_eq!(
            said,
            [
                (Verb::Create, "ledger", vec![]),
                (Verb::Update, "checkout-api", vec!["tier".to_owned()])
            ]
        );
        // Pruning deletes what a listed kind leaves out, never a kind the file does not list.
        let only_services = "services:\n  - name: checkout-api\n    tier: 2\n";
        let p = plan(&current, &read(only_services).unwrap(), true);
        let said: Vec<(Verb, Kind, &str)> = p
            .iter()
            .map(|c| (c.verb, c.kind, c.name.as_str()))
            .collect();
        assert_eq!(said, [(Verb::Delete, Kind::Services, "payments-gateway")]);
        // A field removed is a field changed.
        let no_policy = FILE.replace("    escalation_policy: Payments\n", "");
        let p = plan(&current, &read(&no_policy).unwrap(), false);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].fields, [SERVICE_POLICY]);
    }

    const RULES: &str = "routing_rules:\n  - name: first\n    conditions: [\"labels.team = payments\"]\n    service: payments-gateway\n  - name: second\n    conditions: [\"labels.team = checkout\"]\n    service: checkout-api\n    group_window_minutes: 10\n  - name: Default\n    default: true\n";

    #[test]
    fn the_default_rule_is_written_once_and_last() {
        let doc = read(RULES).unwrap();
        assert!(is_default_rule(&doc.entries[2].object));
        // The window at its default is left out, as Quell's would be.
        assert!(
            !doc.entries[1]
                .object
                .value
                .contains_key("group_window_minutes")
        );
        let first_last = RULES.replace(
            "  - name: first\n",
            "  - name: Fallback\n    default: true\n  - name: first\n",
        );
        let r = read(&first_last).unwrap_err();
        let said: Vec<(usize, bool)> = r
            .iter()
            .map(|r| (r.line, r.message.contains("default")))
            .collect();
        assert_eq!(said, [(3, true), (12, true)], "{r:?}");
        let r = read(&RULES.replace("default: true", "default: yes")).unwrap_err();
        assert_eq!(r[0].line, 10, "{r:?}");
    }

    #[test]
    fn rules_are_tried_in_the_file_s_order() {
        let current = objects_of(RULES);
        assert!(plan(&current, &read(RULES).unwrap(), true).is_empty());
        // Swapped: one change, the order, with the rules as they will be tried.
        let swapped = "routing_rules:\n  - name: second\n    conditions: [\"labels.team = checkout\"]\n    service: checkout-api\n  - name: first\n    conditions: [\"labels.team = payments\"]\n    service: payments-gateway\n";
        let p = plan(&current, &read(swapped).unwrap(), false);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].verb, p[0].line), (Verb::Reorder, Some(2)));
        assert_eq!(p[0].fields, ["second", "first"]);
        // A new rule is added after the others: written last, no reorder; written first, one.
        let added = RULES.replace(
            "  - name: Default\n",
            "  - name: third\n    service: ledger\n    conditions: [\"labels.team = ledger\"]\n  - name: Default\n",
        );
        let p = plan(&current, &read(&added).unwrap(), false);
        let verbs: Vec<Verb> = p.iter().map(|c| c.verb).collect();
        assert_eq!(verbs, [Verb::Create], "{p:?}");
        let first = RULES.replace(
            "routing_rules:\n",
            "routing_rules:\n  - name: zero\n    service: ledger\n    conditions: [\"labels.team = ledger\"]\n",
        );
        let p = plan(&current, &read(&first).unwrap(), false);
        assert_eq!(p.last().unwrap().fields, ["zero", "first", "second"]);
        // Pruning: what the file leaves out goes, the default rule stays (and says why).
        let only_first = "routing_rules:\n  - name: first\n    conditions: [\"labels.team = payments\"]\n    service: payments-gateway\n";
        let p = plan(&current, &read(only_first).unwrap(), true);
        let said: Vec<(Verb, &str)> = p.iter().map(|c| (c.verb, c.name.as_str())).collect();
        assert_eq!(said, [(Verb::Delete, "second"), (Verb::Keep, "Default")]);
        assert!(p[1].note.contains("default rule"), "{p:?}");
    }

    #[test]
    fn a_runbook_goes_by_its_name_and_owner_and_names_its_rule_by_name() {
        let file = "runbooks:\n  - name: High error rate\n    service: payments-gateway\n  - name: High error rate\n    rule: Checkout pages\n    steps: [Look]\n";
        let doc = read(file).unwrap();
        let names: Vec<&str> = doc.entries.iter().map(|e| e.object.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "High error rate (payments-gateway)",
                "High error rate (rule Checkout pages)"
            ]
        );
        let r = read("runbooks:\n  - name: Triage\n    rule_id: 7\n").unwrap_err();
        assert_eq!(r[0].line, 3, "{r:?}");
        assert!(r[0].message.contains("rule: "), "{r:?}");
    }

    #[test]
    fn secrets_are_named_by_variable_and_never_written() {
        let file = "channels:\n  - name: Payments Slack\n    kind: slack\n    url_env: PAYMENTS_SLACK_URL\n    subscriptions:\n      - events: [incident.resolved, incident.opened]\n  - name: mail\n    kind: email\n    url: mailto:oncall@example.com\nintegrations:\n  - name: grafana\n    format: grafana\n    key_env: GRAFANA_KEY\n    on_all_resolved: mitigate\n    flapping: {threshold: 3, window_minutes: 30, settle_minutes: 10}\n";
        let doc = read(file).unwrap();
        let slack = &doc.entries[0];
        assert_eq!(slack.secrets["url"], "PAYMENTS_SLACK_URL");
        assert!(!slack.object.value.contains_key("url_env"));
        assert_eq!(
            slack.object.value["subscriptions"][0]["events"],
            serde_json::json!(["incident.opened", "incident.resolved"])
        );
        assert_eq!(doc.entries[1].object.value["url"], "oncall@example.com");
        let grafana = &doc.entries[2];
        assert_eq!(grafana.secrets["key"], "GRAFANA_KEY");
        // What is at its default is left out.
        let fields: Vec<&str> = grafana.object.value.keys().map(String::as_str).collect();
        assert_eq!(fields, ["format", "name"]);
        // Written out: the Slack address is a variable, the email address stays.
        let mut objects: Vec<Object> = doc.entries.iter().map(|e| e.object.clone()).collect();
        objects[0].value.insert(
            "url".into(),
            "https://hooks.slack.com/services/T0/B0/secret".into(),
        );
        let text = write(&for_file(objects, &[]));
        assert!(!text.contains("secret"), "{text}");
        assert!(
            text.contains("url_env: \"QUELL_CHANNEL_PAYMENTS_SLACK_URL\""),
            "{text}"
        );
        assert!(text.contains("url: \"oncall@example.com\""), "{text}");
        // A channel names its address one way; a variable is a variable's name.
        let both = file.replace(
            "    url_env: PAYMENTS_SLACK_URL\n",
            "    url_env: PAYMENTS_SLACK_URL\n    url: https://hooks.slack.com/x\n",
        );
        assert_eq!(read(&both).unwrap_err()[0].line, 4);
        let neither = file.replace("    url_env: PAYMENTS_SLACK_URL\n", "");
        assert_eq!(read(&neither).unwrap_err()[0].line, 2);
        let odd = file.replace("GRAFANA_KEY", "\"the key\"");
        assert_eq!(read(&odd).unwrap_err()[0].line, 13);
        // Integrations are kept when pruning: their alerts name them.
        let current = objects_of(file);
        let p = plan(&current, &read("integrations: []\n").unwrap(), true);
        assert_eq!(p[0].verb, Verb::Keep, "{p:?}");
        assert!(p[0].note.contains("disabled: true"), "{p:?}");
    }

    #[test]
    fn a_variable_reads_one_secret_and_exported_names_never_collide() {
        let file = "channels:\n  - name: a\n    kind: slack\n    url_env: OPS_URL\n  - name: b\n    kind: slack\n    url_env: OPS_URL\n";
        let r = read(file).unwrap_err();
        assert_eq!(r[0].line, 7, "{r:?}");
        assert!(r[0].message.contains("line 4"), "{r:?}");
        let slack = |name: &str| Object {
            kind: Kind::Channels,
            name: name.into(),
            value: serde_json::from_value(serde_json::json!({
                "name": name, "kind": "slack", "url": "https://hooks.slack.com/services/x",
            }))
            .unwrap(),
        };
        let written = for_file(
            vec![
                slack("Payments Slack"),
                slack("payments-slack"),
                slack("PAYMENTS SLACK"),
            ],
            &[],
        );
        let vars: Vec<&str> = written
            .iter()
            .map(|o| o.value["url_env"].as_str().unwrap())
            .collect();
        assert_eq!(
            vars,
            [
                "QUELL_CHANNEL_PAYMENTS_SLACK_URL",
                "QUELL_CHANNEL_PAYMENTS_SLACK_2_URL",
                "QUELL_CHANNEL_PAYMENTS_SLACK_3_URL"
            ]
        );
        // And what was written reads back.
        assert!(read(&write(&written)).is_ok());
    }

    #[test]
    fn a_rule_or_service_is_not_pruned_with_a_runbook_the_plan_does_not_delete() {
        let current = objects_of(&format!(
            "{RULES}runbooks:\n  - name: Triage\n    rule: second\n"
        ));
        // Rules listed, runbooks not: "second" is kept, and says why.
        let only_first = "routing_rules:\n  - name: first\n    conditions: [\"labels.team = payments\"]\n    service: payments-gateway\n";
        let p = plan(&current, &read(only_first).unwrap(), true);
        let second = p.iter().find(|c| c.name == "second").unwrap();
        assert_eq!(second.verb, Verb::Keep, "{p:?}");
        assert!(second.note.contains("Triage (rule second)"), "{p:?}");
        // The file still has the runbook: kept, naming its line.
        let still = format!("{only_first}runbooks:\n  - name: Triage\n    rule: second\n");
        let p = plan(&current, &read(&still).unwrap(), true);
        let second = p.iter().find(|c| c.name == "second").unwrap();
        assert!(second.note.contains("line 6"), "{p:?}");
        // Both left out: both deleted, each on a line of the plan.
        let both = format!("{only_first}runbooks: []\n");
        let p = plan(&current, &read(&both).unwrap(), true);
        let deleted: Vec<&str> = p
            .iter()
            .filter(|c| c.verb == Verb::Delete)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(deleted, ["Triage (rule second)", "second"]);
        // A quoted "true" is text, not the default flag.
        let quoted = RULES.replace("default: true", "default: \"true\"");
        assert_eq!(read(&quoted).unwrap_err()[0].line, 10);
    }

    #[test]
    fn a_team_names_its_leads_and_members_once_each() {
        let file = "teams:\n  - name: Payments\n    leads: [ana]\n    members: [priya, dev]\n";
        let team = &read(file).unwrap().entries[0].object;
        assert_eq!(
            team.value[TEAM_MEMBERS],
            serde_json::json!(["dev", "priya"])
        );
        let both = file.replace("[priya, dev]", "[priya, ana]");
        let r = read(&both).unwrap_err();
        assert_eq!(r[0].line, 4, "{r:?}");
        assert!(r[0].message.contains("\"ana\" is a lead already"), "{r:?}");
        let twice = file.replace("[priya, dev]", "[priya, priya]");
        assert!(read(&twice).unwrap_err()[0].message.contains("named twice"));
        let followed = file.replace("    leads", "    oidc_group: payments-eng\n    leads");
        let r = read(&followed).unwrap_err();
        assert_eq!(r[0].line, 4, "{r:?}");
        assert!(r[0].message.contains("identity provider"), "{r:?}");
        let not_a_list = file.replace("[ana]", "ana");
        assert_eq!(read(&not_a_list).unwrap_err()[0].line, 3);
    }

    #[test]
    fn a_team_is_written_with_both_lists_unless_it_follows_a_group() {
        let current = objects_of("teams:\n  - name: Payments\n    leads: [ana]\n  - name: Data\n");
        let text = write(&for_file(current, &["data".to_owned()]));
        assert!(
            text.contains("    leads:\n    - \"ana\"\n    members: []\n"),
            "{text}"
        );
        let data = &text[text.find("\"Data\"").unwrap()..];
        assert!(
            !data.contains("leads") && !data.contains("members"),
            "{text}"
        );
        // The empty list reads back as written: an entry that says the team has no members.
        let doc = read(&text).unwrap();
        assert!(doc.entries[0].fields.contains_key(TEAM_MEMBERS));
        assert_eq!(doc.entries[0].line_of("leads[ana]"), 7);
    }
}
