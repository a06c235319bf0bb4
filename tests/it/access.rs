//! Who may do what: every route with every role and with no identity, sessions, CSRF, tokens,
//! throttling and the audit log.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{Creds, PASSWORD, TestApp};
use serde_json::json;
use sqlx::PgPool;

/// Every API operation and the least role that may call it.
const API: &[(&str, &str, &str)] = &[
    ("GET", "/api/v1/incidents", "viewer"),
    ("POST", "/api/v1/incidents", "responder"),
    ("GET", "/api/v1/incidents/{key}", "viewer"),
    ("PATCH", "/api/v1/incidents/{key}", "responder"),
    ("POST", "/api/v1/incidents/{key}/acknowledge", "responder"),
    ("POST", "/api/v1/incidents/{key}/mitigate", "responder"),
    ("POST", "/api/v1/incidents/{key}/resolve", "responder"),
    ("POST", "/api/v1/incidents/{key}/reopen", "responder"),
    ("POST", "/api/v1/incidents/{key}/snooze", "responder"),
    ("DELETE", "/api/v1/incidents/{key}/snooze", "responder"),
    ("POST", "/api/v1/incidents/{key}/merge", "responder"),
    ("POST", "/api/v1/incidents/{key}/escalate", "responder"),
    ("POST", "/api/v1/incidents/{key}/reassign", "responder"),
    ("GET", "/api/v1/incidents/{key}/responders", "viewer"),
    ("POST", "/api/v1/incidents/{key}/responders", "responder"),
    (
        "POST",
        "/api/v1/incidents/{key}/responders/{id}/accept",
        "responder",
    ),
    ("POST", "/api/v1/incidents/{key}/split", "responder"),
    ("POST", "/api/v1/incidents/{key}/severity", "responder"),
    ("PUT", "/api/v1/incidents/{key}/roles/{role}", "responder"),
    (
        "DELETE",
        "/api/v1/incidents/{key}/roles/{role}",
        "responder",
    ),
    ("GET", "/api/v1/incidents/{key}/timeline", "viewer"),
    ("POST", "/api/v1/incidents/{key}/timeline", "responder"),
    ("GET", "/api/v1/incidents/{key}/updates", "viewer"),
    ("POST", "/api/v1/incidents/{key}/updates", "responder"),
    ("GET", "/api/v1/incidents/{key}/publication", "viewer"),
    ("PUT", "/api/v1/incidents/{key}/publication", "responder"),
    ("DELETE", "/api/v1/incidents/{key}/publication", "responder"),
    ("GET", "/api/v1/status/components", "viewer"),
    ("POST", "/api/v1/status/components", "admin"),
    ("PUT", "/api/v1/status/components/{id}", "admin"),
    ("DELETE", "/api/v1/status/components/{id}", "admin"),
    ("GET", "/api/v1/status/settings", "viewer"),
    ("PUT", "/api/v1/status/settings", "admin"),
    ("GET", "/api/v1/status/subscribers", "admin"),
    ("DELETE", "/api/v1/status/subscribers/{id}", "admin"),
    ("GET", "/api/v1/incidents/{key}/claims", "viewer"),
    ("POST", "/api/v1/incidents/{key}/claims", "responder"),
    (
        "POST",
        "/api/v1/incidents/{key}/claims/{id}/renew",
        "responder",
    ),
    ("DELETE", "/api/v1/incidents/{key}/claims/{id}", "responder"),
    ("GET", "/api/v1/incidents/{key}/bridge", "viewer"),
    ("PUT", "/api/v1/incidents/{key}/bridge", "responder"),
    ("GET", "/api/v1/incidents/{key}/access", "viewer"),
    ("PUT", "/api/v1/incidents/{key}/access", "responder"),
    ("GET", "/api/v1/services/{name}/bridge", "viewer"),
    ("PUT", "/api/v1/services/{name}/bridge", "admin"),
    ("GET", "/api/v1/services", "viewer"),
    ("POST", "/api/v1/services", "admin"),
    ("GET", "/api/v1/services/{name}", "viewer"),
    ("PATCH", "/api/v1/services/{name}", "admin"),
    ("DELETE", "/api/v1/services/{name}", "admin"),
    ("GET", "/api/v1/people", "viewer"),
    ("GET", "/api/v1/teams", "viewer"),
    ("POST", "/api/v1/teams", "manager"),
    ("GET", "/api/v1/teams/{slug}", "viewer"),
    ("PUT", "/api/v1/teams/{slug}", "responder"),
    ("DELETE", "/api/v1/teams/{slug}", "manager"),
    ("PUT", "/api/v1/teams/{slug}/members/{handle}", "responder"),
    (
        "DELETE",
        "/api/v1/teams/{slug}/members/{handle}",
        "responder",
    ),
    ("GET", "/api/v1/me", "viewer"),
    ("GET", "/api/v1/me/preferences", "viewer"),
    ("PATCH", "/api/v1/me/preferences", "viewer"),
    ("GET", "/api/v1/users", "admin"),
    ("POST", "/api/v1/users", "admin"),
    ("PATCH", "/api/v1/users/{id}", "admin"),
    ("GET", "/api/v1/tokens", "viewer"),
    ("POST", "/api/v1/tokens", "viewer"),
    ("DELETE", "/api/v1/tokens/{id}", "viewer"),
    ("GET", "/api/v1/audit", "admin"),
    ("GET", "/api/v1/severity-policies", "viewer"),
    ("PUT", "/api/v1/severity-policies", "admin"),
    ("GET", "/api/v1/reports/{metric}", "manager"),
    ("GET", "/api/v1/reports/change-failure-rate", "manager"),
    ("GET", "/api/v1/notification-channels", "responder"),
    ("POST", "/api/v1/notification-channels", "responder"),
    ("DELETE", "/api/v1/notification-channels/{id}", "responder"),
    ("GET", "/api/v1/incidents/{key}/notifications", "viewer"),
    ("GET", "/api/v1/incidents/{key}/alerts", "viewer"),
    ("GET", "/api/v1/integrations", "admin"),
    ("POST", "/api/v1/integrations", "admin"),
    ("GET", "/api/v1/integrations/{id}", "admin"),
    ("PATCH", "/api/v1/integrations/{id}", "admin"),
    ("POST", "/api/v1/integrations/{id}/rotate", "admin"),
    ("GET", "/api/v1/routing-rules", "responder"),
    ("POST", "/api/v1/routing-rules", "responder"),
    ("PUT", "/api/v1/routing-rules", "admin"),
    ("PUT", "/api/v1/routing-rules/{id}", "responder"),
    ("DELETE", "/api/v1/routing-rules/{id}", "responder"),
    ("POST", "/api/v1/routing-rules/preview", "responder"),
    ("GET", "/api/v1/heartbeats", "viewer"),
    ("POST", "/api/v1/heartbeats", "responder"),
    ("GET", "/api/v1/heartbeats/{id}", "viewer"),
    ("PUT", "/api/v1/heartbeats/{id}", "responder"),
    ("DELETE", "/api/v1/heartbeats/{id}", "responder"),
    ("GET", "/api/v1/silences", "viewer"),
    ("POST", "/api/v1/silences", "responder"),
    ("GET", "/api/v1/silences/{id}", "viewer"),
    ("GET", "/api/v1/silences/{id}/alerts", "viewer"),
    ("POST", "/api/v1/silences/{id}/expire", "responder"),
    ("POST", "/api/v1/silences/preview", "responder"),
    ("GET", "/api/v1/silences/policy", "viewer"),
    ("PUT", "/api/v1/silences/policy", "admin"),
    ("GET", "/api/v1/maintenance-windows", "viewer"),
    ("POST", "/api/v1/maintenance-windows", "responder"),
    ("GET", "/api/v1/maintenance-windows/{id}", "viewer"),
    (
        "POST",
        "/api/v1/maintenance-windows/{id}/cancel",
        "responder",
    ),
    ("GET", "/api/v1/alertmanager/api/v2/status", "viewer"),
    ("GET", "/api/v1/alertmanager/api/v2/silences", "viewer"),
    ("POST", "/api/v1/alertmanager/api/v2/silences", "responder"),
    ("GET", "/api/v1/alertmanager/api/v2/silence/{id}", "viewer"),
    (
        "DELETE",
        "/api/v1/alertmanager/api/v2/silence/{id}",
        "responder",
    ),
    ("GET", "/api/v1/action-items", "viewer"),
    ("PATCH", "/api/v1/action-items/{id}", "responder"),
    ("DELETE", "/api/v1/action-items/{id}", "responder"),
    ("GET", "/api/v1/postmortems", "viewer"),
    ("GET", "/api/v1/incidents/{key}/postmortem", "viewer"),
    (
        "GET",
        "/api/v1/incidents/{key}/postmortem/comments",
        "viewer",
    ),
    (
        "POST",
        "/api/v1/incidents/{key}/postmortem/comments",
        "responder",
    ),
    (
        "POST",
        "/api/v1/incidents/{key}/postmortem/comments/{id}/resolve",
        "responder",
    ),
    ("GET", "/api/v1/work-item-trackers", "viewer"),
    ("POST", "/api/v1/work-item-trackers", "admin"),
    ("PUT", "/api/v1/work-item-trackers/{id}", "admin"),
    ("DELETE", "/api/v1/work-item-trackers/{id}", "admin"),
    ("GET", "/api/v1/search", "viewer"),
    ("GET", "/api/v1/changes", "viewer"),
    ("POST", "/api/v1/changes", "responder"),
    ("GET", "/api/v1/changes/{id}", "viewer"),
    ("GET", "/api/v1/incidents/{key}/suspect-changes", "viewer"),
    (
        "POST",
        "/api/v1/incidents/{key}/suspect-changes/{change_id}",
        "responder",
    ),
    ("GET", "/api/v1/incidents/{key}/related", "viewer"),
    ("POST", "/api/v1/incidents/{key}/related", "responder"),
    (
        "DELETE",
        "/api/v1/incidents/{key}/related/{other}",
        "responder",
    ),
    ("GET", "/api/v1/incidents/{key}/checklist", "viewer"),
    ("GET", "/api/v1/incidents/{key}/evidence", "viewer"),
    ("POST", "/api/v1/incidents/{key}/evidence", "responder"),
    (
        "DELETE",
        "/api/v1/incidents/{key}/evidence/{id}",
        "responder",
    ),
    (
        "POST",
        "/api/v1/incidents/{key}/evidence/imports",
        "responder",
    ),
    (
        "GET",
        "/api/v1/incidents/{key}/evidence/imports/{import_id}",
        "responder",
    ),
    (
        "POST",
        "/api/v1/incidents/{key}/evidence/imports/{import_id}/pick",
        "responder",
    ),
    (
        "DELETE",
        "/api/v1/incidents/{key}/evidence/imports/{import_id}",
        "responder",
    ),
    ("POST", "/api/v1/incidents/{key}/evidence/git", "responder"),
    ("POST", "/api/v1/incidents/{key}/checklist", "responder"),
    ("GET", "/api/v1/schedules", "viewer"),
    ("GET", "/api/v1/oncall/load", "manager"),
    ("POST", "/api/v1/schedules", "responder"),
    ("GET", "/api/v1/schedules/{id}", "viewer"),
    ("PUT", "/api/v1/schedules/{id}", "responder"),
    ("GET", "/api/v1/schedules/{id}/swaps", "viewer"),
    ("POST", "/api/v1/schedules/{id}/swaps", "responder"),
    (
        "POST",
        "/api/v1/schedules/{id}/swaps/{swap}/take",
        "responder",
    ),
    (
        "POST",
        "/api/v1/schedules/{id}/swaps/{swap}/withdraw",
        "responder",
    ),
    ("GET", "/api/v1/schedules/{id}/on-call", "viewer"),
    ("GET", "/api/v1/escalation-policies", "viewer"),
    ("POST", "/api/v1/escalation-policies", "responder"),
    ("GET", "/api/v1/escalation-policies/{id}", "viewer"),
    ("PUT", "/api/v1/escalation-policies/{id}", "responder"),
    ("DELETE", "/api/v1/escalation-policies/{id}", "responder"),
    (
        "PUT",
        "/api/v1/services/{name}/escalation-policy",
        "manager",
    ),
    ("GET", "/api/v1/on-call", "viewer"),
    ("GET", "/api/v1/subscriptions", "responder"),
    ("POST", "/api/v1/subscriptions", "responder"),
    ("DELETE", "/api/v1/subscriptions/{id}", "responder"),
    // {handle} is the admin's: only they (and admins) see how they are reached.
    ("GET", "/api/v1/people/{handle}/contact-methods", "admin"),
    ("POST", "/api/v1/people/{handle}/contact-methods", "admin"),
    (
        "DELETE",
        "/api/v1/people/{handle}/contact-methods/{id}",
        "admin",
    ),
    (
        "POST",
        "/api/v1/people/{handle}/notification-rules",
        "admin",
    ),
    (
        "DELETE",
        "/api/v1/people/{handle}/notification-rules/{id}",
        "admin",
    ),
    ("GET", "/api/v1/incidents/{key}/paging", "viewer"),
    ("GET", "/api/v1/runbooks", "viewer"),
    ("POST", "/api/v1/runbooks", "responder"),
    ("GET", "/api/v1/runbooks/{id}", "viewer"),
    ("PUT", "/api/v1/runbooks/{id}", "responder"),
    ("DELETE", "/api/v1/runbooks/{id}", "responder"),
    ("GET", "/api/v1/challenges", "responder"),
    ("POST", "/api/v1/challenges", "manager"),
    ("GET", "/api/v1/challenges/{id}", "responder"),
    ("PUT", "/api/v1/challenges/{id}", "manager"),
    ("GET", "/api/v1/challenges/{id}/source", "manager"),
    ("GET", "/api/v1/challenges/{id}/leaks", "manager"),
    ("POST", "/api/v1/challenges/generate", "manager"),
    ("POST", "/api/v1/challenges/{id}/publish", "manager"),
    ("POST", "/api/v1/challenges/{id}/attempts", "responder"),
    (
        "GET",
        "/api/v1/challenges/{id}/attempts/{attempt_id}",
        "responder",
    ),
    (
        "POST",
        "/api/v1/challenges/{id}/attempts/{attempt_id}/hypotheses",
        "responder",
    ),
    (
        "POST",
        "/api/v1/challenges/{id}/attempts/{attempt_id}/hints",
        "responder",
    ),
    (
        "POST",
        "/api/v1/challenges/{id}/attempts/{attempt_id}/give-up",
        "responder",
    ),
    ("GET", "/api/v1/challenges/{id}/leaderboard", "responder"),
    ("GET", "/api/v1/me/credits", "viewer"),
    ("GET", "/api/v1/credits/settings", "admin"),
    ("PUT", "/api/v1/credits/settings", "admin"),
    ("GET", "/api/v1/credits/balances", "admin"),
    (
        "POST",
        "/api/v1/challenges/{id}/attempts/{attempt_id}/hypotheses/{hypothesis_id}/review",
        "responder",
    ),
    ("GET", "/api/v1/challenges/{id}/reviews", "manager"),
    (
        "POST",
        "/api/v1/challenges/{id}/reviews/{review_id}",
        "manager",
    ),
    ("GET", "/api/v1/challenges/{id}/labelled.tsv", "manager"),
];

