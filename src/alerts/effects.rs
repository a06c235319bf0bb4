//! What alerts do to incidents, inside the ingest transaction: firing alerts find or open
//! their group (and its incident, as routing decides), are stored in one statement and may raise
//! the incident's severity; acknowledgements and resolutions act on the open alerts, write the
//! timeline, and mitigate or resolve an incident none of whose alerts is still open.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::domain::{Action, AlertEvent};
use crate::alert_store::db::{self, NewAlerts};
use crate::audit::Actor;
use crate::error::{AppError, AppResult};
use crate::incidents::{self, actions, domain::Status, domain::Transition};
use crate::integrations::db::Credentials;
use crate::integrations::domain::OnAllResolved;
use crate::maintenance::domain::{Active, Mode};
use crate::routing::domain::{Decision, Rule, Subject, route};
use crate::silences::domain::Set;
use crate::timeline::{self, db::NewEvent, domain::Kind};

/// Who alert-driven changes are attributed to on timelines and in the audit log.
pub fn actor_of(c: &Credentials) -> Actor {
    Actor::system(&format!("{} (alerts)", c.name))
}

pub type Entry<'a> = (&'a Credentials, &'a AlertEvent);

/// Splits events where a key fires again after being acknowledged or resolved earlier in the
/// batch, so each run can apply its triggers, then acknowledgements, then resolutions, and the
/// last word for every key stays the sender's last word.
pub fn runs<'a>(events: &[Entry<'a>]) -> Vec<Vec<Entry<'a>>> {
    let mut runs = vec![Vec::new()];
    let mut settled: HashSet<(Uuid, &str)> = HashSet::new();
    for &(c, e) in events {
        let key = (c.id, e.dedup_key.as_str());
        if e.action == Action::Trigger {
            if settled.contains(&key) {
                runs.push(Vec::new());
                settled.clear();
            }
        } else {
            settled.insert(key);
        }
        if let Some(run) = runs.last_mut() {
            run.push((c, e));
        }
    }
    runs
}

/// What a batch judges its alerts by: the routing rules, the silences and the maintenance
/// windows going on, as last read.
#[derive(Clone, Copy)]
pub struct Judges<'a> {
    pub rules: &'a [Rule],
    pub silences: &'a Set,
    pub windows: &'a Active,
}

/// What keeps an alert from opening an incident and paging: a silence, or a maintenance
/// window that holds its service's alerts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Hold {
    Silence(i64),
    Window(i64),
}

impl Hold {
    fn words(self) -> String {
        match self {
            Hold::Silence(id) => format!("silence {id}"),
            Hold::Window(id) => format!("maintenance window {id}"),
        }
    }
}

/// A quiet maintenance window going on for the alert's service: its id and name.
type QuietWindow<'a> = Option<(i64, &'a str)>;

fn quiet_window<'a>(windows: &'a Active, d: &Decision) -> QuietWindow<'a> {
    match windows.of(d.service.as_deref()) {
        Some((id, Mode::Quiet, name)) => Some((id, name)),
        _ => None,
    }
}

