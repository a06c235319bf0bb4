//! People's accounts as a capability: signing in and out (password and single sign-on), your
//! account page with its password and API tokens, the admins' user management, and the API for
//! all of it. Who is asking (sessions, users, tokens as the web kit reads them) lives in `auth/`.

pub mod actions;
pub mod bootstrap;
pub mod handlers;
pub mod oidc;
pub mod pages;
pub mod routes;
