//! What happened to the Deployment write the plan asked for, and how the crate reads it.

use serde::{Deserialize, Serialize};

use crate::wire::Deployment;

/// The outcome of the Deployment write, as the caller observed it.
///
/// A caller that has the API server's answer to a successful write (the response body)
/// passes it as [`WriteOutcome::Stored`]: the settlement then sees what mutating admission
/// changed in the write, and returns a [`WriteRecord`](crate::WriteRecord) that keeps the
/// next reconciles from writing the same object again (see [`reconcile`](crate::reconcile)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum WriteOutcome {
    /// The write succeeded; the caller does not have the stored object.
    Applied,
    /// The write succeeded, and the API server answered with the stored Deployment (the
    /// response body of the create or update).
    Stored(Deployment),
    /// The API server answered with an error `Status`.
    Api(ApiError),
    /// The request did not get an answer (connection refused, timeout, ...).
    Transport {
        /// What the client said.
        message: String,
    },
}

/// The fields of a Kubernetes `Status` error (kube-rs's `ErrorResponse` has the same).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason, e.g. `Conflict`, `AlreadyExists`, `Invalid`.
    #[serde(default)]
    pub reason: String,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
}

/// How a failed write is handled: which HTTP answers are retried at once, backed off,
/// or taken as a rejection (see each variant, and [`WriteOutcome::class`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FailureClass {
    /// 409 with a reason other than `AlreadyExists`: stale resourceVersion, retry at once.
    Conflict,
    /// 409 `AlreadyExists`: another writer created it, retry at once.
    AlreadyExists,
    /// 404: it vanished under us, retry at once.
    NotFound,
    /// 400, 403, 405, 413, 415, 422: the API will never take this object as it is.
    Rejected,
    /// 401, 408, 429, 5xx, no code (and any other code): a passing fault, back off.
    Transient,
}

impl WriteOutcome {
    /// A write outcome from an optional HTTP code, as the scenario files and the command
    /// line give it: `None` is a transport error.
    pub fn from_parts(code: Option<u16>, reason: &str, message: &str) -> Self {
        match code {
            Some(code) => WriteOutcome::Api(ApiError {
                code,
                reason: reason.to_owned(),
                message: message.to_owned(),
            }),
            None => WriteOutcome::Transport {
                message: message.to_owned(),
            },
        }
    }

    /// `None` for a write that succeeded, otherwise the failure's class.
    ///
    /// ```
    /// use gateway_reconcile::{FailureClass, WriteOutcome};
    /// let e = WriteOutcome::from_parts(Some(409), "AlreadyExists", "exists");
    /// assert_eq!(e.class(), Some(FailureClass::AlreadyExists));
    /// let e = WriteOutcome::from_parts(None, "", "connection refused");
    /// assert_eq!(e.class(), Some(FailureClass::Transient));
    /// ```
    pub fn class(&self) -> Option<FailureClass> {
        match self {
            WriteOutcome::Applied | WriteOutcome::Stored(_) => None,
            WriteOutcome::Transport { .. } => Some(FailureClass::Transient),
            WriteOutcome::Api(e) => Some(match e.code {
                409 if e.reason == "AlreadyExists" => FailureClass::AlreadyExists,
                409 => FailureClass::Conflict,
                404 => FailureClass::NotFound,
                400 | 403 | 405 | 413 | 415 | 422 => FailureClass::Rejected,
                // 401, 408, 429 and 5xx are transient by the table; any other code is
                // treated the same way, since retrying with backoff is the safe default.
                _ => FailureClass::Transient,
            }),
        }
    }

    /// The message the API (or the client) gave, empty for a write that succeeded.
    pub fn message(&self) -> &str {
        match self {
            WriteOutcome::Applied | WriteOutcome::Stored(_) => "",
            WriteOutcome::Api(e) => &e.message,
            WriteOutcome::Transport { message } => message,
        }
    }
}

#[cfg(test)]
mod tests;
