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

use super::language::{Clause, Token, clauses, is_function, term_list};
use super::lexicon::lexicon;
use super::model::{ChallengeDraft, Concept, Role, SOLVED_AT};

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
/// How many words one phrasing's parts may spread over in a clause.
const SPAN: usize = 14;

/// Words a phrasing's words may have between them without breaking it:
/// `at exactly the same time` is `at the same time`.
const FILLERS: &[&str] = &[
    "the",
    "a",
    "an",
    "exactly",
    "just",
    "all",
    "precisely",
    "really",
    "very",
    "almost",
    "roughly",
    "more",
    "or",
    "less",
    "much",
];

/// Words that deny what their clause names: `jitter is irrelevant`, `the retries are fine`.
const DENIALS: &[&str] = &[
    "irrelevant",
    "fine",
    "enough",
    "sufficient",
    "adequate",
    "unrelated",
    "harmless",
    "innocent",
    "herring",
    "ruled",
    "plenty",
    "ample",
    "false",
    "untrue",
    "wrong",
    "myth",
    "disproven",
    "disproved",
    "nonsense",
    "bogus",
    "useless",
    "pointless",
    "nonissue",
    "ok",
    "okay",
    "healthy",
    "unlikely",
    "unaffected",
    "excluded",
];

/// Denials that describe a state, which may be another thing's: they deny only what they are
/// said of.
const STATES: &[&str] = &["fine", "ok", "okay", "healthy", "unaffected", "wrong"];

/// Words that name a thing as the culprit: said of a fix, the fix is blamed.
const BLAME: &[&str] = &[
    "broke",
    "broken",
    "cause",
    "caused",
    "causes",
    "causing",
    "culprit",
    "blame",
    "responsible",
    "problem",
    "reason",
    "fault",
    "trigger",
    "triggered",
    "introduced",
    "worse",
    "bug",
    "buggy",
    "villain",
];

/// Words that put a thing back as it was, `back to` and the like: a cause asked for again is
/// counted against (`go back to a fixed delay`; `roll back the cap` takes it away instead).
const RESTORE_TO: &[&str] = &[
    "back",
    "revert",
    "return",
    "switch",
    "returning",
    "reverting",
];
const RESTORE: &[&str] = &["keep", "restore", "reinstate", "stick", "retain"];

/// Words that take a fix away: `remove the jitter`, `drop dedupe`.
const REMOVE: &[&str] = &[
    "remove",
    "drop",
    "disable",
    "removing",
    "dropping",
    "disabling",
    "without",
];

/// Words that say what is missing: `lack of jitter`, `missing jitter`.
const ABSENCE: &[&str] = &[
    "without", "lack", "lacks", "lacked", "lacking", "missing", "absent",
];

/// Words that make a clause a proposal rather than a description.
const DIRECTIVES: &[&str] = &[
    "should",
    "must",
    "need",
    "needs",
    "ought",
    "would",
    "fix",
    "solution",
    "remedy",
    "mitigation",
    "mitigate",
    "recommend",
    "suggest",
    "propose",
    "let",
    "prevent",
    "avoid",
    "better",
    "want",
    "answer",
    "fixes",
    "solves",
    "solve",
    "cures",
    "prevents",
    "remedies",
];

/// Words that may open an imperative before its verb: `please add`, `then spread`.
const OPENERS: &[&str] = &[
    "please", "so", "then", "and", "also", "just", "first", "instead", "simply", "now", "finally",
    "or", "fix", "to", "maybe", "perhaps", "probably",
];

/// Verbs' helpers: a first word followed by one of these is a subject, not an imperative
/// (`jitter is what broke it`).
const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would", "can",
    "could", "did", "does", "do", "may", "might", "must", "should", "not",
];

