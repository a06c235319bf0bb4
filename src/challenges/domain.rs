//! What makes a valid challenge: a title, a scenario, evidence items that keep their source,
//! ordered hints with a credit cost, the answer, and a rubric of weighted concepts; and how a
//! hypothesis is graded against the rubric.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use rust_stemmers::{Algorithm, Stemmer};

use crate::domain::DomainError;
use crate::evidence::domain::check_text as text;
pub use crate::evidence::domain::{Evidence, EvidenceKind, Source};

/// A hypothesis scoring this much solves the challenge and ends the attempt.
pub const SOLVED_AT: f64 = 0.8;
/// The longest hypothesis graded.
pub const MAX_HYPOTHESIS_CHARS: usize = 2000;

/// A hint, in the order they are given, with what it costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Hint {
    pub text: String,
    /// Credits it costs, 0 or more
    pub cost: i32,
}

/// The answer, shown when an attempt ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub cause: String,
    pub fix: String,
    #[serde(default)]
    pub explanation: String,
}

/// A challenge as an editor writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChallengeDraft {
    pub title: String,
    /// The incident it was built from, e.g. INC-1187
    #[serde(default)]
    pub incident: Option<String>,
    /// What the learner sees first: the time, the symptoms, the system in a paragraph
    pub scenario: String,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    pub hints: Vec<Hint>,
    pub answer: Answer,
    pub rubric: Vec<Concept>,
}

impl ChallengeDraft {
    /// Checks every part, naming the first field that is wrong (`evidence[2].source.path`).
    pub fn check(&self) -> Result<(), DomainError> {
        text("title", &self.title, 200)?;
        text("scenario", &self.scenario, 20_000)?;
        if self.evidence.len() > 100 {
            return Err(DomainError::invalid("evidence", "at most 100 items"));
        }
        for (n, e) in self.evidence.iter().enumerate() {
            e.check(&format!("evidence[{n}]"))?;
        }
        if self.hints.len() > 20 {
            return Err(DomainError::invalid("hints", "at most 20 hints"));
        }
        for (n, h) in self.hints.iter().enumerate() {
            text(&format!("hints[{n}].text"), &h.text, 2000)?;
            if !(0..=10_000).contains(&h.cost) {
                return Err(DomainError::invalid(
                    &format!("hints[{n}].cost"),
                    "a cost from 0 to 10 000 credits",
                ));
            }
        }
        text("answer.cause", &self.answer.cause, 5000)?;
        text("answer.fix", &self.answer.fix, 5000)?;
        if self.answer.explanation.chars().count() > 20_000 {
            return Err(DomainError::invalid(
                "answer.explanation",
                "at most 20 000 characters",
            ));
        }
        if self.rubric.is_empty() || self.rubric.len() > 20 {
            return Err(DomainError::invalid("rubric", "1 to 20 concepts"));
        }
        for (n, c) in self.rubric.iter().enumerate() {
            let at = |f: &str| format!("rubric[{n}].{f}");
            text(&at("aspect"), &c.aspect, 100)?;
            text(&at("question"), &c.question, 300)?;
            if !(c.weight.is_finite() && c.weight > 0.0 && c.weight <= 100.0) {
                return Err(DomainError::invalid(
                    &at("weight"),
                    "a weight above 0, at most 100",
                ));
            }
            if c.phrases.is_empty() || c.phrases.iter().any(|p| p.trim().is_empty()) {
                return Err(DomainError::invalid(
                    &at("phrases"),
                    "at least one phrasing, none blank",
                ));
            }
            // Grading compares every phrasing with every answer: a few short ones, not a book.
            if c.phrases.len() > 50 || c.phrases.iter().any(|p| p.chars().count() > 200) {
                return Err(DomainError::invalid(
                    &at("phrases"),
                    "at most 50 phrasings of at most 200 characters each",
                ));
            }
            if c.synonyms.len() > 100
                || c.synonyms
                    .iter()
                    .any(|g| g.len() > 100 || g.iter().any(|w| w.chars().count() > 100))
            {
                return Err(DomainError::invalid(
                    &at("synonyms"),
                    "at most 100 groups of at most 100 words or phrases of at most 100 characters",
                ));
            }
        }
        Ok(())
    }
}

