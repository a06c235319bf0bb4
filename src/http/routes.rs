//! What a capability serves, in one value: its API operations (with their OpenAPI description),
//! its pages behind the session gate, and the few addresses that are their own credential. Each
//! capability's `routes.rs` builds one; the router (`crate::router`) merges them all and is the
//! only place that knows every route.

use axum::Router;
use axum::routing::MethodRouter;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

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
}

impl Routes {
    pub fn new() -> Self {
        Self::default()
    }

    /// API operations on one path (`utoipa_axum::routes!(…)`).
    pub fn api(mut self, operations: UtoipaMethodRouter<AppState>) -> Self {
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
        Self {
            api: self.api.merge(other.api),
            pages: self.pages.merge(other.pages),
            open: self.open.merge(other.open),
        }
    }
}
