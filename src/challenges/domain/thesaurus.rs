//! The words incident write-ups use, in families that mean one thing each: the parts of a system
//! (connections, retries, workers), what goes wrong with them (a limit, waiting, moving together),
//! what happens (a change, a blip), and what mends them (sizing, jitter, a rollback). Generation
//! reads a postmortem through them to propose a rubric: a family becomes one part of a phrasing,
//! and its members the ways a learner may say it. WordNet adds its own words for each member when
//! the rubric is graded; these are the ones it does not know belong together in an incident.

use super::language::{Token, words};

/// What a family names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A part of the system: `connection`, `retry`, `worker`
    Thing,
    /// What is wrong with one: `limit`, `wait`, `together`
    Condition,
    /// What the people affected see: `slow`, `timeout`, `peak`
    Symptom,
    /// Something that happened: `change`, `blip`
    Event,
    /// A mending verb that needs an object: `size the limit`, `roll back the change`
    Mend,
    /// A mending that is named by itself: `jitter`, `dedupe`
    Remedy,
}

/// A family of words that mean one thing in an incident.
#[derive(Debug)]
pub struct Family {
    pub kind: Kind,
    /// The first member stands for the family in a phrasing; every member is a way to say it
    pub members: &'static [&'static str],
    /// A condition that says the whole trouble by itself (`thundering herd`, `deadlock`), or a
    /// remedy that says the whole fix (`jitter`; `random` needs to be said of something)
    pub alone: bool,
    /// Heads of families that say the same mending of a part: `jitter` and `random` (the
    /// backoff)
    pub kin: &'static [&'static str],
}

impl Family {
    pub fn head(&self) -> &'static str {
        self.members[0]
    }
}

const fn family(kind: Kind, members: &'static [&'static str]) -> Family {
    Family {
        kind,
        members,
        alone: false,
        kin: &[],
    }
}

const fn alone(kind: Kind, members: &'static [&'static str]) -> Family {
    Family {
        kind,
        members,
        alone: true,
        kin: &[],
    }
}

use Kind::*;

/// Every family. A word belongs to one family only; the longest member found wins (`worker
/// pool` is a worker, `pool` alone a connection pool).
pub static FAMILIES: &[Family] = &[
    family(
        Thing,
        &[
            "connection",
            "connection pool",
            "pool size",
            "pool",
            "socket",
            "concurrency",
            "concurrent connections",
            "concurrent requests",
            "concurrent calls",
            "in flight",
            "max connections",
            "maxconnectionsperserver",
            "conn",
            "conns",
            "slot",
            "slots",
        ],
    ),
    family(
        Thing,
        &[
            "retry",
            "retries",
            "retried",
            "reattempt",
            "try again",
            "tried again",
            "resubmitted",
            "requeued",
            "attempt",
            "attempts",
        ],
    ),
    family(
        Thing,
        &[
            "backoff",
            "back-off",
            "back off",
            "retry delay",
            "delay",
            "interval",
            "retry schedule",
        ],
    ),
    family(
        Thing,
        &["worker", "workers", "worker pool", "consumer", "consumers"],
    ),
    family(
        Thing,
        &[
            "processor",
            "card processor",
            "payment provider",
            "provider",
            "acquirer",
            "psp",
            "upstream",
            "third party",
        ],
    ),
    family(Thing, &["thread", "threads", "thread pool"]),
    family(Thing, &["memory", "heap", "ram"]),
    family(Thing, &["disk", "volume", "storage", "filesystem"]),
    family(Thing, &["certificate", "cert", "tls certificate"]),
    family(Thing, &["dns", "resolver", "name resolution"]),
    family(Thing, &["cache", "cached", "caching"]),
    family(Thing, &["index", "query plan", "full table scan"]),
    family(Thing, &["lock", "locks", "mutex", "row lock"]),
    family(Thing, &["replica", "replication", "standby"]),
    family(Thing, &["canary", "staging", "load test"]),
    family(
        Condition,
        &[
            "cap",
            "capped",
            "limit",
            "limited",
            "max",
            "maximum",
            "ceiling",
            "bound",
            "bounded",
            "throttled",
            "quota",
            "allows",
            "allowed",
            "too few",
            "exceeded",
            "too small",
            "too low",
            "not enough",
            "insufficient",
            "undersized",
            "starved",
            "exhausted",
            "ran out",
            "run out",
        ],
    ),
    family(
        Condition,
        &[
            "wait",
            "waited",
            "waiting",
            "queue",
            "queued",
            "queueing",
            "backlog",
            "pile up",
            "piled up",
            "stood in line",
            "in line",
            "blocked",
        ],
    ),
    family(
        Symptom,
        &[
            "timeout",
            "time out",
            "timed out",
            "timeouts",
            "give up",
            "gave up",
            "cancelled",
        ],
    ),
    family(
        Symptom,
        &[
            "slow", "slower", "latency", "sluggish", "p99", "p95", "hang",
        ],
    ),
    family(
        Symptom,
        &[
            "peak",
            "load",
            "traffic",
            "arrival rate",
            "volume of requests",
            "busy",
            "demand",
            "throughput",
        ],
    ),
    family(
        Condition,
        &[
            "together",
            "same time",
            "same instant",
            "same moment",
            "same millisecond",
            "same ms",
            "identical",
            "simultaneously",
            "simultaneous",
            "at once",
            "lockstep",
            "in lockstep",
            "synchronized",
            "synchronised",
            "in sync",
            "in unison",
            "aligned",
            "line up",
            "in waves",
            "wave",
            "burst",
            "spike",
            "bunched",
            "clustered",
            "coincide",
            "correlated",
            "correlation",
        ],
    ),
    family(
        Condition,
        &[
            "deterministic",
            "fixed",
            "constant",
            "predictable",
            "no jitter",
            "lack of jitter",
            "no randomness",
            "no randomisation",
            "no randomization",
            "not random",
        ],
    ),
    family(
        Condition,
        &[
            "saturated",
            "saturating",
            "overloaded",
            "overwhelmed",
            "flooded",
            "swamped",
            "maxed out",
            "backed up",
            "not keep up",
            "fell behind",
            "falls behind",
        ],
    ),
    alone(Condition, &["thundering herd", "retry storm", "herd"]),
    alone(Condition, &["deadlock", "deadlocked"]),
    alone(Condition, &["memory leak", "leak", "leaking"]),
    family(Condition, &["expired", "expiry", "expiring", "lapsed"]),
    family(Condition, &["full", "filled up", "no space"]),
    family(Condition, &["lag", "lagging", "replication lag"]),
    family(
        Condition,
        &[
            "copied",
            "copy",
            "pasted",
            "reused",
            "borrowed",
            "cargo cult",
        ],
    ),
    family(
        Event,
        &[
            "change",
            "config change",
            "configuration change",
            "configuration",
            "config",
            "settings",
            "deploy",
            "deployed",
            "deployment",
            "release",
            "rollout",
            "pr",
            "pull request",
            "revision",
            "promoted",
        ],
    ),
    family(
        Event,
        &[
            "degradation",
            "degraded",
            "blip",
            "outage",
            "hiccup",
            "glitch",
            "brownout",
            "went down",
            "unavailable",
            "errors",
        ],
    ),
    family(
        Mend,
        &[
            "size",
            "sized",
            "derive",
            "derived",
            "compute",
            "calculate",
            "calculated",
            "little's law",
            "capacity calculation",
            "capacity math",
            "raise",
            "increase",
            "bump",
            "enlarge",
            "resize",
            "grow",
        ],
    ),
    family(
        Mend,
        &[
            "revert",
            "roll back",
            "rolled back",
            "rollback",
            "undo",
            "back out",
        ],
    ),
    Family {
        kind: Remedy,
        members: &[
            "jitter",
            "jittered",
            "full jitter",
            "desynchronize",
            "desynchronise",
        ],
        alone: true,
        kin: &["random"],
    },
    family(
        Remedy,
        &[
            "random",
            "randomize",
            "randomise",
            "randomized",
            "randomised",
            "randomness",
            "uniform",
            "unpredictable",
        ],
    ),
    alone(
        Remedy,
        &[
            "dedupe",
            "deduplicate",
            "de-duplicate",
            "deduplication",
            "idempotent",
        ],
    ),
    alone(Remedy, &["circuit breaker", "load shedding", "shed load"]),
];

