use chrono::{DateTime, Utc};

use super::grading::leaks;
use super::language::words;
use super::model::{Answer, ChallengeDraft, Concept, Hint, Role};
use super::thesaurus::{FAMILIES, Kind, tag};
use crate::evidence::domain::{Evidence, EvidenceKind, Source};

/// What a published postmortem and its incident offer a challenge, gathered by the caller.
#[derive(Debug, Clone, Default)]
pub struct Material {
    pub key: String,
    pub title: String,
    pub service: Option<String>,
    pub service_description: String,
    /// What the service depends on: (name, description)
    pub depends_on: Vec<(String, String)>,
    /// What depends on the service: (name, description)
    pub depended_on_by: Vec<(String, String)>,
    /// The postmortem's summary, which says the cause in a few words
    pub summary: String,
    pub started_at: DateTime<Utc>,
    pub detected_at: DateTime<Utc>,
    /// What opened the incident (the alert that fired)
    pub opened_note: String,
    /// Timeline entries up to detection: (when, what)
    pub timeline: Vec<(DateTime<Utc>, String)>,
    /// Changes suspected of it: (when, what, author)
    pub changes: Vec<(DateTime<Utc>, String, String)>,
    /// Related incidents: (key, title, note)
    pub related: Vec<(String, String, String)>,
    /// Evidence attached to the incident (code, chat, tickets, metrics), each with its source
    pub attached: Vec<Evidence>,
    pub root_cause: String,
    pub contributing_factors: String,
    pub detection: String,
    pub lessons: String,
    /// Action items: (type, action)
    pub actions: Vec<(String, String)>,
}

