//! Statements whose best plan depends on the values they are given. Quell's statements are
//! prepared once per connection, and after a few runs PostgreSQL may keep one generic plan for
//! every value; for a list whose filters may be empty or narrow, that plan sorts every row it
//! might need where the plan for the values at hand walks an index and stops after a page
//! (the managers' postmortem list: 60 ms against 2 ms). Such a statement runs in a transaction
//! that asks for a plan made for its values each time.

use sqlx::PgConnection;

use crate::error::AppResult;

/// Plans the rest of this transaction's statements for their values, every time.
pub async fn for_the_values(tx: &mut PgConnection) -> AppResult<()> {
    sqlx::query!("select set_config('plan_cache_mode', 'force_custom_plan', true)")
        .fetch_one(tx)
        .await?;
    Ok(())
}
