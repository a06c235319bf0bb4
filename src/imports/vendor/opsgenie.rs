//! Opsgenie's REST API read with an API key of an integration with read access (its `GenieKey`):
//! every page of a list (`limit`/`offset` while the answer names a `paging.next`; the address
//! it names is not followed, so a page cannot send the key elsewhere).

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::http::{Client, refused, segment};
use crate::error::AppResult;
use crate::imports::domain::opsgenie::{
    Account, OgEscalation, OgIntegration, OgOverride, OgPeriod, OgRoutingRule, OgSchedule, OgTeam,
    OgUser, speaks_alert_api,
};

/// Opsgenie's API address unless another is given (accounts in its EU region use
/// `https://api.eu.opsgenie.com`).
pub const OPSGENIE_API: &str = "https://api.opsgenie.com";

pub struct Opsgenie {
    pub api: Client,
}

impl Opsgenie {
    /// A reader of the API at `base`; with `pinned`, requests go only to those addresses.
    pub fn new(base: &str, key: &str, pinned: Option<&[std::net::SocketAddr]>) -> AppResult<Self> {
        let api = Client::new(
            "Opsgenie",
            base,
            ("GenieKey ", key),
            "application/json",
            pinned,
        )?;
        Ok(Self { api })
    }

    /// Every page of a list (its `data`).
    async fn list<T: DeserializeOwned>(
        &self,
        path: &str,
        extra: &[(&str, String)],
    ) -> AppResult<Vec<T>> {
        let mut out = Vec::new();
        let mut offset = 0usize;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut query = vec![("limit", "100".to_owned()), ("offset", offset.to_string())];
            query.extend(extra.iter().cloned());
            let page = self.api.get(path, &query).await?;
            let items = page["data"].as_array().cloned().unwrap_or_default();
            let n = items.len();
            let mut fresh = false;
            for item in items {
                // A page that repeats what was read (an `offset` not heeded) ends the list.
                let id = item["id"].as_str().unwrap_or_default().to_owned();
                if !id.is_empty() && !seen.insert(id) {
                    continue;
                }
                fresh = true;
                out.push(self.api.read(path, item)?);
            }
            let total = page["totalCount"].as_u64().map(|t| t as usize);
            let next = page["paging"]["next"]
                .as_str()
                .is_some_and(|n| !n.is_empty());
            if !next || !fresh || total.is_some_and(|t| offset + n >= t) {
                return Ok(out);
            }
            offset += n;
            if offset > 100_000 {
                return Err(refused(format!("{path} lists more than 100000 objects")));
            }
        }
    }

    /// One object (its `data`).
    async fn one<T: DeserializeOwned>(&self, path: &str, query: &[(&str, String)]) -> AppResult<T> {
        let whole = self.api.get(path, query).await?;
        self.api.read(path, whole["data"].clone())
    }

    /// Everything an import reads: users; teams with their members and routing rules;
    /// schedules with their rotations, overrides, and Opsgenie's own timeline of who is on
    /// call for `days` from `since`; escalations; integrations with their keys.
    pub async fn account(&self, since: DateTime<Utc>, days: i64) -> AppResult<Account> {
        let users: Vec<OgUser> = self.list("/v2/users", &[]).await?;
        let mut teams = Vec::new();
        for t in self.list::<OgTeam>("/v2/teams", &[]).await? {
            let id = segment(&t.id)?;
            let whole: OgTeam = self.one(&format!("/v2/teams/{id}"), &[]).await?;
            let rules: Vec<OgRoutingRule> = self
                .list(&format!("/v2/teams/{id}/routing-rules"), &[])
                .await?;
            teams.push((whole, rules));
        }
        let mut schedules = Vec::new();
        let expand = [("expand", "rotation".to_owned())];
        for s in self.list::<OgSchedule>("/v2/schedules", &expand).await? {
            let id = segment(&s.id)?;
            let overrides: Vec<OgOverride> = self
                .list(&format!("/v2/schedules/{id}/overrides"), &[])
                .await?;
            let path = format!("/v2/schedules/{id}/timeline");
            let query = [
                ("date", since.to_rfc3339()),
                ("interval", days.to_string()),
                ("intervalUnit", "days".to_owned()),
            ];
            let timeline = self.api.get(&path, &query).await?;
            let mut periods: Vec<OgPeriod> = Vec::new();
            let rotations = timeline["data"]["finalTimeline"]["rotations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for r in rotations.iter().filter(|r| !r["periods"].is_null()) {
                let these: Vec<OgPeriod> = self.api.read(&path, r["periods"].clone())?;
                periods.extend(these);
            }
            schedules.push((s, overrides, periods));
        }
        let escalations: Vec<OgEscalation> = self.list("/v2/escalations", &[]).await?;
        // The list leaves out keys: an integration Quell takes is read whole. One that cannot
        // be read is kept as listed (without its key, which the plan then says).
        let mut integrations = Vec::new();
        for listed in self.list::<OgIntegration>("/v2/integrations", &[]).await? {
            if !speaks_alert_api(&listed.kind) {
                integrations.push(listed);
                continue;
            }
            let path = format!("/v2/integrations/{}", segment(&listed.id)?);
            match self.one::<OgIntegration>(&path, &[]).await {
                Ok(whole) => integrations.push(whole),
                Err(e) => {
                    tracing::warn!(error = %e, integration = listed.id, "an Opsgenie integration could not be read");
                    integrations.push(listed);
                }
            }
        }
        Ok(Account {
            users,
            teams,
            schedules,
            escalations,
            integrations,
        })
    }
}
