//! Runs every check, in order: the migrations first; the invariants only on a schema that is
//! this binary's.

use sqlx::PgPool;

use super::db;
use super::domain::{self, Finding};
use crate::error::AppResult;

/// Every check's finding; `known` is this binary's migrations (version, checksum).
pub async fn run(pool: &PgPool, known: &[(i64, Vec<u8>)]) -> AppResult<Vec<Finding>> {
    let applied = db::applied(pool).await?;
    let broken = domain::migrations(known, &applied);
    let schema_holds = broken.is_empty();
    let mut found = vec![Finding::over(
        "migrations",
        &format!("all {} applied, as this binary has them", known.len()),
        &broken,
    )];
    if !schema_holds {
        found.push(Finding {
            name: "invariants",
            holds: false,
            detail: "not checked: the schema is not this binary's (see migrations)".into(),
        });
        return Ok(found);
    }
    found.push(Finding::over(
        "one open alert group per key",
        "no integration has a group key open twice",
        &db::groups_open_twice(pool).await?,
    ));
    found.push(Finding::over(
        "every pending timer due once",
        "one pending timer per deadline, none on a resolved incident, no escalation pending on one",
        &db::timers_not_once(pool).await?,
    ));
    found.push(Finding::over(
        "credit ledger",
        "every balance is the sum of its ledger",
        &db::ledger_off(pool).await?,
    ));
    found.push(Finding::over(
        "action item counts",
        "the counts kept by triggers agree with the items",
        &db::item_counts_off(pool).await?,
    ));
    found.push(Finding::over(
        "alert lines",
        "each incident's lines count its stored alerts and those of months let go",
        &db::lines_off(pool).await?,
    ));
    found.push(Finding::over(
        "alert partitions",
        "alerts can be stored this month and next (the engine creates months ahead)",
        &db::months_missing(pool).await?,
    ));
    Ok(found)
}