/// Every page route and the least role that may use it.
const PAGES: &[(&str, &str, &str)] = &[
    ("GET", "/", "viewer"),
    ("GET", "/incidents", "viewer"),
    ("POST", "/incidents", "responder"),
    ("GET", "/incidents/new", "responder"),
    ("GET", "/incidents/{key}", "viewer"),
    ("GET", "/incidents/{key}/edit", "responder"),
    ("POST", "/incidents/{key}/edit", "responder"),
    ("POST", "/incidents/{key}/transition", "responder"),
    ("POST", "/incidents/{key}/severity", "responder"),
    ("POST", "/incidents/{key}/snooze", "responder"),
    ("POST", "/incidents/{key}/snooze/end", "responder"),
    ("GET", "/incidents/{key}/merge", "responder"),
    ("POST", "/incidents/{key}/escalate", "responder"),
    ("POST", "/incidents/{key}/reassign", "responder"),
    ("POST", "/incidents/{key}/responders", "responder"),
    (
        "POST",
        "/incidents/{key}/responders/{id}/accept",
        "responder",
    ),
    ("POST", "/incidents/{key}/merge", "responder"),
    ("POST", "/incidents/{key}/split", "responder"),
    ("POST", "/incidents/{key}/roles", "responder"),
    ("POST", "/incidents/{key}/notes", "responder"),
    ("POST", "/incidents/{key}/updates", "responder"),
    ("GET", "/incidents/events", "viewer"),
    ("GET", "/incidents/{key}/events", "viewer"),
    ("POST", "/incidents/{key}/claims", "responder"),
    ("POST", "/incidents/{key}/claims/{id}", "responder"),
    ("POST", "/incidents/{key}/bridge", "responder"),
    ("POST", "/incidents/{key}/access", "responder"),
    ("GET", "/services", "viewer"),
    ("POST", "/services", "admin"),
    ("GET", "/services/new", "admin"),
    ("GET", "/services/{name}", "viewer"),
    ("GET", "/services/{name}/edit", "admin"),
    ("POST", "/services/{name}/edit", "admin"),
    ("GET", "/account", "viewer"),
    ("POST", "/account/password", "viewer"),
    ("POST", "/account/preferences", "viewer"),
    ("GET", "/admin/users", "admin"),
    ("POST", "/admin/users", "admin"),
    ("POST", "/admin/users/{id}", "admin"),
    ("GET", "/admin/audit", "admin"),
    ("GET", "/admin/policies", "admin"),
    ("POST", "/admin/policies", "admin"),
    ("GET", "/admin/credits", "admin"),
    (
        "POST",
        "/challenges/{id}/attempts/{attempt_id}/hypotheses/{hypothesis_id}/review",
        "responder",
    ),
    ("GET", "/challenges/{id}/reviews", "manager"),
    ("POST", "/challenges/{id}/reviews/{review_id}", "manager"),
    ("GET", "/challenges/{id}/labelled.tsv", "manager"),
    ("POST", "/admin/credits", "admin"),
    ("GET", "/reports", "manager"),
    ("GET", "/incidents/{key}/postmortem", "viewer"),
    ("GET", "/incidents/{key}/postmortem.md", "viewer"),
    ("POST", "/incidents/{key}/postmortem/sections", "responder"),
    ("POST", "/incidents/{key}/postmortem/facts", "responder"),
    ("POST", "/incidents/{key}/postmortem/timeline", "responder"),
    (
        "POST",
        "/incidents/{key}/postmortem/action-items",
        "responder",
    ),
    ("POST", "/incidents/{key}/postmortem/review", "responder"),
    ("POST", "/incidents/{key}/postmortem/publish", "manager"),
    (
        "GET",
        "/incidents/{key}/postmortem/versions/{number}",
        "viewer",
    ),
    ("POST", "/incidents/{key}/postmortem/comments", "responder"),
    (
        "POST",
        "/incidents/{key}/postmortem/comments/{id}/resolve",
        "responder",
    ),
    (
        "POST",
        "/incidents/{key}/postmortem/action-items/{id}",
        "responder",
    ),
    (
        "POST",
        "/incidents/{key}/postmortem/action-items/{id}/delete",
        "responder",
    ),
    ("GET", "/postmortems", "viewer"),
    ("GET", "/admin/trackers", "admin"),
    ("POST", "/admin/trackers", "admin"),
    ("POST", "/admin/trackers/{id}", "admin"),
    ("POST", "/admin/trackers/{id}/delete", "admin"),
    ("GET", "/action-items", "viewer"),
    ("GET", "/search", "viewer"),
    ("GET", "/near-misses", "viewer"),
    ("GET", "/changes", "viewer"),
    ("POST", "/changes", "responder"),
    ("POST", "/incidents/{key}/suspects/{change_id}", "responder"),
    ("POST", "/incidents/{key}/related", "responder"),
    (
        "POST",
        "/incidents/{key}/related/{other}/unlink",
        "responder",
    ),
    ("POST", "/incidents/{key}/checklist", "responder"),
    ("GET", "/incidents/{key}/evidence", "viewer"),
    ("POST", "/incidents/{key}/evidence", "responder"),
    ("POST", "/challenges/generate", "manager"),
    ("GET", "/challenges/{id}/edit", "manager"),
    ("POST", "/challenges/{id}/edit", "manager"),
    ("POST", "/challenges/{id}/publish", "manager"),
    ("POST", "/incidents/{key}/evidence/{id}/remove", "responder"),
    ("POST", "/incidents/{key}/evidence/git", "responder"),
    ("POST", "/incidents/{key}/evidence/imports", "responder"),
    (
        "GET",
        "/incidents/{key}/evidence/imports/{import_id}",
        "responder",
    ),
    (
        "POST",
        "/incidents/{key}/evidence/imports/{import_id}/pick",
        "responder",
    ),
    (
        "POST",
        "/incidents/{key}/evidence/imports/{import_id}/remove",
        "responder",
    ),
    ("GET", "/challenges", "responder"),
    ("GET", "/challenges/{id}", "responder"),
    ("POST", "/challenges/{id}/attempts", "responder"),
    (
        "POST",
        "/challenges/{id}/attempts/{attempt_id}/hypotheses",
        "responder",
    ),
    (
        "POST",
        "/challenges/{id}/attempts/{attempt_id}/hints",
        "responder",
    ),
    (
        "POST",
        "/challenges/{id}/attempts/{attempt_id}/give-up",
        "responder",
    ),
    ("GET", "/teams", "viewer"),
    ("POST", "/teams", "manager"),
    ("GET", "/teams/{slug}", "viewer"),
    ("GET", "/teams/{slug}/members", "viewer"),
    ("POST", "/teams/{slug}/members", "responder"),
    ("POST", "/teams/{slug}/edit", "responder"),
    ("POST", "/teams/{slug}/delete", "manager"),
    ("GET", "/runbooks", "viewer"),
    ("POST", "/runbooks", "responder"),
    ("GET", "/runbooks/{id}/edit", "responder"),
    ("POST", "/runbooks/{id}/edit", "responder"),
    ("POST", "/runbooks/{id}/delete", "responder"),
    ("GET", "/services/{name}/changes", "viewer"),
    ("POST", "/account/tokens", "viewer"),
    ("POST", "/account/tokens/{id}/revoke", "viewer"),
    ("POST", "/action-items/{id}", "responder"),
    ("GET", "/admin/integrations", "admin"),
    ("POST", "/admin/integrations", "admin"),
    ("POST", "/admin/integrations/{id}", "admin"),
    ("POST", "/admin/integrations/{id}/rotate", "admin"),
    ("GET", "/admin/import", "admin"),
    ("POST", "/admin/import", "admin"),
    ("GET", "/admin/status", "admin"),
    ("POST", "/admin/status/settings", "admin"),
    ("POST", "/admin/status/components", "admin"),
    ("POST", "/admin/status/components/{id}", "admin"),
    ("POST", "/admin/status/components/{id}/delete", "admin"),
    ("POST", "/admin/status/announcements", "admin"),
    ("POST", "/admin/status/announcements/{id}/delete", "admin"),
    ("POST", "/admin/status/subscribers/{id}/delete", "admin"),
    ("GET", "/incidents/{key}/publication", "viewer"),
    ("POST", "/incidents/{key}/publication", "responder"),
    ("POST", "/incidents/{key}/publication/delete", "responder"),
    ("GET", "/admin/channels", "admin"),
    ("POST", "/admin/channels", "admin"),
    ("GET", "/admin/channels/{id}/delete", "admin"),
    ("POST", "/admin/channels/{id}/delete", "admin"),
    ("POST", "/admin/subscriptions", "admin"),
    ("POST", "/admin/subscriptions/{id}/delete", "admin"),
    ("GET", "/oncall", "viewer"),
    ("GET", "/oncall/load", "manager"),
    ("GET", "/oncall/load.csv", "manager"),
    ("POST", "/oncall/assign", "manager"),
    ("POST", "/escalation-policies", "manager"),
    ("GET", "/escalation-policies/new", "manager"),
    ("GET", "/escalation-policies/{id}", "responder"),
    ("POST", "/escalation-policies/{id}", "responder"),
    ("POST", "/escalation-policies/{id}/delete", "responder"),
    ("GET", "/schedules", "viewer"),
    ("GET", "/schedules/{id}", "viewer"),
    ("GET", "/schedules/new", "responder"),
    ("POST", "/schedules/new", "responder"),
    ("GET", "/schedules/{id}/edit", "responder"),
    ("GET", "/schedules/{id}/swaps", "viewer"),
    ("POST", "/schedules/{id}/swaps", "responder"),
    ("POST", "/schedules/{id}/swaps/{swap}/{what}", "responder"),
    ("POST", "/schedules/{id}/edit", "responder"),
    ("POST", "/schedules/{id}/overrides", "responder"),
    ("POST", "/schedules/{id}/overrides/{n}/delete", "responder"),
    ("POST", "/oncall/feed", "viewer"),
    ("GET", "/account/paging", "viewer"),
    ("POST", "/account/paging", "viewer"),
    ("GET", "/admin/routing", "admin"),
    ("POST", "/admin/routing", "admin"),
    ("POST", "/admin/routing/preview", "admin"),
    ("POST", "/admin/routing/{id}", "admin"),
    ("POST", "/admin/routing/{id}/delete", "admin"),
    ("POST", "/admin/routing/{id}/move", "admin"),
    ("GET", "/heartbeats", "viewer"),
    ("POST", "/heartbeats", "responder"),
    ("POST", "/heartbeats/{id}", "responder"),
    ("POST", "/heartbeats/{id}/delete", "responder"),
    ("GET", "/silences", "viewer"),
    ("POST", "/silences", "responder"),
    ("POST", "/silences/preview", "responder"),
    ("POST", "/silences/policy", "admin"),
    ("GET", "/silences/{id}", "viewer"),
    ("POST", "/silences/{id}/expire", "responder"),
    ("GET", "/maintenance", "viewer"),
    ("POST", "/maintenance", "responder"),
    ("POST", "/maintenance/{id}/cancel", "responder"),
];

