//! What a person sees, looked at the way a person looks: every page at a phone's 360 px and a
//! laptop's 1280 px, as an admin, a responder and a viewer, in Debian's chromium. On each page
//! the console logs nothing (no policy violation, no script error, no failed load), nothing
//! scrolls sideways, every chart's text lies inside its drawing without touching other text,
//! tap targets on a phone are at least 44 px, and nobody is shown a form their role may not
//! send. Screenshots go to target/screenshots/ (or `QUELL_SCREENSHOTS`), to look at by eye.

use std::time::Duration;

use fantoccini::Client;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::browser::{
    account, acting_as, browser_sized, chromedriver, console_problems, open_incident, serve,
    sign_in_at, text_when,
};
use quell::auth::domain::UserRole;

/// What the sweep needs beyond the demo: an open Sev1 with a bridge whose addresses are long
/// and unbroken, a claim on it, an acknowledge link, a challenge and a schedule.
struct World {
    open_key: String,
    ack_path: String,
    respond_path: String,
    challenge: i64,
    schedule: i64,
    policy: i64,
    silence: i64,
}

const ADMIN: &str = "root@example.com";
const RESPONDER: &str = "rita@example.com";
const VIEWER: &str = "vic@example.com";

async fn world(pool: &PgPool) -> World {
    quell::demo::load(pool).await.unwrap();
    // The whole world, so the dashboard and reports show what a real installation holds (the
    // reports' figures computed now, as the refresher would).
    quell::demo::world::load(pool).await.unwrap();
    quell::reports::db::refresh(pool, true).await.unwrap();
    account(pool, ADMIN, "Rui Admin", UserRole::Admin).await;
    account(pool, RESPONDER, "Rita Responder", UserRole::Responder).await;
    account(pool, VIEWER, "Vic Viewer", UserRole::Viewer).await;
    // An open Sev1 with a long title, as a phone meets it at 3 a.m., its bridge's addresses
    // long and without a place to break.
    let open_key = open_incident(
        pool,
        "payments-gateway authorization timeouts for every card processor region after the connection pool change",
        quell::domain::Severity::Sev1,
        Some("payments-gateway"),
        "Card authorizations time out for most merchants; checkout-api retries make it worse.",
        3,
    )
    .await;
    let actor = acting_as(pool, ADMIN).await;
    let key = quell::incidents::domain::IncidentKey::parse(&open_key).unwrap();
    let change = quell::incidents::actions::Change::now(key, &actor);
    let bridge = quell::bridge::domain::Bridge::parse(
        Some(&format!("https://meet.example.com/{}", "a".repeat(180))),
        Some(&format!(
            "https://chat.example.com/archives/C0{}",
            "B".repeat(160)
        )),
    )
    .unwrap();
    let mut tx = pool.begin().await.unwrap();
    quell::incidents::actions::set_bridge(&mut tx, &change, &bridge)
        .await
        .unwrap();
    quell::incidents::actions::claim(
        &mut tx,
        &change,
        "processor status page and the connection-pool-settings-rollout-2026-12-02 dashboard",
        false,
        30,
    )
    .await
    .unwrap();
    let incident_id = quell::incidents::db::get(&mut *tx, key).await.unwrap().id;
    let nonce = uuid::Uuid::new_v4();
    quell::paging::db::insert_link(
        &mut *tx,
        (nonce, incident_id, None),
        actor.person_id.unwrap(),
        4,
    )
    .await
    .unwrap();
    let signing = quell::paging::actions::ack_key(&mut tx).await.unwrap();
    let token = quell::paging::domain::ack_token(&signing, &open_key, nonce);
    // A responder asked for by hand (the admin, by email), and the link their page carries.
    let method = quell::notify::actions::MethodDraft {
        kind: "email",
        label: "work email",
        address: ADMIN,
    };
    let allow = quell::egress::Allow::default();
    quell::notify::actions::add_method(&mut tx, &actor, actor.person_id.unwrap(), &method, &allow)
        .await
        .unwrap();
    let incident = quell::incident_ref::db::by_id(&mut *tx, incident_id)
        .await
        .unwrap()
        .unwrap();
    let ask = quell::responders::domain::AskDraft {
        person: Some(ADMIN.into()),
        schedule: None,
        policy: None,
        message: "Can you look at the connection pool settings rollout and its dashboards?".into(),
    };
    let request = quell::responders::actions::add(&mut tx, &incident, &ask, &actor)
        .await
        .unwrap();
    let asked = uuid::Uuid::new_v4();
    quell::paging::db::insert_link(
        &mut *tx,
        (asked, incident_id, Some(request.id)),
        actor.person_id.unwrap(),
        4,
    )
    .await
    .unwrap();
    let respond = quell::paging::domain::ack_token(&signing, &open_key, asked);
    tx.commit().await.unwrap();
    let id = |sql: &'static str| async move {
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_one(pool)
            .await
            .unwrap()
    };
    World {
        ack_path: format!("/incidents/{open_key}/ack/{token}"),
        respond_path: format!("/incidents/{open_key}/respond/{respond}"),
        open_key,
        challenge: id("select id from challenges order by id limit 1").await,
        schedule: id("select id from schedules order by id limit 1").await,
        policy: id("select id from escalation_policies order by id limit 1").await,
        silence: id("select id from silences order by id desc limit 1").await,
    }
}

