use chrono::{DateTime, Utc};

use super::language::words;
use super::model::{Answer, ChallengeDraft, Concept, Hint, Role};
use crate::evidence::domain::{Evidence, EvidenceKind, Source};

/// What a published postmortem and its incident offer a challenge, gathered by the caller.
#[derive(Debug, Clone, Default)]
pub struct Material {
    pub key: String,
    pub service: Option<String>,
    pub service_description: String,
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

/// `INC-1187` and the like, which would let a learner look the answer up.
fn without_keys(text: &str, key: &str) -> String {
    text.replace(key, "the incident")
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

/// The most frequent meaningful words of a text, stemmed, most frequent first (ties: first
/// seen), at most `n`.
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

/// A first draft of a challenge from a published postmortem: the scenario from the symptoms and
/// the timeline up to detection, the cause withheld; evidence from what was attached to the
/// incident, the timeline up to detection, the suspect changes and the related incidents; hints from the contributing factors and the
/// detection section, cheapest first; the answer from the root cause and the action items; and
/// rubric concepts proposed from the root cause and the first action item. An editor refines it;
/// the leak guard says what still gives the answer away.
pub fn generate(m: &Material) -> ChallengeDraft {
    let key = m.key.as_str();
    let when = m.detected_at.format("%H:%M");
    let service = m.service.as_deref().unwrap_or("the service");
    let mut scenario = format!(
        "It is {when} UTC on {}. {}.",
        m.detected_at.format("%Y-%m-%d"),
        without_keys(m.opened_note.trim_end_matches('.'), key)
    );
    if !m.service_description.is_empty() {
        scenario.push_str(&format!(" {service}: {}", m.service_description));
    }
    scenario.push_str(&format!(
        "\n\nThe first errors came at about {} UTC. Find the cause and propose a fix.",
        m.started_at.format("%H:%M")
    ));
    // What responders attached comes first, as it was; the leak guard flags what was written
    // after detection or says the answer.
    let mut evidence: Vec<Evidence> = m.attached.iter().take(60).cloned().collect();
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
    let hints = bullets(&m.contributing_factors)
        .into_iter()
        .chain(bullets(&m.detection).into_iter().take(1))
        .take(20)
        .enumerate()
        .map(|(n, text)| Hint {
            text: without_keys(&text, key),
            cost: 5 * (n as i32 + 1),
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
    let pairs = |terms: &[String]| -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in terms.iter().enumerate() {
            for b in &terms[i + 1..] {
                out.push(format!("{a} {b}"));
            }
        }
        out
    };
    let cause_terms = salient(&m.root_cause, 4);
    let fix_terms = salient(fixes.first().copied().unwrap_or(&fix), 3);
    let mut rubric = Vec::new();
    if cause_terms.len() >= 2 {
        rubric.push(Concept {
            aspect: "the cause".into(),
            question: "what made it fail?".into(),
            weight: 0.6,
            phrases: pairs(&cause_terms),
            synonyms: vec![],
            clue: false,
            role: Role::Cause,
        });
    }
    if fix_terms.len() >= 2 {
        rubric.push(Concept {
            aspect: "the fix".into(),
            question: "what would stop it happening again?".into(),
            weight: 0.4,
            phrases: pairs(&fix_terms),
            synonyms: vec![],
            clue: false,
            role: Role::Fix,
        });
    }
    ChallengeDraft {
        title: format!(
            "{service}: what happened on {}?",
            m.detected_at.format("%Y-%m-%d")
        ),
        incident: Some(key.to_owned()),
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
    }
}
