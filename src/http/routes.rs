//! What a capability serves, in one value: its API operations (with their OpenAPI description),
//! its pages behind the session gate, and the few addresses that are their own credential. Each
//! capability's `routes.rs` builds one; the router (`crate::router`) merges them all and is the
//! only place that knows every route.

use axum::Router;
use axum::routing::MethodRouter;
use utoipa::openapi::{OpenApi, RefOr, schema::Schema as Definition};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

/// A schema as the description holds it.
type Schema = RefOr<Definition>;

use crate::state::AppState;

/// One capability's routes, built with [`Routes::api`], [`Routes::page`] and [`Routes::open`].
#[derive(Default)]
pub struct Routes {
    /// Under `/api/v1`, behind the token gate.
    pub api: OpenApiRouter<AppState>,
    /// Pages and the forms they send, behind the session gate.
    pub pages: Router<AppState>,
    /// Addresses that carry their own credential (sign-in, a signed link, a calendar feed).
    pub open: Router<AppState>,
    /// Names the OpenAPI description gave two different schemas: the later silently replaces
    /// the earlier, so one operation would be described wrong (see [`Routes::clashes`]).
    clashes: Vec<String>,
}

impl Routes {
    pub fn new() -> Self {
        Self::default()
    }

    /// API operations on one path (`utoipa_axum::routes!(…)`).
    pub fn api(mut self, operations: UtoipaMethodRouter<AppState>) -> Self {
        let mut clashes = self.clashes_with(operations.0.iter().map(|(n, s)| (n.as_str(), s)));
        self.clashes.append(&mut clashes);
        self.api = self.api.routes(operations);
        self
    }

    /// A page, or the form a page sends, for a signed-in person.
    pub fn page(mut self, path: &str, method: MethodRouter<AppState>) -> Self {
        self.pages = self.pages.route(path, method);
        self
    }

    /// An address whose request carries its own credential: no session needed.
    pub fn open(mut self, path: &str, method: MethodRouter<AppState>) -> Self {
        self.open = self.open.route(path, method);
        self
    }

    /// Two capabilities' routes as one.
    pub fn merge(self, other: Routes) -> Self {
        let mut clashes = self.clashes;
        clashes.extend(other.clashes);
        if let Some(c) = &other.api.get_openapi().components {
            let mut found = Self::clashes_of(
                self.api.get_openapi(),
                c.schemas.iter().map(|(n, s)| (n.as_str(), s)),
            );
            clashes.append(&mut found);
        }
        Self {
            api: self.api.merge(other.api),
            pages: self.pages.merge(other.pages),
            open: self.open.merge(other.open),
            clashes,
        }
    }

    /// The schema names two different types were given, each once, sorted.
    pub fn clashes(&self) -> Vec<String> {
        let mut names = self.clashes.clone();
        names.sort();
        names.dedup();
        names
    }

    fn clashes_with<'a>(
        &self,
        schemas: impl Iterator<Item = (&'a str, &'a Schema)>,
    ) -> Vec<String> {
        Self::clashes_of(self.api.get_openapi(), schemas)
    }

    fn clashes_of<'a>(
        doc: &OpenApi,
        schemas: impl Iterator<Item = (&'a str, &'a Schema)>,
    ) -> Vec<String> {
        let known = doc.components.as_ref().map(|c| &c.schemas);
        schemas
            .filter(|(name, schema)| {
                known
                    .and_then(|k| k.get(*name))
                    .is_some_and(|earlier| earlier != *schema)
            })
            .map(|(name, _)| name.to_owned())
            .collect()
    }
}
