//! Configuration as code, the pure part: reading a `quell.yaml` (each object with the line it
//! starts on, each refusal naming its line), the canonical form objects are compared in, the
//! plan (what to create, update or delete, and which fields differ), and writing the file.
//!
//! An object's canonical form is its draft as the API takes it, checked, serialised, with the
//! fields left at their defaults (null, "", [], false) left out: so a file written by hand and
//! one `quell config export` wrote compare alike, and an exported file reads back as itself.

use std::collections::BTreeMap;
use std::fmt;

use marked_yaml::{LoaderOptions, Node};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::oncall::domain::ScheduleDraft;
use crate::paging::domain::PolicyDraft;
use crate::services::domain::ServiceDraft;
use crate::teams::domain::TeamDraft;

/// What a file may hold, in the order they are made (a later kind names earlier ones: a
/// policy names schedules, a service its team and policy); deleted in the reverse order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Teams,
    Schedules,
    EscalationPolicies,
    Services,
}

pub const KINDS: [Kind; 4] = [
    Kind::Teams,
    Kind::Schedules,
    Kind::EscalationPolicies,
    Kind::Services,
];

impl Kind {
    /// The file's key for its list.
    pub fn key(self) -> &'static str {
        match self {
            Self::Teams => "teams",
            Self::Schedules => "schedules",
            Self::EscalationPolicies => "escalation_policies",
            Self::Services => "services",
        }
    }

    /// One of them, as the plan says it.
    pub fn one(self) -> &'static str {
        match self {
            Self::Teams => "team",
            Self::Schedules => "schedule",
            Self::EscalationPolicies => "escalation policy",
            Self::Services => "service",
        }
    }

    fn of_key(key: &str) -> Option<Self> {
        KINDS.into_iter().find(|k| k.key() == key)
    }

    /// The field that names an object of the kind (teams by slug: what addresses use).
    pub fn name_field(self) -> &'static str {
        match self {
            Self::Teams => "slug",
            _ => "name",
        }
    }
}

/// A field of a service that is not its draft's: the escalation policy that pages for it.
pub const SERVICE_POLICY: &str = "escalation_policy";

/// One object, in canonical form.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub kind: Kind,
    pub name: String,
    pub value: Map<String, Value>,
}

/// One object of a file: where it starts, and where each of its fields is.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub object: Object,
    pub line: usize,
    pub fields: BTreeMap<String, usize>,
}

impl Entry {
    /// The line of `field` (a refusal's field may be `layers[0].start`: its first part), or
    /// the object's own.
    pub fn line_of(&self, field: &str) -> usize {
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
    let object = match kind {
        Kind::Teams => {
            let d: TeamDraft = draft(kind, node, line)?;
            let d = d.validated().map_err(|e| invalid(&fail, e))?;
            canonical(kind, &d.slug, &d)
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
            // The policy is not the draft's: taken out before the draft is read.
            let mut map = map.clone();
            let policy = match map.remove(SERVICE_POLICY) {
                None => None,
                Some(Node::Scalar(s)) => Some(s.as_str().trim().to_owned()),
                Some(_) => {
                    return Err(fail(
                        SERVICE_POLICY,
                        "the name of an escalation policy".to_owned(),
                    ));
                }
            };
            let d: ServiceDraft = draft(kind, &Node::Mapping(map), line)?;
            let d = d.validated().map_err(|e| invalid(&fail, e))?;
            let mut o = canonical(kind, &d.name, &d);
            if let Some(p) = policy.filter(|p| !p.is_empty()) {
                o.value.insert(SERVICE_POLICY.into(), Value::String(p));
            }
            o
        }
    };
    Ok(Entry {
        object,
        line,
        fields,
    })
}

fn invalid(fail: &impl Fn(&str, String) -> Refusal, e: crate::domain::DomainError) -> Refusal {
    match e {
        crate::domain::DomainError::Invalid { field, message } => fail(&field, message),
        crate::domain::DomainError::Conflict(message) => fail("name", message),
    }
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
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Keep => "keep",
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
                    let note = keep_because(kind, &c.name, doc);
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
    changes
}

/// Why an object the file leaves out is not deleted (empty: it is): Quell has no deletion for
/// schedules, and a team the file still names is not deleted (it has a new slug, or it is
/// missing from `teams:` by mistake; deleting it would take its members and its hold on
/// private incidents with it).
fn keep_because(kind: Kind, name: &str, doc: &Document) -> String {
    match kind {
        Kind::Schedules => "Quell does not delete schedules".to_owned(),
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

/// Services made or changed after those of the file they depend on that are made or changed
/// too (a service cannot depend on one that does not exist yet); the rest keep their order.
fn in_dependency_order(changes: &mut Vec<Change>, doc: &Document) {
    let depends = |name: &str| -> Vec<String> {
        doc.entries
            .iter()
            .find(|e| e.object.kind == Kind::Services && e.object.name == name)
            .and_then(|e| e.object.value.get("depends_on"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    // Services are the last kind made: the others keep their place before them.
    let (mut done, mut waiting): (Vec<Change>, Vec<Change>) = std::mem::take(changes)
        .into_iter()
        .partition(|c| c.kind != Kind::Services);
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
    *changes = done;
}

/// Text from a file or a stored name, safe for a terminal: control characters replaced.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
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
}
