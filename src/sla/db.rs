//! The severity_policies table.

use sqlx::PgExecutor;

use super::domain::Policy;
use crate::domain::Severity;
use crate::error::{AppError, AppResult};

struct Row {
    severity: String,
    ack_target_secs: i32,
    resolve_target_secs: i32,
    update_cadence_secs: Option<i32>,
}

impl TryFrom<Row> for Policy {
    type Error = AppError;
    fn try_from(r: Row) -> AppResult<Self> {
        Ok(Self {
            severity: Severity::parse("severity", &r.severity)
                .map_err(|e| AppError::Internal(format!("{e:?}")))?,
            ack_target_secs: r.ack_target_secs.into(),
            resolve_target_secs: r.resolve_target_secs.into(),
            update_cadence_secs: r.update_cadence_secs.map(i64::from),
        })
    }
}

/// All four, worst severity first.
pub async fn all(e: impl PgExecutor<'_>) -> AppResult<Vec<Policy>> {
    sqlx::query_as!(
        Row,
        r#"select severity, ack_target_secs, resolve_target_secs, update_cadence_secs
           from severity_policies order by severity"#
    )
    .fetch_all(e)
    .await?
    .into_iter()
    .map(Policy::try_from)
    .collect()
}

/// The policy of one severity (every severity has one: the migration seeds them).
pub fn of(policies: &[Policy], severity: Severity) -> AppResult<Policy> {
    policies
        .iter()
        .find(|p| p.severity == severity)
        .copied()
        .ok_or_else(|| AppError::Internal(format!("no policy for {severity}")))
}

pub async fn save(e: impl PgExecutor<'_>, p: &Policy) -> AppResult<()> {
    let secs = |v: i64| i32::try_from(v).map_err(|_| AppError::invalid("policy", "too long"));
    sqlx::query!(
        r#"update severity_policies
           set ack_target_secs = $2, resolve_target_secs = $3, update_cadence_secs = $4,
               updated_at = now()
           where severity = $1"#,
        p.severity.as_str(),
        secs(p.ack_target_secs)?,
        secs(p.resolve_target_secs)?,
        p.update_cadence_secs.map(secs).transpose()?,
    )
    .execute(e)
    .await?;
    Ok(())
}
