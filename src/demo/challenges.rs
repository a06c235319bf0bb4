//! The demo's investigation challenges, generated from their incidents' published postmortems
//! and refined by an editor: OrbitPay's from PAY-184 as the reference document tells it (the
//! evidence as it stood during the incident: the backoff before the fix, the chat up to the
//! moment the cause was named), and INC-1187's.

use sqlx::PgConnection;

use crate::audit::Actor;
use crate::challenges::domain::{ChallengeDraft, Concept, Hint, Role};
use crate::error::AppResult;

pub const ORBITPAY_TITLE: &str = "OrbitPay: checkout hangs, then fails";

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn groups(items: &[&[&str]]) -> Vec<Vec<String>> {
    items.iter().map(|g| strings(g)).collect()
}

/// A concept of a demo rubric.
fn concept(
    aspect: &str,
    question: &str,
    role: Role,
    clue: bool,
    weight: f64,
    phrases: &[&str],
    synonyms: &[&[&str]],
) -> Concept {
    Concept {
        aspect: aspect.into(),
        question: question.into(),
        weight,
        phrases: strings(phrases),
        synonyms: groups(synonyms),
        clue,
        role,
    }
}

/// The OrbitPay rubric: what started it and where to look (clues the evidence shows), what made
/// it worse, where the load piled up, and the fix. What made it worse and the fix together solve
/// it (0.8).
pub fn orbitpay_rubric() -> Vec<Concept> {
    let processor: &[&str] = &[
        "processor",
        "card processor",
        "acquirer",
        "payment provider",
        "psp",
        "upstream",
        "provider",
        "gateway",
    ];
    let blip: &[&str] = &[
        "degradation",
        "degraded",
        "blip",
        "outage",
        "hiccup",
        "slowdown",
        "failure",
        "errors",
        "went down",
        "was down",
        "glitch",
        "brownout",
        "flaky",
        "unavailable",
    ];
    let retry: &[&str] = &[
        "retry",
        "retries",
        "retried",
        "reattempt",
        "re-tries",
        "re-tried",
        "resubmitted",
        "requeued",
        "attempt",
        "attempts",
        "try again",
        "tried again",
    ];
    let together: &[&str] = &[
        "at the same time",
        "at the same moment",
        "at the same instant",
        "same time",
        "same moment",
        "same instant",
        "same millisecond",
        "simultaneously",
        "simultaneous",
        "at once",
        "together",
        "in lockstep",
        "lockstep",
        "synchronized",
        "synchronised",
        "in sync",
        "in unison",
        "aligned",
        "line up",
        "correlated",
        "coincide",
        "same schedule",
        "same delay",
        "same backoff",
        "burst",
        "in waves",
        "wave",
        "spike",
        "bunched",
        "clustered",
    ];
    let herd: &[&str] = &["thundering herd", "retry storm", "retry herd", "herd"];
    let fixed: &[&str] = &[
        "deterministic",
        "no jitter",
        "lack of jitter",
        "not jittered",
        "no randomness",
        "no randomisation",
        "no randomization",
        "not random",
        "not randomised",
        "not randomized",
        "no random",
        "predictable",
        "fixed",
        "constant",
    ];
    let backoff: &[&str] = &[
        "backoff",
        "back-off",
        "back off",
        "delay",
        "retry delay",
        "schedule",
        "interval",
        "wait",
        "pause",
    ];
    let queue: &[&str] = &[
        "retry queue",
        "retry set",
        "sorted set",
        "redis",
        "queue",
        "backlog",
    ];
    let worker: &[&str] = &[
        "worker",
        "workers",
        "worker pool",
        "payments-worker",
        "consumers",
    ];
    let full: &[&str] = &[
        "saturated",
        "overloaded",
        "overwhelmed",
        "flooded",
        "swamped",
        "filled",
        "piled up",
        "exhausted",
        "grew",
        "growing",
        "climbing",
        "maxed",
        "backed up",
        "falls behind",
        "behind",
        "not keep up",
    ];
    let jitter: &[&str] = &["jitter", "jittered", "desynchronize", "desynchronise"];
    let random: &[&str] = &[
        "random",
        "randomize",
        "randomise",
        "randomized",
        "randomness",
        "spread",
        "stagger",
        "unpredictable",
        "vary",
        "varied",
    ];
    let dedupe: &[&str] = &[
        "dedupe",
        "deduplicate",
        "de-duplicate",
        "deduplication",
        "idempotent",
    ];
    vec![
        concept(
            "the trigger",
            "what started it at 22:10?",
            Role::Cause,
            true,
            0.1,
            &["processor blip"],
            &[processor, blip],
        ),
        concept(
            "where to look",
            "what decides when a failed payment is tried again?",
            Role::Mechanism,
            true,
            0.05,
            &["backoff"],
            &[backoff],
        ),
        concept(
            "what made it worse",
            "why did a 90-second blip keep checkout slow for so long?",
            Role::Mechanism,
            false,
            0.5,
            &[
                "retry together",
                "herd",
                "fixed backoff",
                "fixed retry",
                "worker together",
            ],
            &[retry, together, herd, fixed, backoff, worker],
        ),
        concept(
            "where the load piled up",
            "what filled up while checkout hung?",
            Role::Mechanism,
            true,
            0.05,
            &["queue saturated", "worker saturated"],
            &[queue, full, worker],
        ),
        concept(
            "the fix",
            "what would stop it happening again?",
            Role::Fix,
            false,
            0.3,
            &["jitter", "random retry", "random backoff", "dedupe retries"],
            &[jitter, random, dedupe, retry, backoff],
        ),
    ]
}

