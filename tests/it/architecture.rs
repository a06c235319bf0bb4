//! The layers of `src/`, kept by a test: it reads every `crate::` and `super::` path of every
//! source file (in `use` lines and in code), and fails naming the file and line of an import that
//! closes a cycle, points up a layer, reaches into another capability's handlers or pages, or
//! makes two capabilities depend on each other; and it fails on a call that writes another
//! capability's store (a `db` function whose SQL inserts, updates or deletes) from a capability
//! ARCHITECTURE.md's "Who writes which store" does not list. ARCHITECTURE.md describes the same
//! layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers, bottom to top: a file may import from its own layer and the ones below. Within the
/// capabilities, see [`rank`]. Patterns are module paths; `x::*` is everything under `x`; the
/// longest match wins; whatever matches nothing is a capability.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "ground",
        &[
            "error",
            "clock",
            "config",
            "telemetry",
            "domain",
            "egress",
            "engine",
            "state",
            "room",
            "cache",
            "metrics",
            "transaction",
            "plans",
        ],
    ),
    (
        "who is asking",
        &[
            "auth",
            "auth::*",
            "audit",
            "audit::db",
            "audit::domain",
            "idempotency",
            "idempotency::*",
        ],
    ),
    ("web kit", &["http", "http::*"]),
    ("capabilities", &[]),
    (
        "top",
        &["router", "router::*", "lib", "main", "demo", "demo::*"],
    ),
];

/// Within a capability, `domain.rs` ← `db.rs` ← `actions.rs` ← `handlers.rs` / `pages.rs` ←
/// `routes.rs`: a
/// file imports files of its own rank or lower. Another capability is read only through its
/// `domain`, `db` and (to change it) `actions` ranks, or what its `mod.rs` re-exports; a
/// `mod.rs` is the folder's face and may name any file of its folder (`None`).
fn rank(file: &str) -> Option<u8> {
    if file == "mod" {
        return None;
    }
    // A file grown large becomes a folder of the same name, one file per topic, ranked as the
    // file was: `domain::grading` is domain, `pages::show` a page.
    Some(match file.split("::").next().unwrap_or(file) {
        "domain" => 0,
        "db" => 1,
        "handlers" | "pages" | "forms" | "hooks" => 3,
        // what the capability serves, for the router alone
        "routes" => 4,
        // actions and the engines built on them: effects, ingest, timers, sender, document, views
        _ => 2,
    })
}

const SURFACE: u8 = 3;

struct Import {
    from: String,
    to: String,
    line: usize,
}

fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") && parts.len() > 1 {
        parts.pop();
    }
    parts.join("::")
}

pub(crate) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text with comments and string literals blanked out (line breaks kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r'
            && matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
            && (i == 0 || !(b[i - 1] as char).is_alphanumeric())
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == b'\n' {
                    out.push('\n');
                }
                j += 1;
            }
            i = j;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                if i < b.len() && b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3; // a char literal such as '"'
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Open,
    Close,
    Comma,
    Star,
    Other,
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push((Tok::Ident(code[i..end].to_owned()), line));
            }
            ':' if chars.peek().is_some_and(|(_, d)| *d == ':') => {
                chars.next();
                out.push((Tok::Path, line));
            }
            '{' => out.push((Tok::Open, line)),
            '}' => out.push((Tok::Close, line)),
            ',' => out.push((Tok::Comma, line)),
            '*' => out.push((Tok::Star, line)),
            _ => out.push((Tok::Other, line)),
        }
    }
    out
}

