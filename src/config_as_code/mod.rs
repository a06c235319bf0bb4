//! Configuration as code: Quell's teams, schedules, escalation policies and services as a YAML
//! file a Git repository can keep (`quell config export`), and Quell made to match one
//! (`quell config apply -f quell.yaml [--plan] [--prune]`).

pub mod actions;
pub mod domain;
