//! The words grading listens for: denials, blame, remedies, directives and the like.

use crate::challenges::domain::language::Token;

/// How many words one phrasing's parts may spread over in a clause.
pub(super) const SPAN: usize = 14;

/// Words a phrasing's words may have between them without breaking it:
/// `at exactly the same time` is `at the same time`.
pub(super) const FILLERS: &[&str] = &[
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
pub(super) const DENIALS: &[&str] = &[
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
pub(super) const STATES: &[&str] = &["fine", "ok", "okay", "healthy", "unaffected", "wrong"];

/// Words that name a thing as the culprit: said of a fix, the fix is blamed.
pub(super) const BLAME: &[&str] = &[
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
pub(super) const RESTORE_TO: &[&str] = &[
    "back",
    "revert",
    "return",
    "switch",
    "returning",
    "reverting",
];
pub(super) const RESTORE: &[&str] = &["keep", "restore", "reinstate", "stick", "retain"];

/// Words that take a fix away: `remove the jitter`, `drop dedupe`.
pub(super) const REMOVE: &[&str] = &[
    "remove",
    "drop",
    "disable",
    "removing",
    "dropping",
    "disabling",
    "without",
];

/// Words that say what is missing: `lack of jitter`, `missing jitter`.
pub(super) const ABSENCE: &[&str] = &[
    "without", "lack", "lacks", "lacked", "lacking", "missing", "absent",
];

/// Words that make a clause a proposal rather than a description.
pub(super) const DIRECTIVES: &[&str] = &[
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
pub(super) const OPENERS: &[&str] = &[
    "please", "so", "then", "and", "also", "just", "first", "instead", "simply", "now", "finally",
    "or", "fix", "to", "maybe", "perhaps", "probably",
];

/// Verbs' helpers: a first word followed by one of these is a subject, not an imperative
/// (`jitter is what broke it`).
pub(super) const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would", "can",
    "could", "did", "does", "do", "may", "might", "must", "should", "not",
];

/// Words that may stand between a thing and the negation that denies it:
/// `jitter is not the problem`, `the retries were never the real cause`.
pub(super) const COPULA: &[&str] = &[
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
pub(super) const KNOWING: &[&str] = &[
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
pub(super) const PRESENT: &[&str] = &[
    "has", "have", "had", "uses", "used", "using", "there", "ours",
];

/// Words about the grading rather than the incident: a sentence with one asserts nothing.
pub(super) const META: &[&str] = &[
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
pub(super) const OUTCOMES: &[&str] = &["happen", "happened", "occur", "recur", "arise", "repeat"];

/// Whether a token is one of the words of `list`.
pub(super) fn word_in(t: &Token, list: &[&str]) -> bool {
    list.contains(&t.word.as_str())
}