/// Every path that starts `crate::`, `super::` or `self::` in `code` (comments and strings
/// blanked), as (its head, the segments after it, its line); a `{…}` group gives one path per
/// member, and `x::{self, y}` gives `x` and `x::y`.
fn paths(code: &str) -> Vec<(Vec<String>, Vec<String>, usize)> {
    /// Reads what follows a `::` at `toks[*at]`, pushing each complete path.
    fn tail(toks: &[(Tok, usize)], at: &mut usize, segs: Vec<String>, out: &mut Vec<Vec<String>>) {
        match toks.get(*at).map(|t| &t.0) {
            Some(Tok::Open) => {
                *at += 1;
                loop {
                    match toks.get(*at).map(|t| &t.0) {
                        Some(Tok::Close) | None => {
                            *at += 1;
                            return;
                        }
                        Some(Tok::Comma) => *at += 1,
                        // `db as store`: the rename is read with the `use` line
                        Some(Tok::Ident(name)) if name == "as" => *at += 2,
                        Some(Tok::Ident(name)) if name == "self" => {
                            out.push(segs.clone());
                            *at += 1;
                        }
                        Some(Tok::Ident(_)) => item(toks, at, segs.clone(), out),
                        _ => *at += 1,
                    }
                }
            }
            Some(Tok::Ident(_)) => item(toks, at, segs, out),
            Some(Tok::Star) => {
                *at += 1;
                out.push(segs);
            }
            _ => out.push(segs),
        }
    }
    fn item(
        toks: &[(Tok, usize)],
        at: &mut usize,
        mut segs: Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        if let Some((Tok::Ident(name), _)) = toks.get(*at) {
            segs.push(name.clone());
            *at += 1;
        }
        if toks.get(*at).map(|t| &t.0) == Some(&Tok::Path) {
            *at += 1;
            tail(toks, at, segs, out);
        } else {
            out.push(segs);
        }
    }
    let toks = tokens(code);
    // Child modules declared here (`mod db;`) can be named without `self::`.
    let children: BTreeSet<String> = toks
        .windows(3)
        .filter_map(|w| match (&w[0].0, &w[1].0, &w[2].0) {
            (Tok::Ident(m), Tok::Ident(name), Tok::Other) if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    // Names a `use` line brought in (`use crate::timeline;` then `timeline::db::append`): the
    // path each stands for.
    let mut aliases: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let mut i = 0;
    while i < toks.len() {
        let starts_path = toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path)
            && (i == 0 || toks[i - 1].0 != Tok::Path);
        let child = matches!(&toks[i].0, Tok::Ident(h) if children.contains(h)) && starts_path;
        if child {
            let line = toks[i].1;
            let mut out = Vec::new();
            item(&toks, &mut i, Vec::new(), &mut out);
            for segs in out {
                found.push((vec!["self".to_owned()], segs, line));
            }
            continue;
        }
        let in_use = i > 0 && matches!(&toks[i - 1].0, Tok::Ident(u) if u == "use");
        if let Tok::Ident(h) = &toks[i].0
            && let Some((head, base)) = aliases.get(h).cloned()
            && starts_path
            && !in_use
        {
            let line = toks[i].1;
            i += 2;
            let mut out = Vec::new();
            tail(&toks, &mut i, base, &mut out);
            for segs in out {
                found.push((head.clone(), segs, line));
            }
            continue;
        }
        let starts = matches!(&toks[i].0, Tok::Ident(h) if h == "crate" || h == "super" || h == "self")
            && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path)
            && (i == 0 || toks[i - 1].0 != Tok::Path);
        if !starts {
            i += 1;
            continue;
        }
        let line = toks[i].1;
        // `super::super::` climbs twice.
        let mut head = Vec::new();
        while let Some((Tok::Ident(h), _)) = toks.get(i)
            && (h == "crate" || h == "super" || h == "self")
            && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path)
        {
            head.push(h.clone());
            i += 2;
        }
        let start = i;
        let mut out = Vec::new();
        tail(&toks, &mut i, Vec::new(), &mut out);
        if in_use {
            // Each path is named by its last segment, or by its rename: `y as z` (up to and
            // including the `as` after a single path) names it `z`.
            let end = (i + 2).min(toks.len());
            let renames: BTreeMap<String, String> = toks[start..end]
                .windows(3)
                .filter_map(|w| match (&w[0].0, &w[1].0, &w[2].0) {
                    (Tok::Ident(y), Tok::Ident(a), Tok::Ident(z)) if a == "as" => {
                        Some((y.clone(), z.clone()))
                    }
                    _ => None,
                })
                .collect();
            for segs in &out {
                if let Some(last) = segs.last() {
                    let name = renames.get(last).unwrap_or(last).clone();
                    aliases.insert(name, (head.clone(), segs.clone()));
                }
            }
        }
        for segs in out {
            found.push((head.clone(), segs, line));
        }
    }
    found
}

