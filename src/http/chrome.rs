//! What every page shows around its content: who is signed in, and the CSRF token its forms
//! carry.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tower_sessions::Session;

use crate::auth::domain::UserRole;
use crate::auth::{CurrentUser, session};
use crate::error::AppError;
use crate::http::error_page::PageError;
use crate::state::AppState;

#[derive(Debug, Clone, Default)]
pub struct Chrome {
    pub user: Option<CurrentUser>,
    pub csrf: String,
}

impl Chrome {
    /// Whether the signed-in person holds at least `role` (to show or hide controls; the
    /// handlers check again).
    pub fn can(&self, role: &str) -> bool {
        let needed = UserRole::parse("role", role).unwrap_or(UserRole::Admin);
        self.user.as_ref().is_some_and(|u| u.role.allows(needed))
    }
}

impl FromRequestParts<AppState> for Chrome {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = parts.extensions.get::<CurrentUser>().cloned();
        // Only a signed-in session has forms to protect (the sign-in form brings its own
        // token): an anonymous page view must not create a session row.
        let csrf = match &user {
            Some(_) => {
                let session = Session::from_request_parts(parts, state)
                    .await
                    .map_err(|(_, msg)| PageError(AppError::Internal(msg.to_owned())))?;
                session::csrf_token(&session).await?
            }
            None => String::new(),
        };
        Ok(Self { user, csrf })
    }
}
