//! What most handlers take first, as one value: the shared state and the signed-in person
//! checked for a role — and, for a page, its frame. A handler destructures it in its signature
//! (`PageRequest(state, chrome, auth): PageRequest<Admin>`), so the role it needs stays in
//! plain sight and its body reads as before.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::access::{Auth, MinRole, Refused};
use super::page::Chrome;
use crate::state::AppState;

/// An API call by a person holding at least role `R`: the state, and who.
pub struct ApiRequest<R: MinRole>(pub AppState, pub Auth<R>);

impl<R: MinRole> FromRequestParts<AppState> for ApiRequest<R> {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Refused> {
        let auth = Auth::from_request_parts(parts, state).await?;
        Ok(Self(state.clone(), auth))
    }
}

/// A page asked for by a person holding at least role `R`: the state, the page's frame, and
/// who. The frame is read first, as when a handler took both.
pub struct PageRequest<R: MinRole>(pub AppState, pub Chrome, pub Auth<R>);

impl<R: MinRole> FromRequestParts<AppState> for PageRequest<R> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let chrome = Chrome::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let auth = Auth::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Self(state.clone(), chrome, auth))
    }
}