/// The code with every item under `#[cfg(test)]` blanked (line breaks kept): the attribute,
/// then up to the end of the item's `{…}` block, or its `;` when it has none.
fn without_tests(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices().skip(MARK.len()) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        out.extend(item[..end].chars().filter(|c| *c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Whether a store's module (`x::db`, `x::db::topic`) is one.
fn is_store(module: &str) -> bool {
    module.split("::").skip(1).any(|s| s == "db")
}

/// The functions of a store file whose SQL writes: an `insert into`, `update … set` or
/// `delete from`.
fn writing_functions(text: &str) -> BTreeSet<String> {
    let lower: String = text
        .to_ascii_lowercase()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let starts: Vec<usize> = lower
        .match_indices("fn ")
        .map(|(at, _)| at)
        .filter(|at| *at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric())
        .collect();
    for (n, &at) in starts.iter().enumerate() {
        let body = &lower[at..starts.get(n + 1).copied().unwrap_or(lower.len())];
        let name: String = body[3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let words: Vec<&str> = body
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let writes = words
            .windows(2)
            .any(|w| matches!((w[0], w[1]), ("insert", "into") | ("delete", "from")))
            || words.windows(4).enumerate().any(|(i, w)| {
                // `update incidents set`, `update incidents i set`; not `for update`
                w[0] == "update"
                    && (i == 0 || words[i - 1] != "for")
                    && (w[2] == "set" || w[3] == "set")
            });
        if writes && !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// A call that writes another capability's store: (caller module, store module, function, line).
struct Write {
    from: String,
    store: String,
    function: String,
    line: usize,
}

fn imports(src: &Path) -> (BTreeSet<String>, Vec<Import>) {
    let (known, out, _) = read(src);
    (known, out)
}

/// Every import of `src`, and every call that writes a store of another capability.
fn read(src: &Path) -> (BTreeSet<String>, Vec<Import>, Vec<Write>) {
    let mut all = Vec::new();
    files(src, &mut all);
    let modules: BTreeMap<String, PathBuf> =
        all.iter().map(|f| (module_of(src, f), f.clone())).collect();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let mut writers: BTreeMap<&String, BTreeSet<String>> = modules
        .iter()
        .filter(|(m, _)| is_store(m))
        .map(|(m, f)| (m, writing_functions(&std::fs::read_to_string(f).unwrap())))
        .collect();
    // A store grown into a folder re-exports its files' functions (`db/mod.rs`: `pub use
    // alerts::*`), so `x::db::upsert` writes when `x::db::alerts::upsert` does.
    let nested: Vec<(&String, BTreeSet<String>)> = writers
        .keys()
        .map(|m| {
            let inner = writers
                .iter()
                .filter(|(n, _)| n.starts_with(&format!("{m}::")))
                .flat_map(|(_, fns)| fns.iter().cloned())
                .collect();
            (*m, inner)
        })
        .collect();
    for (m, inner) in nested {
        writers.entry(m).or_default().extend(inner);
    }
    let mut writes = Vec::new();
    let mut out = Vec::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests sit in modules of their own: each item under `#[cfg(test)]` is left out,
        // and only it (code after it is read).
        let code = without_tests(&code_only(&text));
        // `self` is the module itself; `super` its parent (for `a/b.rs` and `a/b/mod.rs`
        // alike, the module `a`).
        let here: Vec<String> = if module == "lib" || module == "main" {
            vec![]
        } else {
            module.split("::").map(str::to_owned).collect()
        };
        for (head, segs, line) in paths(&code) {
            let mut base = here.clone();
            for h in &head {
                match h.as_str() {
                    "crate" => base.clear(),
                    "super" => {
                        base.pop();
                    }
                    _ => {}
                }
            }
            let mut full = base;
            full.extend(segs);
            // the longest prefix that names a module file
            let target = (0..=full.len())
                .rev()
                .map(|k| full[..k].join("::"))
                .find(|m| known.contains(m) || m.is_empty());
            if let Some(t) = target
                && !t.is_empty()
                && t != *module
            {
                let depth = t.split("::").count();
                if let (Some(function), Some(fns)) = (full.get(depth), writers.get(&t))
                    && fns.contains(function)
                    && folder(&t) != folder(module)
                {
                    writes.push(Write {
                        from: module.clone(),
                        store: t.clone(),
                        function: function.clone(),
                        line,
                    });
                }
                out.push(Import {
                    from: module.clone(),
                    to: t,
                    line,
                });
            }
        }
    }
    (known, out, writes)
}

/// The file a module is in, as `src/x/y.rs` or `src/x/y/mod.rs`.
fn file_of(src: &Path, module: &str) -> String {
    let p = module.replace("::", "/");
    if src.join(format!("{p}.rs")).exists() || module == "lib" || module == "main" {
        format!("src/{p}.rs")
    } else {
        format!("src/{p}/mod.rs")
    }
}

fn layer_of(module: &str) -> usize {
    let mut best: Option<(usize, usize)> = None; // (specificity, layer)
    for (layer, (_, patterns)) in LAYERS.iter().enumerate() {
        for p in *patterns {
            let matched = match p.strip_suffix("::*") {
                Some(prefix) => module.starts_with(&format!("{prefix}::")),
                None => module == *p,
            };
            let specificity = p.len() + usize::from(!p.ends_with('*'));
            if matched && best.is_none_or(|(s, _)| specificity > s) {
                best = Some((specificity, layer));
            }
        }
    }
    best.map_or(3, |(_, l)| l)
}

fn folder(module: &str) -> &str {
    module.split("::").next().unwrap()
}

fn file_rank(module: &str) -> Option<u8> {
    match module.split_once("::") {
        Some((_, file)) => rank(file),
        None => None,
    }
}

/// What is wrong with the imports of `src`, one sentence each.
fn violations(src: &Path) -> Vec<String> {
    let (known, imports) = imports(src);
    let mut problems = BTreeSet::new();
    let file = |m: &str| file_of(src, m);
    for i in &imports {
        let (lf, lt) = (layer_of(&i.from), layer_of(&i.to));
        let at = format!("{}:{}", file(&i.from), i.line);
        if lt > lf {
            problems.insert(format!(
                "{at}: {} ({}) imports {} ({}), a layer above it",
                i.from, LAYERS[lf].0, i.to, LAYERS[lt].0
            ));
        } else if lf == 3 && lt == 3 {
            let same = folder(&i.from) == folder(&i.to);
            let above = match (file_rank(&i.from), file_rank(&i.to)) {
                (Some(from), Some(to)) => to > from,
                _ => false,
            };
            if same && above {
                problems.insert(format!(
                    "{at}: {} imports {}, which sits above it in its capability",
                    i.from, i.to
                ));
            }
            if !same && file_rank(&i.to).is_some_and(|r| r >= SURFACE) {
                problems.insert(format!(
                    "{at}: {} reaches into {}, another capability's handlers or pages",
                    i.from, i.to
                ));
            }
        }
    }
    // No cycles among files, nor among capabilities.
    let mut file_edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut folder_edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for i in &imports {
        file_edges.entry(&i.from).or_default().insert(&i.to);
        if layer_of(&i.from) == 3 && layer_of(&i.to) == 3 && folder(&i.from) != folder(&i.to) {
            folder_edges
                .entry(folder(&i.from))
                .or_default()
                .insert(folder(&i.to));
        }
    }
    for (kind, edges) in [("files", &file_edges), ("capabilities", &folder_edges)] {
        for cycle in cycles(edges) {
            let witness: Vec<String> = imports
                .iter()
                .filter(|i| {
                    let (a, b) = if kind == "files" {
                        (i.from.as_str(), i.to.as_str())
                    } else {
                        (folder(&i.from), folder(&i.to))
                    };
                    a != b && cycle.contains(a) && cycle.contains(b)
                })
                .map(|i| format!("{}:{} → {}", file(&i.from), i.line, i.to))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .take(12)
                .collect();
            problems.insert(format!(
                "a cycle of {kind}: {} (imports in it: {})",
                cycle.iter().cloned().collect::<Vec<_>>().join(", "),
                witness.join("; ")
            ));
        }
    }
    let _ = known;
    problems.into_iter().collect()
}

/// Strongly connected components of more than one node (Tarjan).
fn cycles<'a>(edges: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<String>> {
    struct T<'a, 'e> {
        edges: &'e BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> T<'a, '_> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            let targets: Vec<&'a str> = self
                .edges
                .get(v)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            for w in targets {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    component.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        next: 0,
        out: vec![],
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

/// Who may write each store besides its own capability, as ARCHITECTURE.md lists them under
/// "Who writes which store": lines `- \`store\` — \`writer\`, \`writer\` …`.
fn listed_writers(map: &str) -> BTreeMap<String, BTreeSet<String>> {
    let section = map
        .split("## Who writes which store")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"Who writes which store\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| {
            let (store, rest) = l.split_once('`')?;
            let (_, writers) = rest.split_once('—')?;
            let names = writers
                .split('(')
                .next()
                .unwrap_or(writers)
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            Some((store.to_owned(), names))
        })
        .collect()
}

/// Writes to another capability's store that the list does not allow, one sentence each.
fn unlisted_writes(src: &Path, listed: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let (_, _, writes) = read(src);
    let file = |m: &str| file_of(src, m);
    writes
        .iter()
        .filter(|w| {
            !listed
                .get(folder(&w.store))
                .is_some_and(|writers| writers.contains(folder(&w.from)))
        })
        .map(|w| {
            format!(
                "{}:{}: {} writes {}::{}, and ARCHITECTURE.md does not list `{}` among the writers of `{}`",
                file(&w.from),
                w.line,
                w.from,
                w.store,
                w.function,
                folder(&w.from),
                folder(&w.store)
            )
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn only_the_listed_writers_write_another_capability_s_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let listed = listed_writers(&map);
    assert!(listed.contains_key("audit"), "{listed:?}");
    let found = unlisted_writes(&root.join("src"), &listed);
    assert!(found.is_empty(), "{found:#?}");
    // And the list says no more than is true: every writer it names still writes.
    let (_, _, writes) = read(&root.join("src"));
    let stale: Vec<String> = listed
        .iter()
        .flat_map(|(store, writers)| writers.iter().map(move |w| (store, w)))
        .filter(|(store, writer)| {
            !writes
                .iter()
                .any(|w| folder(&w.store) == store.as_str() && folder(&w.from) == writer.as_str())
        })
        .map(|(store, writer)| format!("`{writer}` no longer writes `{store}`: strike it"))
        .collect();
    assert!(stale.is_empty(), "{stale:#?}");
}

#[test]
fn imports_point_down_the_layers_and_close_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = violations(&src);
    assert!(
        problems.is_empty(),
        "{} imports break the layers (see ARCHITECTURE.md):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_reader_sees_paths_in_use_lines_groups_and_code() {
    let code = code_only(
        "use crate::{error::AppError, http::{page::Chrome, access}};\n\
         // crate::commented::out\n\
         let x = \"crate::in::a::string\";\n\
         super::db::find(crate::clock::now(), r#\"crate::raw\"#);\n",
    );
    let found: Vec<(String, usize)> = paths(&code)
        .into_iter()
        .map(|(h, s, l)| (format!("{}::{}", h[0], s.join("::")), l))
        .collect();
    let names: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert!(names.contains(&"crate::error::AppError"), "{found:?}");
    assert!(names.contains(&"crate::http::page::Chrome"), "{found:?}");
    assert!(names.contains(&"crate::http::access"), "{found:?}");
    assert!(names.contains(&"super::db::find"), "{found:?}");
    assert!(names.contains(&"crate::clock::now"), "{found:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("commented") || n.contains("string") || n.contains("raw"))
    );
    assert_eq!(
        found
            .iter()
            .find(|(p, _)| p == "crate::clock::now")
            .unwrap()
            .1,
        4
    );
    // A module brought in by `use` and named later, renamed or not.
    let code = code_only(
        "use crate::timeline;\nuse crate::incidents::{self, db as store};\n\
         fn f() { timeline::db::append(); incidents::db::get(); store::find(); }\n",
    );
    let names: Vec<String> = paths(&code)
        .into_iter()
        .map(|(h, s, _)| format!("{}::{}", h[0], s.join("::")))
        .collect();
    for expected in [
        "crate::timeline::db::append",
        "crate::incidents::db::get",
        "crate::incidents::db::find",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    // Code after a test module is read; the test module is not.
    let code = without_tests(&code_only(
        "use crate::a;\n#[cfg(test)]\nmod tests { use crate::b; }\nfn later() { crate::c::x(); }\n",
    ));
    let names: Vec<String> = paths(&code)
        .into_iter()
        .map(|(h, s, _)| format!("{}::{}", h[0], s.join("::")))
        .collect();
    assert_eq!(names, ["crate::a", "crate::c::x"]);
    assert_eq!(code.lines().count(), 4, "lines keep their numbers");
}

/// The test catches what it is for: in a scratch tree, an import up a layer (after a test
/// module, which is skipped alone), a capability's page reached by another (a file ranked by its
/// folder: `pages/show.rs` is a page), and a write to another capability's store by a writer
/// the list does not name are each reported, naming the file and line; a read under a lock is
/// no write.
#[test]
fn a_planted_violation_is_reported() {
    let root = std::env::temp_dir().join(format!("quell-arch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let src = root.join("src");
    let write = |path: &str, text: &str| {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod error;\npub mod router;\npub mod alpha;\npub mod beta;\n",
    );
    write("error.rs", "pub struct E;\n");
    write("router/mod.rs", "pub fn all() {}\n");
    write("alpha/mod.rs", "pub mod db;\npub mod pages;\npub mod up;\n");
    write(
        "alpha/db/mod.rs",
        "pub fn put() { sqlx::query!(\"insert into alpha (x) values (1)\"); }\n\
         pub fn get() { sqlx::query!(\"select x from alpha for update\"); }\n",
    );
    write(
        "alpha/up.rs",
        "use crate::error::E;\n#[cfg(test)]\nmod tests {}\npub fn f() { crate::router::all(); }\n",
    );
    write("alpha/pages/mod.rs", "pub mod show;\n");
    write("alpha/pages/show.rs", "pub fn page() {}\n");
    write("beta/mod.rs", "pub mod actions;\npub mod writes;\n");
    write(
        "beta/actions.rs",
        "use crate::alpha;\npub fn g() { alpha::pages::show::page(); }\n",
    );
    write(
        "beta/writes.rs",
        "use crate::alpha::db;\npub fn h() {\n    db::get();\n    db::put();\n}\n",
    );
    let listed = listed_writers("## Who writes which store\n\n- `alpha` — `gamma` (why)\n");
    let writes = unlisted_writes(&src, &listed);
    let found = violations(&src);
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(
        writes,
        [
            "src/beta/writes.rs:4: beta::writes writes alpha::db::put, and ARCHITECTURE.md does not list `beta` among the writers of `alpha`"
        ]
    );
    assert!(
        found
            .iter()
            .any(|v| v.starts_with("src/alpha/up.rs:4:") && v.contains("a layer above")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|v| v.starts_with("src/beta/actions.rs:2:")
            && v.contains("another capability's handlers or pages")),
        "{found:#?}"
    );
}

/// An incident's key is written by `IncidentKey` alone (`domain.rs`), never by hand.
#[test]
fn incident_keys_are_never_built_by_hand() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut found = Vec::new();
    for f in all
        .iter()
        .filter(|f| !f.ends_with("domain.rs") || f.parent() != Some(&src))
    {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            // `format!("INC-{}", n)` in Rust, `'INC-' || number` in SQL: a query reads the
            // number as an `IncidentKey` instead.
            if line.contains("\"INC-{") || line.contains("'INC-'") {
                found.push(format!(
                    "{}:{}",
                    f.strip_prefix(&src).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    assert!(found.is_empty(), "keys built by hand: {found:?}");
}

/// Files that may start a transaction other than through `transaction::begin`: the engines that
/// keep a connection of their own from round to round (no request can cancel them mid-write),
/// the command that hands the audit log over, and the module that does it for everyone else.
const OWN_BEGIN: &[&str] = &[
    "transaction.rs",
    "alerts/ingest.rs",
    "sla/timers.rs",
    "audit/db.rs",
];

/// sqlx's `begin` is not cancel-safe on PostgreSQL (see `src/transaction.rs`), so a request
/// that starts a transaction any other way could leave a pooled connection inside it.
#[test]
fn transactions_start_only_through_the_cancel_safe_begin() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut found = Vec::new();
    for file in &all {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if OWN_BEGIN.contains(&rel.as_str()) {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for (n, line) in code.lines().enumerate() {
            let line: String = line.split_whitespace().collect();
            if line.contains(".begin()")
                || line.contains("::begin(") && !line.contains("transaction::begin(")
                || line.contains("begin_with(")
            {
                found.push(format!("src/{rel}:{}: {}", n + 1, line));
            }
        }
    }
    assert!(
        found.is_empty(),
        "start transactions with crate::transaction::begin (or transaction::write):\n{}",
        found.join("\n")
    );
}
