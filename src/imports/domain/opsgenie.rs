//! Opsgenie's objects as its REST API documents them, and how each is read into the shapes an
//! import works from: a user a person, a team a team (its admins lead) and a service its alerts
//! reach (paged through the escalation its default routing rule notifies), a schedule's
//! rotations layers (a time restriction windows), an override ahead an override, an
//! escalation a policy (rules at the same delay one step), an API integration a Quell
//! integration keeping its key. What cannot come across is said, with why. No I/O.

use chrono::{DateTime, FixedOffset, Utc};
use serde::Deserialize;

use super::pagerduty::{
    Entry, Integration, Layer, LayerUser, PdOverride, PdRestriction, Policy, Reference, Rule,
    Schedule, Service, Team, TeamMember, User,
};
use super::source::{Source, Unmapped};

/// A participant, recipient, owner or target: `{"type", "id", "name" | "username"}`.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgRef {
    #[serde(default)]
    pub id: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub username: String,
}

impl OgRef {
    fn label(&self) -> &str {
        [&self.name, &self.username, &self.id]
            .into_iter()
            .find(|s| !s.is_empty())
            .map_or("", |s| s.as_str())
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgUser {
    pub id: String,
    /// The user's email address
    pub username: String,
    #[serde(default)]
    pub full_name: String,
    #[serde(default)]
    pub time_zone: Option<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OgMember {
    pub user: OgRef,
    /// `admin` (a lead in Quell) or `user`
    #[serde(default)]
    pub role: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OgTeam {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub members: Vec<OgMember>,
}

/// A team's routing rule: which alerts go to what (`notify`: an escalation, a schedule, none).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgRoutingRule {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub is_default: bool,
    #[serde(default)]
    pub notify: OgRef,
}

/// One interval of a time restriction; days only in `weekday-and-time-of-day`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgInterval {
    #[serde(default)]
    pub start_day: Option<String>,
    #[serde(default)]
    pub start_hour: u32,
    #[serde(default)]
    pub start_min: u32,
    #[serde(default)]
    pub end_day: Option<String>,
    #[serde(default)]
    pub end_hour: u32,
    #[serde(default)]
    pub end_min: u32,
}

/// `time-of-day` with one `restriction`, or `weekday-and-time-of-day` with `restrictions`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OgTimeRestriction {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub restriction: Option<OgInterval>,
    #[serde(default)]
    pub restrictions: Vec<OgInterval>,
}

fn one() -> i64 {
    1
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgRotation {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub start_date: DateTime<FixedOffset>,
    #[serde(default)]
    pub end_date: Option<DateTime<FixedOffset>>,
    /// `hourly`, `daily` or `weekly`, `length` of them a turn
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default = "one")]
    pub length: i64,
    #[serde(default)]
    pub participants: Vec<OgRef>,
    #[serde(default)]
    pub time_restriction: Option<OgTimeRestriction>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgSchedule {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub timezone: String,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub owner_team: Option<OgRef>,
    #[serde(default)]
    pub rotations: Vec<OgRotation>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgOverride {
    #[serde(default)]
    pub alias: String,
    pub user: OgRef,
    pub start_date: DateTime<FixedOffset>,
    pub end_date: DateTime<FixedOffset>,
    /// The rotations it overrides; none: all of them
    #[serde(default)]
    pub rotations: Vec<OgRef>,
}

/// One period of a schedule's final timeline.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgPeriod {
    pub start_date: DateTime<FixedOffset>,
    pub end_date: DateTime<FixedOffset>,
    #[serde(default)]
    pub recipient: Option<OgRef>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct OgDelay {
    #[serde(default)]
    pub time_amount: i64,
    #[serde(default)]
    pub time_unit: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgRule {
    /// `if-not-acked` or `if-not-closed`
    #[serde(default)]
    pub condition: String,
    /// `default` (whoever is on call), `next`, `previous`, `all`, `users`, `admins`, …
    #[serde(default)]
    pub notify_type: String,
    /// From the alert's creation
    #[serde(default)]
    pub delay: OgDelay,
    pub recipient: OgRef,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgRepeat {
    #[serde(default)]
    pub wait_interval: i64,
    #[serde(default)]
    pub count: i64,
    #[serde(default)]
    pub close_alert_after_all: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgEscalation {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub owner_team: Option<OgRef>,
    #[serde(default)]
    pub rules: Vec<OgRule>,
    #[serde(default)]
    pub repeat: Option<OgRepeat>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OgIntegration {
    pub id: String,
    pub name: String,
    /// `API`, `Prometheus`, `Email`, …
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub owner_team: Option<OgRef>,
    /// The owner team's id, as the list gives it
    #[serde(default)]
    pub team_id: Option<String>,
    /// Whom its alerts notify besides (teams, users, escalations, schedules)
    #[serde(default)]
    pub responders: Vec<OgRef>,
}

impl OgIntegration {
    /// The team its alerts go to: its owner, else its one team responder.
    pub fn team(&self) -> Option<&str> {
        let owner = self.owner_team.as_ref().map(|t| t.id.as_str());
        let owner = owner.or(self.team_id.as_deref()).filter(|t| !t.is_empty());
        let teams: Vec<&OgRef> = self
            .responders
            .iter()
            .filter(|r| r.kind == "team")
            .collect();
        match (owner, teams.as_slice()) {
            (Some(t), _) => Some(t),
            (None, [one]) if !one.id.is_empty() => Some(one.id.as_str()),
            _ => None,
        }
    }
}

/// Everything read from an Opsgenie account: each team with its routing rules, each schedule
/// with its overrides and its final timeline's periods.
#[derive(Debug, Clone, Default)]
pub struct Account {
    pub users: Vec<OgUser>,
    pub teams: Vec<(OgTeam, Vec<OgRoutingRule>)>,
    pub schedules: Vec<(OgSchedule, Vec<OgOverride>, Vec<OgPeriod>)>,
    pub escalations: Vec<OgEscalation>,
    pub integrations: Vec<OgIntegration>,
}

/// The integration types whose senders speak Opsgenie's Alert API, which Quell takes: API
/// integrations, and Prometheus (Alertmanager's `opsgenie_configs`).
pub fn speaks_alert_api(kind: &str) -> bool {
    matches!(kind, "API" | "Prometheus")
}

const DAY_MINUTES: i64 = 1440;
const WEEK_MINUTES: i64 = 7 * DAY_MINUTES;

fn day_number(day: &str) -> Option<i64> {
    let days = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    days.iter()
        .position(|d| d.eq_ignore_ascii_case(day.trim()))
        .map(|n| n as i64)
}

/// A time restriction as PagerDuty's restrictions (which the import makes windows of): a
/// time of day every day, or from a weekday's time to another's. An end at or before the
/// start runs past midnight (or the week's end); the same time is a whole day (or week).
pub fn restrictions(r: &OgTimeRestriction) -> Result<Vec<PdRestriction>, String> {
    let minute = |h: u32, m: u32| i64::from(h) * 60 + i64::from(m);
    let check = |i: &OgInterval| {
        if i.start_hour > 23 || i.end_hour > 23 || i.start_min > 59 || i.end_min > 59 {
            Err(format!(
                "time restriction {:02}:{:02}–{:02}:{:02} is not a time of day",
                i.start_hour, i.start_min, i.end_hour, i.end_min
            ))
        } else {
            Ok(())
        }
    };
    let piece = |kind: &str, start: i64, length: i64, day: Option<u32>| PdRestriction {
        kind: kind.to_owned(),
        start_time_of_day: format!("{:02}:{:02}:00", (start % DAY_MINUTES) / 60, start % 60),
        duration_seconds: length * 60,
        start_day_of_week: day,
    };
    match r.kind.as_str() {
        "time-of-day" => {
            let i = r
                .restriction
                .as_ref()
                .ok_or("a time-of-day restriction without its restriction")?;
            check(i)?;
            let (start, end) = (
                minute(i.start_hour, i.start_min),
                minute(i.end_hour, i.end_min),
            );
            let length = (end - start).rem_euclid(DAY_MINUTES);
            let length = if length == 0 { DAY_MINUTES } else { length };
            Ok(vec![piece("daily_restriction", start, length, None)])
        }
        "weekday-and-time-of-day" => r
            .restrictions
            .iter()
            .map(|i| {
                check(i)?;
                let day = |d: &Option<String>| {
                    d.as_deref().and_then(day_number).ok_or_else(|| {
                        format!("time restriction day {:?} is not a weekday", d.as_deref())
                    })
                };
                let start = day(&i.start_day)? * DAY_MINUTES + minute(i.start_hour, i.start_min);
                let end = day(&i.end_day)? * DAY_MINUTES + minute(i.end_hour, i.end_min);
                let length = (end - start).rem_euclid(WEEK_MINUTES);
                let length = if length == 0 { WEEK_MINUTES } else { length };
                let weekday = (start / DAY_MINUTES) as u32 + 1;
                Ok(piece("weekly_restriction", start, length, Some(weekday)))
            })
            .collect(),
        other => Err(format!("a time restriction of type {other:?}")),
    }
}

/// A rotation's turn in seconds; `None` for a type Opsgenie does not document.
fn turn_seconds(kind: &str, length: i64) -> Option<i64> {
    let unit: i64 = match kind {
        "hourly" => 3600,
        "daily" => 86_400,
        "weekly" => 604_800,
        _ => return None,
    };
    (length >= 1).then(|| unit.checked_mul(length)).flatten()
}

fn reference(id: &str, kind: &str) -> Reference {
    Reference {
        id: id.to_owned(),
        kind: kind.to_owned(),
        summary: String::new(),
    }
}

fn team_refs(owner: &Option<OgRef>) -> Vec<Reference> {
    owner
        .iter()
        .filter(|t| !t.id.is_empty())
        .map(|t| reference(&t.id, "team_reference"))
        .collect()
}

/// A schedule, its overrides and its timeline clipped to `[from, until)`; or why it cannot
/// come across at all.
fn schedule(
    s: &OgSchedule,
    overrides: &[OgOverride],
    periods: &[OgPeriod],
    (from, until): (DateTime<Utc>, DateTime<Utc>),
) -> Result<(Schedule, Vec<PdOverride>, Vec<Entry>), String> {
    if !s.enabled {
        return Err("disabled in Opsgenie".into());
    }
    let mut notes = Vec::new();
    let mut layers = Vec::new();
    for r in &s.rotations {
        let label = if r.name.is_empty() { &r.id } else { &r.name };
        if let Some(p) = r.participants.iter().find(|p| p.kind != "user") {
            let what = if p.kind == "none" {
                "an empty turn (none)".to_owned()
            } else {
                format!("a participant of type {:?}", p.kind)
            };
            notes.push(format!(
                "rotation {label:?} rotates {what}; Quell's rotas are people, so it is not imported"
            ));
            continue;
        }
        if r.participants.is_empty() {
            notes.push(format!(
                "rotation {label:?} has no participants; not imported"
            ));
            continue;
        }
        let turn = turn_seconds(&r.kind, r.length).ok_or_else(|| {
            format!(
                "rotation {label:?} is of type {:?} and length {}",
                r.kind, r.length
            )
        })?;
        let restrictions = match &r.time_restriction {
            Some(t) => restrictions(t).map_err(|e| format!("rotation {label:?}: {e}"))?,
            None => vec![],
        };
        layers.push(Layer {
            id: r.id.clone(),
            name: r.name.clone(),
            start: r.start_date,
            end: r.end_date,
            rotation_virtual_start: r.start_date,
            rotation_turn_length_seconds: turn,
            users: r
                .participants
                .iter()
                .map(|p| LayerUser {
                    user: reference(&p.id, "user_reference"),
                })
                .collect(),
            restrictions,
        });
    }
    if layers.is_empty() {
        let why = if notes.is_empty() {
            "it has no rotations".to_owned()
        } else {
            notes.join("; ")
        };
        return Err(why);
    }
    if layers.len() > 1 {
        notes.push(format!(
            "its {} rotations are layers; where two are on call at once Opsgenie pages both, Quell the higher layer",
            layers.len()
        ));
    }
    let mut kept = Vec::new();
    for o in overrides {
        if o.user.kind != "user" {
            notes.push(format!(
                "the override from {} is for a {:?}, not a person; left out",
                o.start_date, o.user.kind
            ));
            continue;
        }
        let all = o.rotations.is_empty()
            || s.rotations
                .iter()
                .all(|r| o.rotations.iter().any(|x| x.id == r.id));
        if !all && o.end_date.with_timezone(&Utc) > from {
            let names: Vec<&str> = o.rotations.iter().map(OgRef::label).collect();
            notes.push(format!(
                "the override from {} covers rotation(s) {} only in Opsgenie; in Quell it replaces whoever is on call",
                o.start_date,
                names.join(", ")
            ));
        }
        kept.push(PdOverride {
            id: o.alias.clone(),
            start: o.start_date,
            end: o.end_date,
            user: reference(&o.user.id, "user_reference"),
        });
    }
    let mut entries: Vec<Entry> = periods
        .iter()
        .filter_map(|p| {
            let who = p.recipient.as_ref().filter(|r| r.kind == "user")?;
            let start = p.start_date.with_timezone(&Utc).max(from);
            let end = p.end_date.with_timezone(&Utc).min(until);
            (start < end).then(|| Entry {
                start: start.fixed_offset(),
                end: end.fixed_offset(),
                user: Some(reference(&who.id, "user_reference")),
            })
        })
        .collect();
    entries.sort_by_key(|e| (e.start, e.end));
    let schedule = Schedule {
        id: s.id.clone(),
        name: s.name.clone(),
        time_zone: s.timezone.clone(),
        description: s.description.clone(),
        schedule_layers: layers,
        teams: team_refs(&s.owner_team),
        notes,
    };
    Ok((schedule, kept, entries))
}

/// An escalation as a policy: its rules, whose delays count from the alert's creation, as
/// steps that each wait until the next rule's delay (rules at the same delay one step); the
/// last waits the repeat's interval.
fn policy(e: &OgEscalation) -> Result<Policy, String> {
    let mut notes = Vec::new();
    let mut rules: Vec<(i64, &OgRule)> = Vec::new();
    for r in &e.rules {
        let per = match r.delay.time_unit.as_str() {
            "" | "minutes" => 1,
            "hours" => 60,
            "days" => DAY_MINUTES,
            other => return Err(format!("a rule's delay is in {other:?}")),
        };
        let minutes = r
            .delay
            .time_amount
            .max(0)
            .checked_mul(per)
            .filter(|m| *m <= 366 * DAY_MINUTES)
            .ok_or_else(|| {
                format!(
                    "a rule's delay of {} {}",
                    r.delay.time_amount, r.delay.time_unit
                )
            })?;
        rules.push((minutes, r));
    }
    rules.sort_by_key(|(d, _)| *d);
    if let Some((first, _)) = rules.first()
        && *first > 0
    {
        notes.push(format!(
            "its first rule waits {first} minute(s) after the alert in Opsgenie; Quell pages the first step as the incident opens"
        ));
    }
    if rules.iter().any(|(_, r)| r.condition == "if-not-closed") {
        notes.push(
            "a rule notifies until the alert is closed in Opsgenie; Quell stops escalating at an acknowledgement".into(),
        );
    }
    for (_, r) in &rules {
        if !matches!(r.notify_type.as_str(), "" | "default") {
            notes.push(format!(
                "the rule for {} {:?} notifies {:?} in Opsgenie; Quell pages whoever is on call",
                r.recipient.kind,
                r.recipient.label(),
                r.notify_type
            ));
        }
    }
    let repeat = e.repeat.as_ref();
    let wait = repeat.map_or(0, |r| r.wait_interval).max(1);
    let mut steps: Vec<Rule> = Vec::new();
    let mut delays: Vec<i64> = Vec::new();
    for (delay, r) in &rules {
        let kind = match r.recipient.kind.as_str() {
            "user" => "user_reference",
            "schedule" => "schedule_reference",
            other => other,
        };
        let target = Reference {
            summary: r.recipient.label().to_owned(),
            ..reference(&r.recipient.id, kind)
        };
        if delays.last() == Some(delay) {
            if let Some(step) = steps.last_mut() {
                step.targets.push(target);
            }
        } else {
            delays.push(*delay);
            steps.push(Rule {
                escalation_delay_in_minutes: 0,
                targets: vec![target],
            });
        }
    }
    for (n, step) in steps.iter_mut().enumerate() {
        step.escalation_delay_in_minutes = match delays.get(n + 1) {
            Some(next) => next - delays[n],
            None => wait,
        };
        if step.escalation_delay_in_minutes > DAY_MINUTES {
            notes.push(format!(
                "step {} waits {} minutes in Opsgenie; Quell's steps wait at most {DAY_MINUTES}",
                n + 1,
                step.escalation_delay_in_minutes
            ));
        }
    }
    if repeat.is_some_and(|r| r.close_alert_after_all) {
        notes.push(
            "Opsgenie closes the alert after the last repeat; Quell leaves the incident open"
                .into(),
        );
    }
    Ok(Policy {
        id: e.id.clone(),
        name: e.name.clone(),
        escalation_rules: steps,
        num_loops: repeat.map_or(0, |r| r.count.max(0)),
        teams: team_refs(&e.owner_team),
        notes,
    })
}

/// An Opsgenie account in the shapes an import works from, its schedules' timelines clipped
/// to `[from, until)`; what cannot come across is in `unmapped`, with why.
pub fn source(account: &Account, (from, until): (DateTime<Utc>, DateTime<Utc>)) -> Source {
    let mut out = Source::default();
    let skip = |kind: &'static str, name: &str, source: String, why: String| Unmapped {
        kind,
        name: name.to_owned(),
        source,
        why,
    };
    let mut unmapped = Vec::new();
    for u in &account.users {
        out.users.push(User {
            id: u.id.clone(),
            name: if u.full_name.trim().is_empty() {
                u.username.clone()
            } else {
                u.full_name.clone()
            },
            email: u.username.clone(),
            time_zone: u.time_zone.clone(),
        });
    }
    for (t, _) in &account.teams {
        let members = t
            .members
            .iter()
            .map(|m| TeamMember {
                user: reference(&m.user.id, "user_reference"),
                role: if m.role == "admin" {
                    "manager".into()
                } else {
                    "responder".into()
                },
            })
            .collect();
        let team = Team {
            id: t.id.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
        };
        out.teams.push((team, members));
    }
    for (s, overrides, periods) in &account.schedules {
        match schedule(s, overrides, periods, (from, until)) {
            Ok(made) => out.schedules.push(made),
            Err(why) => {
                let source = format!("schedule {} {:?}", s.id, s.name);
                unmapped.push(skip(
                    "schedule",
                    &s.name,
                    source,
                    format!("cannot map: {why}"),
                ));
            }
        }
    }
    for e in &account.escalations {
        match policy(e) {
            Ok(p) => out.policies.push(p),
            Err(why) => {
                let source = format!("escalation {} {:?}", e.id, e.name);
                let why = format!("cannot map: {why}");
                unmapped.push(skip("escalation policy", &e.name, source, why));
            }
        }
    }
    // Opsgenie routes an integration's alerts to its team, and the team's routing rules to an
    // escalation: each team is a Quell service its integrations' alerts reach.
    let mut homed = std::collections::HashSet::new();
    for (t, rules) in &account.teams {
        let mut notes = Vec::new();
        let default = rules.iter().find(|r| r.is_default);
        let policy = match default.map(|r| &r.notify) {
            Some(n) if n.kind == "escalation" => {
                Some(reference(&n.id, "escalation_policy_reference"))
            }
            Some(n) if n.kind == "schedule" => {
                notes.push(format!(
                    "its default routing rule notifies schedule {:?} directly; Quell pages through escalation policies, so give the service one",
                    n.label()
                ));
                None
            }
            _ => {
                notes.push("no default routing rule notifies an escalation".into());
                None
            }
        };
        let others = rules.iter().filter(|r| !r.is_default).count();
        if others > 0 {
            notes.push(format!(
                "{others} routing rule(s) with conditions are not imported; Quell's routing rules (/admin/routing) send alerts to services by their fields"
            ));
        }
        let mine: Vec<Integration> = account
            .integrations
            .iter()
            .filter(|i| i.enabled && speaks_alert_api(&i.kind) && i.team() == Some(&t.id))
            .map(|i| {
                homed.insert(i.id.clone());
                let others = i
                    .responders
                    .iter()
                    .filter(|r| !(r.kind == "team" && r.id == t.id))
                    .count();
                if others > 0 {
                    notes.push(format!(
                        "integration {:?} also notifies {others} other responder(s) in Opsgenie; Quell sends its alerts to this service alone",
                        i.name
                    ));
                }
                Integration {
                    id: i.id.clone(),
                    kind: i.kind.clone(),
                    name: i.name.clone(),
                    integration_key: i.api_key.clone(),
                }
            })
            .collect();
        let service = Service {
            id: t.id.clone(),
            name: t.name.clone(),
            description: Some(format!("Alerts for Opsgenie team {}", t.name)),
            escalation_policy: policy,
            integrations: mine.iter().map(|i| reference(&i.id, &i.kind)).collect(),
            teams: vec![reference(&t.id, "team_reference")],
            notes,
        };
        out.services.push((service, mine));
    }
    for i in account
        .integrations
        .iter()
        .filter(|i| !homed.contains(&i.id))
    {
        let source = format!("integration {} {:?} ({})", i.id, i.name, i.kind);
        let why = if !speaks_alert_api(&i.kind) {
            format!(
                "{} integrations are not imported: Quell takes Opsgenie's Alert API (API and Prometheus integrations), so point this sender at another of Quell's formats",
                i.kind
            )
        } else if !i.enabled {
            "disabled in Opsgenie".to_owned()
        } else {
            "belongs to no team and notifies no one team, so no one service is where its alerts go; add an opsgenie integration and a routing rule in Quell".to_owned()
        };
        unmapped.push(skip("integration", &i.name, source, why));
    }
    out.unmapped = unmapped;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oncall::domain::Span;

    fn interval(days: Option<(&str, &str)>, from: (u32, u32), to: (u32, u32)) -> OgInterval {
        OgInterval {
            start_day: days.map(|d| d.0.to_owned()),
            start_hour: from.0,
            start_min: from.1,
            end_day: days.map(|d| d.1.to_owned()),
            end_hour: to.0,
            end_min: to.1,
        }
    }

    fn read(
        kind: &str,
        one: Option<OgInterval>,
        many: Vec<OgInterval>,
    ) -> Vec<(String, String, i64, Option<u32>)> {
        let r = OgTimeRestriction {
            kind: kind.into(),
            restriction: one,
            restrictions: many,
        };
        restrictions(&r)
            .unwrap()
            .into_iter()
            .map(|p| {
                (
                    p.kind,
                    p.start_time_of_day,
                    p.duration_seconds,
                    p.start_day_of_week,
                )
            })
            .collect()
    }

    #[test]
    fn time_restrictions_become_pagerduty_shaped_restrictions() {
        let daily = |s: &str, d: i64| ("daily_restriction".to_owned(), s.to_owned(), d, None);
        let weekly = |s: &str, d: i64, day: u32| {
            ("weekly_restriction".to_owned(), s.to_owned(), d, Some(day))
        };
        // Overnight, and the same time (a whole day).
        let night = interval(None, (18, 0), (9, 0));
        assert_eq!(
            read("time-of-day", Some(night), vec![]),
            vec![daily("18:00:00", 15 * 3600)]
        );
        let whole = interval(None, (8, 30), (8, 30));
        assert_eq!(
            read("time-of-day", Some(whole), vec![]),
            vec![daily("08:30:00", 86_400)]
        );
        // Monday 09:00 to Friday 18:00; Sunday night into Monday (past the week's end).
        let week = interval(Some(("monday", "friday")), (9, 0), (18, 0));
        let sunday = interval(Some(("sunday", "monday")), (22, 0), (6, 0));
        assert_eq!(
            read("weekday-and-time-of-day", None, vec![week, sunday]),
            vec![
                weekly("09:00:00", 4 * 86_400 + 9 * 3600, 1),
                weekly("22:00:00", 8 * 3600, 7)
            ]
        );
        // What Opsgenie does not document is refused, saying what.
        let bad = OgTimeRestriction {
            kind: "weekday-and-time-of-day".into(),
            restriction: None,
            restrictions: vec![interval(Some(("funday", "monday")), (1, 0), (2, 0))],
        };
        assert!(restrictions(&bad).unwrap_err().contains("funday"));
        let late = OgTimeRestriction {
            kind: "time-of-day".into(),
            restriction: Some(interval(None, (24, 0), (2, 0))),
            restrictions: vec![],
        };
        assert!(
            restrictions(&late)
                .unwrap_err()
                .contains("not a time of day")
        );
    }

    fn recipient(kind: &str, id: &str) -> OgRef {
        OgRef {
            id: id.into(),
            kind: kind.into(),
            name: id.into(),
            username: String::new(),
        }
    }

    fn rule(delay: i64, condition: &str, to: OgRef) -> OgRule {
        OgRule {
            condition: condition.into(),
            notify_type: "default".into(),
            delay: OgDelay {
                time_amount: delay,
                time_unit: "minutes".into(),
            },
            recipient: to,
        }
    }

    #[test]
    fn escalation_rules_counted_from_the_alert_become_steps_that_wait_for_the_next() {
        let e = OgEscalation {
            id: "E".into(),
            name: "Escalation".into(),
            owner_team: None,
            rules: vec![
                rule(15, "if-not-acked", recipient("schedule", "nights")),
                rule(0, "if-not-acked", recipient("schedule", "primary")),
                rule(5, "if-not-acked", recipient("user", "ben")),
                rule(5, "if-not-closed", recipient("user", "eve")),
            ],
            repeat: Some(OgRepeat {
                wait_interval: 10,
                count: 2,
                close_alert_after_all: false,
            }),
        };
        let p = policy(&e).unwrap();
        let steps: Vec<(Vec<&str>, i64)> = p
            .escalation_rules
            .iter()
            .map(|r| {
                let ids = r.targets.iter().map(|t| t.id.as_str()).collect();
                (ids, r.escalation_delay_in_minutes)
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                (vec!["primary"], 5),
                (vec!["ben", "eve"], 10),
                (vec!["nights"], 10)
            ]
        );
        assert_eq!(p.num_loops, 2);
        assert!(
            p.notes
                .iter()
                .any(|n| n.contains("until the alert is closed"))
        );
        // A first rule that waits is said: Quell pages the first step at once.
        let later = OgEscalation {
            rules: vec![rule(2, "if-not-acked", recipient("user", "ben"))],
            repeat: None,
            ..e
        };
        let p = policy(&later).unwrap();
        assert_eq!(p.escalation_rules[0].escalation_delay_in_minutes, 1);
        assert!(
            p.notes.iter().any(|n| n.contains("waits 2 minute(s)")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn a_team_is_a_service_its_integrations_reach_and_the_rest_is_said() {
        let team = OgTeam {
            id: "T".into(),
            name: "Platform".into(),
            description: None,
            members: vec![OgMember {
                user: recipient("user", "U"),
                role: "admin".into(),
            }],
        };
        let default = OgRoutingRule {
            name: "Default".into(),
            is_default: true,
            notify: recipient("escalation", "E"),
        };
        let integration = |id: &str, kind: &str, team: Option<&str>| OgIntegration {
            id: id.into(),
            name: id.into(),
            kind: kind.into(),
            enabled: true,
            api_key: Some(format!("{id}-key-0123456789")),
            owner_team: team.map(|t| recipient("team", t)),
            team_id: None,
            responders: vec![],
        };
        let account = Account {
            teams: vec![(team, vec![default])],
            integrations: vec![
                integration("api", "API", Some("T")),
                integration("mail", "Email", Some("T")),
                integration("loose", "API", None),
            ],
            ..Default::default()
        };
        let now = Utc::now();
        let s = source(&account, (now, now));
        assert_eq!(s.teams[0].1[0].role, "manager");
        let (service, integrations) = &s.services[0];
        assert_eq!(service.escalation_policy.as_ref().unwrap().id, "E");
        assert_eq!(integrations.len(), 1);
        assert_eq!(
            integrations[0].integration_key.as_deref(),
            Some("api-key-0123456789")
        );
        let skipped: Vec<&str> = s.unmapped.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(skipped, vec!["mail", "loose"]);
    }

    fn rotation(kind: &str, length: i64, participants: Vec<OgRef>) -> OgRotation {
        OgRotation {
            id: "R".into(),
            name: "Rota".into(),
            start_date: DateTime::parse_from_rfc3339("2026-01-05T09:00:00Z").unwrap(),
            end_date: None,
            kind: kind.into(),
            length,
            participants,
            time_restriction: None,
        }
    }

    #[test]
    fn a_rotation_of_no_people_is_left_out_and_a_schedule_of_none_refused() {
        let s = |rotations| OgSchedule {
            id: "S".into(),
            name: "S".into(),
            description: None,
            timezone: "UTC".into(),
            enabled: true,
            owner_team: None,
            rotations,
        };
        let now = Utc::now();
        let people = rotation("daily", 2, vec![recipient("user", "ana")]);
        let teams = rotation("weekly", 1, vec![recipient("team", "T")]);
        let (made, _, _) = schedule(
            &s(vec![people.clone(), teams.clone()]),
            &[],
            &[],
            (now, now),
        )
        .unwrap();
        assert_eq!(made.schedule_layers.len(), 1);
        assert_eq!(
            made.schedule_layers[0].rotation_turn_length_seconds,
            2 * 86_400
        );
        assert!(
            made.notes.iter().any(|n| n.contains("type \"team\"")),
            "{:?}",
            made.notes
        );
        let why = schedule(&s(vec![teams]), &[], &[], (now, now)).unwrap_err();
        assert!(why.contains("not imported"), "{why}");
        // A length that overflows is refused, not wrapped.
        let huge = rotation("weekly", i64::MAX / 2, vec![recipient("user", "ana")]);
        assert!(schedule(&s(vec![huge]), &[], &[], (now, now)).is_err());
    }

    #[test]
    fn an_integration_of_no_team_goes_to_its_one_team_responder() {
        let i = OgIntegration {
            id: "I".into(),
            name: "I".into(),
            kind: "API".into(),
            enabled: true,
            api_key: None,
            owner_team: None,
            team_id: None,
            responders: vec![recipient("team", "T"), recipient("user", "U")],
        };
        assert_eq!(i.team(), Some("T"));
        let two = OgIntegration {
            responders: vec![recipient("team", "T"), recipient("team", "V")],
            ..i.clone()
        };
        assert_eq!(two.team(), None);
        let listed = OgIntegration {
            team_id: Some("L".into()),
            ..two
        };
        assert_eq!(listed.team(), Some("L"));
    }

    #[test]
    fn two_people_on_call_at_once_are_named_as_the_difference() {
        let t = |h: i64| DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::hours(h);
        let span = |p: &str, a, b| Span {
            person: p.into(),
            from: t(a),
            to: t(b),
        };
        let theirs = vec![span("ana", 0, 24), span("eve", 0, 24)];
        let said =
            super::super::first_difference(&[span("ana", 0, 24)], &theirs, "Opsgenie").unwrap();
        assert!(
            said.contains("ana and eve are on call at once in Opsgenie"),
            "{said}"
        );
        // One person in two rotations at once is one person on call.
        let entry = |a, b| Entry {
            start: t(a).fixed_offset(),
            end: t(b).fixed_offset(),
            user: Some(reference("A", "user_reference")),
        };
        let handles = std::collections::HashMap::from([("A".to_owned(), "ana".to_owned())]);
        let joined = super::super::rendered(&[entry(0, 24), entry(9, 17), entry(24, 30)], &handles);
        assert_eq!(joined, vec![span("ana", 0, 30)]);
    }
}
