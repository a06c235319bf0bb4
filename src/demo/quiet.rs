//! The demo's quiet on-call: a silence for planned work, active now, and one ended early, so
//! `/silences` shows both kinds; a weekly maintenance window; and heartbeat monitors.

use sqlx::PgConnection;

use crate::audit::Actor;
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;
use crate::silences::actions::{self, SilenceDraft};

/// Makes the demo's silences once (none when any silence exists).
pub async fn silences(tx: &mut PgConnection) -> AppResult<()> {
    if !crate::silences::db::list(&mut *tx, true, 1, SeenBy::ALL)
        .await?
        .is_empty()
        || !crate::silences::db::list(&mut *tx, false, 1, SeenBy::ALL)
            .await?
            .is_empty()
    {
        return Ok(());
    }
    let Some(tomas) = crate::people::db::find(&mut *tx, "tomas").await? else {
        return Ok(());
    };
    let actor = Actor {
        person_id: Some(tomas.id),
        name: tomas.name.clone(),
        ..Default::default()
    };
    let draft = |matchers: &str, duration: &str, comment: &str| SilenceDraft {
        matchers: vec![matchers.to_owned()],
        duration: Some(duration.to_owned()),
        comment: comment.to_owned(),
        ..Default::default()
    };
    let ended = actions::create(
        &mut *tx,
        &actor,
        None,
        &draft(
            r#"alertname="NodeNotReady" cluster="eu-west-1""#,
            "2h",
            "Node pool rotation, CHG-4402 (done early)",
        ),
    )
    .await?;
    actions::expire(&mut *tx, &actor, ended.id, None).await?;
    actions::create(
        &mut *tx,
        &actor,
        None,
        &draft(
            r#"alertname=~"DiskSpaceLow|ReplicaLag" service="search-api""#,
            "6h",
            "Reindexing the search cluster, CHG-4471: disks fill and replicas lag until it ends",
        ),
    )
    .await?;
    // The ledger's weekly vacuum, Sundays 03:00 in Lisbon: its incidents page nobody meanwhile.
    let vacuum = crate::maintenance::actions::WindowDraft {
        name: "Ledger vacuum and reindex".into(),
        services: vec!["ledger".into()],
        mode: "quiet".into(),
        starts_at: "2026-01-04T03:00".into(),
        time_zone: "Europe/Lisbon".into(),
        duration: "1h".into(),
        weekly: true,
        weekdays: vec!["sun".into()],
        repeat_until: None,
        comment: "Replica lag and slow queries are expected while it runs".into(),
    };
    crate::maintenance::actions::create(&mut *tx, &actor, &vacuum).await?;
    Ok(())
}

/// The demo's heartbeat monitors, once (none when any exists): the ledger's nightly backup,
/// pinged just now, and a paused settlement export.
pub async fn heartbeats(tx: &mut PgConnection) -> AppResult<()> {
    use crate::heartbeats::actions::{self as beats, MonitorDraft, Named};
    if !crate::heartbeats::db::list(&mut *tx).await?.is_empty() {
        return Ok(());
    }
    let quell = Actor::system("demo");
    let draft = |name: &str, service: &str, every: i32, grace: i32, on: bool| MonitorDraft {
        name: name.to_owned(),
        description: String::new(),
        service: service.to_owned(),
        interval_minutes: every,
        grace_minutes: grace,
        severity: Some("error".into()),
        enabled: Some(on),
    };
    let backup = beats::create(
        &mut *tx,
        &quell,
        &draft("ledger nightly backup", "ledger", 1440, 60, true),
    )
    .await?;
    let id = backup.monitor.id.to_string();
    beats::ping(&mut *tx, Named::Id(&id), &backup.key).await?;
    beats::create(
        &mut *tx,
        &quell,
        &draft("settlement export", "payments-gateway", 60, 10, false),
    )
    .await?;
    Ok(())
}
