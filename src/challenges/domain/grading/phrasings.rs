//! A rubric's phrasings compiled to words and their kin, and where a clause says one.

use super::words::*;
use crate::challenges::domain::language::{Token, clauses, is_function};
use crate::challenges::domain::lexicon::lexicon;
use crate::challenges::domain::model::Concept;

/// Words that match a rubric word: its lemma, its stem, and WordNet's words for the same.
#[derive(Debug, Clone)]
pub(super) struct Word {
    pub(super) keys: Vec<String>,
    pub(super) stem: String,
}

impl Word {
    pub(super) fn of(token: &Token, related: bool) -> Word {
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

    pub(super) fn matches(&self, t: &Token) -> bool {
        t.stem == self.stem
            || t.keys.iter().any(|k| self.keys.contains(k))
            || (t.unknown && self.keys.iter().any(|k| one_slip(&t.word, k)))
    }
}

/// Whether a word WordNet does not know is a slip of one letter (left out, added, changed, or two
/// swapped) from a word of six letters or more: `conection` for `connection`.
pub(super) fn one_slip(typed: &str, word: &str) -> bool {
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
pub(super) type Alternative = Vec<Word>;

/// One part of a phrasing and every way to say it.
#[derive(Debug, Clone)]
pub(super) enum Slot {
    Words(Vec<Alternative>),
    /// `not` in `not derived`: any negation
    Negation,
}

/// A phrasing, compiled.
#[derive(Debug, Clone)]
pub(super) struct Phrasing {
    pub(super) slots: Vec<Slot>,
}

/// The words of a phrase or group member that carry it, fillers left out.
pub(super) fn content(text: &str) -> Vec<Token> {
    clauses(text)
        .into_iter()
        .flat_map(|c| c.tokens)
        .filter(|t| !FILLERS.contains(&t.word.as_str()))
        .collect()
}

pub(super) fn same_word(a: &Token, b: &Token) -> bool {
    a.stem == b.stem || a.keys.iter().any(|k| b.keys.contains(k))
}

/// A concept's phrasings with its synonym groups and WordNet's words folded in.
pub(super) fn compile(c: &Concept) -> Vec<Phrasing> {
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
pub(super) const INSIDE: &[&str] = &["it", "them", "this", "that", "those", "these"];

/// Where an alternative stands in a clause, its words in order with only fillers (or a pronoun)
/// between: (first, last) positions.
pub(super) fn places(alt: &Alternative, tokens: &[Token]) -> Vec<(usize, usize)> {
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
pub(super) fn find(p: &Phrasing, tokens: &[Token]) -> Option<Vec<(usize, usize)>> {
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
    pub(super) fn pick(
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
