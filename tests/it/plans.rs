//! The hot queries keep their indexes. A few thousand seeded rows, skewed the way a real
//! installation is (one storm incident holding half of all alerts, a common word and a rare
//! one), and each hot query — taken verbatim from `.sqlx/`, the compiled queries, so this test
//! follows the code — is planned with `EXPLAIN (format json)` twice: with its values (a custom
//! plan) and as a prepared statement's generic plan, which PostgreSQL switches to after a few
//! runs of the same statement on one connection — and run (`ANALYZE`). No plan may read the
//! timeline or the alerts from end to end (a sequential scan), or search any table or index
//! past thousands of rows it then throws away (the storm's alerts looked for in id order, the
//! dashboard's days each reading every incident), so a later change cannot silently bring
//! either back.

use serde_json::Value;
use sqlx::PgPool;

/// The one compiled query whose text contains `marker`.
fn compiled(marker: &str) -> String {
    compiled_where(marker, |q| q.contains(marker))
}

/// The one compiled query whose text ends with `marker`.
fn compiled_ending(marker: &str) -> String {
    compiled_where(marker, |q| q.ends_with(marker))
}

fn compiled_where(marker: &str, holds: impl Fn(&str) -> bool) -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/.sqlx");
    let found: Vec<String> = std::fs::read_dir(dir)
        .expect(".sqlx/ is committed")
        .filter_map(|f| {
            let text = std::fs::read_to_string(f.ok()?.path()).ok()?;
            let json: Value = serde_json::from_str(&text).ok()?;
            json["query"].as_str().map(str::to_owned)
        })
        .filter(|q| holds(q))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one compiled query holds {marker:?}: {found:#?}"
    );
    found.into_iter().next().unwrap()
}

#[derive(Clone)]
enum Arg {
    Int(i64),
    Text(&'static str),
    Texts(&'static [&'static str]),
    Bool(bool),
    NoText,
    NoTexts,
    NoIds,
    NoBool,
    NoInt,
    NoDate,
    NoTime,
}

/// The incident list's arguments for a first page: the statuses asked for, the page size and
/// whether resolved incidents may be among them (the rest unset, the severities any).
fn list_args(statuses: Arg, limit: i64, resolved: bool) -> Vec<Arg> {
    use Arg::*;
    vec![
        statuses,
        NoTexts,
        NoText,
        NoText,
        NoInt,
        NoBool,
        NoText,
        NoInt,
        Int(limit),
        Bool(resolved),
        Bool(false),
        Text("Sev1"),
        Text("Sev4"),
        // any team's
        NoIds,
        // who is looking: everyone's eyes (a person's ask `incident_visible` the same way)
        NoInt,
    ]
}

/// Every sequential scan of a large table, and every node that threw away more than `limit` of
/// its rows, in the plan of `sql` with `args` as run: custom, then generic.
async fn seq_scans(pool: &PgPool, sql: &str, args: &[Arg], limit: f64) -> Vec<String> {
    let mut found = Vec::new();
    for mode in ["force_custom_plan", "force_generic_plan"] {
        let plan = plan(pool, mode, sql, args).await;
        collect(&plan, mode, limit, &mut found);
    }
    found
}

/// The plan of `sql` with `args` as run (`EXPLAIN (analyze, format json)`), planned in `mode`.
/// Planned as the serving pool's connections plan (no parallel workers, `quell::serving_pool`).
async fn plan(pool: &PgPool, mode: &str, sql: &str, args: &[Arg]) -> Value {
    {
        let mut conn = pool.acquire().await.unwrap();
        sqlx::raw_sql(&format!(
            "set plan_cache_mode = {mode}; set max_parallel_workers_per_gather = 0"
        ))
        .execute(&mut *conn)
        .await
        .unwrap();
        let explain = format!("explain (analyze, format json) {sql}");
        let mut q = sqlx::query_scalar::<_, Value>(&explain);
        for a in args {
            q = match a.clone() {
                Arg::Int(n) => q.bind(n),
                Arg::Text(t) => q.bind(t),
                Arg::Texts(t) => q.bind(t.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                Arg::Bool(b) => q.bind(b),
                Arg::NoText => q.bind(None::<String>),
                Arg::NoTexts => q.bind(None::<Vec<String>>),
                Arg::NoIds => q.bind(None::<Vec<i64>>),
                Arg::NoBool => q.bind(None::<bool>),
                Arg::NoInt => q.bind(None::<i64>),
                Arg::NoDate => q.bind(None::<chrono::NaiveDate>),
                Arg::NoTime => q.bind(None::<chrono::DateTime<chrono::Utc>>),
            };
        }
        let plan: Value = q.fetch_one(&mut *conn).await.unwrap();
        plan[0]["Plan"].clone()
    }
}

/// The node of the subplan named `name` ("CTE page"), wherever it is in the plan.
fn subplan<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    if node["Subplan Name"] == name {
        return Some(node);
    }
    node["Plans"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| subplan(c, name))
}