pub async fn apply(
    conn: &mut PgConnection,
    run: &[Entry<'_>],
    judges: Judges<'_>,
    now: DateTime<Utc>,
) -> AppResult<()> {
    let of = |a: Action| run.iter().filter(move |(_, e)| e.action == a).copied();
    let triggers: Vec<Entry> = of(Action::Trigger).collect();
    if !triggers.is_empty() {
        fire(conn, &triggers, judges, now).await?;
    }
    let acks: Vec<Entry> = of(Action::Acknowledge).collect();
    if !acks.is_empty() {
        acknowledge(conn, &acks, now).await?;
    }
    let resolves: Vec<Entry> = of(Action::Resolve).collect();
    if !resolves.is_empty() {
        resolve(conn, &resolves, now).await?;
    }
    Ok(())
}

/// Applies events outside a lane (the engines: held alerts handed back, missed heartbeats), as
/// a lane would: their integrations' credentials, the routing rules, silences and maintenance
/// windows read now. A disabled integration's events are dropped, as its requests are refused
/// (but for Quell's heartbeats).
pub async fn judge(
    conn: &mut PgConnection,
    events: Vec<(Uuid, AlertEvent)>,
    now: DateTime<Utc>,
) -> AppResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut ids: Vec<Uuid> = events.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    let creds: HashMap<Uuid, Credentials> =
        crate::integrations::db::credentials(&mut *conn, &ids, &[])
            .await?
            .into_iter()
            .map(|c| (c.id, c))
            .collect();
    // Missed heartbeats come from Quell's own integration: disabling it does not stop them
    // (pausing monitors does), and a held one handed back keeps its monitor's service.
    let beats = crate::heartbeats::db::source_id(&mut *conn).await?;
    let mut events = events;
    for (id, e) in &mut events {
        if Some(*id) == beats && e.service_hint.is_none() {
            e.service_hint = e
                .labels
                .get("service")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
    }
    let entries: Vec<Entry> = events
        .iter()
        .filter_map(|(id, e)| {
            let c = creds.get(id)?;
            (c.enabled || Some(c.id) == beats).then_some((c, e))
        })
        .collect();
    let records = crate::routing::db::list(&mut *conn).await?;
    let rules = crate::routing::db::compile_all(&records);
    let silences = crate::silences::actions::Compiled::default()
        .current(&mut *conn)
        .await?;
    let active = crate::maintenance::actions::Compiled::default()
        .active(&mut *conn, now)
        .await?;
    let judges = Judges {
        rules: &rules,
        silences: &silences,
        windows: &active,
    };
    for run in runs(&entries) {
        apply(&mut *conn, &run, judges, now).await?;
    }
    Ok(())
}

fn subject<'a>(c: &'a Credentials, e: &'a AlertEvent) -> Subject<'a> {
    Subject {
        labels: &e.labels,
        details: &e.details,
        summary: &e.summary,
        source: &e.source,
        severity: &e.severity,
        status: "firing",
        integration: &c.name,
        format: c.format.as_str(),
        dedup_key: &e.dedup_key,
        group_key: &e.group_key,
    }
}

/// The group an alert joins: the one its rule forms from shared fields, else its own key.
fn group_of<'a>(e: &'a AlertEvent, d: &'a Decision) -> &'a str {
    d.grouping
        .as_ref()
        .map_or(e.group_key.as_str(), |g| g.key.as_str())
}

/// What routing decides for an alert; a service its source belongs to stands in when the rule
/// names none.
fn decide(rules: &[Rule], c: &Credentials, e: &AlertEvent) -> Decision {
    let mut d = route(rules, &subject(c, e));
    if d.service.is_none() {
        d.service.clone_from(&e.service_hint);
    }
    d
}

/// Opens the incidents of new groups in one go, each as routing decided for its group's first
/// alert; returns their ids in the same order.
async fn open_incidents(
    conn: &mut PgConnection,
    firsts: &[(&Credentials, &AlertEvent, &Decision, QuietWindow<'_>)],
    now: DateTime<Utc>,
) -> AppResult<Vec<i64>> {
    // Each service name routing made up is looked up once; one that names no service leaves
    // the incident without.
    let mut services: HashMap<&str, Option<crate::services::db::Service>> = HashMap::new();
    for (_, _, d, _) in firsts {
        if let Some(name) = d.service.as_deref()
            && !services.contains_key(name)
        {
            let found = crate::services::db::find_by_name(&mut *conn, name).await?;
            services.insert(name, found);
        }
    }
    let actors: Vec<Actor> = firsts.iter().map(|(c, _, _, _)| actor_of(c)).collect();
    let texts: Vec<(String, String)> = firsts
        .iter()
        .map(|(c, e, d, quiet)| {
            let summary = e
                .details
                .get("description")
                .and_then(Value::as_str)
                .map(|d| crate::domain::shorten(d, 5000))
                .unwrap_or_default();
            let mut note = format!(
                "Opened by alert \"{}\" from {} (routing rule \"{}\")",
                crate::domain::shorten(&e.summary, 300),
                c.name,
                d.rule
            );
            if let Some((_, window)) = quiet {
                note.push_str(&format!(
                    " during maintenance window \"{}\": nobody is paged unless it is still \
                     unacknowledged when the window ends",
                    crate::domain::shorten(window, 200)
                ));
            }
            (summary, note)
        })
        .collect();
    let openings: Vec<actions::Opening> = firsts
        .iter()
        .zip(&texts)
        .map(|((_, e, d, quiet), (summary, note))| {
            let service = d
                .service
                .as_deref()
                .and_then(|name| services.get(name))
                .and_then(Option::as_ref);
            actions::Opening {
                number: None,
                title: &d.title,
                severity: d.severity,
                service: match service {
                    Some(s) => actions::ServiceChoice::Known {
                        id: s.id,
                        name: &s.name,
                    },
                    None => actions::ServiceChoice::None,
                },
                summary,
                impact: "",
                // The sender's start time stands for the first customer impact, when it is
                // believable.
                started_at: e
                    .starts_at
                    .filter(|t| *t <= now && *t > now - chrono::Duration::days(30)),
                detected_at: None,
                note,
                now,
                restricted_to: None,
                quiet: quiet.is_some(),
            }
        })
        .collect();
    let pairs: Vec<(&actions::Opening, &Actor)> = openings.iter().zip(&actors).collect();
    let ids: Vec<i64> = actions::open_many(conn, &pairs)
        .await?
        .into_iter()
        .map(|i| i.id)
        .collect();
    let (quiet, windows): (Vec<i64>, Vec<i64>) = ids
        .iter()
        .zip(firsts)
        .filter_map(|(i, (_, _, _, q))| q.map(|(w, _)| (*i, w)))
        .unzip();
    crate::maintenance::actions::kept_quiet(&mut *conn, &quiet, &windows).await?;
    Ok(ids)
}

/// Keeps of `wanted` the groups an alert of `order` still needs: one that does not stay in
/// the incident of an alert it repeats.
fn keep_needed(
    wanted: &mut Vec<(Uuid, String)>,
    order: &[(Entry<'_>, Decision, i32)],
    stays: impl Fn(&Credentials, &AlertEvent) -> bool,
) {
    wanted.retain(|(i, k)| {
        order
            .iter()
            .any(|((c, e), d, _)| c.id == *i && group_of(e, d) == k && !stays(c, e))
    });
}

/// Firing alerts: find or open their groups, store them, raise severities. A silenced alert
/// whose group has no open incident (and none opening in this batch) is held by its silence
/// instead; one joining an open incident is stored with its silence, noted on the timeline and
/// raises nothing.
async fn fire(
    conn: &mut PgConnection,
    triggers: &[Entry<'_>],
    judges: Judges<'_>,
    now: DateTime<Utc>,
) -> AppResult<()> {
    // One row per dedup key: repeats within the batch count as deliveries of the first.
    let mut order: Vec<(Entry, Decision, i32)> = Vec::new();
    let mut index: HashMap<(Uuid, &str), usize> = HashMap::new();
    for &(c, e) in triggers {
        match index.get(&(c.id, e.dedup_key.as_str())) {
            Some(&i) => order[i].2 += 1,
            None => {
                index.insert((c.id, e.dedup_key.as_str()), order.len());
                order.push(((c, e), decide(judges.rules, c, e), 1));
            }
        }
    }
    let mut silenced: Vec<Option<Hold>> = order
        .iter()
        .map(|((c, e), d, _)| {
            judges
                .silences
                .silencing(&subject(c, e), now)
                .map(Hold::Silence)
                .or_else(|| match judges.windows.of(d.service.as_deref()) {
                    Some((id, Mode::Silence, _)) => Some(Hold::Window(id)),
                    _ => None,
                })
        })
        .collect();
    // A repeat of an alert still open stays where it is: a rule's group past its window must
    // not open an incident for an alert already stored in another.
    let grouped: Vec<(Uuid, String)> = order
        .iter()
        .filter(|(_, d, _)| d.grouping.is_some())
        .map(|((c, e), _, _)| (c.id, e.dedup_key.clone()))
        .collect();
    let mut rejoin: HashMap<(Uuid, String), (i64, i64)> = if grouped.is_empty() {
        HashMap::new()
    } else {
        db::open_alerts_of(conn, &grouped).await?
    };
    let stays = |c: &Credentials, e: &AlertEvent| rejoin.contains_key(&(c.id, e.dedup_key.clone()));
    let mut wanted: Vec<(Uuid, String)> = Vec::new();
    let mut words: HashMap<(Uuid, String), String> = HashMap::new();
    for ((c, e), d, _) in &order {
        if stays(c, e) {
            continue;
        }
        let k = (c.id, group_of(e, d).to_owned());
        if let Some(g) = &d.grouping {
            words.insert(k.clone(), g.words.clone());
        }
        if !wanted.contains(&k) {
            wanted.push(k);
        }
    }
    // A group a rule formed from shared fields takes alerts only within its window: past it,
    // the group closes (its incident stays as it is) and the next alert opens another.
    // In one order in every lane, so two lanes closing the same groups wait, not deadlock.
    let mut windowed: Vec<(Uuid, String, i32)> = order
        .iter()
        .filter(|((c, e), _, _)| !stays(c, e))
        .filter_map(|((c, _), d, _)| {
            let g = d.grouping.as_ref()?;
            Some((c.id, g.key.clone(), g.window_minutes))
        })
        .collect();
    windowed.sort_unstable();
    windowed.dedup();
    if !windowed.is_empty() {
        db::close_past_window(conn, &windowed).await?;
    }
    let (gi, gk): (Vec<Uuid>, Vec<String>) = wanted.iter().cloned().unzip();
    let mut groups: HashMap<(Uuid, String), (i64, i64)> = db::lock_open_groups(conn, &gi, &gk)
        .await?
        .into_iter()
        .map(|g| ((g.integration_id, g.group_key), (g.id, g.incident_id)))
        .collect();
    // So does a repeat of an alert still open whose group is closed: one moved out of its
    // incident by a split, which then was resolved. Asked only when a group would open.
    let orphans: Vec<(Uuid, String)> = order
        .iter()
        .filter(|((c, e), d, _)| {
            !stays(c, e) && !groups.contains_key(&(c.id, group_of(e, d).to_owned()))
        })
        .map(|((c, e), _, _)| (c.id, e.dedup_key.clone()))
        .collect();
    if !orphans.is_empty() {
        rejoin.extend(db::open_alerts_of(conn, &orphans).await?);
    }
    let stays = |c: &Credentials, e: &AlertEvent| rejoin.contains_key(&(c.id, e.dedup_key.clone()));
    keep_needed(&mut wanted, &order, stays);
    if silenced.iter().any(Option::is_some) {
        (order, silenced) = hold_silenced(conn, order, silenced, &groups, &rejoin).await?;
        if order.is_empty() {
            return Ok(());
        }
        index = order
            .iter()
            .enumerate()
            .map(|(i, ((c, e), _, _))| ((c.id, e.dedup_key.as_str()), i))
            .collect();
        keep_needed(&mut wanted, &order, stays);
    }
    // New groups are opened in one order by every lane and replica, so two batches opening
    // the same groups wait for each other instead of deadlocking.
    let mut missing: Vec<(Uuid, String)> = wanted
        .iter()
        .filter(|k| !groups.contains_key(*k))
        .cloned()
        .collect();
    missing.sort_unstable();
    if !missing.is_empty() {
        let (mi, mk): (Vec<Uuid>, Vec<String>) = missing.iter().cloned().unzip();
        let mw: Vec<Option<String>> = missing.iter().map(|k| words.get(k).cloned()).collect();
        let opened = db::insert_groups(conn, &mi, &mk, &mw).await?;
        // Groups another transaction opened meanwhile (it has committed) are joined.
        let (ti, tk): (Vec<Uuid>, Vec<String>) = missing
            .iter()
            .filter(|(i, k)| {
                !opened
                    .iter()
                    .any(|g| g.integration_id == *i && g.group_key == *k)
            })
            .cloned()
            .unzip();
        if !ti.is_empty() {
            let taken = db::lock_open_groups(conn, &ti, &tk).await?;
            if taken.len() < ti.len() {
                return Err(AppError::Internal("an alert group vanished".into()));
            }
            for g in taken {
                groups.insert((g.integration_id, g.group_key), (g.id, g.incident_id));
            }
        }
        let mut firsts = Vec::with_capacity(opened.len());
        for g in &opened {
            // The group's first unsilenced alert opens it (one is there: a group of silenced
            // alerts alone was held), so a silenced alert decides no title, service or paging.
            let of_group = |i: &usize| {
                let ((c, e), d, _) = &order[*i];
                c.id == g.integration_id && group_of(e, d) == g.group_key && !stays(c, e)
            };
            let first = (0..order.len())
                .filter(of_group)
                .find(|i| silenced[*i].is_none())
                .or_else(|| (0..order.len()).find(of_group))
                .ok_or_else(|| AppError::Internal("a new group has no alert".into()))?;
            let ((c, e), d, _) = &order[first];
            firsts.push((*c, *e, d, quiet_window(judges.windows, d)));
        }
        let incidents = open_incidents(conn, &firsts, now).await?;
        let ids: Vec<i64> = opened.iter().map(|g| g.id).collect();
        db::attach_groups(conn, &ids, &incidents).await?;
        for (g, incident_id) in opened.into_iter().zip(incidents) {
            groups.insert((g.integration_id, g.group_key), (g.id, incident_id));
        }
    }

    let mut rows = NewAlerts::default();
    for ((c, e), d, n) in &order {
        let (group_id, incident_id) = match rejoin.get(&(c.id, e.dedup_key.clone())) {
            Some(&stored) => stored,
            None => groups[&(c.id, group_of(e, d).to_owned())],
        };
        rows.integration_id.push(c.id);
        rows.group_id.push(group_id);
        rows.incident_id.push(incident_id);
        rows.dedup_key.push(&e.dedup_key);
        rows.summary.push(&e.summary);
        rows.source.push(&e.source);
        rows.severity.push(&e.severity);
        rows.labels.push(&e.labels);
        rows.details.push(&e.details);
        rows.source_url.push(e.source_url.as_deref());
        rows.starts_at.push(e.starts_at);
        rows.deliveries.push(*n);
        rows.rule_id.push(d.rule_id);
        rows.routed.push(json!(d));
        rows.raw.push(&e.raw);
        let hold = silenced[index[&(c.id, e.dedup_key.as_str())]];
        rows.silence_id.push(match hold {
            Some(Hold::Silence(id)) => Some(id),
            _ => None,
        });
        rows.window_id.push(match hold {
            Some(Hold::Window(id)) => Some(id),
            _ => quiet_window(judges.windows, d).map(|(id, _)| id),
        });
    }
    let stored = db::upsert(conn, &rows).await?;
    super::flapping::fired(conn, &stored, |id| sender(triggers, id), now).await?;
    let mut touched: Vec<i64> = stored.iter().map(|s| s.incident_id).collect();
    touched.sort_unstable();
    touched.dedup();
    timeline::db::announce_changes(&mut *conn, &touched).await?;

    // The most severe new alert per incident; a more severe one than the incident raises it.
    // A silenced one raises nothing: it is noted instead.
    let mut worst: HashMap<i64, (&Decision, &AlertEvent, &Credentials)> = HashMap::new();
    let mut quiet: Vec<(i64, &AlertEvent, &Credentials, Hold)> = Vec::new();
    for s in stored.iter().filter(|s| s.inserted) {
        let Some(&i) = index.get(&(s.integration_id, s.dedup_key.as_str())) else {
            continue;
        };
        let ((c, e), d, _) = &order[i];
        if let Some(silence) = silenced[i] {
            quiet.push((s.incident_id, e, c, silence));
            continue;
        }
        let slot = worst.entry(s.incident_id).or_insert((d, e, c));
        if d.severity.is_more_severe_than(slot.0.severity) {
            *slot = (d, e, c);
        }
    }
    joined_while_silenced(conn, &mut quiet, now).await?;
    if worst.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = worst.keys().copied().collect();
    let states = incidents::db::incident_states(conn, &ids).await?;
    fired_after_mitigation(conn, &states, &stored, &worst, now).await?;
    for state in states {
        let (d, e, c) = worst[&state.id];
        if state.status == Status::Resolved || !d.severity.is_more_severe_than(state.severity) {
            continue;
        }
        let reason = format!(
            "Alert \"{}\" is {} by routing rule \"{}\"",
            crate::domain::shorten(&e.summary, 200),
            d.severity,
            d.rule
        );
        let actor = actor_of(c);
        let change = actions::Change::now(state.key, &actor).on_clock(now);
        actions::change_severity(conn, &change, d.severity, &reason).await?;
    }
    Ok(())
}

type Judged<'a> = (Vec<(Entry<'a>, Decision, i32)>, Vec<Option<Hold>>);

/// Holds the silenced alerts that would open an incident: those whose group has none open and
/// is not opened by an unsilenced alert of this batch. Returns the alerts left to store. A key
/// held before that now joins an open incident leaves its held row (it is the incident's now).
async fn hold_silenced<'a>(
    conn: &mut PgConnection,
    order: Vec<(Entry<'a>, Decision, i32)>,
    silenced: Vec<Option<Hold>>,
    groups: &HashMap<(Uuid, String), (i64, i64)>,
    rejoin: &HashMap<(Uuid, String), (i64, i64)>,
) -> AppResult<Judged<'a>> {
    let opening: HashSet<(Uuid, &str)> = order
        .iter()
        .zip(&silenced)
        .filter(|(_, s)| s.is_none())
        .map(|(((c, e), d, _), _)| (c.id, group_of(e, d)))
        .collect();
    let mut held = crate::silences::db::Held::default();
    let (mut kept, mut kept_silenced) = (Vec::new(), Vec::new());
    let (mut moved_ids, mut moved_keys) = (Vec::new(), Vec::new());
    for (entry, silence) in order.iter().zip(&silenced) {
        let ((c, e), d, n) = entry;
        let group = group_of(e, d);
        let open = groups.contains_key(&(c.id, group.to_owned()))
            || opening.contains(&(c.id, group))
            || rejoin.contains_key(&(c.id, e.dedup_key.clone()));
        match silence {
            Some(hold) if !open => {
                let (silence, window) = match hold {
                    Hold::Silence(id) => (Some(*id), None),
                    Hold::Window(id) => (None, Some(*id)),
                };
                held.silence_id.push(silence);
                held.window_id.push(window);
                held.integration_id.push(c.id);
                held.dedup_key.push(&e.dedup_key);
                held.group_key.push(&e.group_key);
                held.summary.push(&e.summary);
                held.source.push(&e.source);
                held.severity.push(&e.severity);
                held.labels.push(&e.labels);
                held.details.push(&e.details);
                held.deliveries.push(*n);
                held.raw.push(&e.raw);
                held.source_url.push(e.source_url.as_deref());
                held.starts_at.push(e.starts_at);
            }
            _ => {
                if silence.is_some() {
                    moved_ids.push(c.id);
                    moved_keys.push(e.dedup_key.clone());
                }
                kept.push(entry.clone());
                kept_silenced.push(*silence);
            }
        }
    }
    crate::silences::actions::hold(conn, &held).await?;
    if !moved_ids.is_empty() {
        crate::silences::actions::moved(conn, &moved_ids, &moved_keys).await?;
    }
    Ok((kept, kept_silenced))
}

/// Alerts that joined an open incident while a silence or a window held them: a line on its
/// timeline per incident (nobody is paged for them).
async fn joined_while_silenced(
    conn: &mut PgConnection,
    quiet: &mut [(i64, &AlertEvent, &Credentials, Hold)],
    now: DateTime<Utc>,
) -> AppResult<()> {
    quiet.sort_by_key(|(incident, _, _, hold)| (*incident, *hold));
    for run in quiet.chunk_by(|a, b| a.0 == b.0) {
        let (incident_id, e, c, hold) = run[0];
        let mut body = format!(
            "Alert \"{}\" joined while {} held it; nobody was paged for it",
            crate::domain::shorten(&e.summary, 200),
            hold.words()
        );
        if run.len() > 1 {
            body.push_str(&format!(" (and {} more)", run.len() - 1));
        }
        let silences: Vec<i64> = run
            .iter()
            .filter_map(|q| match q.3 {
                Hold::Silence(id) => Some(id),
                Hold::Window(_) => None,
            })
            .collect();
        let windows: Vec<i64> = run
            .iter()
            .filter_map(|q| match q.3 {
                Hold::Window(id) => Some(id),
                Hold::Silence(_) => None,
            })
            .collect();
        let details = json!({ "integration": c.name, "silenced": run.len(), "silences": silences,
                              "maintenance_windows": windows });
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(&actor_of(c).name, incident_id, now, Kind::Note, details).saying(&body),
        )
        .await?;
    }
    Ok(())
}

/// An alert firing on a mitigated incident none of whose other alerts is open says so on the
/// timeline, once (the next ones join an incident that already has an open alert). The
/// status stays: whether the impact is back is the responders' call.
async fn fired_after_mitigation(
    conn: &mut PgConnection,
    states: &[incidents::db::IncidentState],
    stored: &[db::Stored],
    worst: &HashMap<i64, (&Decision, &AlertEvent, &Credentials)>,
    now: DateTime<Utc>,
) -> AppResult<()> {
    let mitigated: Vec<i64> = states
        .iter()
        .filter(|s| s.status == Status::Mitigated)
        .map(|s| s.id)
        .collect();
    if mitigated.is_empty() {
        return Ok(());
    }
    for (incident_id, open) in db::open_counts(conn, &mitigated).await? {
        let new = stored
            .iter()
            .filter(|s| s.inserted && s.incident_id == incident_id)
            .count() as i64;
        if new < open {
            continue;
        }
        let (_, e, c) = worst[&incident_id];
        let mut body = format!(
            "Alert \"{}\" fired after the incident was mitigated",
            crate::domain::shorten(&e.summary, 200)
        );
        if new > 1 {
            body.push_str(&format!(" (and {} more)", new - 1));
        }
        let details = json!({ "integration": c.name, "fired_after_mitigation": new });
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(&actor_of(c).name, incident_id, now, Kind::Note, details).saying(&body),
        )
        .await?;
    }
    Ok(())
}

fn keys(entries: &[Entry<'_>]) -> (Vec<Uuid>, Vec<String>) {
    entries
        .iter()
        .map(|(c, e)| (c.id, e.dedup_key.clone()))
        .unzip()
}

/// The integration an alert came from, among the batch's.
fn sender<'a>(entries: &[Entry<'a>], id: Uuid) -> Option<&'a Credentials> {
    entries.iter().map(|(c, _)| *c).find(|c| c.id == id)
}

