//! The session state machine.
