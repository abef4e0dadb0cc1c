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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use serde_json::json;

    #[test]
    fn levels_are_ordered_least_to_most_severe() {
        for pair in LoggingLevel::ALL.windows(2) {
            assert!(pair[0] < pair[1], "{:?} < {:?}", pair[0], pair[1]);
        }
        assert_eq!(LoggingLevel::ALL.iter().min(), Some(&LoggingLevel::Debug));
        assert_eq!(
            LoggingLevel::ALL.iter().max(),
            Some(&LoggingLevel::Emergency)
        );
        assert!(LoggingLevel::Warning >= LoggingLevel::Notice);
        assert!(LoggingLevel::Error > LoggingLevel::Warning);
    }

    #[test]
    fn wire_names_parse_display_and_serde_agree() {
        let names = [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ];
        for (level, name) in LoggingLevel::ALL.into_iter().zip(names) {
            assert_eq!(level.as_str(), name);
            assert_eq!(level.to_string(), name);
            assert_eq!(LoggingLevel::parse(name), Some(level));
            assert_eq!(serde_json::to_value(level).unwrap(), json!(name));
            assert_eq!(
                serde_json::from_value::<LoggingLevel>(json!(name)).unwrap(),
                level
            );
        }
    }

    #[test]
    fn unknown_or_miscased_levels_are_rejected() {
        for bad in ["Warning", "WARNING", "warn", "fatal", ""] {
            assert_eq!(LoggingLevel::parse(bad), None, "{bad}");
            assert!(serde_json::from_value::<LoggingLevel>(json!(bad)).is_err());
        }
        assert!(serde_json::from_value::<LoggingLevel>(json!(3)).is_err());
    }

    #[test]
    fn set_level_params() {
        let p = SetLevelRequestParams::new(LoggingLevel::Info);
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"level": "info"}));
        let wire = json!({"level": "critical", "_meta": {"progressToken": 1}});
        let p: SetLevelRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.level, LoggingLevel::Critical);
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(serde_json::from_value::<SetLevelRequestParams>(json!({})).is_err());
    }

    #[test]
    fn message_params_new_and_with_logger() {
        let p = LoggingMessageNotificationParams::new(LoggingLevel::Error, "disk full");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"level": "error", "data": "disk full"})
        );

        let p = LoggingMessageNotificationParams::new(LoggingLevel::Debug, json!({"rows": 3}))
            .with_logger("db");
        assert_eq!(p.logger.as_deref(), Some("db"));
        let wire = json!({"level": "debug", "logger": "db", "data": {"rows": 3}});
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<LoggingMessageNotificationParams>(wire).unwrap(),
            p
        );
    }

    #[test]
    fn message_params_keep_meta_and_need_data() {
        let wire = json!({
            "level": "alert",
            "data": null,
            "_meta": {"io.modelcontextprotocol/subscriptionId": 4}
        });
        let p: LoggingMessageNotificationParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(p.data, Value::Null);
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(
            serde_json::from_value::<LoggingMessageNotificationParams>(json!({"level": "info"}))
                .is_err()
        );
    }
}
