//! Grading: a learner's hypothesis against a challenge's rubric, by what it claims rather than
//! which words it holds.
//!
//! A rubric is a few weighted concepts, each with phrasings (`retries together`) and groups of
//! words or phrases that mean the same here (`together`, `at the same time`, `in lockstep`).
//! Each word of a phrasing also stands for its WordNet lemmas and the words that share its most
//! frequent senses ([`super::lexicon`]). The hypothesis is split into sentences and clauses
//! ([`super::language`]); a concept is *asserted* when one clause holds every part of a phrasing
//! and the clause says it rather than denies it. Negation anywhere in the clause that reaches the
//! phrasing (`not`, `n't`, `never`, `no longer`), a denial (`is irrelevant`, `was fine`,
//! `ruled out`, `is enough`), or a contrast (`rather than`, `instead of`) turns it around:
//!
//! - a cause or mechanism denied counts *against* the hypothesis, as does one the learner asks
//!   to go back to (`go back to a fixed delay`);
//! - a fix counts only when it is proposed (`add`, `should`, `the fix is`, an imperative) or
//!   named as what was missing (`there is no jitter`); named as the cause (`the jitter broke
//!   it`), as already there, or as something not to do, it counts against;
//! - a clue (what the evidence shows anyway) counts when asserted and never against.
//!
//! The score is the asserted concepts' share of the rubric's weight less the share of those
//! counted against; any claim against the answer caps it at 0.3. A list of terms with no clause
//! structure scores nothing. Feedback speaks in the rubric's aspects and questions, the
//! challenge's own words, never in its phrasings.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::language::{Token, clauses, term_list};
use super::model::{ChallengeDraft, Concept, SOLVED_AT};

/// What a hypothesis scored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Grade {
    /// 0 to 1
    pub score: f64,
    /// The aspects it covers
    pub covered: Vec<String>,
    /// For the learner: what they found and what to look at next
    pub feedback: String,
    /// Some claim of it runs against the answer
    #[serde(skip)]
    pub against: bool,
}

/// A claim against the answer caps the score here, whatever else is right.
pub const AGAINST_CAP: f64 = 0.3;
mod phrasings;
mod stance;
mod words;

use phrasings::*;
use stance::*;

/// Grades a hypothesis against a rubric.
pub fn grade(hypothesis: &str, rubric: &[Concept]) -> Grade {
    let all = clauses(hypothesis);
    if term_list(&all) {
        return Grade {
            score: 0.0,
            covered: Vec::new(),
            feedback: "That reads as a list of words, not an explanation. Say in a sentence or two what happened, why, and what would stop it happening again.".into(),
            against: false,
        };
    }
    let claims = claims_of(all);
    let sentences = claims.iter().map(|c| c.sentence + 1).max().unwrap_or(0);
    let mut directive = vec![false; sentences];
    for c in &claims {
        if proposes(c, None) {
            directive[c.sentence] = true;
        }
    }
    let total: f64 = rubric.iter().map(|c| c.weight.max(0.0)).sum();
    let before = antecedents(&claims);
    let readings: Vec<Reading> = rubric
        .iter()
        .map(|c| read(c, &compile(c), &claims, &before, &directive))
        .collect();
    let share = |r: Reading| -> f64 {
        if total <= 0.0 {
            return 0.0;
        }
        rubric
            .iter()
            .zip(&readings)
            .filter(|(_, x)| **x == r)
            .map(|(c, _)| c.weight.max(0.0))
            .sum::<f64>()
            / total
    };
    let against: Vec<&Concept> = rubric
        .iter()
        .zip(&readings)
        .filter(|(_, r)| **r == Reading::Against)
        .map(|(c, _)| c)
        .collect();
    let mut score = (share(Reading::Asserted) + share(Reading::Implied) / 2.0
        - share(Reading::Against))
    .clamp(0.0, 1.0);
    if !against.is_empty() {
        score = score.min(AGAINST_CAP);
    }
    let found: Vec<&Concept> = rubric
        .iter()
        .zip(&readings)
        .filter(|(_, r)| **r == Reading::Asserted)
        .map(|(c, _)| c)
        .collect();
    // What to ask next: the first part of the answer still missing, else the first clue.
    let unsaid: Vec<&Concept> = rubric
        .iter()
        .zip(&readings)
        .filter(|(_, r)| **r != Reading::Asserted)
        .map(|(c, _)| c)
        .collect();
    let missing = unsaid.iter().find(|c| !c.clue).or(unsaid.first()).copied();
    let covered: Vec<String> = found.iter().map(|c| c.aspect.clone()).collect();
    let feedback = if let Some(wrong) = against.first() {
        format!(
            "Part of this runs against what the evidence shows about {}. Look again: {}",
            wrong.aspect, wrong.question
        )
    } else {
        match (covered.is_empty(), missing) {
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
        }
    };
    Grade {
        // `+ 0.0` turns the empty sum's −0.0 into 0.
        score: (score * 1000.0).round() / 1000.0 + 0.0,
        covered,
        feedback,
        against: !against.is_empty(),
    }
}

