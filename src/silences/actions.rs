//! Making and ending silences (each audited in its transaction), the admin's longest length,
//! a draft tried over the last week's alerts, a draft made from an incident's alert, and the
//! silences as the alert lanes match with them.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};

use super::db::{self, Held, NewSilence, SilencePolicy, SilenceRecord};
use super::domain::{self, Matcher, Set, Silence};
use crate::audit::{self, Actor};
use crate::domain::IncidentKey;
use crate::error::{AppError, AppResult};
use crate::incident_ref::domain::SeenBy;
use crate::routing::domain::Subject;

/// A silence as a person writes it (API body or form).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SilenceDraft {
    /// Matchers as Alertmanager and amtool write them: `alertname="HighLatency"`,
    /// `service=~"pay.*"`, `severity!="info"`, `job!~"node|blackbox"` (regular expressions
    /// match the whole value). An item may hold several, separated by commas or spaces, in
    /// braces or not. A name is a label, or `labels.x`, `annotations.x`, `summary`, `severity`,
    /// `integration` …; a field the alert lacks reads as empty. All must hold.
    pub matchers: Vec<String>,
    /// When it starts; empty or past: now
    #[serde(default)]
    pub starts_at: Option<DateTime<Utc>>,
    /// When it ends; give this or `duration`
    #[serde(default)]
    pub ends_at: Option<DateTime<Utc>>,
    /// How long from its start, as amtool writes it: `2h`, `90m`, `1h30m`, `3d`
    #[serde(default)]
    pub duration: Option<String>,
    /// Why (a change ticket, the planned work)
    #[serde(default)]
    pub comment: String,
}

/// The draft's matchers, read and checked.
pub fn matchers_of(d: &SilenceDraft) -> AppResult<Vec<Matcher>> {
    let mut out = Vec::new();
    for text in &d.matchers {
        if !text.trim().is_empty() {
            out.extend(domain::read_matchers("matchers", text)?);
        }
    }
    domain::check_matchers("matchers", &out)?;
    out.dedup();
    Ok(out)
}

/// The silence with this id, or 404; what it held counted for `seen_by`.
pub async fn find(e: impl PgExecutor<'_>, id: i64, seen_by: SeenBy) -> AppResult<SilenceRecord> {
    db::find(e, id, seen_by)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no silence {id}.")))
}

pub async fn create(
    conn: &mut PgConnection,
    actor: &Actor,
    person: Option<i64>,
    d: &SilenceDraft,
) -> AppResult<SilenceRecord> {
    let matchers = matchers_of(d)?;
    let comment = d.comment.trim();
    if comment.is_empty() || comment.chars().count() > 1000 {
        return Err(AppError::invalid(
            "comment",
            "say why in 1 to 1000 characters (the planned work, a ticket)",
        ));
    }
    let now = crate::clock::now(&mut *conn).await?;
    let ends_at = match (d.ends_at, d.duration.as_deref().map(str::trim)) {
        (Some(_), Some(l)) if !l.is_empty() => {
            return Err(AppError::invalid(
                "duration",
                "give ends_at or duration, not both",
            ));
        }
        (Some(end), _) => end,
        (None, Some(l)) if !l.is_empty() => {
            let start = d.starts_at.filter(|s| *s > now).unwrap_or(now);
            start + domain::parse_length("duration", l)?
        }
        (None, _) => {
            return Err(AppError::invalid(
                "ends_at",
                "a silence needs an end: give ends_at or a duration such as 2h",
            ));
        }
    };
    let policy = db::policy(&mut *conn).await?;
    let (starts_at, ends_at) = domain::check_window(d.starts_at, ends_at, now, policy.max_hours)?;
    let texts: Vec<String> = matchers.iter().map(Matcher::text).collect();
    let id = db::insert(
        &mut *conn,
        &NewSilence {
            matchers: &texts,
            starts_at,
            ends_at,
            comment,
            created_by: &actor.name,
            created_by_person: person,
        },
    )
    .await?;
    let created = find(&mut *conn, id, SeenBy::ALL).await?;
    audit::created(
        conn,
        actor,
        "silence.create",
        &format!("silence {id}"),
        &created,
    )
    .await?;
    Ok(created)
}

/// Ends a silence now. `version` `None` ends whichever version is there (`If-Match: *`).
pub async fn expire(
    conn: &mut PgConnection,
    actor: &Actor,
    id: i64,
    version: Option<i32>,
) -> AppResult<SilenceRecord> {
    let before = find(&mut *conn, id, SeenBy::ALL).await?;
    if before.state == domain::State::Expired {
        return Err(AppError::Conflict(format!(
            "Silence {id} is already over (it ended {}).",
            before.ends_at.format("%Y-%m-%d %H:%M UTC")
        )));
    }
    let version = version.unwrap_or(before.version);
    if db::expire(&mut *conn, id, version, &actor.name)
        .await?
        .is_none()
    {
        return Err(AppError::Stale {
            current_version: before.version,
        });
    }
    let after = find(&mut *conn, id, SeenBy::ALL).await?;
    let target = format!("silence {id}");
    audit::changed(conn, actor, "silence.expire", &target, &before, &after).await?;
    Ok(after)
}

