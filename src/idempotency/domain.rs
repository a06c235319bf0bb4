//! What identifies a create that may be retried.

/// An `Idempotency-Key` and the person who sent it: keys are per person, so someone else
/// reusing a key and body never receives the first person's answer.
#[derive(Debug, Clone)]
pub struct Key {
    pub person_id: i64,
    pub key: String,
}
