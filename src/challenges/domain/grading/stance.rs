//! How a clause stands toward what it says: asserted, denied, proposed, blamed, taken back.

use super::phrasings::*;
use super::words::*;
use crate::challenges::domain::language::{Clause, Token, clauses};
use crate::challenges::domain::lexicon::lexicon;
use crate::challenges::domain::model::{Concept, Role};

/// How a clause stands toward the phrasings it says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stance {
    /// A negation reaches it: `retries did not line up`, `not jittered`
    pub(super) negated: bool,
    /// A word denies it: `jitter is irrelevant`, `the retries are fine`
    pub(super) denied: bool,
    /// Named as missing: `no jitter`, `lack of jitter`, `attempts are not deduplicated`
    pub(super) absent: bool,
    /// Blamed: `jitter broke it`
    pub(super) blamed: bool,
    /// Said to be there already
    pub(super) already: bool,
    /// Asked to be put back: `go back to a fixed delay`
    pub(super) restored: bool,
    /// Asked to be taken away: `remove the jitter`
    pub(super) removed: bool,
    /// Said to be there: `ours has jitter`
    pub(super) present: bool,
    /// Blamed in words no proposal softens: `adding jitter would make it worse`
    pub(super) condemned: bool,
}

/// Reads a clause's stance toward the spans that say a concept.
pub(super) fn stance(clause: &Clause, spans: &[(usize, usize)]) -> Stance {
    let tokens = &clause.tokens;
    let inside = |i: usize| spans.iter().any(|&(a, b)| a <= i && i <= b);
    let first = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let last = spans.iter().map(|s| s.1).max().unwrap_or(0);
    // A negated denial (`not enough`, `not fine`) is neither.
    let negates_denial = |i: usize| {
        (i + 1..tokens.len().min(i + 4)).any(|j| word_in(&tokens[j], DENIALS) && !inside(j))
    };
    let mut negated = clause.rejected;
    let mut absent = false;
    for (i, t) in tokens.iter().enumerate() {
        if inside(i) {
            continue;
        }
        // `no one noticed that …`: the negation is the noticing's.
        let knowing = tokens[i + 1..tokens.len().min(i + 3)]
            .iter()
            .any(|t| word_in(t, KNOWING));
        if t.negation() && !negates_denial(i) && !knowing {
            // Before the phrasing or among its words (`no longer retried together`, `attempts
            // are not deduplicated`): named as not so, or as missing. After it, only with a
            // verb's helpers between (`jitter is not the problem`).
            // A conjunction between ends its reach: `10 connections could not carry the peak and
            // requests queued` says the requests queued.
            let reaches_a_part = spans.iter().any(|&(a, _)| {
                a > i
                    && !tokens[i..a]
                        .iter()
                        .any(|t| word_in(t, &["and", "or", "but"]))
            }) || spans.iter().any(|&(a, b)| a < i && i < b);
            if i < last {
                if reaches_a_part {
                    negated = true;
                    absent = true;
                }
            } else if tokens[last + 1..i].iter().all(|t| word_in(t, COPULA))
                && !tokens.get(i + 1).is_some_and(|t| word_in(t, OUTCOMES))
            {
                negated = true;
            }
        }
        if word_in(t, ABSENCE) && i < first {
            absent = true;
        }
    }
    // A denial of what the thing is worth (`irrelevant`, `enough`, `a myth`) reaches it from
    // anywhere in the clause; one of a state (`fine`, `healthy`) only when said of it: after it
    // with only a verb's helpers between, or just before it — not of something else in the
    // clause (`after the processor was healthy again`).
    let denies = |i: usize| {
        let t = &tokens[i];
        if !word_in(t, DENIALS) || inside(i) {
            return false;
        }
        let before = |j: usize| i.checked_sub(j).map(|k| tokens[k].word.as_str());
        // `not fine`: a denial denied; `went wrong`: a turn of phrase; `big enough bursts`:
        // a measure, where `is enough` denies.
        let negated = (i.saturating_sub(3)..i).any(|j| tokens[j].negation());
        let idiom = t.word == "wrong"
            && matches!(
                before(1),
                Some("went" | "go" | "goes" | "going" | "gone" | "something")
            );
        let measure = t.word == "enough" && i > 0 && !word_in(&tokens[i - 1], COPULA);
        let of_it = (i > last && tokens[last + 1..i].iter().all(|t| word_in(t, COPULA)))
            || (i < first && first - i <= 2);
        !negated && !idiom && !measure && (of_it || !word_in(t, STATES))
    };
    let denied = (0..tokens.len()).any(denies);
    let outside = |list: &[&str]| {
        tokens
            .iter()
            .enumerate()
            .any(|(i, t)| !inside(i) && word_in(t, list))
    };
    Stance {
        negated,
        denied,
        absent,
        blamed: outside(BLAME),
        already: outside(&["already"]),
        restored: tokens[..first].iter().any(|t| word_in(t, RESTORE))
            || tokens[..first]
                .windows(2)
                .any(|w| word_in(&w[0], RESTORE_TO) && w[1].word == "to"),
        removed: tokens[..first].iter().any(|t| word_in(t, REMOVE)),
        present: outside(PRESENT),
        condemned: outside(&["worse", "villain", "culprit"]),
    }
}

