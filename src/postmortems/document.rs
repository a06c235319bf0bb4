//! The postmortem as a document: the header table, the computed figures and the chosen
//! timeline, gathered once and shown as a page or exported as Markdown. Every figure comes
//! from the incident's timestamps, its service and the postmortem's facts, never typed in.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::db::{self, ActionItem, Postmortem};
use super::domain::{self, Section};
use crate::error::AppResult;
use crate::incident_ref::domain::SeenBy;
use crate::incidents::db::Incident;
use crate::incidents::domain::Durations;
use crate::roles::domain::Role;
use crate::sla::domain::Sla;
use crate::timeline::{db::Event, domain::Kind};

/// One event of the incident's timeline as the document words it, and whether it is chosen.
pub struct Line {
    pub event_id: i64,
    pub time: String,
    pub text: String,
    pub chosen: bool,
    /// Set when the event assigned a role: how a line of the document says it.
    pub role: Option<String>,
}

pub struct Document {
    pub key: String,
    pub title: String,
    pub pm: Postmortem,
    /// Label and value, in the reference's order.
    pub header: Vec<(&'static str, String)>,
    /// The computed Impact lines: what failed (printed before the written bullets) and the
    /// error budget (after them).
    pub failure_line: Option<String>,
    pub budget_line: Option<String>,
    pub lines: Vec<Line>,
    /// The Timeline as the document prints it: the chosen events, one line per minute.
    pub rows: Vec<(String, String)>,
    pub response: String,
    pub items: Vec<ActionItem>,
    /// The change confirmed as the incident's trigger, if any.
    pub trigger: Option<crate::changes::db::Change>,
    /// Incidents linked to this one, with their notes.
    pub related: Vec<crate::related::db::Related>,
    /// The figures a section may cite by name (`{time_to_acknowledge}`), with their values.
    pub prose: Vec<(&'static str, String)>,
}

/// The values of [`domain::PROSE_FIGURES`] known for this incident; the others are left out
/// (and stay as written in the text).
fn prose_figures(
    i: &Incident,
    pm: &Postmortem,
    d: &Durations,
    change_at: Option<DateTime<Utc>>,
    service: Option<&crate::services::db::Service>,
) -> Vec<(&'static str, String)> {
    let long = domain::format_minutes_long;
    let from_change = change_at.map(|c| (i.detected_at - c).num_seconds());
    let mut v: Vec<(&'static str, Option<String>)> = vec![
        ("change_at", change_at.map(hm)),
        ("started_at", Some(hm(i.started_at))),
        ("detected_at", Some(hm(i.detected_at))),
        ("acknowledged_at", i.acknowledged_at.map(hm)),
        ("mitigated_at", i.mitigated_at.map(hm)),
        ("resolved_at", i.resolved_at.map(hm)),
        ("time_to_detect", Some(long(d.time_to_detect_secs))),
        ("time_to_acknowledge", d.time_to_acknowledge_secs.map(long)),
        ("time_to_mitigate", d.time_to_mitigate_secs.map(long)),
        ("time_to_resolve", d.time_to_resolve_secs.map(long)),
        (
            "impact_duration",
            i.mitigated_at
                .map(|m| long((m - i.started_at).num_seconds())),
        ),
        ("from_change", from_change.map(long)),
        (
            "failed_requests",
            pm.failed_requests.map(crate::domain::grouped),
        ),
        (
            "total_requests",
            pm.total_requests.map(crate::domain::grouped),
        ),
        (
            "failed_share",
            pm.failed_requests
                .zip(pm.total_requests)
                .and_then(|(f, t)| domain::share_percent(f, t))
                .map(|p| format!("{p}%")),
        ),
    ];
    let budget = service.and_then(|s| {
        domain::error_budget(
            s.slo_target_percent,
            s.avg_requests_per_second,
            pm.failed_requests,
        )
    });
    v.push((
        "budget_consumed",
        budget.map(|b| format!("{}%", b.consumed_percent())),
    ));
    v.into_iter()
        .filter_map(|(name, value)| value.map(|v| (name, v)))
        .collect()
}

/// Events the document shows when nobody has chosen: what happened, not who was assigned.
fn shown_by_default(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::RoleAssigned
            | Kind::RoleUnassigned
            | Kind::Edited
            | Kind::SlaBreached
            | Kind::SuspectVerdict
            | Kind::Paged
            | Kind::Escalation
            | Kind::Claimed
            | Kind::ClaimReleased
            | Kind::Bridge
            | Kind::Access
    )
}

fn hm(t: DateTime<Utc>) -> String {
    t.format("%H:%M").to_string()
}

impl Document {
    pub async fn load(
        conn: &mut PgConnection,
        i: &Incident,
        now: DateTime<Utc>,
    ) -> AppResult<Self> {
        let pm = db::for_incident_or_draft(&mut *conn, i.id, now).await?;
        let mut items = db::action_items(&mut *conn, pm.id).await?;
        let rules = crate::trackers::db::rules(&mut *conn).await?;
        for a in &mut items {
            a.work_item_url = crate::trackers::domain::link(&a.work_item, &rules);
        }
        let events = crate::timeline::db::for_incident(&mut *conn, i.id).await?;
        let roles = crate::roles::db::for_incident(&mut *conn, i.id).await?;
        let policies = crate::sla::db::all(&mut *conn).await?;
        let policy = crate::sla::db::of(&policies, i.peak_severity)?;
        let service = match &i.service {
            Some(name) => crate::services::db::find_by_name(&mut *conn, name).await?,
            None => None,
        };
        let sla = Sla::of(
            &policy,
            i.detected_at,
            i.acknowledged_at,
            i.resolved_at,
            now,
        );
        let durations = Durations::of(&i.milestones(), now);
        let holder = |role: Role| {
            roles
                .iter()
                .find(|a| a.role == role)
                .map_or_else(|| "—".to_owned(), |a| a.person.name.clone())
        };
        let service_text = match &service {
            Some(s) if pm.impacted.is_empty() => format!("{} (Tier{})", s.name, s.tier),
            Some(s) => format!("{} (Tier{}), impact on {}", s.name, s.tier, pm.impacted),
            None => "—".to_owned(),
        };
        let header = vec![
            ("Severity", i.peak_severity.to_string()),
            ("Service", service_text),
            ("Date", i.detected_at.format("%Y-%m-%d").to_string()),
            (
                "Duration",
                durations
                    .duration
                    .clone()
                    .unwrap_or_else(|| "not resolved yet".into()),
            ),
            (
                "SLA",
                format!("ack {}, resolve {}", sla.ack.text, sla.resolve.text),
            ),
            ("Incident commander", holder(Role::IncidentCommander)),
            ("Postmortem owner", holder(Role::PostmortemOwner)),
            ("Status", domain::status_label(&pm.status).to_owned()),
        ];
        // Where responders met, when the incident had a bridge.
        let bridge = crate::bridge::db::of_incident(&mut *conn, i.id).await?;
        let mut header = header;
        if let Some(line) = bridge.line() {
            let at = header.len() - 1;
            header.insert(
                at,
                ("Bridge", line.trim_start_matches("Bridge: ").to_owned()),
            );
        }

        let failure_line = pm.failed_requests.map(|failed| {
            let between = i.mitigated_at.map(|m| (hm(i.started_at), hm(m)));
            domain::failure_line(
                &pm.requests_label,
                failed,
                pm.total_requests,
                between.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
            )
        });
        let budget_line = service.as_ref().and_then(|s| {
            let (slo, rate) = (s.slo_target_percent?, s.avg_requests_per_second?);
            let b = domain::error_budget(Some(slo), Some(rate), pm.failed_requests)?;
            Some(domain::budget_line(&s.name, slo, rate, &b))
        });

        let chosen = pm.timeline_event_ids.clone();
        let mut updates = 0;
        let lines: Vec<Line> = events
            .iter()
            .map(|e: &Event| {
                if e.kind == Kind::StakeholderUpdate {
                    updates += 1;
                }
                let text = domain::event_line(&domain::EventLine {
                    kind: e.kind,
                    details: &e.details,
                    body: &e.body,
                    occurred_at: e.occurred_at,
                    detected_at: i.detected_at,
                    update_number: updates,
                    headline: crate::timeline::domain::headline(
                        e.kind,
                        &e.details,
                        e.occurred_at,
                        i.detected_at,
                    ),
                });
                Line {
                    event_id: e.id,
                    time: hm(e.occurred_at),
                    text,
                    chosen: match &chosen {
                        Some(ids) => ids.contains(&e.id),
                        None => shown_by_default(e.kind),
                    },
                    role: (e.kind == Kind::RoleAssigned).then(|| domain::role_phrase(&e.details)),
                }
            })
            .collect();
        let rows = domain::merge_minutes(
            lines
                .iter()
                .filter(|l| l.chosen)
                .map(|l| (l.time.clone(), l.text.clone(), l.role.clone()))
                .collect(),
        );
        let trigger = crate::changes::db::confirmed_trigger(&mut *conn, i.id).await?;
        let change_at = trigger.as_ref().map(|c| c.occurred_at);
        let from_change = change_at.map(|c| (i.detected_at - c).num_seconds());
        let prose = prose_figures(i, &pm, &durations, change_at, service.as_ref());
        let response = domain::response_line(
            durations.time_to_detect_secs,
            from_change,
            durations.time_to_acknowledge_secs,
            durations.time_to_mitigate_secs,
        );
        Ok(Self {
            key: i.key.to_string(),
            title: i.title.clone(),
            pm,
            header,
            failure_line,
            budget_line,
            lines,
            rows,
            response,
            items,
            trigger,
            // Everyone who reads the postmortem reads this: no restricted incident.
            related: crate::related::db::list(&mut *conn, i.id, SeenBy::EVERYONE).await?,
            prose,
        })
    }