/// The families a text names, clause by clause: for each clause, the indices into
/// [`FAMILIES`] in the order they stand, each once.
pub fn tag(text: &str) -> Vec<Vec<usize>> {
    // Every member read as words once, for every text tagged after.
    static MEMBERS: std::sync::OnceLock<Vec<(usize, Vec<Token>)>> = std::sync::OnceLock::new();
    let members = MEMBERS.get_or_init(|| {
        FAMILIES
            .iter()
            .enumerate()
            .flat_map(|(n, f)| f.members.iter().map(move |m| (n, words(m))))
            .filter(|(_, w)| !w.is_empty())
            .collect()
    });
    let same = |a: &Token, b: &Token| a.stem == b.stem || a.keys.iter().any(|k| b.keys.contains(k));
    super::language::clauses(text)
        .into_iter()
        .map(|c| {
            let t = &c.tokens;
            let mut found: Vec<usize> = Vec::new();
            let mut i = 0;
            while i < t.len() {
                let best = members
                    .iter()
                    .filter(|(_, m)| {
                        t.len() - i >= m.len() && m.iter().zip(&t[i..]).all(|(a, b)| same(a, b))
                    })
                    .max_by_key(|(_, m)| m.len());
                match best {
                    Some((n, m)) => {
                        if !found.contains(n) {
                            found.push(*n);
                        }
                        i += m.len();
                    }
                    None => i += 1,
                }
            }
            found
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heads(text: &str) -> Vec<Vec<&'static str>> {
        tag(text)
            .into_iter()
            .map(|c| c.into_iter().map(|n| FAMILIES[n].head()).collect())
            .collect()
    }

    #[test]
    fn the_longest_member_wins_and_each_family_counts_once_a_clause() {
        assert_eq!(
            heads("The worker pool was saturated, because requests queued for a connection"),
            vec![vec!["worker", "saturated"], vec!["wait", "connection"]]
        );
        assert_eq!(
            heads("Retries retried together in lockstep."),
            vec![vec!["retry", "together"]]
        );
    }

    #[test]
    fn a_word_belongs_to_one_family() {
        let mut seen: Vec<&str> = Vec::new();
        for f in FAMILIES {
            for m in f.members {
                assert!(!seen.contains(m), "{m} is in two families");
                seen.push(m);
            }
        }
    }
}
