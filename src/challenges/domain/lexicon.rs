//! The words the grader knows: WordNet 3.0 (Princeton University; its licence is in
//! `WORDNET-LICENSE` beside this file), as `scripts/wordnet-extract` writes it from Debian's
//! `wordnet-base`: each lemma's parts of speech, the words that share its most frequent senses
//! or are derived from it there, and English's irregular forms (came → come). It is read once,
//! on the first grading, from the copy compiled into the binary, so every replica grades alike.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

static WORDNET: &[u8] = include_bytes!("wordnet.txt.gz");

const NOUN: u8 = 1;
const VERB: u8 = 2;
const ADJECTIVE: u8 = 4;
const ADVERB: u8 = 8;

/// Words too general to stand for another: WordNet puts `set` and `fix` in a sense of `limit`,
/// `make` in one of `cause`; a learner who writes them has not said the narrower thing.
const TOO_GENERAL: &[&str] = &[
    "be",
    "have",
    "do",
    "make",
    "get",
    "go",
    "set",
    "fix",
    "put",
    "take",
    "give",
    "run",
    "come",
    "see",
    "find",
    "let",
    "keep",
    "hold",
    "turn",
    "work",
    "use",
    "place",
    "state",
    "thing",
    "point",
    "time",
    "way",
    "part",
    "case",
    "type",
    "form",
    "line",
    "head",
    "end",
    "act",
    "determine",
    "define",
    "specify",
    "check",
    "bit",
    "whole",
    "one",
    "give up",
    "lead",
];

/// WordNet's lemmas, read once.
pub struct Lexicon {
    entries: HashMap<&'static str, (u8, &'static str)>,
    irregular: HashMap<&'static str, Vec<&'static str>>,
}

/// The lexicon, loaded on first use.
pub fn lexicon() -> &'static Lexicon {
    static LEXICON: OnceLock<Lexicon> = OnceLock::new();
    LEXICON.get_or_init(|| {
        let mut text = String::new();
        flate2::read::GzDecoder::new(WORDNET)
            .read_to_string(&mut text)
            .expect("the WordNet extract compiled into Quell is gzip'd UTF-8");
        // Read once for the life of the process; the entries point into it.
        let text: &'static str = Box::leak(text.into_boxed_str());
        let mut entries = HashMap::with_capacity(150_000);
        let mut irregular: HashMap<&'static str, Vec<&'static str>> = HashMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix('~') {
                if let Some((form, lemma)) = rest.split_once('\t') {
                    irregular.entry(form).or_default().push(lemma);
                }
                continue;
            }
            let mut fields = line.splitn(3, '\t');
            let (Some(lemma), Some(parts), related) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let parts = parts.bytes().fold(0, |acc, p| {
                acc | match p {
                    b'n' => NOUN,
                    b'v' => VERB,
                    b'a' => ADJECTIVE,
                    b'r' => ADVERB,
                    _ => 0,
                }
            });
            entries.insert(lemma, (parts, related.unwrap_or("")));
        }
        Lexicon { entries, irregular }
    })
}

/// Suffix rules for regular forms, WordNet's own (`morphy`): what to cut and what to put back.
const SUFFIXES: &[(&str, &str)] = &[
    ("ies", "y"),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("es", "e"),
    ("es", ""),
    ("s", ""),
    ("ied", "y"),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
    ("er", ""),
    ("est", ""),
    ("er", "e"),
    ("est", "e"),
];

impl Lexicon {
    fn parts(&self, lemma: &str) -> u8 {
        self.entries.get(lemma).map_or(0, |(p, _)| *p)
    }

    pub fn is_verb(&self, lemma: &str) -> bool {
        self.parts(lemma) & VERB != 0
    }

    pub fn is_noun(&self, lemma: &str) -> bool {
        self.parts(lemma) & NOUN != 0
    }

    /// The lemmas a word may be a form of, the word itself first when it is one: `retries` →
    /// `retry`; `fixed` → `fixed`, `fix`; `came` → `come`; `stopped` → `stop`. Empty for a word
    /// WordNet does not know.
    pub fn lemmas(&self, word: &str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        let push = |lemma: &str, out: &mut Vec<&'static str>| {
            if let Some((key, _)) = self.entries.get_key_value(lemma)
                && !out.contains(key)
            {
                out.push(key);
            }
        };
        push(word, &mut out);
        if let Some(forms) = self.irregular.get(word) {
            for f in forms {
                push(f, &mut out);
            }
        }
        for (cut, put) in SUFFIXES {
            if let Some(stem) = word.strip_suffix(cut)
                && stem.len() >= 2
            {
                push(&format!("{stem}{put}"), &mut out);
                // stopped → stopp → stop
                // (by characters: a doubled byte inside a wider character is no doubled letter)
                let mut last = stem.chars().rev();
                if put.is_empty()
                    && stem.chars().count() >= 3
                    && let (Some(a), Some(b)) = (last.next(), last.next())
                    && a == b
                {
                    push(&stem[..stem.len() - a.len_utf8()], &mut out);
                }
            }
        }
        out
    }

    /// The words that mean the same as a lemma in one of its most frequent senses, or are
    /// derived from it there, in both directions (each names the other), leaving out words too
    /// general to stand for it.
    pub fn related(&self, lemma: &str) -> Vec<&'static str> {
        let Some((_, related)) = self.entries.get(lemma) else {
            return Vec::new();
        };
        related
            .split('|')
            .filter(|r| !r.is_empty() && !TOO_GENERAL.contains(r))
            .filter(|r| {
                self.entries
                    .get(r)
                    .is_some_and(|(_, back)| back.split('|').any(|b| b == lemma))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_in_another_script_is_read_without_harm() {
        // `も` is E3 82 82: its last two bytes are equal, but it is one character.
        let _ = lexicon().lemmas("もs");
        let _ = lexicon().lemmas("ééed");
        assert!(crate::challenges::domain::grade("もs ééed jitter", &[]).score == 0.0);
    }

    #[test]
    fn forms_lead_to_their_lemmas() {
        let l = lexicon();
        assert_eq!(l.lemmas("retries"), ["retry"]);
        assert_eq!(l.lemmas("came"), ["come"]);
        assert_eq!(l.lemmas("saturating"), ["saturate"]);
        assert!(l.lemmas("fixed").starts_with(&["fixed"]));
        assert!(l.lemmas("stopped").contains(&"stop"));
        assert!(l.lemmas("xyzzyq").is_empty());
        assert!(l.is_verb("randomize") && !l.is_verb("jitter"));
    }

    #[test]
    fn related_words_name_each_other_and_leave_out_the_general_ones() {
        let l = lexicon();
        assert!(l.related("overwhelm").contains(&"overpower"));
        assert!(l.related("synchronize").contains(&"synchronise"));
        assert!(!l.related("limit").contains(&"set"));
        for w in ["limit", "overwhelm", "simultaneous"] {
            for r in l.related(w) {
                assert!(l.related(r).contains(&w), "{w} ↔ {r}");
            }
        }
    }
}