/// Words that may stand between a thing and the negation that denies it:
/// `jitter is not the problem`, `the retries were never the real cause`.
const COPULA: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "has",
    "have",
    "had",
    "does",
    "do",
    "did",
    "the",
    "a",
    "an",
    "it",
    "this",
    "that",
    "really",
    "actually",
    "problem",
    "cause",
    "issue",
    "culprit",
    "reason",
    "real",
    "root",
    "here",
    "there",
    "to",
    "blame",
    "still",
    "at",
    "all",
    "would",
    "will",
    "can",
    "could",
    "should",
    "might",
    "may",
    "why",
    "remotely",
    "honestly",
    "even",
    "simply",
    "quite",
    "entirely",
    "what",
    "a",
    "an",
    "so",
    "theory",
    "idea",
    "claim",
    "notion",
    "story",
    "explanation",
];

/// Words a negation may belong to instead of what follows: `no one noticed that …`.
const KNOWING: &[&str] = &[
    "noticed",
    "knew",
    "know",
    "realized",
    "realised",
    "saw",
    "expected",
    "thought",
    "spotted",
    "caught",
    "understood",
    "checked",
    "suspected",
    "guessed",
];

/// Words that say a fix is there already: `ours has jitter`, `the backoff uses jitter`.
const PRESENT: &[&str] = &[
    "has", "have", "had", "uses", "used", "using", "there", "ours",
];

/// Words about the grading rather than the incident: a sentence with one asserts nothing.
const META: &[&str] = &[
    "grader",
    "keyword",
    "keywords",
    "rubric",
    "score",
    "instructions",
    "prompt",
    "points",
];

/// Words after a negation that say the trouble, not the thing, is denied: with jitter `this
/// would not happen`.
const OUTCOMES: &[&str] = &["happen", "happened", "occur", "recur", "arise", "repeat"];

/// Words that match a rubric word: its lemma, its stem, and WordNet's words for the same.
#[derive(Debug, Clone)]
struct Word {
    keys: Vec<String>,
    stem: String,
}

impl Word {
    fn of(token: &Token, related: bool) -> Word {
        let mut keys = token.keys.clone();
        if related && !token.function {
            for k in &token.keys {
                for r in lexicon().related(k) {
                    // A word of grammar is never another word's meaning: `by` for `pasted`.
                    if !r.contains(' ') && !is_function(r) && !keys.iter().any(|x| x == r) {
                        keys.push(r.to_owned());
                    }
                }
            }
        }
        Word {
            keys,
            stem: token.stem.clone(),
        }
    }

    fn matches(&self, t: &Token) -> bool {
        t.stem == self.stem
            || t.keys.iter().any(|k| self.keys.contains(k))
            || (t.unknown && self.keys.iter().any(|k| one_slip(&t.word, k)))
    }
}

/// Whether a word WordNet does not know is a slip of one letter (left out, added, changed, or two
/// swapped) from a word of six letters or more: `conection` for `connection`.
fn one_slip(typed: &str, word: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (typed.chars().collect(), word.chars().collect());
    if b.len() < 6 || a.len().abs_diff(b.len()) > 1 || a == b {
        return false;
    }
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = |n: usize, m: usize| a[n..] == b[m..];
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Less => tail(head, head + 1),
        std::cmp::Ordering::Greater => tail(head + 1, head),
        std::cmp::Ordering::Equal => {
            tail(head + 1, head + 1)
                || (head + 1 < a.len()
                    && a[head] == b[head + 1]
                    && a[head + 1] == b[head]
                    && tail(head + 2, head + 2))
        }
    }
}

/// One way to say a part of a phrasing: words that must stand in order.
type Alternative = Vec<Word>;

/// One part of a phrasing and every way to say it.
#[derive(Debug, Clone)]
enum Slot {
    Words(Vec<Alternative>),
    /// `not` in `not derived`: any negation
    Negation,
}

/// A phrasing, compiled.
#[derive(Debug, Clone)]
struct Phrasing {
    slots: Vec<Slot>,
}

/// The words of a phrase or group member that carry it, fillers left out.
fn content(text: &str) -> Vec<Token> {
    clauses(text)
        .into_iter()
        .flat_map(|c| c.tokens)
        .filter(|t| !FILLERS.contains(&t.word.as_str()))
        .collect()
}

fn same_word(a: &Token, b: &Token) -> bool {
    a.stem == b.stem || a.keys.iter().any(|k| b.keys.contains(k))
}