/// Every page, as its links read; pages a role may not open answer it with a styled refusal,
/// which is looked at too.
fn pages(w: &World) -> Vec<String> {
    let mut pages: Vec<String> = [
        "/",
        "/incidents",
        "/incidents/INC-1187",
        "/incidents/INC-184",
        "/incidents/INC-1187/postmortem",
        "/incidents/INC-184/evidence",
        "/incidents/INC-1187/publication",
        "/status",
        "/status/subscribe",
        "/incidents/new",
        "/services",
        "/services/payments-gateway",
        "/services/payments-gateway/changes",
        "/changes",
        "/runbooks",
        "/silences",
        "/maintenance",
        "/heartbeats",
        "/postmortems",
        "/action-items",
        "/reports",
        "/near-misses",
        "/search?q=payments",
        "/challenges",
        "/schedules",
        "/schedules/new",
        "/oncall",
        "/oncall/load",
        "/escalation-policies/new",
        "/account",
        "/account/paging",
        "/admin/users",
        "/admin/policies",
        "/admin/credits",
        "/admin/integrations",
        "/admin/import",
        "/admin/status",
        "/admin/routing",
        "/admin/trackers",
        "/admin/audit",
        "/admin/channels",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    pages.extend([
        format!("/incidents/{}", w.open_key),
        format!("/incidents/{}/merge", w.open_key),
        format!("/schedules/{}", w.schedule),
        format!("/schedules/{}/edit", w.schedule),
        format!("/schedules/{}/swaps", w.schedule),
        format!("/escalation-policies/{}", w.policy),
        format!("/silences/{}", w.silence),
        format!("/challenges/{}", w.challenge),
        format!("/challenges/{}/edit", w.challenge),
        w.ack_path.clone(),
        w.respond_path.clone(),
    ]);
    pages
}

/// Pages that answer an error on purpose (their own load is logged as failed).
const ERROR_PAGES: &[&str] = &["/incidents/INC-999999", "/escalation-policies"];

/// What sticks out past the window's right edge, unless a scrolling parent holds it.
const OVERFLOW: &str = r#"
const w = arguments[0];
const out = [];
for (const el of document.querySelectorAll('body *')) {
  if (!el.checkVisibility()) continue;
  const r = el.getBoundingClientRect();
  if (r.right > w + 1 && r.width > 0) {
    let p = el.parentElement, clipped = false;
    while (p) { const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') { clipped = true; break; } p = p.parentElement; }
    if (!clipped) out.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + String(el.className).split(' ').join('.') : '') + ' ' + Math.round(r.right));
  }
}
return [document.documentElement.scrollWidth, out.slice(0, 8).join(', ')];
"#;

/// Every drawing's text: inside the drawing, and not overlapping other text of it.
const CHART_TEXT: &str = r#"
const out = [];
for (const svg of document.querySelectorAll('main svg')) {
  if (!svg.checkVisibility()) continue;
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].map(t => [t.textContent.trim(), t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  for (const [s, r] of texts) {
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      out.push(`"${s}" is cut by its drawing's edge (${Math.round(r.left - box.left)}..${Math.round(r.right - box.left)} of ${Math.round(box.width)} px)`);
  }
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const [a, p] = texts[i], [b, q] = texts[j];
    if (p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5)
      out.push(`"${a}" runs into "${b}"`);
  }
}
return out.slice(0, 8);
"#;

