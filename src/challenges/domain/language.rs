//! A hypothesis as the grader reads it: sentences, split into clauses at punctuation and at the
//! words that join clauses (`because`, `but`, `so`, `while` …), each word with the lemmas it may
//! be a form of. Negation, denial and contrast are read per clause, wherever they stand; what a
//! clause means for a rubric is decided in [`super::grading`].

use rust_stemmers::{Algorithm, Stemmer};

use super::lexicon::lexicon;

/// One word of a clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// As written, lower-cased
    pub word: String,
    /// What it matches: the lemmas it may be a form of (WordNet), else its Snowball stem
    pub keys: Vec<String>,
    /// Its Snowball stem, which also matches (`starves` and `starved`)
    pub stem: String,
    /// WordNet does not know it: a name, a number, or a slip of the keyboard
    pub unknown: bool,
    /// A word of grammar rather than content: `the`, `is`, `because`, `not`
    pub function: bool,
}

impl Token {
    pub fn negation(&self) -> bool {
        NEGATIONS.contains(&self.word.as_str())
    }
}

/// A clause: the stretch of a sentence that asserts one thing.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub tokens: Vec<Token>,
    /// Which sentence of the text it belongs to
    pub sentence: usize,
    /// It follows `rather than` or `instead of`: what it names is set aside, not asserted
    pub contrasted: bool,
    /// Its sentence is a question
    pub question: bool,
    /// It supposes rather than asserts: an `if` clause and the `then` clause after it
    pub hypothetical: bool,
    /// A later sentence takes it back: `Retries fire together. That is not what happened.`
    pub rejected: bool,
}

impl Clause {
    fn new(sentence: usize, contrasted: bool) -> Clause {
        Clause {
            tokens: Vec::new(),
            sentence,
            contrasted,
            question: false,
            hypothetical: false,
            rejected: false,
        }
    }

    pub fn starts_with(&self, words: &[&str]) -> bool {
        self.tokens.len() >= words.len() && self.tokens.iter().zip(words).all(|(t, w)| t.word == *w)
    }

    /// Someone else's claim reported (`Dev claimed …`, `the vendor says …`), not the learner's.
    pub fn reported(&self) -> bool {
        self.tokens.iter().take(4).enumerate().any(|(n, t)| {
            REPORTING.contains(&t.word.as_str())
                && !self.tokens[..n]
                    .iter()
                    .any(|b| matches!(b.word.as_str(), "i" | "we"))
                && n > 0
        })
    }

    /// Hedged between alternatives: `either … or …`, `… or … or …`.
    pub fn hedged(&self) -> bool {
        self.tokens.iter().any(|t| t.word == "either")
            || self.tokens.iter().filter(|t| t.word == "or").count() >= 2
    }
}

/// Verbs that report someone's claim.
const REPORTING: &[&str] = &[
    "claimed",
    "claims",
    "said",
    "says",
    "argued",
    "argues",
    "insisted",
    "insists",
    "believes",
    "believed",
    "suggested",
    "thinks",
    "reckons",
    "reckoned",
];

/// Words that turn a clause around.
pub const NEGATIONS: &[&str] = &[
    "not", "no", "never", "nor", "neither", "none", "nothing", "nobody", "cannot",
];

