//! No answer one click away: while a person has an attempt in progress, reading the incident
//! the challenge was built from (its page, its timeline, its postmortem, its evidence — page or
//! API), an incident linked to it as related, a search whose results list one of them, or a list
//! of action items that shows one of theirs (the fixes, in the postmortem's own words) marks the
//! attempt "looked it up", with what was read and when; such an attempt is never ranked. A
//! router-level layer inside the sign-in gates watches every successful `GET`.

use axum::extract::{Request, State};
use axum::http::{Method, Uri};
use axum::middleware::Next;
use axum::response::Response;

use crate::auth::CurrentUser;
use crate::domain::IncidentKey;
use crate::error::AppResult;
use crate::state::AppState;

/// A read that may hold an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// Anything under `/incidents/{key}` or `/api/v1/incidents/{key}`
    Incident(IncidentKey),
    /// `/search?q=` or `/api/v1/search?q=`
    Search(String),
    /// A list whose lines may hold an answer, read as shown (the incidents it names): action
    /// items (`/action-items`, `/api/v1/action-items`: the fixes), incidents through the API
    /// (`/api/v1/incidents`: their summaries) and the incident list searched (`/incidents?q=`)
    Listing(&'static str),
}

impl Read {
    /// What a request reads, when it is one of those.
    pub fn of(uri: &Uri) -> Option<Read> {
        let path = uri.path();
        let rest = path.strip_prefix("/api/v1").unwrap_or(path);
        if let Some(tail) = rest.strip_prefix("/incidents/") {
            // As the handler reads it: percent-decoded (`INC%2D42` is INC-42).
            let key = tail.split('/').next().unwrap_or("");
            let key: String = form_urlencoded::parse(format!("k={key}").as_bytes())
                .map(|(_, v)| v.into_owned())
                .next()
                .unwrap_or_default();
            return IncidentKey::parse(&key).map(Read::Incident);
        }
        let q = || {
            form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                .find(|(k, _)| k == "q")
                .map(|(_, v)| v.trim().to_owned())
                .filter(|q| !q.is_empty())
        };
        if rest == "/action-items" {
            return Some(Read::Listing("read the action items"));
        }
        if path == "/api/v1/incidents" {
            return Some(Read::Listing("read the incidents' summaries"));
        }
        if path == "/incidents" && q().is_some() {
            return Some(Read::Listing("searched the incidents"));
        }
        if rest == "/search" {
            return q().map(Read::Search);
        }
        None
    }
}

/// The layer: lets the request through, then, when it succeeded and read something that may
/// hold an answer, marks the reader's open attempts it gives away.
pub async fn watch(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let read = (req.method() == Method::GET)
        .then(|| Read::of(req.uri()))
        .flatten();
    let user = req.extensions().get::<CurrentUser>();
    let person = user.map(|u| u.id);
    let sees = user.map(crate::incident_ref::domain::SeenBy::of);
    let response = next.run(req).await;
    let (Some(read), Some(person), Some(sees)) = (read, person, sees) else {
        return response;
    };
    if !response.status().is_success() {
        return response;
    }
    let open = match super::db::lookups(&state.pool, person).await {
        Ok(open) => open,
        Err(err) => {
            tracing::warn!(%err, person, "could not read a person's open attempts");
            return response;
        }
    };
    if open.is_empty() {
        return response;
    }
    // A list is read as it was shown: which incidents its lines name.
    let (response, shown) = if let Read::Listing(_) = read {
        let (parts, body) = response.into_parts();
        match axum::body::to_bytes(body, LISTING_LIMIT).await {
            Ok(bytes) => {
                let shown = keys_in(&String::from_utf8_lossy(&bytes));
                (Response::from_parts(parts, bytes.into()), shown)
            }
            Err(err) => {
                tracing::warn!(%err, person, "could not read a listing during a challenge attempt");
                return Response::from_parts(parts, axum::body::Body::empty());
            }
        }
    } else {
        (response, Vec::new())
    };
    if let Err(err) = noticed(&state, (person, sees), open, &read, shown).await {
        tracing::warn!(%err, person, ?read, "could not record a read during a challenge attempt");
    }
    response
}

/// The most of a listing read to see what it shows (a page of 500 action items is well under).
const LISTING_LIMIT: usize = 16 * 1024 * 1024;

/// The incident numbers a page or a JSON body names (`INC-1187`), each once.
fn keys_in(text: &str) -> Vec<i64> {
    let mut out: Vec<i64> = text
        .match_indices("INC-")
        .filter(|(at, _)| {
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        })
        .filter_map(|(at, _)| {
            let digits: String = text[at + 4..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            IncidentKey::number(&digits).map(|k| k.0)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Marks the person's open attempts (challenge, the incidents that give it away) that this
/// read gives away; `listed` is what a listing showed.
async fn noticed(
    state: &AppState,
    (person_id, sees): (i64, crate::incident_ref::domain::SeenBy),
    open: Vec<(i64, Vec<i64>)>,
    read: &Read,
    listed: Vec<i64>,
) -> AppResult<()> {
    let (shown, what): (Vec<i64>, String) = match read {
        Read::Listing(what) => (listed, (*what).to_owned()),
        Read::Incident(key) => (vec![key.0], format!("read {key}")),
        Read::Search(q) => {
            let hits = crate::search::db::search(&state.pool, q, sees, 50).await?;
            (
                hits.iter().map(|h| h.key.0).collect(),
                format!("searched for “{}”", q.chars().take(100).collect::<String>()),
            )
        }
    };
    let given_away: Vec<i64> = open
        .into_iter()
        .filter(|(_, numbers)| numbers.iter().any(|n| shown.contains(n)))
        .map(|(challenge, _)| challenge)
        .collect();
    if !given_away.is_empty() {
        super::db::mark_looked_up(&state.pool, person_id, &given_away, &what).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_that_may_hold_an_answer_are_told_from_the_rest() {
        let read = |u: &str| Read::of(&u.parse::<Uri>().unwrap());
        assert_eq!(
            read("/incidents/INC-1187"),
            Some(Read::Incident(IncidentKey(1187)))
        );
        assert_eq!(
            read("/api/v1/incidents/INC-184/postmortem"),
            Some(Read::Incident(IncidentKey(184)))
        );
        assert_eq!(
            read("/search?q=retry+queue%20overload"),
            Some(Read::Search("retry queue overload".into()))
        );
        assert_eq!(
            read("/incidents/INC%2D42/postmortem"),
            Some(Read::Incident(IncidentKey(42)))
        );
        assert_eq!(
            read("/api/v1/incidents/%49NC-42"),
            Some(Read::Incident(IncidentKey(42)))
        );
        assert_eq!(read("/api/v1/search?q=&limit=5"), None);
        let items = Some(Read::Listing("read the action items"));
        assert_eq!(read("/action-items?status=any"), items);
        assert_eq!(read("/api/v1/action-items"), items);
        assert_eq!(
            read("/api/v1/incidents?limit=5"),
            Some(Read::Listing("read the incidents' summaries"))
        );
        assert_eq!(
            read("/incidents?q=connection"),
            Some(Read::Listing("searched the incidents"))
        );
        // The list of titles is not an answer.
        assert_eq!(read("/incidents?status=open"), None);
        assert_eq!(read("/incidents/events"), None);
        assert_eq!(read("/challenges/1"), None);
    }

    #[test]
    fn a_listing_shows_the_incidents_it_names() {
        assert_eq!(
            keys_in(
                r#"<a href="/incidents/INC-1187/postmortem">INC-1187</a> "INC-184" XINC-9 INC-"#
            ),
            [184, 1187]
        );
    }
}