/// A proposal put as a question: `why not …?` (read as `why …?`), `how about …?`. Any other
/// question asserts nothing.
pub(super) fn suggests(clause: &Clause) -> bool {
    clause.question
        && (clause.starts_with(&["why"])
            || clause.starts_with(&["how", "about"])
            || clause.starts_with(&["what", "about"]))
}

/// Whether a clause proposes rather than describes: a word of advice, or an imperative. An
/// imperative's first word is a verb's base form that is not also a noun (`randomize`), or one
/// followed by a word of grammar (`spread the retries`, `size it`), or one the fix follows
/// closely (`add full jitter`; `fix_at` is where the fix begins); and no verb's helper follows
/// it (`jitter is what broke it`, `queue wait counts` are descriptions).
pub(super) fn proposes(clause: &Clause, fix_at: Option<usize>) -> bool {
    let tokens = &clause.tokens;
    if suggests(clause) {
        return true;
    }
    // `it must be the processor` guesses; `we must add jitter` proposes.
    let epistemic = |i: usize| {
        matches!(tokens[i].word.as_str(), "must" | "would")
            && tokens
                .get(i + 1)
                .is_some_and(|t| matches!(t.word.as_str(), "be" | "have"))
    };
    if (0..tokens.len()).any(|i| word_in(&tokens[i], DIRECTIVES) && !epistemic(i))
        || tokens
            .windows(2)
            .any(|w| matches!(w[0].word.as_str(), "has" | "have") && w[1].word == "to")
    {
        return true;
    }
    let Some(start) = tokens.iter().position(|t| !word_in(t, OPENERS)) else {
        return false;
    };
    let first = &tokens[start];
    let next = tokens.get(start + 1);
    if first.word == "do" && next.is_some_and(|t| t.word == "not") {
        // `do not add jitter`
        return true;
    }
    if first.word == "have"
        && next.is_some_and(|t| t.function && !word_in(t, AUXILIARIES) && t.word != "to")
    {
        // `have each retry wait a random time`
        return true;
    }
    if next.is_some_and(|t| word_in(t, AUXILIARIES)) {
        return false;
    }
    if fix_at == Some(start)
        && next.is_none_or(|t| {
            matches!(
                t.word.as_str(),
                "the" | "a" | "an" | "each" | "every" | "our" | "its" | "their" | "them" | "it"
            )
        })
    {
        // `jitter the backoff`, but not `jitter caused it`
        return true;
    }
    let l = lexicon();
    let base_verb = !first.function
        && first.keys.first().is_some_and(|k| *k == first.word)
        && l.is_verb(&first.word)
        && !first.word.ends_with("ing");
    base_verb
        && (!l.is_noun(&first.word)
            || next.is_some_and(|t| t.function)
            || fix_at.is_some_and(|f| f > start && f <= start + 3))
}

/// What a concept comes to in a hypothesis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Reading {
    Asserted,
    /// Only implied: a fix named as what was missing (`there is no jitter`) is half of
    /// proposing it
    Implied,
    Against,
    Unsaid,
}

/// The spans of a clause that say a concept, by any of its phrasings.
pub(super) fn said(phrasings: &[Phrasing], tokens: &[Token]) -> Vec<(usize, usize)> {
    phrasings
        .iter()
        .filter_map(|p| find(p, tokens))
        .flatten()
        .collect()
}

/// Words that point back to something the clause before named.
pub(super) const POINTING_BACK: &[&str] = &["it", "they", "them", "this", "these", "those"];