    /// The computed Impact lines, in the document's order.
    pub fn figures(&self) -> Vec<String> {
        self.failure_line
            .iter()
            .chain(&self.budget_line)
            .cloned()
            .collect()
    }

    /// The Impact section as the reference lays it out: what failed, the written bullets,
    /// then the error budget, one list when the written part is a list.
    pub fn impact_markdown(&self) -> String {
        let written = self.section_text(Section::Impact);
        let written = written.trim();
        let is_list = ["- ", "* ", "+ "].iter().any(|m| written.starts_with(m));
        let gap = if is_list || written.is_empty() {
            "\n"
        } else {
            "\n\n"
        };
        let mut md = String::new();
        if let Some(f) = &self.failure_line {
            md.push_str(&format!("- {f}{gap}"));
        }
        if !written.is_empty() {
            md.push_str(written);
            md.push_str(gap);
        }
        if let Some(b) = &self.budget_line {
            md.push_str(&format!("- {b}\n"));
        }
        md
    }

    /// A written section with the figures it cites filled in.
    pub fn section_text(&self, s: Section) -> String {
        domain::fill_figures(self.pm.section(s), &self.prose)
    }

    /// Published, then changed: the page and the API say so and offer the diff.
    pub fn edited_after_publication(&self) -> bool {
        self.pm.status == "published"
            && self
                .pm
                .published_at
                .is_some_and(|at| self.pm.updated_at > at)
    }