pub async fn set_policy(
    conn: &mut PgConnection,
    actor: &Actor,
    max_hours: i32,
    version: Option<i32>,
) -> AppResult<SilencePolicy> {
    if !(1..=8784).contains(&max_hours) {
        return Err(AppError::invalid(
            "max_hours",
            "between 1 hour and 8784 (a year)",
        ));
    }
    let before = db::policy(&mut *conn).await?;
    let version = version.unwrap_or(before.version);
    let after = db::set_policy(&mut *conn, max_hours, version)
        .await?
        .ok_or(AppError::Stale {
            current_version: before.version,
        })?;
    let target = "silence policy";
    audit::changed(conn, actor, "silence.policy", target, &before, &after).await?;
    Ok(after)
}

/// How far back a preview looks, and how many alerts it tries at most.
pub const PREVIEW_DAYS: i64 = 7;
pub const PREVIEW_LIMIT: i64 = 5000;

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SilencePreviewItem {
    pub received_at: DateTime<Utc>,
    pub integration: String,
    pub summary: String,
    #[schema(value_type = Object)]
    pub labels: Value,
    /// firing, acknowledged or resolved
    pub status: String,
    /// The incident it opened or joined, if the reader may see it
    #[schema(value_type = Option<String>)]
    pub incident: Option<IncidentKey>,
    /// Whether a silence already held it
    pub silenced: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SilencePreview {
    /// The matchers as they would be saved
    pub matchers: Vec<String>,
    /// Alerts of the last 7 days tried (newest first, at most 5000 of each kind)
    pub considered: usize,
    /// How many the draft matches
    pub matched: usize,
    /// The incidents those alerts opened or joined (that the reader may see)
    #[schema(value_type = Vec<String>)]
    pub incidents: Vec<IncidentKey>,
    /// The matches, newest first (at most 100 listed)
    pub items: Vec<SilencePreviewItem>,
}

/// Which alerts of the last week a draft's matchers would have held. Nothing is saved.
pub async fn preview(
    conn: &mut PgConnection,
    d: &SilenceDraft,
    seen_by: SeenBy,
) -> AppResult<SilencePreview> {
    let matchers = matchers_of(d)?;
    let now = crate::clock::now(&mut *conn).await?;
    let since = now - Duration::days(PREVIEW_DAYS);
    let alerts =
        crate::alert_store::db::received_since(&mut *conn, since, seen_by, PREVIEW_LIMIT).await?;
    let held = db::held_since(&mut *conn, since, PREVIEW_LIMIT, seen_by).await?;
    let silence = Silence {
        id: 0,
        matchers,
        starts_at: since,
        ends_at: now,
    };
    let hits: Vec<&crate::alert_store::db::Alert> = alerts
        .iter()
        .filter(|a| silence.matches(&crate::routing::db::subject_of(a)))
        .collect();
    let ids: Vec<i64> = hits.iter().map(|a| a.id).collect();
    let keys = crate::alert_store::db::incidents_of(&mut *conn, &ids, seen_by).await?;
    let mut matched = hits.len();
    let mut incidents: Vec<IncidentKey> = Vec::new();
    let mut found: Vec<SilencePreviewItem> = Vec::new();
    for a in hits {
        let incident = keys.get(&a.id).copied();
        if let Some(k) = incident
            && !incidents.contains(&k)
        {
            incidents.push(k);
        }
        found.push(SilencePreviewItem {
            received_at: a.received_at,
            integration: a.integration.clone(),
            summary: a.summary.clone(),
            labels: a.labels.clone(),
            status: a.status.clone(),
            incident,
            silenced: a.silence_id.is_some(),
        });
    }
    for h in &held {
        let s = Subject {
            labels: &h.labels,
            details: &h.details,
            summary: &h.summary,
            source: &h.source,
            severity: &h.severity,
            status: "firing",
            integration: &h.integration,
            format: &h.integration_format,
            dedup_key: &h.dedup_key,
            group_key: &h.group_key,
        };
        if !silence.matches(&s) {
            continue;
        }
        matched += 1;
        found.push(SilencePreviewItem {
            received_at: h.received_at,
            integration: h.integration.clone(),
            summary: h.summary.clone(),
            labels: h.labels.clone(),
            status: h.status.clone(),
            incident: None,
            silenced: true,
        });
    }
    found.sort_by_key(|a| std::cmp::Reverse(a.received_at));
    found.truncate(100);
    Ok(SilencePreview {
        matchers: silence.matchers.iter().map(Matcher::text).collect(),
        considered: alerts.len() + held.len(),
        matched,
        incidents,
        items: found,
    })
}

/// A draft that would silence alerts like the first of an incident's: every label of it
/// matched exactly (a label-less alert by its integration and summary), for an hour; the
/// person narrows it before saving. `None` when the incident is not there for the reader or
/// has no alert.
pub async fn like_incident(
    conn: &mut PgConnection,
    key: IncidentKey,
    seen_by: SeenBy,
) -> AppResult<Option<SilenceDraft>> {
    let Some(incident) = crate::incident_ref::db::by_key(&mut *conn, key, seen_by).await? else {
        return Ok(None);
    };
    let alerts = crate::alert_store::db::for_incident(&mut *conn, incident.id, None, 0, 1).await?;
    let Some(a) = alerts.first() else {
        return Ok(None);
    };
    let mut matchers: Vec<Matcher> = Vec::new();
    if let Some(labels) = a.labels.as_object() {
        for (name, value) in labels {
            // A label named like a field routing reads by itself (`severity`, `source` …) is
            // written `labels.severity`, so the matcher reads the label.
            let fixed = [
                "summary",
                "title",
                "source",
                "severity",
                "status",
                "integration",
                "format",
                "dedup_key",
                "group_key",
            ];
            let name = if fixed.contains(&name.as_str()) || name.contains('.') {
                format!("labels.{name}")
            } else {
                name.clone()
            };
            if let Some(v) = value.as_str()
                && let Ok(m) = Matcher::new("matchers", &name, domain::MatchOp::Eq, v)
            {
                matchers.push(m);
            }
        }
    }
    if matchers.is_empty() {
        for (name, v) in [("integration", &a.integration), ("summary", &a.summary)] {
            matchers.push(Matcher::new("matchers", name, domain::MatchOp::Eq, v)?);
        }
    }
    Ok(Some(SilenceDraft {
        matchers: vec![
            matchers
                .iter()
                .map(Matcher::text)
                .collect::<Vec<_>>()
                .join(" "),
        ],
        duration: Some("1h".into()),
        comment: format!("Alerts like those of {key}"),
        ..Default::default()
    }))
}

/// The silences as the alert lanes match with them, read again only when the stored ones
/// changed (`silence_revision`), so a batch costs one small query; a silence starting or ending
/// meanwhile is judged by each alert's instant, not by the reading.
pub struct Compiled {
    inner: Mutex<(i64, Arc<Set>)>,
}

impl Default for Compiled {
    fn default() -> Self {
        // A fresh installation's revision is 0 with no silence: nothing to read.
        Self {
            inner: Mutex::new((0, Arc::new(Set::default()))),
        }
    }
}

impl Compiled {
    pub async fn current(&self, conn: &mut PgConnection) -> AppResult<Arc<Set>> {
        let revision = db::revision(&mut *conn).await?;
        {
            let held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if held.0 == revision {
                return Ok(held.1.clone());
            }
        }
        let rows = db::current(&mut *conn).await?;
        let silences = rows
            .into_iter()
            .filter_map(|r| {
                // A stored silence that no longer reads holds nothing rather than everything.
                let texts: Vec<String> = serde_json::from_value(r.matchers).ok()?;
                let matchers = texts
                    .iter()
                    .map(|t| domain::read_matchers("matchers", t))
                    .collect::<Result<Vec<_>, _>>()
                    .ok()?
                    .concat();
                if matchers.is_empty() {
                    return None;
                }
                Some(Silence {
                    id: r.id,
                    matchers,
                    starts_at: r.starts_at,
                    ends_at: r.ends_at,
                })
            })
            .collect();
        let set = Arc::new(Set::new(silences));
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = (revision, set.clone());
        Ok(set)
    }
}

/// Stores alerts silences held in the lane's transaction.
pub async fn hold(conn: &mut PgConnection, held: &Held<'_>) -> AppResult<()> {
    if held.silence_id.is_empty() {
        return Ok(());
    }
    db::hold(conn, held).await
}

/// Resolves held alerts their senders resolved.
pub async fn release(
    conn: &mut PgConnection,
    integrations: &[uuid::Uuid],
    keys: &[String],
) -> AppResult<u64> {
    db::release(conn, integrations, keys).await
}

/// Takes up to `limit` silences that have ended and not yet handed back what they held (one
/// replica each), marks them done, and returns their held alerts that still fire: routing
/// judges those now, as if they had just arrived.
pub async fn hand_back(conn: &mut PgConnection, limit: i64) -> AppResult<Vec<db::Released>> {
    let ended = db::claim_ended(&mut *conn, limit).await?;
    let mut out = if ended.is_empty() {
        Vec::new()
    } else {
        db::release_ended(&mut *conn, &ended).await?
    };
    // And any a lane stored just after its silence or window was over.
    out.extend(db::release_stranded(conn, 500).await?);
    Ok(out)
}

/// Held keys that joined an open incident: the incident has them now.
pub async fn moved(
    conn: &mut PgConnection,
    integrations: &[uuid::Uuid],
    keys: &[String],
) -> AppResult<()> {
    db::moved(conn, integrations, keys).await
}

/// Seconds until the next silence ends with alerts to hand back (none: no silence pending).
pub async fn next_end(e: impl PgExecutor<'_>) -> AppResult<Option<f64>> {
    db::next_end(e).await
}

/// Hands back the alerts a maintenance window held that still fire, as `hand_back` does for a
/// silence: routing judges them now.
pub async fn hand_back_window(
    conn: &mut PgConnection,
    window_id: i64,
) -> AppResult<Vec<db::Released>> {
    db::release_window(conn, window_id).await
}