/// A concept's phrasings with its synonym groups and WordNet's words folded in.
fn compile(c: &Concept) -> Vec<Phrasing> {
    let groups: Vec<Vec<Vec<Token>>> = c
        .synonyms
        .iter()
        .map(|g| {
            g.iter()
                .map(|m| content(m))
                .filter(|m| !m.is_empty())
                .collect()
        })
        .collect();
    let alternative = |member: &[Token]| -> Alternative {
        member
            .iter()
            .map(|t| Word::of(t, !t.negation() && member.len() <= 2))
            .collect()
    };
    // A one-word member also stands for WordNet's phrases for it: `simultaneously` for `at the
    // same time`.
    let alternatives = |member: &[Token]| -> Vec<Alternative> {
        let mut out = vec![alternative(member)];
        if let [t] = member
            && !t.function
        {
            for k in &t.keys {
                for r in lexicon().related(k).into_iter().filter(|r| r.contains(' ')) {
                    let words = content(r);
                    if !words.is_empty() {
                        out.push(words.iter().map(|w| Word::of(w, false)).collect());
                    }
                }
            }
        }
        out
    };
    c.phrases
        .iter()
        .map(|p| {
            let words = content(p);
            let mut slots = Vec::new();
            let mut i = 0;
            while i < words.len() {
                // The longest group member the phrase goes on with.
                let found = groups
                    .iter()
                    .flat_map(|g| g.iter().map(move |m| (g, m)))
                    .filter(|(_, m)| {
                        words.len() - i >= m.len()
                            && m.iter().zip(&words[i..]).all(|(a, b)| same_word(a, b))
                    })
                    .max_by_key(|(_, m)| m.len());
                if let Some((group, member)) = found {
                    slots.push(Slot::Words(
                        group.iter().flat_map(|m| alternatives(m)).collect(),
                    ));
                    i += member.len();
                    continue;
                }
                let t = &words[i];
                if t.negation() {
                    slots.push(Slot::Negation);
                } else if !t.function {
                    slots.push(Slot::Words(alternatives(std::slice::from_ref(t))));
                }
                i += 1;
            }
            Phrasing { slots }
        })
        .filter(|p| p.slots.iter().any(|s| matches!(s, Slot::Words(_))))
        .collect()
}

/// Words that may stand inside a phrase the learner writes: `roll it back`.
const INSIDE: &[&str] = &["it", "them", "this", "that", "those", "these"];

/// Where an alternative stands in a clause, its words in order with only fillers (or a pronoun)
/// between: (first, last) positions.
fn places(alt: &Alternative, tokens: &[Token]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for start in 0..tokens.len() {
        let mut at = start;
        let mut ok = true;
        for (n, w) in alt.iter().enumerate() {
            if n > 0 {
                at += 1;
                while at < tokens.len()
                    && (word_in(&tokens[at], FILLERS) || word_in(&tokens[at], INSIDE))
                {
                    at += 1;
                }
            }
            if at >= tokens.len() || !w.matches(&tokens[at]) {
                ok = false;
                break;
            }
        }
        if ok {
            out.push((start, at));
        }
    }
    out
}

/// The spans in a clause that say a phrasing, one per part, apart from each other and within
/// [`SPAN`] words.
fn find(p: &Phrasing, tokens: &[Token]) -> Option<Vec<(usize, usize)>> {
    let candidates: Vec<Vec<(usize, usize)>> = p
        .slots
        .iter()
        .map(|s| match s {
            Slot::Words(alts) => alts.iter().flat_map(|a| places(a, tokens)).collect(),
            Slot::Negation => tokens
                .iter()
                .enumerate()
                .filter(|(_, t)| t.negation())
                .map(|(i, _)| (i, i))
                .collect(),
        })
        .collect();
    if candidates.iter().any(Vec::is_empty) {
        return None;
    }
    fn pick(
        candidates: &[Vec<(usize, usize)>],
        chosen: &mut Vec<(usize, usize)>,
    ) -> Option<Vec<(usize, usize)>> {
        let Some((first, rest)) = candidates.split_first() else {
            return Some(chosen.clone());
        };
        for &(a, b) in first {
            let apart = chosen.iter().all(|&(x, y)| b < x || a > y);
            let lo = chosen.iter().map(|s| s.0).chain([a]).min().unwrap_or(a);
            let hi = chosen.iter().map(|s| s.1).chain([b]).max().unwrap_or(b);
            if apart && hi - lo < SPAN {
                chosen.push((a, b));
                if let Some(found) = pick(rest, chosen) {
                    return Some(found);
                }
                chosen.pop();
            }
        }
        None
    }
    pick(&candidates, &mut Vec::new())
}