/// The hints an editor writes over the generated ones for OrbitPay: cheapest first, each a step
/// closer to the backoff.
pub fn orbitpay_hints() -> Vec<Hint> {
    vec![
        Hint {
            text: "The processor recovered at 22:11:30, yet checkout stayed slow. What kept the load up once the processor was healthy again?".into(),
            cost: 5,
        },
        Hint {
            text: "Look at when the authorizations that failed in the blip are scheduled to run again.".into(),
            cost: 10,
        },
        Hint {
            text: "Work out backoffFor(n) for two authorizations that both failed at 22:10:05 on their first try: when does each run again?".into(),
            cost: 20,
        },
    ]
}

/// The INC-1187 rubric an editor writes over the generated proposal: the change that
/// triggered it and what the requests went through are clues the evidence shows; what went
/// wrong, why the value was wrong, and the fix are the answer. What went wrong and the fix
/// together solve it (0.8).
pub fn inc_1187_rubric() -> Vec<Concept> {
    let connections: &[&str] = &[
        "connection",
        "connections",
        "connection pool",
        "pool",
        "max connections",
        "sockets",
        "concurrency",
        "concurrent requests",
        "in flight",
    ];
    let cap: &[&str] = &[
        "cap",
        "capped",
        "limit",
        "limited",
        "max",
        "maximum",
        "ceiling",
        "bounded",
        "throttled",
        "allowed",
    ];
    let small: &[&str] = &[
        "too small",
        "too low",
        "small",
        "low",
        "not enough",
        "insufficient",
        "undersized",
        "starved",
        "exhausted",
        "saturated",
        "ran out",
        "only 10",
        "10 per replica",
        "queued",
        "waiting",
    ];
    let sized: &[&str] = &[
        "little's law",
        "arrival rate",
        "rate times latency",
        "rate × latency",
        "capacity calculation",
        "capacity math",
    ];
    let derived: &[&str] = &["derived", "calculated", "computed", "sized"];
    let copied: &[&str] = &["copied", "copy", "pasted", "borrowed", "reused"];
    let other: &[&str] = &[
        "another service",
        "another client",
        "other client",
        "other service",
        "elsewhere",
    ];
    let raise: &[&str] = &["raise", "increase", "bump", "resize", "grow"];
    let size: &[&str] = &["size", "derive", "compute", "calculate", "base", "set from"];
    let revert: &[&str] = &["revert", "roll back", "rollback", "undo"];
    let peak: &[&str] = &[
        "peak",
        "load",
        "traffic",
        "latency",
        "arrival rate",
        "little's law",
        "rate",
    ];
    let timeout: &[&str] = &["time out", "timeout", "timed out", "give up", "gave up"];
    let wait: &[&str] = &[
        "wait",
        "waiting",
        "queued",
        "queue",
        "stood in line",
        "in line",
    ];
    let slow: &[&str] = &["slow", "slower", "latency rose", "degraded"];
    let worse: &[&str] = &[
        "worse", "rose", "higher", "increase", "grew", "spike", "more",
    ];
    vec![
        concept(
            "the trigger",
            "what changed before it started?",
            Role::Cause,
            true,
            0.05,
            &["config change", "consolidate settings", "deploy 14:05"],
            &[
                &[
                    "config",
                    "configuration",
                    "settings",
                    "http client settings",
                    "deploy",
                    "pr",
                ],
                &["change", "changed", "deploy", "deployed", "chore"],
            ],
        ),
        concept(
            "what the requests went through",
            "what did the requests do while customers waited?",
            Role::Mechanism,
            true,
            0.05,
            &["time out", "processor slow", "load worse", "requests wait"],
            &[
                timeout,
                slow,
                worse,
                wait,
                &["load", "traffic", "peak"],
                &["requests", "payments", "calls"],
            ],
        ),
        concept(
            "why testing missed it",
            "why did the change look safe before it reached peak?",
            Role::Cause,
            true,
            0.05,
            &["canary low"],
            &[
                &["canary", "canaries", "test", "staging"],
                &[
                    "low",
                    "little",
                    "light",
                    "never saw",
                    "not at peak",
                    "25 req/s",
                ],
                &["traffic", "load", "peak"],
            ],
        ),
        concept(
            "what went wrong",
            "what did requests wait for until they timed out?",
            Role::Cause,
            false,
            0.5,
            &[
                "connections cap small",
                "connections small",
                "cap connections",
                "maxconnectionsperserver",
            ],
            &[connections, cap, small],
        ),
        concept(
            "why the value was wrong",
            "where did the number 10 come from, and what should it have been?",
            Role::Cause,
            false,
            0.05,
            &["copied another service", "not derived", "little's law"],
            &[sized, derived, copied, other],
        ),
        concept(
            "the fix",
            "what would stop it happening again?",
            Role::Fix,
            false,
            0.3,
            &[
                "raise connections",
                "raise cap",
                "size cap",
                "size connections",
                "size peak",
                "cap peak",
                "roll back",
            ],
            &[raise, size, revert, connections, peak, cap],
        ),
    ]
}

