//! Years of operation: a dump of a loaded installation restores into a new database that
//! `quell check` passes (and a broken invariant fails it, named); an installation on the
//! previous release's schema, with its data, upgrades with `quell migrate` and passes too. Both
//! run the real binary against real PostgreSQL tools (pg_dump, pg_restore).

use std::process::Command;

use sqlx::PgPool;

use crate::common::{TempDir, name_of, quell, url_of};

/// The last migration of the previous release (stop 53): what an installation upgrading now
/// runs on. Moved forward with each release.
const PREVIOUS_RELEASE: i64 = 20261205100800;

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Loads what `quell demo` loads.
async fn demo(pool: &PgPool) {
    quell::demo::load(pool).await.unwrap();
    quell::demo::world::load(pool).await.unwrap();
}

/// A database of its own, dropped with it.
struct Scratch {
    admin: PgPool,
    name: String,
}

impl Scratch {
    async fn new(admin: &PgPool, name: String) -> Self {
        sqlx::query(&format!(r#"create database "{name}""#))
            .execute(admin)
            .await
            .unwrap();
        Self {
            admin: admin.clone(),
            name,
        }
    }

    fn url(&self) -> String {
        url_of(&self.name)
    }

    async fn drop_it(self) {
        sqlx::query(&format!(
            r#"drop database if exists "{}" with (force)"#,
            self.name
        ))
        .execute(&self.admin)
        .await
        .unwrap();
    }
}

#[sqlx::test]
async fn a_dump_of_an_installation_restores_into_a_new_database_that_quell_check_passes(
    pool: PgPool,
) {
    demo(&pool).await;
    let source = name_of(&pool).await;
    let (ok, said) = quell(&url_of(&source), &["check"]);
    assert!(ok, "{said}");

    // pg_dump's custom format, restored with pg_restore into a new database.
    let dir = TempDir::new("backup");
    let dump = dir.path().join("quell.dump");
    let dump = dump.to_str().unwrap();
    run(
        "pg_dump",
        &["--format=custom", "--file", dump, &url_of(&source)],
    );
    let restored = Scratch::new(&pool, format!("quell_restored_{}", std::process::id())).await;
    run(
        "pg_restore",
        &[
            "--no-owner",
            "--exit-on-error",
            "--dbname",
            &restored.url(),
            dump,
        ],
    );

    let (ok, said) = quell(&restored.url(), &["check"]);
    assert!(ok, "{said}");
    let lines: Vec<&str> = said.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 7, "{said}");
    assert!(lines.iter().all(|l| l.starts_with("ok ")), "{said}");
    assert!(lines[0].contains("migrations: all"), "{said}");
    // What was there is there.
    let restored_pool = PgPool::connect(&restored.url()).await.unwrap();
    for table in [
        "incidents",
        "alerts",
        "timeline_events",
        "postmortems",
        "audit_log",
    ] {
        let q = format!("select count(*) from {table}");
        let (before, after): (i64, i64) = (
            sqlx::query_scalar(&q).fetch_one(&pool).await.unwrap(),
            sqlx::query_scalar(&q)
                .fetch_one(&restored_pool)
                .await
                .unwrap(),
        );
        assert_eq!(before, after, "{table}");
        assert!(after > 0, "the demo has {table}");
    }

    // An invariant broken by hand is found and named, and the check fails.
    sqlx::query(
        "update action_item_counts set n = n + 2
         where (type, status) = (select type, status from action_item_counts limit 1)",
    )
    .execute(&restored_pool)
    .await
    .unwrap();
    let (ok, said) = quell(&restored.url(), &["check"]);
    assert!(!ok, "{said}");
    assert!(
        said.contains("FAIL action item counts: 1 broken:"),
        "{said}"
    );
    assert!(said.contains("1 of the checks failed"), "{said}");
    restored_pool.close().await;
    restored.drop_it().await;
}

#[sqlx::test(migrations = false)]
async fn an_installation_on_the_previous_release_upgrades_with_its_data(pool: PgPool) {
    // The previous release's schema: its migrations only.
    let dir = TempDir::new("previous-release");
    let migrations = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
    for entry in std::fs::read_dir(migrations).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let version: i64 = name.split('_').next().unwrap().parse().unwrap();
        if version <= PREVIOUS_RELEASE {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    let previous = sqlx::migrate::Migrator::new(dir.path()).await.unwrap();
    previous.run(&pool).await.unwrap();
    // Its data, written as that release wrote it: a service, an open incident with its SLA
    // timer, a channel's message waiting in the outbox, a published incident's public update,
    // and its alerts in one table (one firing, one resolved 14 months ago) with their lines.
    sqlx::raw_sql(PREVIOUS_DATA).execute(&pool).await.unwrap();
    let incidents: i64 = sqlx::query_scalar("select count(*) from incidents")
        .fetch_one(&pool)
        .await
        .unwrap();
    let url = url_of(&name_of(&pool).await);
    // Not yet this binary's schema: the check says so and looks no further.
    let (ok, said) = quell(&url, &["check"]);
    assert!(!ok, "{said}");
    assert!(said.contains("not applied (run quell migrate)"), "{said}");

    let (ok, said) = quell(&url, &["migrate"]);
    assert!(ok, "{said}");
    let (ok, said) = quell(&url, &["check"]);
    assert!(ok, "{said}");
    let after: i64 = sqlx::query_scalar("select count(*) from incidents")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(after, incidents);
    // The message waiting before the upgrade is still to be sent, to its channel.
    let waiting: i64 = sqlx::query_scalar(
        "select count(*) from notifications where state = 'pending' and channel_id is not null",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(waiting, 1);
    // The alerts are now in their partitions: the firing one among the open, the resolved one
    // in the month it resolved in; the firing one still takes the next delivery of its key.
    let placed: Vec<(String, String)> =
        sqlx::query_as("select dedup_key, tableoid::regclass::text from alerts order by dedup_key")
            .fetch_all(&pool)
            .await
            .unwrap();
    let month: String = sqlx::query_scalar(
        "select to_char((now() - interval '14 months') at time zone 'UTC', '\"alerts_\"YYYY_MM')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        placed,
        [
            ("disk-full".into(), "alerts_open".into()),
            ("old-cpu".into(), month)
        ]
    );
    let twice = sqlx::query(
        "insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, raw)
         select integration_id, group_id, incident_id, dedup_key, 'firing', summary, raw
         from alerts where dedup_key = 'disk-full'",
    )
    .execute(&pool)
    .await;
    assert!(twice.is_err(), "a second open alert of one key was stored");
    // And it runs on: the demo loads over it, and the check still passes.
    let (ok, said) = quell(&url, &["demo"]);
    assert!(ok, "{said}");
    let (ok, said) = quell(&url, &["check"]);
    assert!(ok, "{said}");
}

/// Rows as the previous release wrote them (its tables, its columns).
const PREVIOUS_DATA: &str = r#"
insert into services (name, tier) values ('payments-gateway', 1);
insert into incidents (title, severity, peak_severity, status, started_at, detected_at, service_id)
select 'Card payments failing', 'Sev1', 'Sev1', 'triggered', now() - interval '5 minutes',
       now() - interval '5 minutes', id from services;
insert into sla_timers (incident_id, kind, due_at)
select id, 'ack', now() + interval '10 minutes' from incidents;
insert into notification_channels (name, kind, url) values ('ops', 'webhook', 'https://hooks.example.com/ops');
insert into notifications (channel_id, incident_id, event, payload)
select c.id, i.id, 'incident.opened', '{"message": "INC opened"}' from notification_channels c, incidents i;
insert into status_components (name) values ('Card payments');
insert into status_publications (incident_id, title, closing, published_by)
select id, 'Card payments failing', 'Resolved.', 'Ana' from incidents;
insert into stakeholder_updates (incident_id, audience, body, sent_at, author)
select id, 'customers', 'We are looking into it.', now(), 'Ana' from incidents;
insert into integrations (name, format, key_hash, key_prefix)
values ('prometheus', 'alertmanager', '\x00', 'qk_old');
insert into alert_groups (integration_id, group_key, incident_id)
select g.id, '{}:{alertname="DiskFull"}', i.id from integrations g, incidents i;
insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, raw)
select integration_id, id, incident_id, 'disk-full', 'firing', 'Disk full', '{}' from alert_groups;
insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary, raw,
                    received_at, resolved_at, resolved_by)
select integration_id, id, incident_id, 'old-cpu', 'resolved', 'CPU high', '{}',
       now() - interval '14 months 1 hour', now() - interval '14 months', 'sender'
from alert_groups;
insert into alert_lines (incident_id, summary, total, open, first_received_at, last_received_at,
                         severity)
select incident_id, summary, 1, (status <> 'resolved')::int, received_at, last_received_at, ''
from alerts;
"#;
