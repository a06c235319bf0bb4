//! `GET|PUT /api/v1/severity-policies`.

use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgConnection;

use super::db;
use super::domain::Policy;
use crate::audit::{self, Actor};
use crate::domain::Severity;
use crate::error::{AppError, AppResult};
use crate::http::access::{Admin, Viewer};
use crate::http::extract::ApiJson;
use crate::http::request::ApiRequest;
use crate::state::AppState;

/// A policy in minutes, as people set it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyView {
    pub severity: String,
    pub ack_target_minutes: i64,
    pub resolve_target_minutes: i64,
    /// Minutes between stakeholder updates; null for none
    #[serde(default)]
    pub update_cadence_minutes: Option<i64>,
}

impl From<&Policy> for PolicyView {
    fn from(p: &Policy) -> Self {
        Self {
            severity: p.severity.to_string(),
            ack_target_minutes: p.ack_target_secs / 60,
            resolve_target_minutes: p.resolve_target_secs / 60,
            update_cadence_minutes: p.update_cadence_secs.map(|s| s / 60),
        }
    }
}

impl PolicyView {
    pub fn policy(&self) -> AppResult<Policy> {
        let p = Policy {
            severity: Severity::parse("severity", &self.severity)?,
            ack_target_secs: self.ack_target_minutes.saturating_mul(60),
            resolve_target_secs: self.resolve_target_minutes.saturating_mul(60),
            update_cadence_secs: self.update_cadence_minutes.map(|m| m.saturating_mul(60)),
        };
        p.check()?;
        Ok(p)
    }
}

#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyList {
    pub items: Vec<PolicyView>,
}

/// The targets per severity.
#[utoipa::path(get, path = "/api/v1/severity-policies", operation_id = "listSeverityPolicies", tag = "sla",
    responses((status = 200, description = "OK", body = PolicyList)))]
pub async fn list(ApiRequest(state, _): ApiRequest<Viewer>) -> AppResult<Json<PolicyList>> {
    current(&state).await
}

/// Replace the targets of the severities listed (the others stay). Verdicts of every incident
/// follow at once: they are computed from the policies and the timestamps.
#[utoipa::path(put, path = "/api/v1/severity-policies", operation_id = "updateSeverityPolicies", tag = "sla", request_body = PolicyList,
    responses((status = 200, description = "OK", body = PolicyList),
              crate::http::openapi::AdminsOnly,
              (status = 422, description = "A target is impossible; the field names the severity", body = crate::error::ErrorBody)))]
pub async fn put(
    ApiRequest(state, auth): ApiRequest<Admin>,
    body: ApiJson<PolicyList>,
) -> AppResult<Json<PolicyList>> {
    let policies = body
        .value
        .items
        .iter()
        .map(PolicyView::policy)
        .collect::<AppResult<Vec<_>>>()?;
    crate::transaction::write(&state.pool, |tx, _| {
        Box::pin(save_all(tx, &auth.actor, &policies))
    })
    .await?;
    current(&state).await
}

/// The policies as they stand, in minutes.
async fn current(state: &AppState) -> AppResult<Json<PolicyList>> {
    let items = db::all(&state.pool)
        .await?
        .iter()
        .map(PolicyView::from)
        .collect();
    Ok(Json(PolicyList { items }))
}

/// Saves policies and audits each change, in the caller's transaction.
pub async fn save_all(
    conn: &mut PgConnection,
    actor: &Actor,
    policies: &[Policy],
) -> AppResult<()> {
    let mut seen = Vec::new();
    for p in policies {
        if seen.contains(&p.severity) {
            return Err(AppError::invalid(
                "items",
                format!("{} is listed twice", p.severity),
            ));
        }
        seen.push(p.severity);
    }
    let before = db::all(&mut *conn).await?;
    for p in policies {
        let old = db::of(&before, p.severity)?;
        if old == *p {
            continue;
        }
        db::save(&mut *conn, p).await?;
        audit::changed(
            conn,
            actor,
            "severity_policy.update",
            p.severity.as_str(),
            json!(PolicyView::from(&old)),
            json!(PolicyView::from(p)),
        )
        .await?;
    }
    super::timers::rearm_open(conn).await
}
