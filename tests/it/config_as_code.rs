//! Configuration as code, through the real binary: the demo's teams, schedules, escalation
//! policies and services exported, then applied as they are (a plan of nothing, and applying
//! twice writes nothing, not even to the audit log); a one-line edit plans exactly that change
//! and applying it makes it; refusals name the file's line and change nothing; pruning deletes
//! only what a listed kind leaves out.

use sqlx::PgPool;

use crate::common::{TempDir, name_of, quell, url_of};

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// The plan's change lines (after its summary line).
fn changes(said: &str) -> Vec<&str> {
    said.lines()
        .skip(1)
        .filter(|l| !l.starts_with("Nothing was changed"))
        .collect()
}

#[sqlx::test]
async fn the_demo_applies_as_itself_and_a_one_line_edit_plans_exactly_that(pool: PgPool) {
    quell::demo::load(&pool).await.unwrap();
    quell::demo::world::load(&pool).await.unwrap();
    let url = url_of(&name_of(&pool).await);
    let (ok, exported) = quell(&url, &["config", "export"]);
    assert!(ok, "{exported}");
    for kind in ["teams:", "schedules:", "escalation_policies:", "services:"] {
        assert!(exported.contains(kind), "{kind} in\n{exported}");
    }
    let services = count(&pool, "select count(*) from services").await;
    let teams = count(&pool, "select count(*) from teams").await;
    let schedules = count(&pool, "select count(*) from schedules").await;
    let policies = count(&pool, "select count(*) from escalation_policies").await;
    let objects = services + teams + schedules + policies;
    let dir = TempDir::new("config-as-code");
    let file = dir.path().join("quell.yaml");
    let path = file.to_str().unwrap();
    std::fs::write(&file, &exported).unwrap();

    // As exported: nothing to do, and applying writes nothing, twice.
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok, "{said}");
    assert!(
        said.starts_with(&format!(
            "{path}: 0 to create, 0 to update, 0 to delete, {objects} unchanged (plan: nothing changed)"
        )),
        "{said}"
    );
    assert!(changes(&said).is_empty(), "{said}");
    let audited = count(&pool, "select count(*) from audit_log").await;
    for _ in 0..2 {
        let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
        assert!(ok, "{said}");
        assert!(changes(&said).is_empty(), "{said}");
    }
    assert_eq!(
        count(&pool, "select count(*) from audit_log").await,
        audited
    );

    // One line changed: checkout-api's tier. The plan names that service and that field.
    let at = exported
        .find("name: \"checkout-api\"")
        .expect("checkout-api exported");
    let tier_at = at + exported[at..].find("tier: ").unwrap();
    let tier_line = exported[..tier_at].lines().count();
    let was: i64 = exported[tier_at + 6..tier_at + 7].parse().unwrap();
    let now = if was == 3 { 2 } else { 3 };
    let entry_line = exported[..at].lines().count();
    let mut edited = exported.clone();
    edited.replace_range(tier_at + 6..tier_at + 7, &now.to_string());
    std::fs::write(&file, &edited).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [format!(
            "update  service            checkout-api (line {entry_line}): tier"
        )],
        "{said}"
    );
    let tier = "select tier::int8 from services where name = 'checkout-api'";
    assert_eq!(count(&pool, tier).await, was);
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(count(&pool, tier).await, now);
    let by_file =
        "select count(*) from audit_log where action = 'service.update' and actor = 'config apply'";
    assert_eq!(count(&pool, by_file).await, 1);
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(ok && changes(&said).is_empty(), "{said}");

    // Refused, with the line: a tier Quell does not have; a person nobody is. Nothing changes.
    let mut wrong = edited.clone();
    wrong.replace_range(tier_at + 6..tier_at + 7, "9");
    std::fs::write(&file, &wrong).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("{path}:{tier_line}: service: tier: ")),
        "{said}"
    );
    assert!(said.contains("Nothing was changed."), "{said}");
    assert_eq!(count(&pool, tier).await, now);
    let handle_at = edited.find("\"priya\"").expect("a schedule names priya");
    let handle_line = edited[..handle_at].lines().count();
    let nobody = edited.replacen("\"priya\"", "\"nobody-at-all\"", 1);
    std::fs::write(&file, &nobody).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan"]);
    assert!(!ok, "{said}");
    assert!(said.contains("nobody-at-all"), "{said}");
    let refused_line: usize = said
        .split(&format!("{path}:"))
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a line in {said}"));
    assert!(refused_line > 0 && refused_line <= handle_line, "{said}");

    // A new service at the end of the file is created; left out again, it is kept without
    // --prune and deleted with it; a service with incidents is not deleted, and says why.
    // Two new services, the first depending on the second: made in the order that works.
    let added = "  - name: fraud-check\n    tier: 3\n    depends_on: [fraud-model]\n  - name: fraud-model\n    tier: 3\n";
    std::fs::write(&file, format!("{edited}{added}")).unwrap();
    let added_line = edited.lines().count() + 1;
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            format!(
                "create  service            fraud-model (line {})",
                added_line + 3
            ),
            format!("create  service            fraud-check (line {added_line})")
        ],
        "{said}"
    );
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services + 2
    );
    std::fs::write(&file, &edited).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path]);
    assert!(ok && changes(&said).is_empty(), "{said}");
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--plan", "--prune"]);
    assert!(ok, "{said}");
    assert_eq!(
        changes(&said),
        [
            "delete  service            fraud-check",
            "delete  service            fraud-model"
        ],
        "{said}"
    );
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--prune"]);
    assert!(ok, "{said}");
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services
    );
    let start = edited.find("  - name: \"checkout-api\"").unwrap();
    let end = edited[start + 4..]
        .find("\n  - ")
        .map_or(edited.len(), |e| start + 4 + e + 1);
    let mut without = edited.clone();
    without.replace_range(start..end, "");
    std::fs::write(&file, &without).unwrap();
    let (ok, said) = quell(&url, &["config", "apply", "-f", path, "--prune"]);
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("{path}: service \"checkout-api\": "))
            && said.contains("has incidents"),
        "{said}"
    );
    assert_eq!(
        count(&pool, "select count(*) from services").await,
        services
    );
}