/// Like [`said`], but a pronoun may stand for one part of a phrasing that the clause before
/// says: `the limit was too low. Increase it.` says `raise the limit`. Every other part must
/// stand in the clause itself, and a phrasing of one part never comes from a pronoun alone.
pub(super) fn said_with_antecedent(
    phrasings: &[Phrasing],
    tokens: &[Token],
    before: Option<&[Token]>,
) -> Vec<(usize, usize)> {
    let direct = said(phrasings, tokens);
    let Some(before) = before else {
        return direct;
    };
    if !direct.is_empty() {
        return direct;
    }
    let pronouns: Vec<usize> = (0..tokens.len())
        .filter(|&i| word_in(&tokens[i], POINTING_BACK))
        .collect();
    if pronouns.is_empty() {
        return direct;
    }
    for p in phrasings.iter().filter(|p| p.slots.len() >= 2) {
        for k in 0..p.slots.len() {
            let Slot::Words(_) = &p.slots[k] else {
                continue;
            };
            let named_before = find(
                &Phrasing {
                    slots: vec![p.slots[k].clone()],
                },
                before,
            )
            .is_some();
            if !named_before {
                continue;
            }
            let rest = Phrasing {
                slots: p
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(n, _)| *n != k)
                    .map(|(_, s)| s.clone())
                    .collect(),
            };
            if !rest.slots.iter().any(|s| matches!(s, Slot::Words(_))) {
                continue;
            }
            if let Some(mut spans) = find(&rest, tokens)
                && let Some(&q) = pronouns
                    .iter()
                    .find(|&&q| spans.iter().all(|&(a, b)| q < a || q > b))
            {
                spans.push((q, q));
                return spans;
            }
        }
    }
    direct
}

/// How one clause bears on a concept.
pub(super) fn reading(
    c: &Concept,
    clause: &Clause,
    spans: &[(usize, usize)],
    directive: bool,
) -> Reading {
    let s = stance(clause, spans);
    let first = spans.iter().map(|s| s.0).min();
    let proposed = proposes(clause, first.filter(|_| c.role == Role::Fix && !c.clue));
    let in_proposal = proposed || directive;
    if clause.contrasted {
        // Set aside (`rather than a fixed delay`): neither said nor denied.
        return Reading::Unsaid;
    }
    let negative = s.negated || s.denied;
    if c.clue {
        return if negative {
            Reading::Unsaid
        } else {
            Reading::Asserted
        };
    }
    match c.role {
        Role::Cause | Role::Mechanism => {
            if s.restored && in_proposal && !negative {
                // `go back to a fixed delay`
                Reading::Against
            } else if negative {
                if in_proposal {
                    // `add jitter so retries do not line up`
                    Reading::Unsaid
                } else {
                    Reading::Against
                }
            } else if proposed {
                // Named in what is asked for, not in what is explained: `raise the connection
                // limit` says the fix, not that the limit was the cause.
                Reading::Unsaid
            } else {
                Reading::Asserted
            }
        }
        Role::Fix => {
            if s.denied
                || (s.blamed && !s.negated && (!proposed || s.condemned))
                || (s.already && !s.negated)
                || (s.removed && in_proposal)
                || (s.present && !s.negated && !s.absent && !in_proposal)
            {
                // `jitter is irrelevant`, `the jitter broke it`, `adding jitter would make it
                // worse`, `jitter is already there`, `ours has jitter`, `remove the jitter`
                Reading::Against
            } else if s.negated || s.absent {
                if proposed {
                    // `do not add jitter`, `dedupe would not help`
                    Reading::Against
                } else {
                    // `there is no jitter`, `attempts are not deduplicated`: what was missing
                    Reading::Implied
                }
            } else if in_proposal {
                Reading::Asserted
            } else {
                Reading::Unsaid
            }
        }
    }
}

/// Reads one concept from a hypothesis's clauses: against if any clause counts against it,
/// else asserted if any asserts it.
pub(super) fn read(
    c: &Concept,
    phrasings: &[Phrasing],
    clauses: &[Clause],
    before: &[Vec<Token>],
    directive: &[bool],
) -> Reading {
    let mut out = Reading::Unsaid;
    for (clause, before) in clauses.iter().zip(before) {
        let before = (!before.is_empty()).then_some(before.as_slice());
        let spans = said_with_antecedent(phrasings, &clause.tokens, before);
        if spans.is_empty() {
            continue;
        }
        out = match (out, reading(c, clause, &spans, directive[clause.sentence])) {
            (Reading::Against, _) | (_, Reading::Against) => Reading::Against,
            (Reading::Asserted, _) | (_, Reading::Asserted) => Reading::Asserted,
            (Reading::Implied, _) | (_, Reading::Implied) => Reading::Implied,
            _ => Reading::Unsaid,
        };
    }
    out
}