/// `INC-1187` and the like, which would let a learner look the answer up: every mention of the
/// key, in any case, as a word of its own (`INC-11870` is another incident).
fn without_keys(text: &str, key: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let key = key.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(at) = lower[from..].find(&key).map(|n| n + from) {
        let end = at + key.len();
        let alone = !lower[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric())
            && !lower[end..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit());
        out.push_str(&text[from..at]);
        out.push_str(if alone {
            "the incident"
        } else {
            &text[at..end]
        });
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// The bullets of a section (`•`, `-` or `*` lines), or its paragraphs.
fn bullets(text: &str) -> Vec<String> {
    let items: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter_map(|l| {
            l.strip_prefix('•')
                .or(l.strip_prefix("- "))
                .or(l.strip_prefix("* "))
        })
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    if items.is_empty() {
        text.split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        items
    }
}

/// A first draft of a challenge from a published postmortem: the scenario in the reference's
/// manner (see [`scenario`]), the cause withheld; evidence from what was attached to the incident,
/// the timeline up to detection, the suspect changes and the related incidents; hints from the
/// contributing factors and the detection section, cheapest first, leaving out any that says
/// what the proposed rubric calls the answer; the answer from the root
/// cause and the action items; and a rubric proposed from the root cause, the summary and the
/// action item that mends the cause (see [`rubric`]). An editor refines it; the leak guard says
/// what still gives the answer away.
pub fn generate(m: &Material) -> ChallengeDraft {
    let key = m.key.as_str();
    let service = m.service.as_deref().unwrap_or("the service");
    let reading = Reading::of(m);
    let scenario = scenario(m, &reading);
    // What responders attached comes first, as it was; the leak guard flags what was written
    // after detection or says the answer.
    let mut evidence: Vec<Evidence> = m
        .attached
        .iter()
        .take(60)
        .map(|e| Evidence {
            title: without_keys(&e.title, key),
            text: without_keys(&e.text, key),
            ..e.clone()
        })
        .collect();
    for (at, what, author) in &m.changes {
        evidence.push(Evidence {
            kind: EvidenceKind::Timeline,
            title: format!("Change at {} UTC", at.format("%H:%M")),
            text: if author.is_empty() {
                without_keys(what, key)
            } else {
                format!("{} (by {author})", without_keys(what, key))
            },
            source: Source {
                at: Some(*at),
                ..Default::default()
            },
        });
    }
    for (at, what) in m.timeline.iter().filter(|(at, _)| *at <= m.detected_at) {
        evidence.push(Evidence {
            kind: EvidenceKind::Timeline,
            title: format!("Timeline, {} UTC", at.format("%H:%M")),
            text: without_keys(what, key),
            source: Source {
                at: Some(*at),
                ..Default::default()
            },
        });
    }
    for (other, title, note) in &m.related {
        evidence.push(Evidence {
            kind: EvidenceKind::RelatedIncident,
            title: format!("{other} · {title}"),
            text: if note.is_empty() {
                title.clone()
            } else {
                note.clone()
            },
            source: Source {
                key: Some(other.clone()),
                ..Default::default()
            },
        });
    }
    let hints: Vec<Hint> = bullets(&m.contributing_factors)
        .into_iter()
        .chain(bullets(&m.detection).into_iter().take(1))
        .take(20)
        .map(|text| Hint {
            text: without_keys(&text, key),
            cost: 0,
        })
        .collect();
    let fixes: Vec<&str> = m
        .actions
        .iter()
        .filter(|(kind, _)| kind == "prevent" || kind == "mitigate")
        .map(|(_, a)| a.as_str())
        .collect();
    let fix = if fixes.is_empty() {
        m.actions
            .first()
            .map_or("(write the fix)".to_owned(), |(_, a)| a.clone())
    } else {
        fixes.join("; ")
    };
    let rubric = rubric(m, &reading);
    let mut draft = ChallengeDraft {
        title: format!(
            "{service}: what happened on {}?",
            m.detected_at.format("%Y-%m-%d")
        ),
        incident: Some(key.to_owned()),
        // its incident's service's team, when it is saved
        team: None,
        scenario,
        evidence,
        hints,
        answer: Answer {
            cause: if m.root_cause.trim().is_empty() {
                "(write the cause)".into()
            } else {
                m.root_cause.trim().to_owned()
            },
            fix,
            explanation: m.lessons.trim().to_owned(),
        },
        rubric,
    };
    // Within what a challenge may hold: evidence, hints and the answer cut to their limits.
    draft.evidence.truncate(100);
    for e in &mut draft.evidence {
        e.title = clip(&e.title, 200);
    }
    for h in &mut draft.hints {
        h.text = clip(&h.text, 2000);
    }
    draft.answer.cause = clip(&draft.answer.cause, 5000);
    draft.answer.fix = clip(&draft.answer.fix, 5000);
    draft.answer.explanation = clip(&draft.answer.explanation, 20_000);
    for c in &mut draft.rubric {
        c.phrases.truncate(50);
    }
    // A hint that says what the proposed rubric calls the answer gives it away: it is left out.
    // The rest cost 5, 10, 15 … credits, cheapest first.
    let flagged: Vec<String> = leaks(&draft, None)
        .into_iter()
        .map(|l| l.field)
        .filter(|f| f.starts_with("hints["))
        .collect();
    draft.without(&flagged);
    for (n, h) in draft.hints.iter_mut().enumerate() {
        h.cost = 5 * (n as i32 + 1);
    }
    draft
}

/// A postmortem read through the [`thesaurus`]: which families say the cause, which ones the
/// scenario may name, and which timeline lines before detection the scenario can tell.
struct Reading {
    /// The families of each clause of the root cause and the summary
    cause: Vec<Vec<usize>>,
    /// Conditions the scenario does not name: only the answer says them
    answer: Vec<usize>,
    /// Families the scenario names, and the symptoms the root cause names
    known: Vec<usize>,
    /// Timeline lines before detection the scenario tells: they carry a figure, name no change
    /// (changes are evidence of their own) and none of the answer's conditions
    figures: Vec<(DateTime<Utc>, String)>,
}

fn families(text: &str) -> Vec<usize> {
    let mut out: Vec<usize> = tag(text).into_iter().flatten().collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn kind(n: usize) -> Kind {
    FAMILIES[n].kind
}

impl Reading {
    fn of(m: &Material) -> Reading {
        let cause: Vec<Vec<usize>> = tag(&format!("{}\n\n{}", m.root_cause, m.summary));
        let named: Vec<usize> = cause.iter().flatten().copied().collect();
        let told = format!("{}\n\n{}", m.opened_note, system(m));
        let conditions = |known: &[usize]| -> Vec<usize> {
            let mut out: Vec<usize> = named
                .iter()
                .copied()
                .filter(|n| kind(*n) == Kind::Condition && !known.contains(n))
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        };
        let first = conditions(&families(&told));
        let figures: Vec<(DateTime<Utc>, String)> = m
            .timeline
            .iter()
            .filter(|(at, text)| {
                *at < m.detected_at
                    && text.chars().any(|c| c.is_ascii_digit())
                    && families(text)
                        .iter()
                        .all(|n| !first.contains(n) && FAMILIES[*n].head() != "change")
            })
            .take(4)
            .map(|(at, text)| (*at, without_keys(text, &m.key)))
            .collect();
        let mut known = families(&told);
        for (_, text) in &figures {
            known.extend(families(text));
        }
        known.extend(named.iter().filter(|n| kind(**n) == Kind::Symptom));
        known.sort_unstable();
        known.dedup();
        Reading {
            answer: conditions(&known),
            cause,
            known,
            figures,
        }
    }
}

/// A text of at most `max` characters: cut with `…` when longer.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// A count as the start of a sentence says it: `Three`, `12`.
fn counted(n: usize) -> String {
    const WORDS: [&str; 9] = [
        "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
    ];
    WORDS
        .get(n.wrapping_sub(2))
        .map_or(n.to_string(), |w| (*w).to_owned())
}

/// The system in a paragraph: the service, what it depends on, and what depends on it.
fn system(m: &Material) -> String {
    let Some(service) = m.service.as_deref() else {
        return String::new();
    };
    let sentence = |s: &str| {
        let s = s.trim();
        if s.ends_with(['.', '!', '?']) {
            s.to_owned()
        } else {
            format!("{s}.")
        }
    };
    let mut out = if m.service_description.trim().is_empty() {
        format!("This is {service}.")
    } else {
        format!("{service}: {}", sentence(&m.service_description))
    };
    let said = m
        .depends_on
        .iter()
        .map(|(name, d)| (format!("It depends on {name}"), d))
        .chain(
            m.depended_on_by
                .iter()
                .map(|(name, d)| (format!("{name} depends on it"), d)),
        );
    for (who, description) in said {
        if description.trim().is_empty() {
            out.push_str(&format!(" {who}."));
        } else {
            out.push_str(&format!(" {who}: {}", sentence(description)));
        }
    }
    out
}

/// The scenario as the reference writes one: the time it is now (detection), what raised it,
/// the symptoms with their figures from the timeline before detection, what the responders know
/// of the first errors and of recent changes (that none went out only when the change records
/// say so), then the system in a paragraph; the cause withheld.
fn scenario(m: &Material, r: &Reading) -> String {
    // A line ends as a sentence once; a long one is cut.
    let end = |s: &str| {
        let s = clip(s.trim(), 500);
        if s.ends_with(['.', '!', '?', '…']) {
            s
        } else {
            format!("{s}.")
        }
    };
    let mut s = format!(
        "It is {} UTC on {}.",
        m.detected_at.format("%H:%M"),
        m.detected_at.format("%Y-%m-%d")
    );
    let opened = without_keys(&m.opened_note, &m.key);
    if !opened.trim().is_empty() {
        s.push(' ');
        s.push_str(&end(&opened));
    }
    for (at, text) in &r.figures {
        // A line from another day says its date.
        let when = if at.date_naive() == m.detected_at.date_naive() {
            at.format("%H:%M").to_string()
        } else {
            at.format("%Y-%m-%d %H:%M").to_string()
        };
        s.push_str(&format!(" At {when} UTC: {}", end(text)));
    }
    // Minutes as the clocks shown read them: 02:00:50 to 02:09:10 is 9.
    let minute = |t: DateTime<Utc>| t.timestamp().div_euclid(60);
    let lead = minute(m.detected_at) - minute(m.started_at);
    if lead > 0 {
        s.push_str(&format!(
            " The first errors came at {} UTC, {lead} minute{} before anyone was told.",
            m.started_at.format("%H:%M"),
            if lead == 1 { "" } else { "s" }
        ));
    }
    if let Some(service) = m.service.as_deref() {
        match m.changes.len() {
            0 => s.push_str(&format!(
                " No deploy or configuration change to {service} or what it depends on is on record for the 24 hours before it started."
            )),
            1 => s.push_str(&format!(
                " One change to {service} or what it depends on went out in the 24 hours before it started; it is in the evidence."
            )),
            n => s.push_str(&format!(
                " {} changes to {service} or what it depends on went out in the 24 hours before it started; they are in the evidence.",
                counted(n)
            )),
        }
    }
    let system = system(m);
    s.push_str("\n\n");
    if !system.is_empty() {
        s.push_str(&system);
        s.push(' ');
    }
    s.push_str("Find the cause and propose a fix.");
    s
}

/// A concept of a proposed rubric: its phrasings are family heads, its synonym groups the
/// families' members.
fn concept(
    aspect: &str,
    question: &str,
    role: Role,
    clue: bool,
    weight: f64,
    phrases: Vec<Vec<usize>>,
) -> Concept {
    let mut used: Vec<usize> = phrases.iter().flatten().copied().collect();
    used.sort_unstable();
    used.dedup();
    Concept {
        aspect: aspect.into(),
        question: question.into(),
        weight,
        phrases: phrases
            .iter()
            .map(|p| {
                p.iter()
                    .map(|n| FAMILIES[*n].head())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect(),
        synonyms: used
            .iter()
            .map(|n| {
                FAMILIES[*n]
                    .members
                    .iter()
                    .map(|w| (*w).to_owned())
                    .collect()
            })
            .collect(),
        clue,
        role,
    }
}

/// The rubric proposed from the postmortem:
/// - what went wrong (half the score): the parts of the system the root cause and the summary
///   name with a condition only the answer says (a part the scenario names too counts when it is
///   the service's own or named most), each paired with those conditions where a
///   clause joins them (`connections` + `cap`), and any condition that says it all alone;
/// - the fix (three tenths): the prevent (else mitigate) action item that names most of what
///   went wrong; its mending verbs paired with what went wrong, and remedies by themselves
///   (the other fix items' too, where they name a part of what went wrong);
/// - clues sharing the rest: the trigger (the change when there are suspects, else what
///   happened first), what the symptoms were, and how it came to be (the answer's other
///   conditions).
fn rubric(m: &Material, r: &Reading) -> Vec<Concept> {
    let mut things: Vec<(usize, usize)> = Vec::new();
    for clause in &r.cause {
        let weight = clause.iter().filter(|n| r.answer.contains(n)).count();
        for t in clause.iter().filter(|n| kind(**n) == Kind::Thing) {
            // A part the scenario names counts half: the system around the cause.
            let weight = if r.known.contains(t) {
                weight
            } else {
                2 * weight
            };
            match things.iter_mut().find(|(x, _)| x == t) {
                Some((_, w)) => *w += weight,
                None => things.push((*t, weight)),
            }
        }
    }
    let top = things.iter().map(|(_, w)| *w).max().unwrap_or(0);
    // The parts the service is named for (`payments-worker`: the workers) are its own, never
    // the system around it.
    let own = families(&m.service.as_deref().unwrap_or_default().replace('-', " "));
    let central: Vec<usize> = things
        .iter()
        .filter(|(t, w)| *w > 0 && (!r.known.contains(t) || own.contains(t) || 2 * w > top))
        .map(|(t, _)| *t)
        .collect();
    let mut wrong: Vec<Vec<usize>> = Vec::new();
    for clause in &r.cause {
        for t in clause.iter().filter(|n| central.contains(n)) {
            for c in clause.iter().filter(|n| r.answer.contains(n)) {
                let p = vec![*t, *c];
                if !wrong.contains(&p) {
                    wrong.push(p);
                }
            }
        }
    }
    for c in r.answer.iter().filter(|n| FAMILIES[**n].alone) {
        wrong.push(vec![*c]);
    }
    let in_wrong: Vec<usize> = wrong.iter().flatten().copied().collect();
    // The fix items (prevent, then mitigate), each read once: (text, families).
    let fixes: Vec<(&str, Vec<usize>)> = ["prevent", "mitigate"]
        .iter()
        .flat_map(|k| m.actions.iter().filter(move |(kind, _)| kind == k))
        .map(|(_, a)| (a.as_str(), families(a)))
        .collect();
    let mends = |item: &[usize]| item.iter().filter(|n| in_wrong.contains(n)).count();
    // The one that names most of what went wrong; the first of equals.
    let chosen = (0..fixes.len()).max_by_key(|&i| (mends(&fixes[i].1), std::cmp::Reverse(i)));
    let best = chosen.map(|i| &fixes[i].1);
    let mut fix: Vec<Vec<usize>> = Vec::new();
    if let Some(item) = &best {
        // A remedy brings its kin: `jitter` in the item, `random backoff` from the learner.
        let mut item = (*item).clone();
        for f in item.clone() {
            for k in FAMILIES[f].kin {
                if let Some(n) = FAMILIES.iter().position(|x| x.head() == *k)
                    && !item.contains(&n)
                {
                    item.push(n);
                }
            }
        }
        for f in &item {
            match kind(*f) {
                Kind::Remedy if FAMILIES[*f].alone => fix.push(vec![*f]),
                // `random` said of the backoff or the retries.
                Kind::Remedy => {
                    for o in item
                        .iter()
                        .filter(|n| in_wrong.contains(n) || kind(**n) == Kind::Thing)
                    {
                        fix.push(vec![*f, *o]);
                    }
                }
                Kind::Mend => {
                    for o in item.iter().filter(|n| in_wrong.contains(n)) {
                        fix.push(vec![*f, *o]);
                    }
                }
                // What to size it from: `the limit from traffic`.
                Kind::Symptom => {
                    for o in item.iter().filter(|n| in_wrong.contains(n)) {
                        fix.push(vec![*o, *f]);
                    }
                }
                _ => {}
            }
        }
    }
    // The other fixes' remedies that mend a part of what went wrong count by themselves:
    // `dedupe scheduled retries`.
    for (i, (_, item)) in fixes.iter().enumerate() {
        if chosen == Some(i) || mends(item) == 0 {
            continue;
        }
        for f in item
            .iter()
            .filter(|n| kind(**n) == Kind::Remedy && FAMILIES[**n].alone)
        {
            if !fix.contains(&vec![*f]) {
                fix.push(vec![*f]);
            }
        }
    }
    let named: Vec<usize> = r.cause.iter().flatten().copied().collect();
    // What mitigated it (a rollback the summary tells of) mends it too, when a change is to
    // blame: by itself, or said of the change or of what went wrong.
    if !m.changes.is_empty() {
        for f in named
            .iter()
            .filter(|n| FAMILIES[**n].head() == "revert" && best.is_none_or(|b| !b.contains(n)))
        {
            if !fix.contains(&vec![*f]) {
                fix.push(vec![*f]);
            }
        }
    }
    let trigger: Vec<Vec<usize>> = named
        .iter()
        .copied()
        .filter(|n| kind(*n) == Kind::Event)
        .filter(|n| !m.changes.is_empty() || FAMILIES[*n].head() != "change")
        .take(1)
        .map(|n| vec![n])
        .collect();
    let mut symptoms: Vec<Vec<usize>> = Vec::new();
    for n in named
        .iter()
        .filter(|n| r.known.contains(n) && matches!(kind(**n), Kind::Symptom | Kind::Condition))
    {
        if !symptoms.contains(&vec![*n]) {
            symptoms.push(vec![*n]);
        }
    }
    let mut came: Vec<Vec<usize>> = Vec::new();
    for n in r.answer.iter().filter(|n| !in_wrong.contains(n)) {
        came.push(vec![*n]);
    }
    // Each clue or side of the story weighs a twentieth: what went wrong and the fix together
    // solve it, clues alone never reach a fifth.
    let share = 0.05;
    let mut rubric = Vec::new();
    if !trigger.is_empty() {
        let question = if m.changes.is_empty() {
            "what happened just before it started?"
        } else {
            "what changed before it started?"
        };
        rubric.push(concept(
            "the trigger",
            question,
            Role::Cause,
            true,
            share,
            trigger,
        ));
    }
    if !symptoms.is_empty() {
        rubric.push(concept(
            "what the symptoms were",
            "what did the requests go through while it lasted?",
            Role::Mechanism,
            true,
            share,
            symptoms,
        ));
    }
    if !wrong.is_empty() {
        rubric.push(concept(
            "what went wrong",
            "what made it fail?",
            Role::Cause,
            false,
            0.5,
            wrong,
        ));
    }
    if !came.is_empty() {
        rubric.push(concept(
            "how it came to be",
            "why was it that way on the day?",
            Role::Cause,
            false,
            share,
            came,
        ));
    }
    if !fix.is_empty() {
        rubric.push(concept(
            "the fix",
            "what would stop it happening again?",
            Role::Fix,
            false,
            0.3,
            fix,
        ));
    }
    // Words none of the families hold: the most frequent ones, in pairs, for an editor to refine.
    let fallback = |aspect: &str, question: &str, role: Role, weight: f64, text: &str| {
        let mut terms = salient(text, 4);
        if terms.is_empty() {
            // Only short words: `DNS.`
            terms = words(text)
                .into_iter()
                .filter(|t| !t.function && !t.negation())
                .map(|t| t.word)
                .take(2)
                .collect();
        }
        let mut phrases = Vec::new();
        for (i, a) in terms.iter().enumerate() {
            for b in &terms[i + 1..] {
                phrases.push(format!("{a} {b}"));
            }
        }
        if let [only] = terms.as_slice() {
            phrases.push(only.clone());
        }
        (!phrases.is_empty()).then(|| Concept {
            aspect: aspect.into(),
            question: question.into(),
            weight,
            phrases,
            synonyms: Vec::new(),
            clue: false,
            role,
        })
    };
    if !rubric.iter().any(|c| !c.clue && c.role != Role::Fix) {
        let told = [&m.root_cause, &m.summary, &m.title]
            .into_iter()
            .find(|t| !t.trim().is_empty())
            .map_or("", |t| t.as_str());
        rubric.extend(fallback(
            "what went wrong",
            "what made it fail?",
            Role::Cause,
            0.5,
            told,
        ));
    }
    if !rubric.iter().any(|c| c.role == Role::Fix)
        && let Some((first, _)) = fixes.first()
    {
        rubric.extend(fallback(
            "the fix",
            "what would stop it happening again?",
            Role::Fix,
            0.3,
            first,
        ));
    }
    rubric
}

/// The most frequent meaningful words of a text by their first lemma, most frequent first
/// (ties: first seen), at most `n`.
fn salient(text: &str, n: usize) -> Vec<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for t in words(text) {
        let w = t.keys[0].clone();
        if t.function
            || t.negation()
            || w.chars().count() < 4
            || !w.chars().all(char::is_alphabetic)
        {
            continue;
        }
        match counts.iter_mut().find(|(k, _)| *k == w) {
            Some((_, c)) => *c += 1,
            None => counts.push((w, 1)),
        }
    }
    let mut ranked: Vec<(usize, (String, usize))> = counts.into_iter().enumerate().collect();
    ranked.sort_by_key(|(first, (_, c))| (std::cmp::Reverse(*c), *first));
    ranked.into_iter().take(n).map(|(_, (w, _))| w).collect()
}

#[cfg(test)]
mod tests;