/// Hints as an editor's form writes them, one per line: `5 | The processor recovered …` (cost,
/// a bar, the text). A line without a cost costs nothing; a bad cost names its line.
pub fn hints_from_lines(lines: &str) -> Result<Vec<Hint>, DomainError> {
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(n, l)| match l.split_once('|') {
            Some((cost, text)) => {
                let cost = cost.trim().parse::<i32>().map_err(|_| {
                    DomainError::invalid(
                        &format!("hints[{n}].cost"),
                        format!("line {}: write the cost as a whole number before the bar, like 5 | the hint", n + 1),
                    )
                })?;
                Ok(Hint {
                    text: text.trim().to_owned(),
                    cost,
                })
            }
            None => Ok(Hint {
                text: l.to_owned(),
                cost: 0,
            }),
        })
        .collect()
}

/// Hints as [`hints_from_lines`] reads them.
pub fn hints_to_lines(hints: &[Hint]) -> String {
    hints
        .iter()
        .map(|h| format!("{} | {}", h.cost, h.text.replace('\n', " ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A hypothesis as a learner typed it: 1 to 2000 characters.
pub fn check_hypothesis(text: &str) -> Result<&str, DomainError> {
    let t = text.trim();
    if t.is_empty() || t.chars().count() > MAX_HYPOTHESIS_CHARS {
        return Err(DomainError::invalid(
            "text",
            format!("state your hypothesis in 1 to {MAX_HYPOTHESIS_CHARS} characters"),
        ));
    }
    Ok(t)
}

/// An attempt's outcome as people read it: `solved`, `gave_up` → "gave up", none yet → "still
/// playing".
pub fn outcome_words(outcome: &str) -> &'static str {
    match outcome {
        "solved" => "solved",
        "gave_up" => "gave up",
        _ => "still playing",
    }
}

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
    for w in words(text) {
        if w.chars().count() < 4
            || !w.chars().all(char::is_alphabetic)
            || NEGATIONS.contains(&w.as_str())
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

// Grading: a learner's hypothesis against a challenge's rubric: each key concept has phrasings and
// synonym groups; a concept is covered when every word of one of its phrasings appears, after
// stemming (Snowball English) and synonym folding, within a few words of each other and not right
// after a negation. The score is the covered concepts' share of the rubric's weight; the feedback
// names the aspects covered and asks about the first one missing, never the answer.

/// One key concept of a rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Concept {
    /// What the learner is told they found: `the trigger`
    pub aspect: String,
    /// What the learner is asked while it is missing: `what made it worse?`
    pub question: String,
    /// Its share of the score, relative to the others
    pub weight: f64,
    /// Ways to say it: `retries at the same time`, `thundering herd`
    pub phrases: Vec<String>,
    /// Groups of words or phrases that mean the same here:
    /// `["at the same time", "simultaneously", "in lockstep"]`
    #[serde(default)]
    pub synonyms: Vec<Vec<String>>,
    /// A clue the evidence may show (the trigger the scenario names, where the load piled up);
    /// otherwise it is part of the answer and evidence that says it is flagged as a leak
    #[serde(default)]
    pub clue: bool,
}

/// What a hypothesis scored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Grade {
    /// 0 to 1
    pub score: f64,
    /// The aspects it covers
    pub covered: Vec<String>,
    /// For the learner: what they found and what to look at next
    pub feedback: String,
}

/// Words dropped before matching: they carry no meaning of their own here. Negations are not
/// among them.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "and", "or", "is", "are", "was", "were",
    "be", "been", "it", "its", "this", "that", "these", "those", "with", "by", "from", "as", "so",
    "then", "which", "who", "there", "their", "they", "them", "i", "we", "our", "think", "because",
    "due", "caused", "cause", "causing", "led", "lead", "s",
];

/// Words that turn what follows around: `not jittered`, `no retries`.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "without", "isn", "wasn", "aren", "weren", "don", "doesn", "didn", "nor",
    "neither", "rather",
];

/// How many words apart the words of one phrasing may stand.
const WINDOW: usize = 8;
/// How many words before a match a negation cancels it.
const NEGATION_REACH: usize = 3;