const ROLES: [&str; 4] = ["viewer", "responder", "manager", "admin"];

fn rank(role: &str) -> usize {
    ROLES.iter().position(|r| *r == role).unwrap()
}

fn fill(path: &str, key: &str) -> String {
    path.replace("{key}", key)
        .replace("{role}", "scribe")
        .replace("{name}", "payments-gateway")
        .replace("{id}", "999999")
        .replace("{change_id}", "999999")
        .replace("{other}", "INC-999999")
        .replace("{attempt_id}", "999999")
        .replace("{import_id}", "999999")
        .replace("{metric}", "mtta")
        .replace("{number}", "1")
        .replace("{handle}", "admin")
        .replace("{n}", "0")
        .replace("{slug}", "no-such-team")
}

#[sqlx::test]
async fn every_api_operation_is_in_the_access_table(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let spec = app.get("/api/v1/openapi.json").await.json();
    for (path, ops) in spec["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            let m = method.to_uppercase();
            assert!(
                API.iter().any(|(am, ap, _)| *am == m && ap == path),
                "{m} {path} is routed but not in the access table"
            );
        }
    }
}

#[sqlx::test]
async fn every_route_with_every_role_and_no_identity(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("payments-gateway").await;
    let key = app.past_incident(60).await;
    let mut who: Vec<(Option<&str>, Creds)> = vec![(None, Creds::default())];
    for role in ROLES {
        who.push((
            Some(role),
            app.account(&format!("{role}@example.com"), role).await,
        ));
    }
    for (method, path, min) in API {
        let uri = fill(path, &key);
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        for (role, creds) in &who {
            let r = app
                .call_as(creds, method.clone(), &uri, &[], Some("{}"))
                .await;
            match role {
                None => {
                    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "nobody {method} {uri}");
                    assert_eq!(r.code(), "unauthenticated");
                    assert!(r.header("www-authenticate").is_some());
                }
                Some(role) if rank(role) < rank(min) => {
                    assert_eq!(
                        r.status,
                        StatusCode::FORBIDDEN,
                        "{role} {method} {uri}: {}",
                        r.text
                    );
                    assert_eq!(r.code(), "forbidden");
                }
                Some(role) => assert!(
                    r.status != StatusCode::UNAUTHORIZED && r.status != StatusCode::FORBIDDEN,
                    "{role} {method} {uri} was refused: {} {}",
                    r.status,
                    r.text
                ),
            }
        }
    }
    for (method, path, min) in PAGES {
        let uri = fill(path, &key);
        for (role, creds) in &who {
            let r = if path.ends_with("/events") {
                // An event stream never ends: read its answer, not its body.
                let s = crate::common::open_stream(&app.router, creds, &uri, &[]).await;
                crate::common::Res {
                    status: s.status,
                    headers: s.headers.clone(),
                    text: String::new(),
                }
            } else if *method == "GET" {
                app.call_as(creds, Method::GET, &uri, &[], None).await
            } else {
                app.form_as(creds, &uri, &[("version", "1")]).await
            };
            match role {
                None => {
                    assert_eq!(r.status, StatusCode::SEE_OTHER, "nobody {method} {uri}");
                    assert!(
                        r.header("location").unwrap().starts_with("/login?next="),
                        "{method} {uri}"
                    );
                }
                Some(role) if rank(role) < rank(min) => {
                    assert_eq!(
                        r.status,
                        StatusCode::FORBIDDEN,
                        "{role} {method} {uri}: {}",
                        r.text
                    );
                }
                Some(role) => assert!(
                    r.status != StatusCode::FORBIDDEN
                        && !r
                            .header("location")
                            .is_some_and(|l| l.starts_with("/login")),
                    "{role} {method} {uri} was refused: {} {}",
                    r.status,
                    r.text
                ),
            }
        }
    }
    // Every refusal above left a trace, tallied rather than one row each.
    let refused = app
        .get("/api/v1/audit?outcome=refused&action=access.denied&limit=500")
        .await
        .json();
    assert!(!refused["items"].as_array().unwrap().is_empty());
}