/// For each clause, what a pronoun in it may point back to: the clauses before it in its
/// sentence and the two sentences before (`;` ends one).
pub(super) fn antecedents(clauses: &[Clause]) -> Vec<Vec<Token>> {
    (0..clauses.len())
        .map(|n| {
            clauses[..n]
                .iter()
                .filter(|b| b.sentence + 2 >= clauses[n].sentence)
                .flat_map(|b| b.tokens.iter().cloned())
                .collect()
        })
        .collect()
}

/// Whether a text says a concept (its phrasings compiled) at all, asserted or denied: the leak
/// guard's test.
pub(super) fn said_in(text: &str, phrasings: &[Phrasing]) -> bool {
    clauses(text)
        .iter()
        .any(|clause| !said(phrasings, &clause.tokens).is_empty())
}

/// Words a sentence that only takes back the one before may hold: `No.`, `Nope.`, `Not at all.`,
/// `That is not what happened.`, `None of that is true.`
pub(super) const TAKING_BACK: &[&str] = &[
    "no", "nope", "not", "none", "nothing", "never", "of", "that", "this", "it", "is", "was",
    "what", "happened", "true", "the", "case", "at", "all", "way", "so", "really", "here",
    "though", "wrong", "false", "either", "theory", "idea", "claim", "sort", "correct", "right",
    "neither", "nah",
];

/// The clauses that assert something, each marked when a later sentence takes it back. Left out:
/// questions (but `why not …?` proposes), suppositions, others' claims reported, hedges between
/// alternatives, sentences about the grading, and strings of terms.
pub(super) fn claims_of(all: Vec<Clause>) -> Vec<Clause> {
    let sentences = all.iter().map(|c| c.sentence + 1).max().unwrap_or(0);
    let of = |s: usize| all.iter().filter(move |c| c.sentence == s);
    let mut taken_back = vec![false; sentences];
    for s in 1..sentences {
        let words: Vec<&Token> = of(s).flat_map(|c| &c.tokens).collect();
        let says_no = words
            .iter()
            .any(|t| t.negation() || word_in(t, DENIALS) || t.word == "nope" || t.word == "nah");
        if says_no && words.len() <= 8 && words.iter().all(|t| word_in(t, TAKING_BACK)) {
            // `None of that …` takes back everything before; `No.` the sentence before.
            let everything = words
                .iter()
                .any(|t| matches!(t.word.as_str(), "none" | "all"));
            let from = if everything { 0 } else { s - 1 };
            taken_back[from..s].iter_mut().for_each(|b| *b = true);
        }
    }
    let meta: Vec<bool> = (0..sentences)
        .map(|s| of(s).flat_map(|c| &c.tokens).any(|t| word_in(t, META)))
        .collect();
    // `…, which is not why checkout hung`, `…, said nobody`: the clause before is taken back.
    let mut clause_back = vec![false; all.len()];
    for n in 1..all.len() {
        let c = &all[n];
        let t = &c.tokens;
        let why = t.iter().any(|w| {
            matches!(
                w.word.as_str(),
                "why" | "cause" | "reason" | "problem" | "happened" | "matter" | "matters"
            )
        });
        let which_not = (c.starts_with(&["which"]) || c.starts_with(&["that"]))
            && t.iter().any(Token::negation)
            && why;
        let said_nobody = t.len() >= 2
            && matches!(t[0].word.as_str(), "said" | "says" | "claimed")
            && t[1].negation();
        if (which_not || said_nobody) && all[n - 1].sentence == c.sentence {
            clause_back[n - 1] = true;
        }
    }
    let all: Vec<Clause> = all
        .into_iter()
        .zip(clause_back)
        .map(|(mut c, back)| {
            c.rejected = back;
            c
        })
        .collect();
    all.into_iter()
        .filter(crate::challenges::domain::language::asserts)
        .filter(|c| {
            !c.hypothetical
                && !c.reported()
                && !c.hedged()
                && !meta[c.sentence]
                && (!c.question || suggests(c))
        })
        .map(|mut c| {
            c.rejected |= taken_back[c.sentence];
            c
        })
        .collect()
}
