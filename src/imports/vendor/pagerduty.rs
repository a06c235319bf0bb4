//! PagerDuty's REST API read with an admin's token: every page of a list (`limit`/`offset`
//! until `more` is false).

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::http::{Client, refused, segment};
use crate::error::AppResult;
use crate::imports::domain::{
    Entry, Integration, PdOverride, Policy, Schedule, Service, Team, TeamMember, User,
};

/// PagerDuty's API address unless another is given.
pub const PAGERDUTY_API: &str = "https://api.pagerduty.com";

pub struct PagerDuty {
    pub api: Client,
}

impl PagerDuty {
    /// A reader of the API at `base`; with `pinned`, requests go only to those addresses.
    pub fn new(
        base: &str,
        token: &str,
        pinned: Option<&[std::net::SocketAddr]>,
    ) -> AppResult<Self> {
        let api = Client::new(
            "PagerDuty",
            base,
            ("Token token=", token),
            "application/vnd.pagerduty+json;version=2",
            pinned,
        )?;
        Ok(Self { api })
    }

    async fn get(&self, path: &str, query: &[(&str, String)]) -> AppResult<Value> {
        self.api.get(path, query).await
    }

    /// Every page of a list, `key` naming the array in each page.
    async fn list<T: DeserializeOwned>(
        &self,
        path: &str,
        key: &str,
        extra: &[(&str, String)],
    ) -> AppResult<Vec<T>> {
        let mut out = Vec::new();
        let mut offset = 0usize;
        loop {
            let mut query = vec![("limit", "100".to_owned()), ("offset", offset.to_string())];
            query.extend(extra.iter().cloned());
            let page = self.get(path, &query).await?;
            let items = page[key].as_array().cloned().unwrap_or_default();
            let n = items.len();
            for item in items {
                out.push(self.api.read(path, item)?);
            }
            if !page["more"].as_bool().unwrap_or(false) || n == 0 {
                return Ok(out);
            }
            offset += n;
            if offset > 100_000 {
                return Err(refused(format!("{path} lists more than 100000 objects")));
            }
        }
    }

    pub async fn users(&self) -> AppResult<Vec<User>> {
        self.list("/users", "users", &[]).await
    }

    pub async fn teams(&self) -> AppResult<Vec<Team>> {
        self.list("/teams", "teams", &[]).await
    }

    pub async fn members(&self, team: &str) -> AppResult<Vec<TeamMember>> {
        let team = segment(team)?;
        self.list(&format!("/teams/{team}/members"), "members", &[])
            .await
    }

    pub async fn schedules(&self) -> AppResult<Vec<Schedule>> {
        // The list leaves out layers; each schedule is read whole.
        let listed: Vec<Value> = self.list("/schedules", "schedules", &[]).await?;
        let mut out = Vec::new();
        for s in listed {
            let id = s["id"].as_str().unwrap_or_default();
            let whole = self
                .get(&format!("/schedules/{}", segment(id)?), &[])
                .await?;
            out.push(
                self.api
                    .read("/schedules/{id}", whole["schedule"].clone())?,
            );
        }
        Ok(out)
    }

    /// The overrides of a schedule between two instants.
    pub async fn overrides(
        &self,
        schedule: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> AppResult<Vec<PdOverride>> {
        let path = format!("/schedules/{}/overrides", segment(schedule)?);
        // Whole overrides, not cut at `since` (one going on keeps its start).
        let query = [
            ("since", since.to_rfc3339()),
            ("until", until.to_rfc3339()),
            ("overflow", "true".to_owned()),
        ];
        let page = self.get(&path, &query).await?;
        let items = page["overrides"].as_array().cloned().unwrap_or_default();
        items.into_iter().map(|o| self.api.read(&path, o)).collect()
    }

    /// PagerDuty's own rendering of who is on call between two instants (its final schedule).
    pub async fn rendered(
        &self,
        schedule: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> AppResult<Vec<Entry>> {
        let path = format!("/schedules/{}", segment(schedule)?);
        let query = [
            ("since", since.to_rfc3339()),
            ("until", until.to_rfc3339()),
            ("time_zone", "UTC".to_owned()),
        ];
        let whole = self.get(&path, &query).await?;
        let entries = whole["schedule"]["final_schedule"]["rendered_schedule_entries"].clone();
        self.api.read(&path, entries)
    }

    pub async fn policies(&self) -> AppResult<Vec<Policy>> {
        self.list("/escalation_policies", "escalation_policies", &[])
            .await
    }

    pub async fn services(&self) -> AppResult<Vec<Service>> {
        self.list("/services", "services", &[]).await
    }

    /// One integration of a service, with its key.
    pub async fn integration(&self, service: &str, id: &str) -> AppResult<Integration> {
        let path = format!(
            "/services/{}/integrations/{}",
            segment(service)?,
            segment(id)?
        );
        let whole = self.get(&path, &[]).await?;
        self.api.read(&path, whole["integration"].clone())
    }
}