/// An answer an editor accepted, with the score its verdict stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub text: String,
    pub score: f64,
}

/// The score an editor's verdict stands for: right 1, partial 0.5, wrong 0.
pub fn verdict_score(verdict: &str) -> Option<f64> {
    match verdict {
        "right" => Some(1.0),
        "partial" => Some(0.5),
        "wrong" => Some(0.0),
        _ => None,
    }
}

/// The content words of a text as lemmas, and how many negations it holds.
fn gist(text: &str) -> (Vec<String>, usize) {
    let tokens: Vec<Token> = clauses(text).into_iter().flat_map(|c| c.tokens).collect();
    let negations = tokens.iter().filter(|t| t.negation()).count();
    let mut words: Vec<String> = tokens
        .into_iter()
        .filter(|t| !t.function)
        .map(|t| t.keys[0].clone())
        .collect();
    words.sort_unstable();
    words.dedup();
    (words, negations)
}

/// Whether a hypothesis says what an accepted answer says: mostly the same content words (their
/// lemmas; at least 0.6 of the two sets' union in common) and as many negations.
pub fn resembles(hypothesis: &str, accepted: &str) -> bool {
    let ((a, na), (b, nb)) = (gist(hypothesis), gist(accepted));
    if a.is_empty() || b.is_empty() || na != nb {
        return false;
    }
    let common = a.iter().filter(|w| b.contains(w)).count();
    let union = a.len() + b.len() - common;
    common as f64 >= 0.6 * union as f64
}

/// Grades a hypothesis, then lifts its score to that of an accepted answer it resembles, unless
/// it is a list of terms or runs against the answer.
pub fn grade_with(hypothesis: &str, rubric: &[Concept], accepted: &[Accepted]) -> Grade {
    let g = grade(hypothesis, rubric);
    if g.against || term_list(&clauses(hypothesis)) {
        return g;
    }
    let best = accepted
        .iter()
        .filter(|a| resembles(hypothesis, &a.text))
        .map(|a| a.score)
        .fold(0.0, f64::max);
    if best <= g.score {
        return g;
    }
    let feedback = if best >= SOLVED_AT {
        "An editor accepted an answer like this one: that is the whole story.".to_owned()
    } else {
        format!(
            "An editor judged an answer like this one partly right. {}",
            g.feedback
        )
    };
    Grade {
        score: best,
        feedback,
        ..g
    }
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why part of a challenge would give the game away.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Leak {
    /// Where it is: `scenario`, `hints[1]`, `evidence[2]`
    pub field: String,
    /// The evidence item's position, for an evidence item
    pub evidence: Option<usize>,
    pub title: String,
    pub reason: String,
}

/// The leak guard: what the learner sees before the end must show things as they were when the
/// scenario begins (the incident's detection). An evidence item dated after it is flagged; so is
/// the scenario, a hint or an evidence item that says part of the answer (a rubric concept that
/// is not a clue, asserted or denied). Publishing refuses while anything is flagged.
pub fn leaks(d: &ChallengeDraft, detected_at: Option<DateTime<Utc>>) -> Vec<Leak> {
    let mut found = Vec::new();
    // Each answer concept compiled once for every text read.
    let answer: Vec<(&Concept, Vec<Phrasing>)> = d
        .rubric
        .iter()
        .filter(|c| !c.clue)
        .map(|c| (c, compile(c)))
        .collect();
    let says = |texts: &[&str]| -> Vec<String> {
        answer
            .iter()
            .filter(|(_, p)| texts.iter().any(|t| said_in(t, p)))
            .map(|(c, _)| format!("it says {}, which is part of the answer", c.aspect))
            .collect()
    };
    for reason in says(&[&d.scenario]) {
        found.push(Leak {
            field: "scenario".into(),
            evidence: None,
            title: "The scenario".into(),
            reason,
        });
    }
    for (n, h) in d.hints.iter().enumerate() {
        for reason in says(&[&h.text]) {
            found.push(Leak {
                field: format!("hints[{n}]"),
                evidence: None,
                title: format!("Hint {}", n + 1),
                reason,
            });
        }
    }
    for (n, e) in d.evidence.iter().enumerate() {
        let mut flag = |reason: String| {
            found.push(Leak {
                field: format!("evidence[{n}]"),
                evidence: Some(n),
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
        for reason in says(&[&e.text, &e.title]) {
            flag(reason);
        }
    }
    found
}

#[cfg(test)]
mod tests;