/// Words of grammar: a clause of four or more words with none of these is a list of terms, not
/// a claim.
const FUNCTION_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "some",
    "any",
    "every",
    "each",
    "all",
    "both",
    "its",
    "it",
    "they",
    "them",
    "their",
    "there",
    "here",
    "he",
    "she",
    "we",
    "you",
    "i",
    "me",
    "us",
    "our",
    "your",
    "my",
    "his",
    "her",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "has",
    "have",
    "had",
    "do",
    "does",
    "did",
    "will",
    "would",
    "can",
    "could",
    "should",
    "must",
    "may",
    "might",
    "shall",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "from",
    "by",
    "with",
    "without",
    "about",
    "into",
    "onto",
    "over",
    "under",
    "after",
    "before",
    "during",
    "through",
    "between",
    "and",
    "or",
    "but",
    "so",
    "because",
    "since",
    "while",
    "although",
    "though",
    "if",
    "then",
    "than",
    "as",
    "which",
    "who",
    "whom",
    "whose",
    "what",
    "when",
    "where",
    "why",
    "how",
    "also",
    "just",
    "only",
    "too",
    "very",
    "again",
    "still",
    "up",
    "out",
    "off",
    "down",
    "back",
    "once",
    "not",
    "no",
    "never",
    "nor",
    "neither",
    "none",
    "nothing",
    "cannot",
    "until",
    "per",
    "via",
    "against",
    "more",
    "most",
    "less",
    "other",
    "another",
    "itself",
    "themselves",
    "ourselves",
    "such",
    "own",
    "yet",
    "whereas",
    "however",
];

/// Words that end one clause and start the next.
const JOINERS: &[&str] = &[
    "if",
    "unless",
    "then",
    "but",
    "however",
    "although",
    "though",
    "while",
    "whereas",
    "because",
    "since",
    "so",
    "which",
    "yet",
    "therefore",
    "hence",
    "thus",
    "meaning",
    "otherwise",
    "whereby",
];

/// Words after which what follows is set aside (`random delays rather than fixed ones`).
const CONTRASTS: &[&[&str]] = &[&["rather", "than"], &["instead", "of"], &["not", "because"]];

fn stem(word: &str) -> String {
    Stemmer::create(Algorithm::English).stem(word).into_owned()
}

/// A word as the grader matches it: its lemmas, or its stem when WordNet does not know it.
pub fn keys(word: &str) -> Vec<String> {
    if FUNCTION_WORDS.contains(&word) {
        return vec![word.to_owned()];
    }
    let lemmas = lexicon().lemmas(word);
    if lemmas.is_empty() {
        vec![stem(word)]
    } else {
        lemmas.into_iter().map(str::to_owned).collect()
    }
}

