//! Hand-off notices: the person coming on call and the one going off hear it at the hand-off,
//! by every contact method they have, with the open incidents of the services the schedule's
//! policies cover; a reminder some hours before if they ask for one; nothing if they turned
//! notices off (`/account`, `PATCH /api/v1/me/preferences`). An engine in every replica sends
//! each notice once.

pub mod db;
pub mod domain;
pub mod timers;