/// Acknowledgements (PagerDuty, generic): the alert, and its incident if nobody has yet.
async fn acknowledge(
    conn: &mut PgConnection,
    acks: &[Entry<'_>],
    now: DateTime<Utc>,
) -> AppResult<()> {
    let (ids, ks) = keys(acks);
    let mut acked = db::acknowledge(conn, &ids, &ks).await?;
    acked.sort_unstable();
    acked.dedup_by_key(|(incident, _)| *incident);
    if acked.is_empty() {
        return Ok(());
    }
    let incidents: Vec<i64> = acked.iter().map(|(i, _)| *i).collect();
    for state in incidents::db::incident_states(conn, &incidents).await? {
        let by = acked
            .iter()
            .find(|(i, _)| *i == state.id)
            .and_then(|(_, integration)| sender(acks, *integration));
        if let (Status::Triggered, Some(cred)) = (state.status, by) {
            let actor = actor_of(cred);
            let change = actions::Change::now(state.key, &actor).on_clock(now);
            let note = "Acknowledged by the alert's sender";
            actions::transition(conn, &change, Transition::Acknowledge, note).await?;
        }
    }
    Ok(())
}

/// Resolutions: the alerts, a timeline line per incident, and, when an incident has no open
/// alert left, what the integration of its resolving alerts asks for (mitigate, resolve, or
/// nothing).
async fn resolve(
    conn: &mut PgConnection,
    resolves: &[Entry<'_>],
    now: DateTime<Utc>,
) -> AppResult<()> {
    let (ids, ks) = keys(resolves);
    crate::silences::actions::release(conn, &ids, &ks).await?;
    let incidents = db::incidents_of_open(conn, &ids, &ks).await?;
    if incidents.is_empty() {
        return Ok(());
    }
    incidents::db::lock_incidents(conn, &incidents).await?;
    let mut by_incident: HashMap<i64, (&Credentials, Vec<String>)> = HashMap::new();
    for r in db::resolve(conn, &ids, &ks).await? {
        let Some(cred) = sender(resolves, r.integration_id) else {
            continue;
        };
        by_incident
            .entry(r.incident_id)
            .or_insert((cred, Vec::new()))
            .1
            .push(r.summary);
    }
    for (incident_id, (cred, names)) in &by_incident {
        let mut listed: Vec<&str> = names.iter().map(String::as_str).take(10).collect();
        listed.dedup();
        let body = if names.len() > 1 {
            let more = names.len().saturating_sub(10);
            let mut b = listed.join("\n");
            if more > 0 {
                b.push_str(&format!("\n… and {more} more"));
            }
            b
        } else {
            String::new()
        };
        let details = json!({ "count": names.len(), "alerts": listed, "integration": cred.name });
        let by = &actor_of(cred).name;
        timeline::actions::record(
            &mut *conn,
            NewEvent::by(by, *incident_id, now, Kind::AlertsResolved, details).saying(&body),
        )
        .await?;
    }
    // Flapping keys that resolved start settling; their incidents wait for them.
    crate::alert_store::db::start_settling(conn, &ids, &ks).await?;
    let touched: Vec<i64> = by_incident.keys().copied().collect();
    let all_resolved = all_resolved_of(conn, &touched).await?;
    let how: Vec<(i64, Actor, OnAllResolved)> = all_resolved
        .into_iter()
        .filter_map(|id| {
            let (cred, _) = by_incident.get(&id)?;
            Some((id, actor_of(cred), cred.on_all_resolved))
        })
        .collect();
    after_all_resolved(conn, &how, "Every alert of this incident has resolved", now).await
}

/// Of these incidents, those none of whose alerts is open or still flapping.
pub async fn all_resolved_of(conn: &mut PgConnection, incidents: &[i64]) -> AppResult<Vec<i64>> {
    let mut busy: HashSet<i64> = db::open_counts(conn, incidents)
        .await?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    busy.extend(db::unsettled(conn, incidents).await?);
    Ok(incidents
        .iter()
        .copied()
        .filter(|id| !busy.contains(id))
        .collect())
}

/// What an integration asks for once every alert of an incident has resolved (mitigate,
/// resolve, or nothing), done for each incident by its integration's actor; a mitigation the
/// alerts make is remembered as theirs.
pub async fn after_all_resolved(
    conn: &mut PgConnection,
    how: &[(i64, Actor, OnAllResolved)],
    note: &str,
    now: DateTime<Utc>,
) -> AppResult<()> {
    if how.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = how.iter().map(|(id, _, _)| *id).collect();
    let mut mitigated = Vec::new();
    for state in incidents::db::incident_states(conn, &ids).await? {
        let Some((_, actor, on)) = how.iter().find(|(id, _, _)| *id == state.id) else {
            continue;
        };
        let (to, due) = match on {
            OnAllResolved::Mitigate => (
                Transition::Mitigate,
                matches!(state.status, Status::Triggered | Status::Acknowledged),
            ),
            OnAllResolved::Resolve => (Transition::Resolve, state.status != Status::Resolved),
            OnAllResolved::Nothing => continue,
        };
        if due {
            let change = actions::Change::now(state.key, actor).on_clock(now);
            actions::transition(conn, &change, to, note).await?;
            if to == Transition::Mitigate {
                mitigated.push(state.id);
            }
        }
    }
    crate::alert_store::db::note_mitigations(conn, &mitigated, now).await
}