    /// The document in Markdown, section by section like the reference. Written text is
    /// Markdown already and goes in as written; table cells have their pipes escaped.
    pub fn markdown(&self) -> String {
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut md = format!(
            "# {}: {}\n\n| | |\n| --- | --- |\n",
            self.key,
            cell(&self.title)
        );
        for (label, value) in &self.header {
            md.push_str(&format!("| {label} | {} |\n", cell(value)));
        }
        let section = |md: &mut String, s: Section| {
            let text = self.section_text(s);
            if !text.is_empty() {
                md.push_str(&text);
                md.push_str("\n\n");
            }
        };
        md.push_str("\n## Summary\n\n");
        section(&mut md, Section::Summary);
        md.push_str("## Impact\n\n");
        md.push_str(self.impact_markdown().trim_end());
        md.push_str("\n\n## Timeline (UTC)\n\n| Time | Event |\n| --- | --- |\n");
        for (time, text) in &self.rows {
            md.push_str(&format!("| {time} | {} |\n", cell(text)));
        }
        md.push_str(&format!("\n{}\n\n", self.response));
        for (title, s) in [
            ("## Root cause", Section::RootCause),
            ("## Contributing factors", Section::ContributingFactors),
            ("## Detection", Section::Detection),
        ] {
            md.push_str(&format!("{title}\n\n"));
            section(&mut md, s);
        }
        md.push_str("## Response\n\n");
        for s in [Section::WentWell, Section::WasHard, Section::GotLucky] {
            md.push_str(&format!("### {}\n\n", s.title()));
            section(&mut md, s);
        }
        md.push_str("## Action items\n\n| # | Action | Type | Owner | Due | Work item |\n| --- | --- | --- | --- | --- | --- |\n");
        for a in &self.items {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                a.number,
                cell(&a.action),
                a.kind,
                cell(a.owner.as_deref().unwrap_or("—")),
                a.due_on.map_or_else(|| "—".to_owned(), |d| d.to_string()),
                match &a.work_item_url {
                    Some(url) => format!("[{}]({url})", cell(&a.work_item)),
                    None => cell(&a.work_item),
                },
            ));
        }
        md.push_str("\n## Lessons\n\n");
        section(&mut md, Section::Lessons);
        if !self.related.is_empty() {
            md.push_str("## Related incidents\n\n");
            for r in &self.related {
                md.push_str(&format!("- {}: {}", r.key, r.title.replace('\n', " ")));
                if !r.note.is_empty() {
                    md.push_str(&format!(" — {}", r.note.replace('\n', " ")));
                }
                md.push('\n');
            }
        }
        md
    }
}
