//! The live incident room's wire: Server-Sent Events at `/incidents/{key}/events` and
//! `/incidents/events`. Every timeline entry is announced by a trigger on `NOTIFY quell_live`
//! when its transaction commits; each replica's hub listens once and hands the entry to the
//! streams it serves, so a change made through any replica reaches every open page. A stream
//! that missed something (a reconnect with `Last-Event-ID`, a lagging reader, a lost listener)
//! replays it from the timeline, never from memory. Open streams are rows with leases, so the
//! per-person limit holds across replicas, and a stream ends when its session does.

pub mod db;
pub mod domain;
pub mod handlers;
pub mod hub;
pub mod routes;
