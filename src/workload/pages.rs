//! `/oncall/load`: the on-call load as a page — two charts (hours on call; pages, those
//! outside 08:00–20:00 apart) and the tables of people and teams — and `/oncall/load.csv`.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::domain::{self, Chart, Figures};
use super::handlers::{LoadQuery, read};
use super::views::Load;
use crate::error::AppError;
use crate::http::access::Manager;
use crate::http::extract::ApiQuery;
use crate::http::page::{Chrome, PageResult};
use crate::http::request::{ApiRequest, PageRequest};

#[derive(Template, WebTemplate)]
#[template(path = "workload/load.html")]
pub struct LoadPage {
    chrome: Chrome,
    load: Load,
    hours: Chart,
    pages: Chart,
    periods: [i64; 2],
}

pub async fn show(
    PageRequest(state, chrome, _): PageRequest<Manager>,
    ApiQuery(q): ApiQuery<LoadQuery>,
) -> PageResult<LoadPage> {
    let load = read(&state, &q).await?;
    // A chart per figure: a bar of parts for each person who has any, and what it says.
    let chart = |bar: &dyn Fn(&Figures) -> (Vec<f64>, String)| {
        let rows: Vec<_> = load
            .people
            .iter()
            .map(|p| (p.name.clone(), bar(&p.figures)))
            .filter(|(_, (parts, _))| parts.iter().sum::<f64>() > 0.0)
            .map(|(name, (parts, text))| (name, parts, text))
            .collect();
        domain::chart(&rows)
    };
    let hours = chart(&|f| (vec![f.hours_on_call], format!("{} h", f.hours_on_call)));
    let pages = chart(&|f| {
        let day = (f.pages - f.pages_off_hours) as f64;
        let text = format!("{} ({} off hours)", f.pages, f.pages_off_hours);
        (vec![day, f.pages_off_hours as f64], text)
    });
    Ok(LoadPage {
        chrome,
        load,
        hours,
        pages,
        periods: domain::PERIODS,
    })
}

/// The same figures as CSV: a row per person, then a row per team.
pub async fn csv(
    ApiRequest(state, _): ApiRequest<Manager>,
    ApiQuery(q): ApiQuery<LoadQuery>,
) -> PageResult<Response> {
    let load = read(&state, &q).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let failed = |e: csv::Error| AppError::Internal(format!("writing the CSV: {e}"));
    w.write_record([
        "kind",
        "handle or team",
        "name",
        "time zone",
        "hours on call",
        "pages",
        "pages outside 08:00-20:00",
        "nights interrupted",
        "incidents acknowledged",
        "mean time to acknowledge (s)",
    ])
    .map_err(failed)?;
    let rows = load
        .people
        .iter()
        .map(|p| {
            (
                "person",
                &p.handle,
                &p.name,
                p.time_zone.as_str(),
                &p.figures,
            )
        })
        .chain(
            load.teams
                .iter()
                .map(|t| ("team", &t.slug, &t.name, "", &t.figures)),
        );
    for (kind, id, name, zone, f) in rows {
        w.write_record([
            kind.to_owned(),
            domain::not_a_formula(id),
            domain::not_a_formula(name),
            zone.to_owned(),
            f.hours_on_call.to_string(),
            f.pages.to_string(),
            f.pages_off_hours.to_string(),
            f.nights_interrupted.to_string(),
            f.incidents_acknowledged.to_string(),
            f.mtta_seconds.map(|s| s.to_string()).unwrap_or_default(),
        ])
        .map_err(failed)?;
    }
    let body = w
        .into_inner()
        .map_err(|e| AppError::Internal(format!("writing the CSV: {e}")))?;
    let name = format!(
        "attachment; filename=\"oncall-load-{}d-{}.csv\"",
        load.days,
        load.to.format("%Y-%m-%d")
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, name),
        ],
        body,
    )
        .into_response())
}