/// Controls on a phone smaller than 44 px (a check box or radio button counts its label).
const TAP_TARGETS: &str = r#"
const out = [];
for (const el of document.querySelectorAll('button, a.button, a.link, input:not([type=hidden]), select, textarea, summary, header a')) {
  if (!el.checkVisibility()) continue;
  let target = el;
  if ((el.type === 'checkbox' || el.type === 'radio') && el.closest('label')) target = el.closest('label');
  const r = target.getBoundingClientRect();
  if (r.width === 0) continue;
  if (r.height < 43.5 || r.width < 43.5)
    out.push(`${el.tagName.toLowerCase()} "${(el.textContent || el.name || '').trim().slice(0, 30)}" ${Math.round(r.width)}×${Math.round(r.height)}`);
}
return out.slice(0, 8);
"#;

/// Text squeezed into a column narrower than two letters, which then breaks at every letter.
const SQUEEZED: &str = r#"
const out = [];
for (const el of document.querySelectorAll('main th, main td, main dt, main dd, main li, main p, main h1, main h2')) {
  if (!el.checkVisibility()) continue;
  const text = el.textContent.trim();
  if (text.length < 4) continue;
  const r = el.getBoundingClientRect(), css = getComputedStyle(el), size = parseFloat(css.fontSize);
  const inner = r.width - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
  if (r.width > 0 && inner < 2 * size) out.push(`"${text.slice(0, 30)}" is squeezed into ${Math.round(inner)} px`);
}
return out.slice(0, 8);
"#;

/// Dates (2026-09-17) and months (2026-09) broken across two lines, outside machine text (code).
const SPLIT_DATES: &str = r#"
const out = [];
const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
const pattern = /(?<![\w-])\d{4}-\d{2}(-\d{2})?/g;
for (let node = walk.nextNode(); node; node = walk.nextNode()) {
  if (!node.parentElement.checkVisibility() || node.parentElement.closest('code, pre')) continue;
  for (const m of node.textContent.matchAll(pattern)) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    if (tops.size > 1) out.push(`"${m[0]}" breaks across lines (in ${node.parentElement.tagName.toLowerCase()}.${node.parentElement.className})`);
  }
}
return [...new Set(out)].slice(0, 8);
"#;

/// Tables wider than a phone that neither stack nor show that they scroll.
const HIDDEN_COLUMNS: &str = r#"
const out = [];
for (const t of document.querySelectorAll('main table')) {
  if (!t.checkVisibility() || t.scrollWidth <= t.clientWidth + 1) continue;
  if (!getComputedStyle(t).backgroundImage.includes('gradient'))
    out.push(`a table (${[...t.querySelectorAll('th')].map(h => h.textContent.trim()).join(', ')}) hides columns with no sign it scrolls`);
}
return out;
"#;

/// Every link of the page not followed yet (`arguments[0]`), followed (a few at a time, without
/// following redirects): [address, status].
const LINKS: &str = r#"
const done = arguments[arguments.length - 1];
const seen = new Set(arguments[0]);
const todo = [...new Set([...document.querySelectorAll('a[href]')]
  .map(a => new URL(a.getAttribute('href'), location.href))
  .filter(u => u.origin === location.origin)
  // (a page's links to itself, an error page's reload, are not followed)
  .map(u => u.pathname + u.search))].filter(h => !seen.has(h) && h !== location.pathname + location.search);
const out = [];
(async () => {
  for (let i = 0; i < todo.length; i += 4) {
    const batch = todo.slice(i, i + 4);
    out.push(...await Promise.all(batch.map(h => fetch(h, { credentials: 'same-origin', redirect: 'manual' })
      .then(r => [h, r.status]).catch(() => [h, 0]))));
  }
  done(out);
})();
"#;

/// The actions of the forms on the page that change something.
const POST_FORMS: &str = r#"
return [...document.querySelectorAll('form')]
  .filter(f => (f.getAttribute('method') || '').toLowerCase() === 'post' && f.checkVisibility())
  .map(f => new URL(f.getAttribute('action') || location.href, location.href).pathname);