/// Whether a word is a word of grammar rather than content: `the`, `by`, `because`.
pub fn is_function(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Lower-cases, straightens apostrophes and opens contractions: `didn't` → `did not`,
/// `can't` → `can not`, `processor's` → `processor`.
fn normalise(text: &str) -> String {
    let t = text.to_lowercase().replace(['’', '‘', '`'], "'");
    let t = t
        .replace("won't", "will not")
        .replace("can't", "can not")
        .replace("shan't", "shall not")
        .replace("n't", " not")
        .replace("'d ", " would ");
    // Ways of saying `not` and `remove`, and `why not …?`, which proposes.
    let mut t = format!(" {t} ");
    for (from, to) in [
        (" far from ", " not "),
        (" anything but ", " not "),
        (" hardly ", " not "),
        (" scarcely ", " not "),
        (" zero ", " no "),
        (" non-issue", " nonissue"),
        (" get rid of ", " remove "),
        (" why not ", " why "),
        (" the opposite of ", " not "),
        (" opposite of ", " not "),
        // Notes: an arrow leads to what follows from it, a comparison says more or less.
        ("->", " → "),
        ("=>", " → "),
        (" <= ", " is at most "),
        (" >= ", " is at least "),
        (" < ", " is less than "),
        (" > ", " is more than "),
    ] {
        t = t.replace(from, to);
    }
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            // drop 's 're 've 'll 'd 'm and a lone quote
            while chars.peek().is_some_and(|n| n.is_alphabetic()) {
                chars.next();
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the character at `i` ends a sentence (`.`, `!`, `?` before a space or the end; `;`;
/// a line break).
fn ends_sentence(chars: &[char], i: usize) -> bool {
    let next = chars.get(i + 1).copied();
    match chars[i] {
        '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
        ';' | '\n' => true,
        _ => false,
    }
}

/// Whether the character at `i` ends a clause within a sentence: a comma or a colon (not inside
/// a number: `12,400`, `22:10`),
/// a bracket, a dash standing alone, an arrow.
fn ends_clause(chars: &[char], i: usize) -> bool {
    let next = chars.get(i + 1).copied();
    let prev = i.checked_sub(1).map(|p| chars[p]);
    match chars[i] {
        ',' | ':' => {
            !(prev.is_some_and(|p| p.is_ascii_digit()) && next.is_some_and(|n| n.is_ascii_digit()))
        }
        '(' | ')' | '[' | ']' | '—' | '–' | '→' | '"' => true,
        '-' => prev.is_some_and(char::is_whitespace) && next.is_none_or(char::is_whitespace),
        _ => false,
    }
}

/// Splits a text into clauses.
pub fn clauses(text: &str) -> Vec<Clause> {
    let chars: Vec<char> = normalise(text).chars().collect();
    // Pieces of text with the sentence they belong to.
    let mut pieces: Vec<(usize, String)> = vec![(0, String::new())];
    let mut sentence = 0;
    let mut questions = Vec::new();
    for i in 0..chars.len() {
        if ends_sentence(&chars, i) {
            if chars[i] == '?' {
                questions.push(sentence);
            }
            sentence += 1;
            pieces.push((sentence, String::new()));
        } else if ends_clause(&chars, i) {
            pieces.push((sentence, String::new()));
        } else if let Some((_, p)) = pieces.last_mut() {
            p.push(chars[i]);
        }
    }
    let mut out = Vec::new();
    for (sentence, piece) in pieces {
        let words: Vec<&str> = piece
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut current = Clause::new(sentence, false);
        let mut i = 0;
        while i < words.len() {
            if let Some(c) = CONTRASTS.iter().find(|c| words[i..].starts_with(c)) {
                out.push(std::mem::replace(&mut current, Clause::new(sentence, true)));
                i += c.len();
                continue;
            }
            if JOINERS.contains(&words[i]) && !current.tokens.is_empty() {
                out.push(std::mem::replace(
                    &mut current,
                    Clause::new(sentence, false),
                ));
            }
            current.tokens.push(Token {
                word: words[i].to_owned(),
                keys: keys(words[i]),
                stem: stem(words[i]),
                unknown: lexicon().lemmas(words[i]).is_empty(),
                function: FUNCTION_WORDS.contains(&words[i]),
            });
            i += 1;
        }
        out.push(current);
    }
    out.retain(|c| !c.tokens.is_empty());
    for n in 0..out.len() {
        out[n].question = questions.contains(&out[n].sentence);
        let supposes = out[n].starts_with(&["if"])
            || out[n].starts_with(&["unless"])
            || out[n].starts_with(&["suppose"])
            || out[n].starts_with(&["imagine"])
            || out[n].starts_with(&["assuming"]);
        // `then …` after a supposition in the same sentence is its consequence.
        let follows = n > 0
            && out[n - 1].hypothetical
            && out[n - 1].sentence == out[n].sentence
            && out[n].starts_with(&["then"]);
        out[n].hypothetical = supposes || follows;
    }
    out
}

/// The words of a text as the grader matches them, in order: one entry per word.
pub fn words(text: &str) -> Vec<Token> {
    clauses(text).into_iter().flat_map(|c| c.tokens).collect()
}

/// Whether a text is a list of terms rather than something said: five or more words of which
/// fewer than one in seven is a word of grammar; or mostly the same words said again and again
/// (thirty or more words, fewer than a third of them different).
pub fn term_list(clauses: &[Clause]) -> bool {
    let words: Vec<&Token> = clauses.iter().flat_map(|c| &c.tokens).collect();
    let function = words.iter().filter(|t| t.function).count();
    let mut distinct: Vec<&str> = words.iter().map(|t| t.word.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    (words.len() >= 5 && function * 7 < words.len())
        || (words.len() >= 30 && distinct.len() * 3 < words.len())
}

/// Words that cannot follow `the` or `a` in a sentence anyone writes.
const NOT_AFTER_ARTICLE: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "should", "must", "would", "can", "could",
    "will", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "it", "they",
    "we", "i",
];

/// Whether a clause can assert anything: a clause of four or more words with no word of grammar
/// is a string of terms, and so is one whose words of grammar are sprinkled in where no sentence
/// has them (`the should the jitter`, `the retry the together`).
pub fn asserts(clause: &Clause) -> bool {
    let t = &clause.tokens;
    let article = |w: &Token| matches!(w.word.as_str(), "the" | "a" | "an");
    let sprinkled = t
        .windows(2)
        .any(|w| article(&w[0]) && NOT_AFTER_ARTICLE.contains(&w[1].word.as_str()))
        || t.last().is_some_and(article)
        || (t.len() <= 4 && t.iter().filter(|w| article(w)).count() >= 2);
    // A short imperative needs no word of grammar: `use jittered exponential backoff`.
    let imperative = t.len() <= 6
        && t.first()
            .is_some_and(|w| PROPOSING.contains(&w.word.as_str()));
    (t.len() < 4 || imperative || t.iter().any(|w| w.function)) && !sprinkled
}

/// Verbs a short proposal starts with.
const PROPOSING: &[&str] = &[
    "add",
    "use",
    "make",
    "give",
    "apply",
    "introduce",
    "randomize",
    "randomise",
    "spread",
    "stagger",
    "raise",
    "increase",
    "revert",
    "size",
    "derive",
    "set",
    "cap",
    "dedupe",
    "deduplicate",
    "roll",
    "switch",
    "implement",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<(usize, bool, String)> {
        clauses(text)
            .into_iter()
            .map(|c| {
                (
                    c.sentence,
                    c.contrasted,
                    c.tokens
                        .iter()
                        .map(|t| t.word.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            })
            .collect()
    }

    #[test]
    fn sentences_split_into_clauses_at_joiners_and_punctuation() {
        assert_eq!(
            split(
                "Retries didn't line up, jitter is irrelevant. It's fine because 12,400 at 22:10 were slow; add jitter (full)."
            ),
            [
                (0, false, "retries did not line up".into()),
                (0, false, "jitter is irrelevant".into()),
                (1, false, "it fine".into()),
                (1, false, "because 12 400 at 22 10 were slow".into()),
                (2, false, "add jitter".into()),
                (2, false, "full".into()),
            ]
        );
        assert_eq!(
            split("Use random delays rather than a fixed one"),
            [
                (0, false, "use random delays".into()),
                (0, true, "a fixed one".into()),
            ]
        );
    }

    #[test]
    fn words_carry_their_lemmas() {
        let w = words("The retries came back");
        assert_eq!(w[1].keys, ["retry"]);
        assert_eq!(w[2].keys, ["come"]);
        assert!(w[0].function && !w[1].function);
    }

    #[test]
    fn a_list_of_terms_is_told_from_a_sentence() {
        assert!(term_list(&clauses(
            "retry jitter backoff herd synchronized same time worker saturated"
        )));
        assert!(term_list(&clauses(&"herd jitter ".repeat(500))));
        assert!(!term_list(&clauses(
            "The retries all fire at the same time and swamp the worker."
        )));
        assert!(!asserts(&clauses("retry jitter backoff herd")[0]));
        assert!(asserts(&clauses("Retry herd")[0]));
        // Notes relate their terms: an arrow leads on, a comparison says more or less.
        let notes = clauses(
            "14:05 conn cap 10/replica < arrival x latency at peak -> pool queueing -> timeouts",
        );
        assert!(!term_list(&notes));
        assert_eq!(notes.len(), 3, "{notes:?}");
    }
}