/// How many rows the nodes reading `table` returned, all loops counted.
fn rows_read(node: &Value, table: &str) -> f64 {
    let own = if node["Relation Name"] == table {
        node["Actual Rows"].as_f64().unwrap_or(0.0) * node["Actual Loops"].as_f64().unwrap_or(1.0)
    } else {
        0.0
    };
    own + node["Plans"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| rows_read(c, table))
        .sum::<f64>()
}

/// The tables seeded large enough that reading one whole is never the cheap way; smaller ones
/// may be read whole to join them (a plan's choice at this size), but never searched through:
/// a node throwing away more than 1,000 rows (or the query's own bound, [`may_throw_away`]) is
/// flagged wherever it is.
const LARGE: [&str; 2] = ["timeline_events", "alerts"];

fn collect(node: &Value, mode: &str, limit: f64, found: &mut Vec<String>) {
    let table = node["Relation Name"].as_str().unwrap_or("?");
    if node["Node Type"] == "Seq Scan" && LARGE.contains(&table) {
        found.push(format!("sequential scan of {table} ({mode})"));
    }
    let loops = node["Actual Loops"].as_f64().unwrap_or(1.0);
    let removed = node["Rows Removed by Filter"].as_f64().unwrap_or(0.0) * loops;
    if removed > limit {
        found.push(format!(
            "{} on {table} threw away {removed} rows ({mode})",
            node["Node Type"].as_str().unwrap_or("?")
        ));
    }
    for child in node["Plans"].as_array().into_iter().flatten() {
        collect(child, mode, limit, found);
    }
}

/// 3,000 incidents (a third of them payments), 30,000 timeline entries, 20,000 alerts — half
/// of them in one storm incident — and 300 postmortems; the word "zeppelin" in one incident.
async fn seed(pool: &PgPool) -> i64 {
    sqlx::raw_sql(
        r#"
        insert into services (name, tier) values ('payments-gateway', 1), ('search', 2);
        insert into integrations (name, format, key_hash, key_prefix)
        values ('am', 'alertmanager', sha256('k'), 'k');
        insert into incidents (title, severity, peak_severity, status, service_id, summary,
                               started_at, detected_at, acknowledged_at, mitigated_at, resolved_at)
        select case when g % 3 = 0 then 'Payments failing at checkout ' || g
                    else 'Search latency high ' || g end,
               (array['Sev1','Sev2','Sev3','Sev4'])[1 + g % 4],
               (array['Sev1','Sev2','Sev3','Sev4'])[1 + g % 4], 'resolved',
               (select id from services where name = case when g % 3 = 0 then 'payments-gateway' else 'search' end),
               case when g = 1234 then 'a zeppelin crashed into the data centre' else 'see the timeline' end,
               now() - make_interval(hours => g), now() - make_interval(hours => g),
               now() - make_interval(hours => g) + interval '5 minutes',
               now() - make_interval(hours => g) + interval '30 minutes',
               now() - make_interval(hours => g) + interval '2 hours'
        from generate_series(1, 3000) g;
        insert into incidents (title, severity, peak_severity, status, started_at, detected_at)
        select 'Open now ' || g, 'Sev2', 'Sev2', 'triggered', now(), now()
        from generate_series(1, 5) g;
        insert into people (name, email, handle) values ('Ana', 'ana@example.com', 'ana');
        insert into incident_roles (incident_id, role, person_id, assigned_at)
        select i.id, 'incident_commander', p.id, now() from incidents i, people p where i.id % 7 = 0;
        insert into timeline_events (incident_id, occurred_at, kind, author, body)
        select i.id, i.detected_at + make_interval(mins => n), 'note', 'Ana',
               (array['Checked the dashboards', 'Payments processor confirms latency',
                      'Rolled back the deploy', 'Queue depth is back to normal',
                      'Raised the pool limit', 'Watching for ten minutes'])[1 + (i.id + n) % 6]
        from incidents i, generate_series(1, 10) n;
        insert into alert_groups (integration_id, group_key, incident_id, closed_at)
        select (select id from integrations), 'g' || i.id, i.id, now() from incidents i;
        insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary,
                            received_at, resolved_at, resolved_by, raw, retained_from)
        select g.integration_id, g.id, g.incident_id, 'a' || g.id || '-' || n, 'resolved',
               'Alert ' || (n % 5), now(), now(), 'sender', '{}', now()
        from alert_groups g, generate_series(1, 3) n where g.incident_id % 3 = 0;
        insert into alerts (integration_id, group_id, incident_id, dedup_key, status, summary,
                            received_at, resolved_at, resolved_by, raw, retained_from)
        select g.integration_id, g.id, g.incident_id, 'storm-' || n, 'resolved',
               'PaymentRetries high on pay-' || (n % 40), now(), now(), 'sender', '{}', now()
        from alert_groups g, generate_series(1, 17000) n
        where g.incident_id = (select min(id) from incidents);
        insert into postmortems (incident_id, status, summary, root_cause)
        select id, 'published', 'Payments were slow', 'A connection limit'
        from incidents where id % 10 = 0;
        "#,
    )
    .execute(pool)
    .await
    .unwrap();
    // As a running installation's tables are: vacuumed (GIN pending lists merged, the
    // visibility map set) and analyzed.
    sqlx::query("vacuum analyze").execute(pool).await.unwrap();
    sqlx::query_scalar("select min(id) from incidents")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The search query: each source's newest rows are walked (at most its window) before its GIN