"#;

/// Whether `role` may send a form to `action`: a viewer changes only their own account; only
/// managers and admins change configuration (policies, schedules' overrides, services,
/// runbooks, channels, challenges' content) and only admins the admin pages.
fn may_send(role: UserRole, action: &str) -> bool {
    // An acknowledge link acts as the person it was sent to, whoever opens it.
    let own = action == "/logout"
        || action.starts_with("/account")
        || action == "/oncall/feed"
        || action.contains("/ack/")
        || action.contains("/respond/")
        // the public status page's own forms: anyone may send them, signed in or not
        || action.starts_with("/status/");
    let admin = action.starts_with("/admin/");
    let manager = action.starts_with("/escalation-policies")
        || action == "/oncall/assign"
        || action == "/services"
        || (action.starts_with("/services/") && action.ends_with("/edit"))
        || action.starts_with("/runbooks")
        || (action.starts_with("/schedules/") && action.contains("/overrides"))
        || (action.starts_with("/challenges/")
            && ["/edit", "/publish", "/generate"]
                .iter()
                .any(|e| action.ends_with(e)));
    match role {
        UserRole::Viewer => own,
        UserRole::Responder => !admin && !manager,
        UserRole::Manager => !admin,
        UserRole::Admin => true,
    }
}

fn name_of(page: &str) -> String {
    match page.trim_start_matches('/') {
        "" => "dashboard".to_owned(),
        p if p.contains("/ack/") => "ack-link".to_owned(),
        p if p.contains("/respond/") => "respond-link".to_owned(),
        p => p.replace(['/', '?', '='], "_"),
    }
}

/// Visits every page as `email` (of `role`) at 360 and 1280 px and returns what a person
/// would find wrong.
async fn sweep(pool: PgPool, email: &str, role: UserRole, who: &str) {
    let w = world(&pool).await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    let dir = std::env::var("QUELL_SCREENSHOTS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/target/screenshots").to_owned());
    std::fs::create_dir_all(&dir).unwrap();
    let mut problems = Vec::new();
    let mut followed: Vec<String> = Vec::new();
    let mut pages = pages(&w);
    pages.extend(ERROR_PAGES.iter().map(|p| (*p).to_owned()));
    for width in [360u32, 1280] {
        in_chromium(
            &driver_url,
            width,
            400,
            "the pages were visited in time",
            async |c| {
                sign_in_at(c, &format!("{base}/incidents"), email).await;
                text_when(c, "main h1", |_| true).await;
                // A challenge being played: started, so its page shows the attempt under way.
                c.goto(&format!("{base}/challenges/{}", w.challenge))
                    .await
                    .unwrap();
                text_when(c, "main h1", |_| true).await;
                if let Ok(start) = c
                    .find(fantoccini::Locator::Css(
                        r#"#attempt form[action$="/attempts"] button"#,
                    ))
                    .await
                {
                    start.click().await.unwrap();
                    text_when(c, "#attempt", |t| t.contains("hint")).await;
                }
                console_problems(c, &[]).await;
                for page in &pages {
                    c.goto(&format!("{base}{page}")).await.unwrap();
                    text_when(c, "main", |_| true).await;
                    let at = format!("{who} {page} at {width} px");
                    let status = status_of(c).await;
                    let error_pages: Vec<String> = if status >= 400 {
                        vec![format!("{base}{page}")]
                    } else {
                        vec![]
                    };
                    let error_pages: Vec<&str> = error_pages.iter().map(String::as_str).collect();
                    for p in console_problems(c, &error_pages).await {
                        problems.push(format!("{at}: the console says {p}"));
                    }
                    let got = c.execute(OVERFLOW, vec![json!(width)]).await.unwrap();
                    if got[0].as_i64().unwrap() > i64::from(width) {
                        problems.push(format!("{at}: {} px wide ({})", got[0], got[1]));
                    }
                    for p in strings(c.execute(CHART_TEXT, vec![]).await.unwrap()) {
                        problems.push(format!("{at}: {p}"));
                    }
                    for p in strings(c.execute(SQUEEZED, vec![]).await.unwrap()) {
                        problems.push(format!("{at}: {p}"));
                    }
                    if width == 360 {
                        for p in strings(c.execute(TAP_TARGETS, vec![]).await.unwrap()) {
                            problems.push(format!("{at}: a small tap target: {p}"));
                        }
                        for p in strings(c.execute(HIDDEN_COLUMNS, vec![]).await.unwrap()) {
                            problems.push(format!("{at}: {p}"));
                        }
                        for p in strings(c.execute(SPLIT_DATES, vec![]).await.unwrap()) {
                            problems.push(format!("{at}: {p}"));
                        }
                    }
                    // Every link leads somewhere this person may go: no refusal, nothing missing.
                    let links = c.execute_async(LINKS, vec![json!(followed)]).await.unwrap();
                    for link in links.as_array().into_iter().flatten() {
                        let (href, status) = (link[0].as_str().unwrap(), link[1].as_i64().unwrap());
                        followed.push(href.to_owned());
                        if matches!(status, 403 | 404 | 405 | 409) || status >= 500 || status == 0 {
                            problems.push(format!("{at}: links to {href}, which answers {status}"));
                        }
                    }
                    // What the links answered is logged too; it was judged above.
                    console_problems(c, &[]).await;
                    for action in strings(c.execute(POST_FORMS, vec![]).await.unwrap()) {
                        if !may_send(role, &action) {
                            problems
                                .push(format!("{at}: shows a form to {action} it may not send"));
                        }
                    }
                    let signed_in = c
                        .execute(
                            "return !!document.querySelector('header form[action=\"/logout\"]')",
                            vec![],
                        )
                        .await
                        .unwrap();
                    // The acknowledge and respond links' pages stand outside sign-in: their token
                    // is the key.
                    // So do the public status page's.
                    let link = page.contains("/ack/")
                        || page.contains("/respond/")
                        || page.starts_with("/status");
                    if signed_in != json!(true) && !link {
                        problems.push(format!("{at}: the page lost the signed-in header"));
                    }
                    let png = c.screenshot().await.unwrap();
                    std::fs::write(format!("{dir}/{who}-{}-{width}.png", name_of(page)), png)
                        .unwrap();
                }
            },
        )
        .await;
    }
    assert!(
        problems.is_empty(),
        "what a person would find wrong:\n{}",
        problems.join("\n")
    );
}

