//! How a render fails: the error the caller gets, whether the browser
//! session survives it, and the time kept back to report it.

use std::time::Duration;

use fantoccini::error::{CmdError, ErrorStatus};

use super::RenderError;

/// Time kept back from the deadline for reading the page after the waits.
pub(crate) const FINISH_MARGIN: Duration = Duration::from_millis(300);

/// A failed render, and whether its session may still be used.
#[derive(Debug)]
pub(crate) struct Failure {
    /// What the caller gets.
    pub error: RenderError,
    /// False when the browser or WebDriver session is broken.
    pub session_ok: bool,
}

impl Failure {
    /// A failure of the page (the session is fine).
    pub(crate) fn page(error: RenderError) -> Self {
        Self {
            error,
            session_ok: true,
        }
    }

    /// A WebDriver error during `what`, fatal to the session unless the
    /// browser merely reported a problem with the page.
    pub(crate) fn from_cmd(what: &'static str) -> impl Fn(CmdError) -> Self {
        move |e| Self {
            session_ok: !is_fatal(&e),
            error: RenderError::Browser(format!("{what}: {e}")),
        }
    }
}

impl From<RenderError> for Failure {
    fn from(error: RenderError) -> Self {
        let session_ok = matches!(
            error,
            RenderError::Blocked(_) | RenderError::ActionFailed { .. }
        );
        Self { error, session_ok }
    }
}

/// True when the WebDriver session or the browser behind it is gone.
pub(crate) fn is_fatal(e: &CmdError) -> bool {
    match e {
        CmdError::Standard(wd) => match wd.error {
            ErrorStatus::InvalidSessionId
            | ErrorStatus::NoSuchWindow
            | ErrorStatus::SessionNotCreated
            | ErrorStatus::Timeout
            | ErrorStatus::ScriptTimeout => true,
            ErrorStatus::UnknownError => {
                let m = wd.message.to_ascii_lowercase();
                [
                    "disconnected",
                    "not reachable",
                    "crashed",
                    "session deleted",
                    "no such execution context",
                ]
                .iter()
                .any(|s| m.contains(s))
            }
            _ => false,
        },
        CmdError::Lost(_)
        | CmdError::Failed(_)
        | CmdError::FailedC(_)
        | CmdError::NotJson(_)
        | CmdError::Json(_)
        | CmdError::NotW3C(_) => true,
        _ => false,
    }
}