fn words(text: &str) -> Vec<String> {
    let stemmer = Stemmer::create(Algorithm::English);
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| {
            if NEGATIONS.contains(&w.as_str()) {
                w
            } else {
                stemmer.stem(&w).into_owned()
            }
        })
        .collect()
}

/// A concept's synonym groups as word sequences, longest first, each with its group's token.
fn synonym_table(c: &Concept) -> Vec<(Vec<String>, String)> {
    let mut table: Vec<(Vec<String>, String)> = c
        .synonyms
        .iter()
        .enumerate()
        .flat_map(|(n, group)| {
            group
                .iter()
                .map(move |member| (words(member), format!("#{n}")))
        })
        .filter(|(seq, _)| !seq.is_empty())
        .collect();
    table.sort_by_key(|(seq, _)| std::cmp::Reverse(seq.len()));
    table
}

/// Replaces every synonym (longest first) with its group's token.
fn fold(tokens: &[String], table: &[(Vec<String>, String)]) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        match table.iter().find(|(seq, _)| tokens[i..].starts_with(seq)) {
            Some((seq, token)) => {
                out.push(token.clone());
                i += seq.len();
            }
            None => {
                out.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// Whether every word of `phrase` stands within `WINDOW` words of the first, not after a
/// negation.
fn covers(text: &[String], phrase: &[String]) -> bool {
    if phrase.is_empty() {
        return false;
    }
    (0..text.len()).any(|start| {
        if !phrase.contains(&text[start]) {
            return false;
        }
        let window = &text[start..text.len().min(start + WINDOW)];
        let negated = text[start.saturating_sub(NEGATION_REACH)..start]
            .iter()
            .any(|w| NEGATIONS.contains(&w.as_str()));
        !negated && phrase.iter().all(|p| window.contains(p))
    })
}

/// Whether the hypothesis covers the concept.
pub fn covered(hypothesis: &str, c: &Concept) -> bool {
    let table = synonym_table(c);
    let text = fold(&words(hypothesis), &table);
    c.phrases
        .iter()
        .any(|p| covers(&text, &fold(&words(p), &table)))
}

/// Grades a hypothesis against a rubric.
pub fn grade(hypothesis: &str, rubric: &[Concept]) -> Grade {
    let total: f64 = rubric.iter().map(|c| c.weight.max(0.0)).sum();
    let (found, missing): (Vec<&Concept>, Vec<&Concept>) =
        rubric.iter().partition(|c| covered(hypothesis, c));
    let score = if total > 0.0 {
        found.iter().map(|c| c.weight.max(0.0)).sum::<f64>() / total
    } else {
        0.0
    };
    let covered: Vec<String> = found.iter().map(|c| c.aspect.clone()).collect();
    let feedback = match (covered.is_empty(), missing.first()) {
        (true, Some(next)) => format!(
            "Not there yet. Start with {}: {}",
            next.aspect, next.question
        ),
        (false, Some(next)) => format!(
            "You found {}. Next, {}: {}",
            join(&covered),
            next.aspect,
            next.question
        ),
        (_, None) => format!("You found {}: that is the whole story.", join(&covered)),
    };
    Grade {
        // `+ 0.0` turns the empty sum's −0.0 into 0.
        score: (score * 1000.0).round() / 1000.0 + 0.0,
        covered,
        feedback,
    }
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why an evidence item would give the game away.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Leak {
    /// The item's position in the evidence list
    pub evidence: usize,
    pub title: String,
    pub reason: String,
}

/// The leak guard: evidence must show things as they were when the learner's scenario begins
/// (the incident's detection). An item dated after it, or one that says part of the answer (a
/// rubric concept that is not a clue), is flagged for removal; publishing refuses while any is.
pub fn leaks(
    evidence: &[Evidence],
    rubric: &[Concept],
    detected_at: Option<DateTime<Utc>>,
) -> Vec<Leak> {
    let mut found = Vec::new();
    for (n, e) in evidence.iter().enumerate() {
        let mut flag = |reason: String| {
            found.push(Leak {
                evidence: n,
                title: e.title.clone(),
                reason,
            })
        };
        if let (Some(at), Some(detected)) = (e.source.at, detected_at)
            && at > detected
        {
            flag(format!(
                "written at {} UTC, after the incident was detected ({} UTC), where the learner's investigation begins",
                at.format("%Y-%m-%d %H:%M"),
                detected.format("%Y-%m-%d %H:%M")
            ));
        }
        for c in rubric.iter().filter(|c| !c.clue) {
            if covered(&e.text, c) || covered(&e.title, c) {
                flag(format!("it says {}, which is part of the answer", c.aspect));
            }
        }
    }
    found
}

#[cfg(test)]
mod grading_tests {
    use super::*;

    fn herd() -> Concept {
        Concept {
            aspect: "what made it worse".into(),
            question: "why did a short blip last so long?".into(),
            weight: 2.0,
            phrases: vec![
                "retries at the same time".into(),
                "thundering herd".into(),
                "deterministic backoff".into(),
            ],
            clue: false,
            synonyms: vec![
                vec!["retry".into(), "retries".into(), "reattempts".into()],
                vec![
                    "at the same time".into(),
                    "simultaneously".into(),
                    "in lockstep".into(),
                    "together".into(),
                ],
                vec![
                    "deterministic".into(),
                    "no jitter".into(),
                    "not jittered".into(),
                ],
            ],
        }
    }

    fn fix() -> Concept {
        Concept {
            aspect: "the fix".into(),
            question: "what would stop it happening again?".into(),
            weight: 1.0,
            phrases: vec!["add jitter".into(), "randomise backoff".into()],
            synonyms: vec![vec!["add".into(), "use".into(), "introduce".into()]],
            clue: false,
        }
    }

    #[test]
    fn other_words_for_the_same_idea_are_covered() {
        for h in [
            "All the reattempts fired simultaneously after the blip",
            "Retried payments came back in lockstep and swamped the workers",
            "a thundering herd of retries",
            "The backoff was not jittered, so every retry lined up",
        ] {
            assert!(covered(h, &herd()), "{h}");
        }
    }

    #[test]
    fn vague_wrong_or_negated_ones_are_not() {
        for h in [
            "something is wrong with payments",
            "the database ran out of connections",
            "retries are fine, it is the processor",
            "it was not a thundering herd",
        ] {
            assert!(!covered(h, &herd()), "{h}");
        }
    }

    #[test]
    fn the_leak_guard_flags_late_items_and_items_that_say_the_answer() {
        let item = |title: &str, text: &str, at: Option<&str>| Evidence {
            kind: EvidenceKind::Chat,
            title: title.into(),
            text: text.into(),
            source: Source {
                channel: Some("#incidents".into()),
                author: Some("Dev".into()),
                at: at.map(|t| t.parse().unwrap()),
                ..Default::default()
            },
        };
        let clue = Concept {
            clue: true,
            phrases: vec!["retry set".into()],
            synonyms: vec![],
            ..fix()
        };
        let evidence = [
            item(
                "ok",
                "p99 went from 240ms to 9s; retry set at 40k",
                Some("2026-10-21T22:14:00Z"),
            ),
            item("late", "shipped it", Some("2026-10-21T23:00:00Z")),
            item("says the fix", "we should add jitter", None),
        ];
        let flags = leaks(
            &evidence,
            &[herd(), fix(), clue],
            "2026-10-21T22:14:00Z".parse().ok(),
        );
        let flagged: Vec<(usize, &str)> = flags
            .iter()
            .map(|l| (l.evidence, l.reason.as_str()))
            .collect();
        assert_eq!(flagged.len(), 2, "{flagged:?}");
        assert_eq!(flagged[0].0, 1);
        assert!(
            flagged[0]
                .1
                .starts_with("written at 2026-10-21 23:00 UTC, after the incident was detected")
        );
        assert_eq!(
            flagged[1],
            (2, "it says the fix, which is part of the answer")
        );
    }

    #[test]
    fn the_score_is_the_covered_weight_and_feedback_asks_what_is_missing() {
        let rubric = [herd(), fix()];
        let g = grade("retries hit at the same time; introduce jitter", &rubric);
        assert_eq!(g.score, 1.0);
        assert_eq!(
            g.feedback,
            "You found what made it worse and the fix: that is the whole story."
        );
        let g = grade("a thundering herd", &rubric);
        assert!((g.score - 0.667).abs() < 1e-9, "{}", g.score);
        assert_eq!(
            g.feedback,
            "You found what made it worse. Next, the fix: what would stop it happening again?"
        );
        let g = grade("no idea", &rubric);
        assert_eq!(g.score, 0.0);
        assert!(
            g.feedback
                .starts_with("Not there yet. Start with what made it worse")
        );
        assert!(!g.feedback.contains("jitter"), "never the answer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_as_words() {
        assert_eq!(outcome_words("solved"), "solved");
        assert_eq!(outcome_words("gave_up"), "gave up");
        assert_eq!(outcome_words(""), "still playing");
    }

    #[test]
    fn hints_read_back_as_written_and_a_bad_cost_names_its_line() {
        let hints = hints_from_lines(
            "5 | Look at the retry set\n\n 10|  When do retries run again? \nFree hint",
        )
        .unwrap();
        assert_eq!(
            hints,
            [
                Hint {
                    text: "Look at the retry set".into(),
                    cost: 5
                },
                Hint {
                    text: "When do retries run again?".into(),
                    cost: 10
                },
                Hint {
                    text: "Free hint".into(),
                    cost: 0
                },
            ]
        );
        assert_eq!(hints_from_lines(&hints_to_lines(&hints)).unwrap(), hints);
        match hints_from_lines("5 | a\nfive | b").unwrap_err() {
            DomainError::Invalid { field, message } => {
                assert_eq!(field, "hints[1].cost");
                assert!(message.starts_with("line 2:"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    pub fn draft() -> ChallengeDraft {
        ChallengeDraft {
            title: "Checkout hangs".into(),
            incident: None,
            scenario: "It is 22:14 UTC.".into(),
            evidence: vec![Evidence {
                kind: EvidenceKind::Code,
                title: "retryQueue.ts".into(),
                text: "async function scheduleRetry() {}".into(),
                source: Source {
                    repository: Some("payments-worker".into()),
                    path: Some("src/retry/retryQueue.ts".into()),
                    ..Default::default()
                },
            }],
            hints: vec![Hint {
                text: "Look at the retry set".into(),
                cost: 10,
            }],
            answer: Answer {
                cause: "Synchronised retries".into(),
                fix: "Full jitter".into(),
                explanation: String::new(),
            },
            rubric: vec![Concept {
                aspect: "the fix".into(),
                question: "what would stop it?".into(),
                weight: 1.0,
                phrases: vec!["jitter".into()],
                synonyms: vec![],
                clue: false,
            }],
        }
    }

    #[test]
    fn a_challenge_is_checked_naming_the_field() {
        assert!(draft().check().is_ok());
        let field = |d: ChallengeDraft| match d.check() {
            Err(DomainError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let mut d = draft();
        d.evidence[0].source.path = None;
        assert_eq!(field(d), "evidence[0].source.path");
        let mut d = draft();
        d.hints[0].cost = -1;
        assert_eq!(field(d), "hints[0].cost");
        let mut d = draft();
        d.rubric.clear();
        assert_eq!(field(d), "rubric");
        let mut d = draft();
        d.rubric[0].weight = 0.0;
        assert_eq!(field(d), "rubric[0].weight");
        let mut d = draft();
        d.rubric[0].phrases.push("herd ".repeat(180_000));
        assert_eq!(field(d), "rubric[0].phrases", "no 900 KB phrasing");
        let mut d = draft();
        d.rubric[0].synonyms = vec![vec!["x".repeat(101)]];
        assert_eq!(field(d), "rubric[0].synonyms");
        let mut d = draft();
        d.evidence[0].source.commit = Some("f".repeat(900_000));
        assert_eq!(field(d), "evidence[0].source.commit", "no 900 KB commit");
        let mut d = draft();
        d.evidence[0].source.language = Some("rust".repeat(200));
        assert_eq!(field(d), "evidence[0].source.language");
        assert!(check_hypothesis("  ").is_err());
        assert!(check_hypothesis(&"x".repeat(2001)).is_err());
    }
}
