//! Who is asking: people's accounts as the web kit reads them (users, password hashes, API token
//! hashes), sessions on PostgreSQL with their CSRF tokens, the sign-in form's signed cookie, and
//! the pure rules of access (roles, passwords, throttling, token shapes). The guards that put a
//! [`CurrentUser`] into each request and check its role live in the web kit (`http::gate`,
//! `http::access`); the pages and API for accounts live in `accounts/`.

pub mod db;
pub mod domain;
pub mod login_token;
pub mod password;
pub mod session;
pub mod session_store;

pub use domain::CurrentUser;
