//! Logging: [`LoggingLevel`], `logging/setLevel` (legacy) and `notifications/message`.

use alloc::string::String;
use core::fmt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::Meta;

/// Severity of a log message (RFC 5424), ordered from least to most severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `notice`.
    Notice,
    /// `warning`.
    Warning,
    /// `error`.
    Error,
    /// `critical`.
    Critical,
    /// `alert`.
    Alert,
    /// `emergency`.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire string.
    pub fn parse(s: &str) -> Option<Self> {
        LoggingLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Params of `logging/setLevel` (legacy; 2026-07-28 uses `_meta` `logLevel` instead).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelRequestParams {
    /// Send messages at this level and above.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SetLevelRequestParams {
    /// Sets `level`.
    pub fn new(level: LoggingLevel) -> Self {
        SetLevelRequestParams { level, meta: None }
    }
}

/// Params of `notifications/message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// Any JSON: a string or an object.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl LoggingMessageNotificationParams {
    /// A message at `level` carrying `data`.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageNotificationParams {
            level,
            logger: None,
            data: data.into(),
            meta: None,
        }
    }

    /// Adds the logger's name.
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}