/// index is asked.
fn search() -> String {
    compiled("with q as materialized (select websearch_to_tsquery('english', $1) as q)")
}

fn search_args(words: &'static str) -> Vec<Arg> {
    let [incidents, timeline, postmortems] = quell::search::db::WINDOWS;
    vec![
        Arg::Text(words),
        Arg::Int(20),
        Arg::Int(quell::search::db::CANDIDATES),
        Arg::Int(incidents),
        Arg::Int(timeline),
        Arg::Int(postmortems),
        Arg::NoInt,
    ]
}

/// The rows a query may throw away on purpose: search walks each source's newest rows, at most
/// its window, looking for a word before it asks the GIN index. Anything else: 1,000.
fn may_throw_away(name: &str) -> f64 {
    if name.starts_with("search") {
        *quell::search::db::WINDOWS.iter().max().unwrap() as f64
    } else {
        1000.0
    }
}

#[sqlx::test]
async fn the_hot_queries_use_their_indexes_with_their_values_and_as_generic_plans(pool: PgPool) {
    let storm = seed(&pool).await;
    let number: i64 = sqlx::query_scalar("select number from incidents where id = $1")
        .bind(storm)
        .fetch_one(&pool)
        .await
        .unwrap();
    use Arg::*;
    let cases: Vec<(&str, String, Vec<Arg>)> = vec![
        ("search, a rare word", search(), search_args("zeppelin")),
        ("search, a common word", search(), search_args("payments")),
        (
            "an incident by its key",
            compiled_ending(
                "from incidents i left join services s on s.id = i.service_id\n           where i.number = $1",
            ),
            vec![Int(number)],
        ),
        (
            "the incident list, first page",
            compiled("order by (i.status = 'resolved'), i.severity, i.number desc"),
            list_args(NoTexts, 51, true),
        ),
        (
            "an incident's timeline",
            compiled(
                "from timeline_events where incident_id = $1\n           order by occurred_at, id",
            ),
            vec![Int(storm)],
        ),
        (
            "a storm incident's alerts, a page",
            compiled("where incident_id = $1 and id > $2"),
            vec![Int(storm), Int(0), NoText, Int(50)],
        ),
    ];
    let person: i64 = sqlx::query_scalar("select id from people where handle = 'ana'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let payments: i64 =
        sqlx::query_scalar("select id from services where name = 'payments-gateway'")
            .fetch_one(&pool)
            .await
            .unwrap();
    let more: Vec<(&str, String, Vec<Arg>)> = vec![
        (
            "the open incidents (dashboard, list filter)",
            compiled("order by (i.status = 'resolved'), i.severity, i.number desc"),
            list_args(
                Texts(&["triggered", "acknowledged", "mitigated"]),
                201,
                false,
            ),
        ),
        (
            "your open incidents (dashboard)",
            compiled("where i.status <> 'resolved'  -- incidents_open"),
            vec![Int(person), NoInt],
        ),
        (
            "the dashboard's 30 days",
            compiled("per_day as ("),
            vec![Int(30), NoIds],
        ),
        (
            "related-incident suggestions",
            compiled("candidates as ("),
            vec![
                Int(storm),
                Int(payments),
                Text("payments | checkout | failing"),
                Int(5),
                NoInt,
            ],
        ),
    ];
    let mut bad = Vec::new();
    for (name, sql, args) in cases.iter().chain(&more) {
        let scans = seq_scans(&pool, sql, args, may_throw_away(name)).await;
        if !scans.is_empty() {
            bad.push(format!("{name}: {}", scans.join("; ")));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The managers' list of published postmortems — how it opens — runs on its kept generic
/// plan: it must read about a page of postmortems, walking the incidents newest first, never
/// all 300 of them to sort them (another filter is planned for its values instead). The seed
/// has one postmortem per ten incidents, so a page is about 510 incidents walked.
#[sqlx::test]
async fn the_managers_list_reads_a_page_of_postmortems_not_all_of_them(pool: PgPool) {
    seed(&pool).await;
    use Arg::*;
    let sql = compiled("from page pm\n           join incidents i on i.id = pm.incident_id");
    let args = [
        Text("published"),
        NoText,
        NoText,
        NoDate,
        NoDate,
        Bool(false),
        NoInt,
        NoTime,
        Int(51),
        NoInt,
        NoIds,
    ];
    let plan = plan(&pool, "force_generic_plan", &sql, &args).await;
    // The page's choice (the `page` CTE; the rest joins its 51 rows however suits a table of
    // this size): all of them would be 300 postmortems, or 3,005 incidents walked to the end.
    let page = subplan(&plan, "CTE page").expect("the page is chosen in its CTE");
    let (postmortems, incidents) = (rows_read(page, "postmortems"), rows_read(page, "incidents"));
    assert!(
        postmortems < 300.0 && incidents < 1500.0,
        "{postmortems} postmortems and {incidents} incidents read for a page of 51: {plan:#}"
    );
}