/// Runs `run` in a chromium `width` px wide and 800 tall, closed after it; `run` must end within
/// `secs` (what it is for names it if it does not).
pub(crate) async fn in_chromium(
    driver: &str,
    width: u32,
    secs: u64,
    what: &str,
    run: impl AsyncFnOnce(&Client),
) {
    let c = browser_sized(driver, width, 800).await;
    let outcome = tokio::time::timeout(Duration::from_secs(secs), run(&c)).await;
    c.close().await.ok();
    outcome.unwrap_or_else(|_| panic!("{what}: not within {secs} s"));
}

/// The HTTP status the page was answered with (the browser keeps it in its navigation entry).
async fn status_of(c: &Client) -> i64 {
    c.execute(
        "return performance.getEntriesByType('navigation')[0]?.responseStatus ?? 200",
        vec![],
    )
    .await
    .unwrap()
    .as_i64()
    .unwrap_or(200)
}

fn strings(v: Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

#[sqlx::test]
async fn every_page_reads_right_for_an_admin_on_a_phone_and_a_laptop(pool: PgPool) {
    sweep(pool, ADMIN, UserRole::Admin, "admin").await;
}

#[sqlx::test]
async fn every_page_reads_right_for_a_responder_on_a_phone_and_a_laptop(pool: PgPool) {
    sweep(pool, RESPONDER, UserRole::Responder, "responder").await;
}

#[sqlx::test]
async fn every_page_reads_right_for_a_viewer_on_a_phone_and_a_laptop(pool: PgPool) {
    sweep(pool, VIEWER, UserRole::Viewer, "viewer").await;
}

/// The schedule's four weeks: each bar starts and ends where its shift does on the drawing's
/// scale, stands in its person's row, and the table beside it lists the same shifts.
#[sqlx::test]
async fn the_schedule_timeline_draws_each_shift_where_the_table_says(pool: PgPool) {
    let w = world(&pool).await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    for width in [360u32, 1280] {
        in_chromium(&driver_url, width, 60, "the schedule was read in time", async |c| {
            sign_in_at(c, &format!("{base}/schedules/{}", w.schedule), VIEWER).await;
            text_when(c, "table.shifts", |_| true).await;
            let got = c
                .execute(
                    r#"
const svg = document.querySelector('svg.oncall-timeline');
const box = svg.getBoundingClientRect();
const from = Date.parse(svg.dataset.from), to = Date.parse(svg.dataset.to);
const bars = [...svg.querySelectorAll('rect.bar')].map(b => {
  const r = b.getBoundingClientRect();
  const label = svg.querySelector(`text.who[data-person="${CSS.escape(b.dataset.person)}"]`).getBoundingClientRect();
  return { person: b.dataset.person, from: b.dataset.from, to: b.dataset.to,
           left: r.left - box.left, right: r.right - box.left,
           wantLeft: (Date.parse(b.dataset.from) - from) / (to - from) * box.width,
           wantRight: (Date.parse(b.dataset.to) - from) / (to - from) * box.width,
           labelAbove: label.bottom <= r.top + 0.5 && r.top - label.bottom < 10 };
});
const rows = [...document.querySelectorAll('table.shifts tr[data-person]')].map(r => ({ person: r.dataset.person, from: r.dataset.from, to: r.dataset.to,
  text: r.cells[0].textContent.trim() }));
return { bars, rows };
"#,
                    vec![],
                )
                .await
                .unwrap();
            let bars = got["bars"].as_array().unwrap();
            let rows = got["rows"].as_array().unwrap();
            assert!(bars.len() >= 3, "four weeks of a weekly rotation: {got}");
            assert_eq!(
                bars.len(),
                rows.len(),
                "a bar per shift in the table: {got}"
            );
            for b in bars {
                for (is, want) in [("left", "wantLeft"), ("right", "wantRight")] {
                    let (a, e) = (b[is].as_f64().unwrap(), b[want].as_f64().unwrap());
                    assert!(
                        (a - e).abs() <= 1.0,
                        "at {width} px the bar {b} is drawn at {a}, not {e}"
                    );
                }
                assert!(
                    b["labelAbove"].as_bool().unwrap(),
                    "at {width} px the bar {b} is not under its person's name"
                );
                let row = rows
                    .iter()
                    .find(|r| r["from"] == b["from"] && r["to"] == b["to"])
                    .unwrap_or_else(|| panic!("no row of the table is the shift {b}"));
                assert_eq!(
                    row["person"], b["person"],
                    "the table and the drawing name different people"
                );
                assert_eq!(row["text"], b["person"]);
            }
            let problems = console_problems(c, &[]).await;
            assert!(problems.is_empty(), "{problems:?}");
        })
        .await;
    }
}

/// A laptop's first screen of an open incident holds what its commander works with: the next
/// step, severity, roles, a stakeholder update, the bridge and claims.
#[sqlx::test]
async fn the_commanders_controls_are_on_a_laptops_first_screen(pool: PgPool) {
    let w = world(&pool).await;
    // A busier one: no bridge yet (its form folded), three stakeholder updates, two claims.
    let busy = open_incident(
        &pool,
        "checkout-api 5xx for card payments in every region",
        quell::domain::Severity::Sev2,
        Some("checkout-api"),
        "",
        50,
    )
    .await;
    {
        let actor = acting_as(&pool, ADMIN).await;
        let key = quell::incidents::domain::IncidentKey::parse(&busy).unwrap();
        let change = quell::incidents::actions::Change::now(key, &actor);
        let mut tx = pool.begin().await.unwrap();
        for body in [
            "We are looking into failed card payments at checkout.",
            "Card payments fail for about a third of attempts; a fix is being tested.",
            "The fix is rolling out; failures are falling.",
        ] {
            quell::incidents::actions::add_stakeholder_update(&mut tx, &change, "internal", body)
                .await
                .unwrap();
        }
        for subject in [
            "the processor's status page",
            "checkout-api's connection pool graphs",
        ] {
            quell::incidents::actions::claim(&mut tx, &change, subject, false, 30)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
    }
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    in_chromium(&driver_url, 1280, 60, "the page was read in time", async |c| {
        sign_in_at(c, &format!("{base}/incidents/{}", w.open_key), RESPONDER).await;
        for key in [&w.open_key, &busy] {
            c.goto(&format!("{base}/incidents/{key}")).await.unwrap();
            text_when(c, ".incident-head .actions", |_| true).await;
            let got = c
            .execute(
                r#"
const at = s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().bottom : null; };
return {
  step: at('.incident-head .actions .primary'),
  severity: at('#severity select[name=severity]'),
  reason: at('#severity input[name=reason]'),
  role: at('#roles form.assign button'),
  update: at('#updates textarea[name=body]'),
  record: at('#updates button[type=submit]'),
  bridge: at('#bridge-form summary'),
  claim: at('.claim-form button[type=submit]'),
};"#,
                vec![],
            )
            .await
            .unwrap();
            for (name, bottom) in got.as_object().unwrap() {
                let bottom = bottom
                    .as_f64()
                    .unwrap_or_else(|| panic!("no {name} control on {key}: {got}"));
                assert!(
                    bottom <= 800.0,
                    "on {key} the {name} control ends at {bottom} px, below a 1280×800 first screen"
                );
            }
        }
    })
    .await;
}

/// After a note the browser is back at the timeline, scrolled to it, saying the note was added;
/// the address then forgets the notice, so reading the page again is quiet.
#[sqlx::test]
async fn a_note_brings_the_page_back_to_the_timeline_saying_so(pool: PgPool) {
    let w = world(&pool).await;
    let base = serve(pool.clone()).await;
    let (_driver, driver_url) = chromedriver().await;
    in_chromium(&driver_url, 1280, 60, "the note was added in time", async |c| {
        sign_in_at(c, &format!("{base}/incidents/{}", w.open_key), RESPONDER).await;
        text_when(c, ".note-form", |_| true).await;
        crate::browser::type_into(c, ".note-form textarea[name=body]", "pool size back to 50")
            .await;
        crate::browser::click(c, ".note-form button[type=submit]").await;
        text_when(c, "#timeline-panel .notice", |t| {
            t == "Added to the timeline."
        })
        .await;
        text_when(c, "#timeline", |t| t.contains("pool size back to 50")).await;
        let got = c
            .execute(
                "return [location.hash, location.search, document.getElementById('timeline-panel').getBoundingClientRect().top]",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(got[0], "#timeline-panel", "{got}");
        assert_eq!(got[1], "", "the address forgot the notice: {got}");
        let top = got[2].as_f64().unwrap();
        assert!(
            (-2.0..400.0).contains(&top),
            "the timeline is in view: {got}"
        );
        let problems = console_problems(c, &[]).await;
        assert!(problems.is_empty(), "{problems:?}");
    })
    .await;

    // On a phone a refused note comes back in view, the reason above it in words and the
    // typing kept; the address is the incident's again.
    in_chromium(&driver_url, 360, 60, "the refused note came back in time", async |c| {
        sign_in_at(c, &format!("{base}/incidents/{}", w.open_key), RESPONDER).await;
        text_when(c, ".note-form", |_| true).await;
        crate::browser::type_into(
            c,
            ".note-form textarea[name=body]",
            "checked the pool graphs",
        )
        .await;
        crate::browser::type_into(c, ".note-form input[name=at]", "2026-02-30 25:00").await;
        crate::browser::click(c, ".note-form button[type=submit]").await;
        let said = text_when(c, "#timeline-panel .field-error", |_| true).await;
        assert!(said.starts_with("When: "), "{said}");
        let got = c
            .execute(
                "return [location.pathname + location.hash, document.querySelector('#timeline-panel .field-error').getBoundingClientRect().top, document.querySelector('.note-form textarea').value]",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            got[0],
            format!("/incidents/{}#timeline-panel", w.open_key),
            "{got}"
        );
        let top = got[1].as_f64().unwrap();
        assert!(
            (0.0..800.0).contains(&top),
            "the reason is on the screen: {got}"
        );
        assert_eq!(got[2], "checked the pool graphs");
        let problems = console_problems(c, &["/notes"]).await;
        assert!(problems.is_empty(), "{problems:?}");
    })
    .await;
}
