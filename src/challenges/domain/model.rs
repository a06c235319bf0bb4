//! A challenge as an editor writes it: a title, a scenario, evidence items that keep their
//! source, ordered hints with a credit cost, the answer, and a rubric of weighted concepts; and
//! the checks on what a learner sends.

use serde::{Deserialize, Serialize};

use crate::domain::DomainError;
use crate::evidence::domain::Evidence;
use crate::evidence::domain::check_text as text;

/// What part of the story a concept is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Why it happened; denied, it counts against
    #[default]
    Cause,
    /// How it played out; denied, it counts against
    Mechanism,
    /// What stops it happening again; it counts when proposed, against when blamed
    Fix,
}

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
    /// Cause (the default), mechanism or fix: how a claim about it is read
    #[serde(default)]
    pub role: Role,
}

/// A hypothesis scoring this much solves the challenge and ends the attempt.
pub const SOLVED_AT: f64 = 0.8;
/// Hypotheses free of cost on a ranked attempt. Guessing costs rank, not credit: each one after
/// these takes a tenth off the score the leaderboard counts, down to half of it. Play stays free
/// (a learner out of credit can still think aloud), while trying phrasings until one scores stops
/// paying.
pub const FREE_GUESSES: i64 = 3;

/// The score a ranked attempt counts: its best score, less a tenth for each hypothesis after the
/// [`FREE_GUESSES`], never below half.
pub fn ranked_score(best: f64, guesses: i64) -> f64 {
    let extra = (guesses - FREE_GUESSES).max(0) as f64;
    (best * (1.0 - 0.1 * extra).max(0.5) * 1000.0).round() / 1000.0
}

/// Credit earned by solving a challenge on a ranked attempt (the first, not looked up).
pub const SOLVE_REWARD: i32 = 20;
/// What each hint taken takes off it.
pub const REWARD_LESS_PER_HINT: i32 = 5;

/// The credit a ranked solve earns after `hints` hints: 20, less 5 a hint, never below 0.
pub fn reward(hints: usize) -> i32 {
    let hints = i32::try_from(hints).unwrap_or(i32::MAX);
    SOLVE_REWARD
        .saturating_sub(REWARD_LESS_PER_HINT.saturating_mul(hints))
        .max(0)
}

/// A hypothesis scoring at least this, short of solving, waits for an editor's verdict: the
/// grader's uncertain middle.
pub const UNCERTAIN_FROM: f64 = 0.3;

/// A challenge's judged hypotheses as a labelled set: `label<TAB>hypothesis` lines (tabs and
/// line breaks in a text become spaces) after comment lines naming the challenge and giving its
/// rubric as JSON (`# rubric<TAB>[…]`), which `scripts/bench-grading` reads.
pub fn labelled_set(title: &str, rubric: &[Concept], lines: &[(String, String)]) -> String {
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = format!(
        "# label\thypothesis — the labelled set of the challenge \"{}\", from its editors' verdicts\n# rubric\t{}\n",
        flat(title),
        serde_json::to_string(rubric).unwrap_or_else(|_| "[]".into())
    );
    for (label, text) in lines {
        out.push_str(&format!("{label}\t{}\n", flat(text)));
    }
    out
}

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
    /// The team that owns it (slug or name); left out, the team of its incident's service
    #[serde(default)]
    pub team: Option<String>,
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
    /// Leaves out the evidence items and hints named by these fields (`evidence[2]`,
    /// `hints[0]`, as the leak guard names them); other fields are left as they are.
    pub fn without(&mut self, fields: &[String]) {
        let kept = |part: &str, n: usize| !fields.contains(&format!("{part}[{n}]"));
        let mut n = 0;
        self.evidence.retain(|_| {
            n += 1;
            kept("evidence", n - 1)
        });
        let mut n = 0;
        self.hints.retain(|_| {
            n += 1;
            kept("hints", n - 1)
        });
    }

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::challenges::domain::Role;
    use crate::evidence::domain::{EvidenceKind, Source};

    #[test]
    fn a_solve_earns_less_for_each_hint() {
        assert_eq!(reward(0), 20);
        assert_eq!(reward(2), 10);
        assert_eq!(reward(4), 0);
        assert_eq!(reward(usize::MAX), 0);
    }

    #[test]
    fn guessing_costs_rank_after_three() {
        assert_eq!(ranked_score(0.9, 1), 0.9);
        assert_eq!(ranked_score(0.9, 3), 0.9);
        assert_eq!(ranked_score(0.9, 4), 0.81);
        assert_eq!(ranked_score(1.0, 8), 0.5);
        assert_eq!(ranked_score(1.0, 40), 0.5);
    }

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
            team: None,
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
                role: Role::Fix,
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