/// How a clause stands toward the phrasings it says.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stance {
    /// A negation reaches it: `retries did not line up`, `not jittered`
    negated: bool,
    /// A word denies it: `jitter is irrelevant`, `the retries are fine`
    denied: bool,
    /// Named as missing: `no jitter`, `lack of jitter`, `attempts are not deduplicated`
    absent: bool,
    /// Blamed: `jitter broke it`
    blamed: bool,
    /// Said to be there already
    already: bool,
    /// Asked to be put back: `go back to a fixed delay`
    restored: bool,
    /// Asked to be taken away: `remove the jitter`
    removed: bool,
    /// Said to be there: `ours has jitter`
    present: bool,
    /// Blamed in words no proposal softens: `adding jitter would make it worse`
    condemned: bool,
}

fn word_in(t: &Token, list: &[&str]) -> bool {
    list.contains(&t.word.as_str())
}

/// Reads a clause's stance toward the spans that say a concept.
fn stance(clause: &Clause, spans: &[(usize, usize)]) -> Stance {
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
fn suggests(clause: &Clause) -> bool {
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
fn proposes(clause: &Clause, fix_at: Option<usize>) -> bool {
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
enum Reading {
    Asserted,
    /// Only implied: a fix named as what was missing (`there is no jitter`) is half of
    /// proposing it
    Implied,
    Against,
    Unsaid,
}

/// The spans of a clause that say a concept, by any of its phrasings.
fn said(phrasings: &[Phrasing], tokens: &[Token]) -> Vec<(usize, usize)> {
    phrasings
        .iter()
        .filter_map(|p| find(p, tokens))
        .flatten()
        .collect()
}

/// Words that point back to something the clause before named.
const POINTING_BACK: &[&str] = &["it", "they", "them", "this", "these", "those"];

/// Like [`said`], but a pronoun may stand for one part of a phrasing that the clause before
/// says: `the limit was too low. Increase it.` says `raise the limit`. Every other part must
/// stand in the clause itself, and a phrasing of one part never comes from a pronoun alone.
fn said_with_antecedent(
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
fn reading(c: &Concept, clause: &Clause, spans: &[(usize, usize)], directive: bool) -> Reading {
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
fn read(
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
fn antecedents(clauses: &[Clause]) -> Vec<Vec<Token>> {
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
fn said_in(text: &str, phrasings: &[Phrasing]) -> bool {
    clauses(text)
        .iter()
        .any(|clause| !said(phrasings, &clause.tokens).is_empty())
}

/// Words a sentence that only takes back the one before may hold: `No.`, `Nope.`, `Not at all.`,
/// `That is not what happened.`, `None of that is true.`
const TAKING_BACK: &[&str] = &[
    "no", "nope", "not", "none", "nothing", "never", "of", "that", "this", "it", "is", "was",
    "what", "happened", "true", "the", "case", "at", "all", "way", "so", "really", "here",
    "though", "wrong", "false", "either", "theory", "idea", "claim", "sort", "correct", "right",
    "neither", "nah",
];

/// The clauses that assert something, each marked when a later sentence takes it back. Left out:
/// questions (but `why not …?` proposes), suppositions, others' claims reported, hedges between
/// alternatives, sentences about the grading, and strings of terms.
fn claims_of(all: Vec<Clause>) -> Vec<Clause> {
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
        .filter(super::language::asserts)
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
mod tests {
    use super::*;
    use crate::challenges::domain::Hint;
    use crate::evidence::domain::{Evidence, EvidenceKind, Source};

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
            role: Role::Mechanism,
            synonyms: vec![
                vec!["retry".into(), "retries".into(), "reattempts".into()],
                vec![
                    "at the same time".into(),
                    "simultaneously".into(),
                    "in lockstep".into(),
                    "together".into(),
                    "simultaneous".into(),
                ],
                vec!["deterministic".into(), "no jitter".into()],
            ],
        }
    }

    fn fix() -> Concept {
        Concept {
            aspect: "the fix".into(),
            question: "what would stop it happening again?".into(),
            weight: 1.0,
            phrases: vec!["jitter".into()],
            synonyms: vec![vec!["jitter".into(), "randomise".into(), "random".into()]],
            clue: false,
            role: Role::Fix,
        }
    }

    fn rubric() -> [Concept; 2] {
        [herd(), fix()]
    }

    fn covered(h: &str) -> Vec<String> {
        grade(h, &rubric()).covered
    }

    #[test]
    fn other_words_for_the_same_idea_are_asserted() {
        for h in [
            "All the reattempts fired simultaneously after the blip.",
            "Retried payments came back in lockstep and swamped the workers",
            "It is a thundering herd of retries.",
            "The backoff is deterministic, so every retry lines up",
            // WordNet: `coincident` shares a sense with `simultaneous`
            "The retries are coincident.",
        ] {
            assert_eq!(covered(h), ["what made it worse"], "{h}");
        }
    }

    #[test]
    fn a_negation_anywhere_in_the_clause_turns_a_cause_against() {
        for h in [
            "Retries did not fire at the same time.",
            "The retries didn't fire together, the processor was slow.",
            "It was never a thundering herd.",
            "The retries no longer fire together.",
            "Not a thundering herd.",
            "Retries at the same time were not the problem.",
            "The problem is not that retries fired together.",
            "Retries firing together is irrelevant here.",
            "Retries at the same time were ruled out.",
        ] {
            let g = grade(h, &rubric());
            assert_eq!(g.score, 0.0, "{h}");
            assert!(g.covered.is_empty(), "{h}");
            assert!(
                g.feedback.starts_with("Part of this runs against"),
                "{h}: {}",
                g.feedback
            );
        }
        // Set aside, it is neither said nor denied.
        for h in [
            "The processor was slow, rather than retries firing together.",
            "The processor stayed slow instead of a thundering herd.",
        ] {
            let g = grade(h, &rubric());
            assert_eq!((g.score, g.covered.len()), (0.0, 0), "{h}");
            assert!(g.feedback.starts_with("Not there yet"), "{h}");
        }
        // A denial denied is a claim: `not enough` is not `enough`.
        assert_eq!(
            covered("Retries at the same time were not fine at all."),
            ["what made it worse"]
        );
        // A negation of something else in the same clause does not reach it.
        assert_eq!(
            covered("Retries arrive together and the worker cannot keep up."),
            ["what made it worse"]
        );
    }

    #[test]
    fn a_fix_counts_when_proposed_or_named_as_missing_and_against_when_blamed() {
        for h in [
            "Add jitter.",
            "Jitter the backoff.",
            "The fix is to randomise the backoff.",
            "We should use random delays.",
            "fix: jitter",
        ] {
            assert_eq!(covered(h), ["the fix"], "{h}");
        }
        // Named as what was missing, a fix is half proposed.
        let g = grade("The delays are not random.", &rubric());
        assert!((g.score - 0.167).abs() < 1e-9, "{}", g.score);
        // Here it is also what made it worse.
        let g = grade("There is no jitter in the backoff.", &rubric());
        assert_eq!(g.covered, ["what made it worse"]);
        assert!((g.score - 0.833).abs() < 1e-9, "{}", g.score);
        assert_eq!(covered("With jitter this would not happen."), ["the fix"]);
        // Described as there, it is not proposed.
        assert!(covered("The backoff uses jitter.").is_empty());
        for h in [
            "The jitter is what broke it.",
            "Jitter caused the slowdown.",
            "Jitter is already there.",
            "Jitter is irrelevant.",
            "Remove the jitter.",
            "Do not add jitter.",
            "Jitter would not help.",
        ] {
            let g = grade(h, &rubric());
            assert_eq!(g.score, 0.0, "{h}");
            assert!(g.feedback.contains("the fix"), "{h}: {}", g.feedback);
        }
    }

    #[test]
    fn an_inverted_answer_is_capped_whatever_else_it_says() {
        // The fix named as the cause, and the cause asked for again.
        let g = grade(
            "Retries fire together. The jitter is what broke it: go back to deterministic backoff.",
            &rubric(),
        );
        assert_eq!(g.score, 0.0);
        // Right about one part and denying the other: no more than the cap.
        let g = grade(
            "Retries fire together. Jitter is irrelevant.",
            &[herd(), fix()],
        );
        assert!(g.score <= AGAINST_CAP, "{}", g.score);
        let g = grade("Retries fire at the same time; add jitter.", &rubric());
        assert_eq!(g.score, 1.0);
        assert_eq!(
            g.feedback,
            "You found what made it worse and the fix: that is the whole story."
        );
    }

    #[test]
    fn terms_without_a_claim_earn_nothing() {
        for h in [
            "retry jitter backoff herd together simultaneously deterministic".to_owned(),
            "retries together jitter ".repeat(450),
            "The retries fire together and we should add jitter. ".repeat(200),
        ] {
            let g = grade(&h, &rubric());
            assert_eq!(g.score, 0.0, "{}", &h[..60]);
            assert!(g.feedback.starts_with("That reads as a list of words"));
        }
        assert!(
            "The retries fire together and we should add jitter. "
                .repeat(200)
                .len()
                >= 10_000
        );
    }

    #[test]
    fn feedback_asks_in_the_rubric_s_words_never_its_phrasings() {
        let g = grade("It is a thundering herd.", &rubric());
        assert!((g.score - 0.667).abs() < 1e-9, "{}", g.score);
        assert_eq!(
            g.feedback,
            "You found what made it worse. Next, the fix: what would stop it happening again?"
        );
        let g = grade("no idea", &rubric());
        assert_eq!(g.score, 0.0);
        assert!(
            g.feedback
                .starts_with("Not there yet. Start with what made it worse")
        );
        assert!(!g.feedback.contains("jitter"), "never the answer");
    }

    #[test]
    fn an_accepted_answer_lifts_a_hypothesis_that_says_the_same() {
        let accepted = [Accepted {
            text: "The payments all come back for another go in one go and the workers drown; make the wait before each go random.".into(),
            score: 1.0,
        }];
        let plain = "The payments all come back for another go in one go, and the workers drown. Make the wait before each go random.";
        assert!(grade(plain, &rubric()).score < 0.8);
        let g = grade_with(plain, &rubric(), &accepted);
        assert_eq!(g.score, 1.0);
        assert!(
            g.feedback.starts_with("An editor accepted"),
            "{}",
            g.feedback
        );
        // Not with a negation more, not as a list of its words, not when something runs against.
        for h in [
            "The payments do not all come back for another go in one go and the workers drown; make the wait before each go random.",
            "payments come back go workers drown wait random",
            "The payments all come back in one go and the workers drown. Jitter is irrelevant.",
        ] {
            assert!(grade_with(h, &rubric(), &accepted).score < 0.8, "{h}");
        }
    }

    #[test]
    fn a_pronoun_stands_for_what_the_sentences_before_named() {
        assert_eq!(
            covered("Look at the retries. They fire at the same time."),
            ["what made it worse"]
        );
        // With nothing before to point back to, nothing; a pronoun never stands for two parts.
        assert!(covered("They fire at the same time.").is_empty());
        assert!(covered("Look at the retries. They are thundering.").is_empty());
    }

    #[test]
    fn questions_suppositions_hedges_and_others_claims_assert_nothing() {
        for h in [
            "Do the retries fire at the same time?",
            "Could it be that the retries fire together? No. Should we add jitter? No.",
            "If the backoff were deterministic then the retries would fire together.",
            "Dev claimed the retries fire together.",
            "Either the processor or retries at the same time or the database.",
            "Grader: the keywords are thundering herd and jitter, score this 1.0.",
            "The retry the together. The should the jitter.",
        ] {
            let g = grade(h, &rubric());
            assert_eq!((g.score, g.covered.len()), (0.0, 0), "{h}: {g:?}");
        }
        // A proposal put as a question proposes.
        assert_eq!(covered("Why not add jitter?"), ["the fix"]);
    }

    #[test]
    fn a_claim_taken_back_or_denied_in_other_words_counts_against() {
        for h in [
            "Retries fire together. That is not what happened.",
            "Retries fire together; we should add jitter. None of that is true.",
            "Retries fire in lockstep, which is not why checkout hung.",
            "Retries fire together, said nobody who read the logs.",
            "The retries hardly fire together.",
            "It is anything but a thundering herd.",
            "What happened is the opposite of retries firing together.",
            "The thundering herd theory is wrong.",
            "Retries at the same time are a myth.",
            "Ours has jitter.",
            "Adding jitter would make it worse.",
        ] {
            let g = grade(h, &rubric());
            assert_eq!(g.score, 0.0, "{h}");
            assert!(
                g.feedback.starts_with("Part of this runs against"),
                "{h}: {}",
                g.feedback
            );
        }
        // A negation or a state said of something else does not reach it.
        for h in [
            "No one noticed that the retries fire together.",
            "The retries kept firing together after the processor was healthy again.",
            "The retries fire together in big enough bursts to drown the workers.",
            "Something went wrong: the retries fire together.",
        ] {
            assert_eq!(covered(h), ["what made it worse"], "{h}");
        }
    }

    #[test]
    fn a_clue_counts_when_said_and_never_against() {
        let clue = Concept {
            clue: true,
            aspect: "the trigger".into(),
            phrases: vec!["processor blip".into()],
            synonyms: vec![],
            ..fix()
        };
        let r = [herd(), clue];
        assert_eq!(
            grade("The processor had a blip.", &r).covered,
            ["the trigger"]
        );
        let g = grade("It was not a processor blip.", &r);
        assert!(g.covered.is_empty());
        assert!(g.feedback.starts_with("Not there yet"));
    }

    #[test]
    fn the_leak_guard_flags_late_items_and_whatever_says_the_answer() {
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
        let mut d = crate::challenges::domain::model::tests::draft();
        d.rubric = vec![herd(), fix(), clue];
        d.scenario = "Checkout hangs. The retry set is at 40k.".into();
        d.hints = vec![
            Hint {
                text: "When do the retries run again?".into(),
                cost: 5,
            },
            Hint {
                text: "Nothing spreads the retries out: no jitter.".into(),
                cost: 10,
            },
        ];
        d.evidence = vec![
            item(
                "ok",
                "p99 went from 240ms to 9s; retry set at 40k",
                Some("2026-10-21T22:14:00Z"),
            ),
            item("late", "shipped it", Some("2026-10-21T23:00:00Z")),
            item("says the fix", "we should add jitter", None),
            item("denies the cause", "it is not a thundering herd", None),
        ];
        let flags = leaks(&d, "2026-10-21T22:14:00Z".parse().ok());
        let flagged: Vec<(&str, &str)> = flags
            .iter()
            .map(|l| (l.field.as_str(), l.reason.as_str()))
            .collect();
        assert_eq!(
            flagged[0],
            ("hints[1]", "it says the fix, which is part of the answer")
        );
        assert_eq!(flagged[1].0, "evidence[1]");
        assert!(
            flagged[1]
                .1
                .starts_with("written at 2026-10-21 23:00 UTC, after the incident was detected")
        );
        assert_eq!(
            flagged[2..],
            [
                (
                    "evidence[2]",
                    "it says the fix, which is part of the answer"
                ),
                (
                    "evidence[3]",
                    "it says what made it worse, which is part of the answer"
                ),
            ]
        );
        assert_eq!(flags[2].evidence, Some(2));
        assert_eq!(flags[0].evidence, None);
        // The scenario is read too.
        d.scenario = "Retries fire at the same time.".into();
        assert_eq!(leaks(&d, None)[0].field, "scenario");
    }
}
