use super::*;
use crate::challenges::domain::Hint;
use crate::challenges::domain::model::Role;
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