/// Generates a challenge from an incident's published postmortem, then refines it as an editor
/// would (`refine`), takes out what the leak guard flags (evidence items and hints that say the
/// answer or were written after detection), saves that as an edit, and publishes it.
async fn generate_and_refine(
    tx: &mut PgConnection,
    editor: &Actor,
    key: crate::domain::IncidentKey,
    refine: impl FnOnce(&mut ChallengeDraft),
) -> AppResult<()> {
    use crate::challenges::{actions, db};
    let id = actions::generate(tx, editor, key).await?;
    let generated = db::get(&mut *tx, id).await?;
    let mut draft = actions::source(&generated);
    refine(&mut draft);
    let flagged: Vec<String> = crate::challenges::domain::leaks(&draft, generated.detected_at)
        .into_iter()
        .map(|l| l.field)
        .collect();
    draft.without(&flagged);
    actions::update(tx, editor, id, None, &draft).await?;
    actions::publish(tx, editor, id).await?;
    Ok(())
}

/// Adds and publishes the two demo challenges, once each, both generated from their incident's
/// published postmortem and refined by an editor: OrbitPay's from PAY-184 (its title, rubric
/// and hints rewritten), and INC-1187's (its title and rubric rewritten).
pub async fn load(tx: &mut PgConnection, inc_1187: crate::domain::IncidentKey) -> AppResult<()> {
    let existing = crate::challenges::db::list(&mut *tx, true, None).await?;
    let editor = Actor::system("Marcelo Roman");
    if !existing.iter().any(|c| c.title == ORBITPAY_TITLE) {
        generate_and_refine(tx, &editor, super::orbitpay::PAY_184, |d| {
            d.title = ORBITPAY_TITLE.into();
            d.rubric = orbitpay_rubric();
            d.hints = orbitpay_hints();
        })
        .await?;
    }
    if !existing.iter().any(|c| c.title == INC_1187_TITLE) {
        generate_and_refine(tx, &editor, inc_1187, |d| {
            d.title = INC_1187_TITLE.into();
            d.rubric = inc_1187_rubric();
        })
        .await?;
    }
    Ok(())
}

pub const INC_1187_TITLE: &str = "payments-gateway: authorizations time out in the afternoon";