#[sqlx::test]
async fn a_viewer_token_reads_but_cannot_write(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let viewer = app.account("vic@example.com", "viewer").await;
    let r = app
        .call_as(
            &viewer,
            Method::GET,
            &format!("/api/v1/incidents/{key}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app
        .call_as(
            &viewer,
            Method::POST,
            &format!("/api/v1/incidents/{key}/acknowledge"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("responder")
    );
    assert_eq!(
        app.incident_json(&key).await["status"],
        "triggered",
        "nothing changed"
    );
    let audit = app.get("/api/v1/audit?outcome=refused").await.json();
    let row = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "access.denied" && e["actor"] == "vic")
        .expect("the refused write is audited")
        .clone();
    assert_eq!(
        row["target"],
        format!("POST /api/v1/incidents/{key}/acknowledge")
    );
}

#[sqlx::test]
async fn pages_redirect_to_sign_in_and_back(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let nobody = Creds::default();
    let r = app
        .call_as(&nobody, Method::GET, "/incidents?status=open", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        r.header("location"),
        Some("/login?next=%2Fincidents%3Fstatus%3Dopen")
    );
    let page = app
        .call_as(
            &nobody,
            Method::GET,
            "/login?next=%2Fincidents%3Fstatus%3Dopen",
            &[],
            None,
        )
        .await;
    assert!(
        page.text
            .contains(r#"name="next" value="/incidents?status=open""#)
    );
    // An off-site `next` is ignored.
    let page = app
        .call_as(
            &nobody,
            Method::GET,
            "/login?next=https://evil.example/x",
            &[],
            None,
        )
        .await;
    assert!(page.text.contains(r#"name="next" value="/incidents""#));
    let page = app
        .call_as(
            &nobody,
            Method::GET,
            "/login?next=//evil.example/x",
            &[],
            None,
        )
        .await;
    assert!(page.text.contains(r#"name="next" value="/incidents""#));
}

#[sqlx::test]
async fn the_login_page_carries_the_security_headers(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .call_as(&Creds::default(), Method::GET, "/login", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("frame-ancestors 'none'")
            && csp.contains("script-src 'self'")
            && !csp.contains("unsafe-inline")
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("referrer-policy"), Some("same-origin"));
    let cookie = r
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
}

#[sqlx::test]
async fn signing_in_gives_a_new_session_id_and_the_old_one_stays_anonymous(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let mut before = app.signed_out_browser().await;
    // A session id planted in the browser beforehand (fixation) is never the one signed in.
    let planted = "quell=planted-by-someone-else";
    before.cookie = Some(format!("{}; {planted}", before.cookie.unwrap()));
    let r = app
        .form_as(
            &before,
            "/login",
            &[("email", common::ADMIN_EMAIL), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let after = r.session_cookie().expect("a new session cookie at sign-in");
    assert_ne!(after, planted, "session fixation: the id must change");
    // The pre-login id is not signed in.
    let r = app
        .call_as(&before, Method::GET, "/incidents", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let signed = Creds {
        cookie: Some(after),
        ..Default::default()
    };
    assert_eq!(
        app.call_as(&signed, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::OK
    );
}

#[sqlx::test]
async fn sign_out_really_ends_the_session(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let me = app.account("ana@example.com", "responder").await;
    assert_eq!(
        app.call_as(&me, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::OK
    );
    let r = app.form_as(&me, "/logout", &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    // Replaying the old cookie does not bring the session back.
    let r = app
        .call_as(
            &Creds {
                cookie: me.cookie.clone(),
                ..Default::default()
            },
            Method::GET,
            "/incidents",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
}

#[sqlx::test]
async fn missing_or_wrong_csrf_tokens_and_cross_site_posts_are_refused(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let key = app.past_incident(10).await;
    let url = format!("/incidents/{key}/transition");
    let cookie_only = Creds {
        cookie: app.admin.cookie.clone(),
        ..Default::default()
    };
    let r = app
        .form_as(
            &cookie_only,
            &url,
            &[("version", "1"), ("action", "acknowledge")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "missing token");
    let wrong = Creds {
        csrf: Some("0".repeat(64)),
        ..cookie_only.clone()
    };
    let r = app
        .form_as(&wrong, &url, &[("version", "1"), ("action", "acknowledge")])
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "wrong token");
    // Even with the right token, a browser-declared cross-site post is refused.
    let body = format!(
        "csrf={}&version=1&action=acknowledge",
        app.admin.csrf.clone().unwrap()
    );
    let r = app
        .form_raw(
            &app.admin,
            &url,
            body.clone(),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "foreign Origin");
    let r = app
        .form_raw(
            &app.admin,
            &url,
            body.clone(),
            &[("sec-fetch-site", "cross-site")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "cross-site fetch");
    assert_eq!(
        app.incident_json(&key).await["status"],
        "triggered",
        "nothing changed"
    );
    let refused = app.get("/api/v1/audit?outcome=refused").await.json();
    let actions: Vec<_> = refused["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        actions.contains(&"csrf.bad_token".to_owned())
            && actions.contains(&"csrf.cross_origin".to_owned()),
        "{actions:?}"
    );
    // The same post from Quell's own page goes through.
    let r = app
        .form_raw(
            &app.admin,
            &url,
            body,
            &[
                ("origin", "http://quell.test"),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(app.incident_json(&key).await["status"], "acknowledged");
}

#[sqlx::test]
async fn a_revoked_token_stops_working_at_once(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app
        .post("/api/v1/tokens", json!({"name": "alert bridge"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let created = r.json();
    let token = created["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("quell_") && token.len() == 70);
    let as_token = Creds {
        token: Some(token.clone()),
        ..Default::default()
    };
    assert_eq!(
        app.call_as(&as_token, Method::GET, "/api/v1/me", &[], None)
            .await
            .json()["email"],
        common::ADMIN_EMAIL
    );
    // The list never shows the secret again, and notes the use.
    let list = app.get("/api/v1/tokens").await;
    assert!(!list.text.contains(&token) && list.text.contains("alert bridge"));
    let listed = list.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "alert bridge")
        .unwrap()
        .clone();
    assert!(listed["last_used_at"].is_string(), "{listed}");
    let id = created["id"].as_i64().unwrap();
    let r = app
        .call(Method::DELETE, &format!("/api/v1/tokens/{id}"), &[], None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = app
        .call_as(&as_token, Method::GET, "/api/v1/me", &[], None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    // Stored as a hash only.
    let stored: i64 = sqlx::query_scalar(
        "select count(*) from api_tokens where encode(token_hash, 'escape') like '%' || $1 || '%'",
    )
    .bind(&token[6..20])
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(stored, 0);
}

#[sqlx::test]
async fn tokens_for_others_need_an_admin(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    let r = app
        .call_as(
            &ana,
            Method::POST,
            "/api/v1/tokens",
            &[],
            Some(r#"{"name": "x", "email": "admin@quell.test"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .post(
            "/api/v1/tokens",
            json!({"name": "for ana", "email": "ana@example.com"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.json()["owner"], "ana@example.com");
    // Ana cannot revoke the admin's token; to her it does not exist.
    let admin_tokens = app.get("/api/v1/tokens").await.json();
    let admins = admin_tokens["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["owner"] == "admin@quell.test")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let r = app
        .call_as(
            &ana,
            Method::DELETE,
            &format!("/api/v1/tokens/{admins}"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test]
async fn disabling_a_user_ends_their_sessions_and_tokens(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let ana = app.account("ana@example.com", "responder").await;
    assert_eq!(
        app.call_as(&ana, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::OK
    );
    let id = app.get("/api/v1/users").await.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == "ana@example.com")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/users/{id}"),
            &[],
            Some(r#"{"disabled": true}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json()["disabled_at"].is_string());
    assert_eq!(
        app.call_as(&ana, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        app.call_as(&ana, Method::GET, "/api/v1/me", &[], None)
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    // And she cannot sign in again until enabled.
    let fresh = app.signed_out_browser().await;
    let r = app
        .form_as(
            &fresh,
            "/login",
            &[("email", "ana@example.com"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    app.call(
        Method::PATCH,
        &format!("/api/v1/users/{id}"),
        &[],
        Some(r#"{"disabled": false}"#),
    )
    .await;
    app.sign_in("ana@example.com", PASSWORD).await;
    // An admin cannot lock themselves out.
    let me = app.get("/api/v1/me").await.json()["id"].as_i64().unwrap();
    let r = app
        .call(
            Method::PATCH,
            &format!("/api/v1/users/{me}"),
            &[],
            Some(r#"{"role": "viewer"}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
}

#[sqlx::test]
async fn failed_sign_ins_slow_down_per_account_and_per_address(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.account("ana@example.com", "responder").await;
    let attempt = |email: &'static str, password: &'static str, addr: &'static str| {
        let app = &app;
        async move {
            let c = app.signed_out_browser().await;
            let body = form_urlencoded::Serializer::new(String::new())
                .append_pair("csrf", &c.csrf.clone().unwrap())
                .append_pair("email", email)
                .append_pair("password", password)
                .finish();
            app.form_raw(&c, "/login", body, &[("x-forwarded-for", addr)])
                .await
        }
    };
    for _ in 0..3 {
        assert_eq!(
            attempt("ana@example.com", "wrong password!", "10.0.0.1")
                .await
                .status,
            StatusCode::UNAUTHORIZED
        );
    }
    // Now the account waits, even with the right password and from elsewhere.
    let r = attempt("ana@example.com", PASSWORD, "10.0.0.2").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
    assert!(r.text.contains("Wait"));
    // And the address waits, whatever account it tries.
    let r = attempt("admin@quell.test", PASSWORD, "10.0.0.1").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    // Another address and account are unaffected.
    let r = attempt("admin@quell.test", PASSWORD, "10.0.0.3").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    // A wrong email answers like a wrong password.
    let r = attempt("nobody@example.com", "whatever it is", "10.0.0.4").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.text.contains("The email or the password is wrong."));
    let audit = app.get("/api/v1/audit?action=login.").await.json();
    let actions: Vec<_> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["target"].as_str().unwrap_or_default().to_owned(),
                e["count"].as_i64().unwrap(),
            )
        })
        .collect();
    // Refusals of one kind, subject and address are tallied per minute: ana's three failures
    // make one row, or two when they straddle a minute boundary.
    let ana: Vec<i64> = actions
        .iter()
        .filter(|(a, t, _)| a == "login.failed" && t.contains("ana@example.com"))
        .map(|(_, _, n)| *n)
        .collect();
    assert_eq!(ana.iter().sum::<i64>(), 3, "{actions:?}");
    assert!(ana.len() <= 2, "tallied, not a row each: {actions:?}");
    assert!(actions.iter().any(|(a, _, _)| a == "login.throttled"));
}

#[sqlx::test]
async fn changing_the_password_ends_other_sessions_but_not_this_one(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let here = app.account("ana@example.com", "responder").await;
    let elsewhere = app.sign_in("ana@example.com", PASSWORD).await;
    let r = app
        .form_as(
            &here,
            "/account/password",
            &[
                ("current", "not it at all"),
                ("new", "a brand new password"),
                ("confirm", "a brand new password"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = app
        .form_as(
            &here,
            "/account/password",
            &[
                ("current", PASSWORD),
                ("new", "short"),
                ("confirm", "short"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("10 to 128"));
    let r = app
        .form_as(
            &here,
            "/account/password",
            &[
                ("current", PASSWORD),
                ("new", "a brand new password"),
                ("confirm", "a brand new password"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.text.contains("Password changed"));
    assert_eq!(
        app.call_as(&here, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        app.call_as(&elsewhere, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::SEE_OTHER
    );
    app.sign_in("ana@example.com", "a brand new password").await;
    let stored: String =
        sqlx::query_scalar("select password_hash from people where email = 'ana@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(stored.starts_with("$argon2id$"), "{stored}");
}

#[sqlx::test]
async fn users_are_created_by_admins_and_audited(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let r = app.post("/api/v1/users", json!({"email": "dev@example.com", "role": "manager", "name": "Dev Shah", "password": "long enough secret"})).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json()["role"], "manager");
    for (body, field) in [
        (json!({"email": "x@example.com", "role": "root"}), "role"),
        (json!({"email": "nope", "role": "viewer"}), "email"),
        (
            json!({"email": "y@example.com", "role": "viewer", "password": "short"}),
            "password",
        ),
    ] {
        let r = app.post("/api/v1/users", body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.field(), field, "{body}");
    }
    let r = app
        .post(
            "/api/v1/users",
            json!({"email": "DEV@example.com", "role": "viewer"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    app.sign_in("dev@example.com", "long enough secret").await;
    let audit = app.get("/api/v1/audit?action=user.create").await.json();
    let row = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["target"] == "dev@example.com")
        .unwrap()
        .clone();
    assert_eq!(row["actor"], "admin");
    assert_eq!(row["after"]["role"], "manager");
    assert!(row["request_id"].is_string());
}

#[sqlx::test]
async fn every_kind_of_change_leaves_an_audit_row(pool: PgPool) {
    let app = TestApp::new(pool).await;
    app.service("checkout-api").await;
    app.person("Ana Ribeiro", "ana").await;
    let key = app.past_incident(60).await;
    app.post(&format!("/api/v1/incidents/{key}/acknowledge"), json!({}))
        .await;
    app.post(
        &format!("/api/v1/incidents/{key}/severity"),
        json!({"severity": "Sev1", "reason": "worse"}),
    )
    .await;
    app.call(
        Method::PUT,
        &format!("/api/v1/incidents/{key}/roles/scribe"),
        &[],
        Some(r#"{"person": "ana"}"#),
    )
    .await;
    app.call(
        Method::PATCH,
        &format!("/api/v1/incidents/{key}"),
        &[("if-match", "\"v4\"")],
        Some(r#"{"title": "Renamed"}"#),
    )
    .await;
    app.post(
        &format!("/api/v1/incidents/{key}/timeline"),
        json!({"body": "found it"}),
    )
    .await;
    app.post_empty(&format!("/api/v1/incidents/{key}/resolve"))
        .await;
    app.call(
        Method::PATCH,
        "/api/v1/services/checkout-api",
        &[("if-match", "\"v1\"")],
        Some(r#"{"tier": 2}"#),
    )
    .await;
    app.call(Method::DELETE, "/api/v1/services/checkout-api", &[], None)
        .await;
    let r = app.post("/api/v1/tokens", json!({"name": "t"})).await;
    app.call(
        Method::DELETE,
        &format!("/api/v1/tokens/{}", r.json()["id"]),
        &[],
        None,
    )
    .await;
    let audit = app.get("/api/v1/audit?outcome=ok&limit=500").await.json();
    let actions: Vec<String> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    for expected in [
        "incident.open",
        "incident.acknowledge",
        "incident.severity",
        "incident.role.scribe",
        "incident.edit",
        "incident.note",
        "incident.resolve",
        "service.create",
        "service.update",
        "service.delete",
        "user.create",
        "token.create",
        "token.revoke",
        "login",
    ] {
        assert!(
            actions.iter().any(|a| a == expected),
            "{expected} missing from {actions:?}"
        );
    }
    let edit = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "incident.edit")
        .unwrap();
    assert_eq!(edit["before"]["title"], "Past");
    assert_eq!(edit["after"]["title"], "Renamed");
    assert_eq!(edit["target"], key);
}

#[sqlx::test]
async fn the_audit_log_cannot_be_changed_or_deleted(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let n: i64 = sqlx::query_scalar("select count(*) from audit_log")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(n > 0);
    for sql in [
        "update audit_log set actor = 'someone else'",
        "delete from audit_log",
        "truncate audit_log cascade",
    ] {
        let err = sqlx::query(sql).execute(&app.pool).await.expect_err(sql);
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    let after: i64 = sqlx::query_scalar("select count(*) from audit_log")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(after, n);
    assert_eq!(
        app.call_as(
            &app.account("v@example.com", "viewer").await,
            Method::GET,
            "/admin/audit",
            &[],
            None
        )
        .await
        .status,
        StatusCode::FORBIDDEN
    );
    let page = app.get("/admin/audit").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text.contains("user.create"));
}

#[sqlx::test]
async fn bootstrap_settings_create_the_admin_and_its_token(pool: PgPool) {
    quell::accounts::bootstrap::from_settings(
        &pool,
        Some("root@example.com"),
        Some("first admin pass"),
        Some("quell_bootstrap_value_for_tests"),
    )
    .await
    .unwrap();
    // Running again (a restart, or another replica) resets rather than duplicates.
    quell::accounts::bootstrap::from_settings(
        &pool,
        Some("root@example.com"),
        Some("second admin pass"),
        Some("quell_bootstrap_value_for_tests"),
    )
    .await
    .unwrap();
    let app = TestApp::new(pool).await;
    let boot = Creds {
        token: Some("quell_bootstrap_value_for_tests".into()),
        ..Default::default()
    };
    let me = app
        .call_as(&boot, Method::GET, "/api/v1/me", &[], None)
        .await
        .json();
    assert_eq!(
        (me["email"].as_str(), me["role"].as_str()),
        (Some("root@example.com"), Some("admin"))
    );
    app.sign_in("root@example.com", "second admin pass").await;
    let n: i64 = sqlx::query_scalar("select count(*) from people where email = 'root@example.com'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 1);
    let err = quell::accounts::bootstrap::from_settings(
        &app.pool,
        None,
        None,
        Some("quell_token_without_an_admin"),
    )
    .await;
    assert!(err.is_err(), "a token without an admin email is refused");
}

#[sqlx::test]
async fn behind_https_the_cookies_are_secure_and_host_only(pool: PgPool) {
    use tower::ServiceExt;
    let state = quell::state::AppState::new(
        pool.clone(),
        quell::state::AppConfig {
            base_url: "https://quell.example".into(),
            trust_forwarded_for: false,
            oidc: None,
            git_roots: vec![],
            webhook_allow: Default::default(),
            live: Default::default(),
            request_timeout: std::time::Duration::from_secs(30),
            bodies: Default::default(),
            uploads: Default::default(),
            metrics_token: None,
        },
    );
    quell::accounts::bootstrap::ensure_account(
        &pool,
        &quell::accounts::bootstrap::Account {
            email: "ana@example.com",
            name: None,
            role: quell::auth::domain::UserRole::Responder,
            password: Some(PASSWORD),
        },
        &quell::audit::Actor::system("test"),
    )
    .await
    .unwrap();
    let app = quell::app(state);
    let send = |req: axum::http::Request<axum::body::Body>| app.clone().oneshot(req);
    let set_cookie = |res: &axum::response::Response| {
        res.headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let page = send(
        axum::http::Request::get("/login")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
    .unwrap();
    let cookies = set_cookie(&page);
    assert_eq!(
        cookies.len(),
        1,
        "only the sign-in form's cookie: {cookies:?}"
    );
    let login_cookie = cookies[0].clone();
    assert!(
        login_cookie.starts_with("__Host-quell_login="),
        "{login_cookie}"
    );
    let body = http_body_util::BodyExt::collect(page.into_body())
        .await
        .unwrap()
        .to_bytes();
    let html = String::from_utf8_lossy(&body);
    let at = html.find(r#"name="csrf" value=""#).unwrap() + r#"name="csrf" value=""#.len();
    let token = html[at..].split('"').next().unwrap();
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("csrf", token)
        .append_pair("email", "ana@example.com")
        .append_pair("password", PASSWORD)
        .finish();
    let signed_in = send(
        axum::http::Request::post("/login")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", login_cookie.split(';').next().unwrap())
            .body(axum::body::Body::from(form))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    let session = set_cookie(&signed_in)
        .into_iter()
        .find(|c| c.starts_with("__Host-quell="))
        .expect("a session cookie at sign-in");
    for cookie in [&login_cookie, &session] {
        assert!(
            cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("Path=/"),
            "{cookie}"
        );
        assert!(!cookie.contains("Domain="), "{cookie}");
    }
}

#[sqlx::test]
async fn sessions_end_when_idle_too_long_or_a_week_after_sign_in(pool: PgPool) {
    let app = TestApp::new(pool).await;
    let a = app.account("ana@example.com", "responder").await;
    let b = app.sign_in("ana@example.com", PASSWORD).await;
    let id_of = |c: &Creds| {
        c.cookie
            .clone()
            .unwrap()
            .trim_start_matches("quell=")
            .to_owned()
    };
    // Idle: the store's expiry has passed.
    sqlx::query("update sessions set expiry_date = now() - interval '1 second' where id = $1")
        .bind(id_of(&a))
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        app.call_as(&a, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        app.call_as(&b, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::OK
    );
    // Absolute: signed in more than 7 days ago, however busy since.
    sqlx::query("update sessions set data = jsonb_set(data, '{signed_in,at}', to_jsonb(extract(epoch from now() - interval '8 days')::bigint)) where id = $1")
        .bind(id_of(&b)).execute(&app.pool).await.unwrap();
    assert_eq!(
        app.call_as(&b, Method::GET, "/incidents", &[], None)
            .await
            .status,
        StatusCode::SEE_OTHER
    );
}
