//! Typed wire types of every MCP version, organised by area.
//!
//! One set of types covers 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28:
//! fields that only some versions have are `Option`s left out of the JSON when `None`, and
//! `_meta` is kept wherever the schema allows it. Request params, results and notification
//! params are the `params` / `result` members of the JSON-RPC envelope (see
//! [`jsonrpc`](crate::jsonrpc)); method names are in [`methods`].
//!
//! It is the sender's job to fill only what the negotiated version has (e.g. `resultType`,
//! `ttlMs` and `cacheScope` are required in 2026-07-28 and unknown before; audio content only
//! exists from 2025-03-26). Every type is also re-exported here.
//!
//! Areas: [`meta`] (shared pieces), [`lifecycle`], [`content`], [`tools`] (with the 2026-07-28
//! multi round-trip requests), [`resources`] (with `subscriptions/listen`), [`prompts`],
//! [`completion`], [`logging`], [`sampling`], [`roots`], [`elicitation`], [`tasks`], and the
//! skills extension, [`skills`].

pub mod completion;
pub mod content;
pub mod elicitation;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod tasks;
pub mod tools;

pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use meta::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use skills::{
    GetSkillRequestParams, GetSkillResult, ListSkillsRequestParams, ListSkillsResult,
    ReadDirectoryRequestParams, ReadDirectoryResult, SkillEntry, SkillResource, SkillResources,
    SkillsCapability,
};
pub use tasks::{
    CancelTaskRequestParams, CancelTaskResult, ClientTaskRequests, ClientTasksCapability,
    CreateTaskResult, ElicitationTaskRequests, GetTaskPayloadRequestParams, GetTaskPayloadResult,
    GetTaskRequestParams, GetTaskResult, ListTasksRequestParams, ListTasksResult,
    RelatedTaskMetadata, SamplingTaskRequests, ServerTaskRequests, ServerTasksCapability, Task,
    TaskIdParams, TaskMetadata, TaskStatus, TaskStatusNotificationParams, ToolsTaskRequests,
};
pub use tools::*;

/// Every MCP method and notification name.
pub mod methods {
    /// `initialize` (client → server; legacy).
    pub const INITIALIZE: &str = "initialize";
    /// `ping` (both; legacy).
    pub const PING: &str = "ping";
    /// `server/discover` (client → server; 2026-07-28).
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// `completion/complete` (client → server).
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// `logging/setLevel` (client → server; legacy).
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `prompts/list` (client → server).
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get` (client → server).
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `resources/list` (client → server).
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list` (client → server).
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read` (client → server).
    pub const RESOURCES_READ: &str = "resources/read";
    /// `resources/subscribe` (client → server; legacy).
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe` (client → server; legacy).
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// `subscriptions/listen` (client → server; 2026-07-28).
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// `tools/list` (client → server).
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call` (client → server).
    pub const TOOLS_CALL: &str = "tools/call";
    /// `sampling/createMessage` (server → client; an input request in 2026-07-28).
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// `roots/list` (server → client; an input request in 2026-07-28).
    pub const ROOTS_LIST: &str = "roots/list";
    /// `elicitation/create` (server → client, 2025-06-18+; an input request in 2026-07-28).
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// `tasks/get` (both in 2025-11-25; client → server in the tasks extension).
    pub const TASKS_GET: &str = "tasks/get";
    /// `tasks/result` (both; 2025-11-25 only).
    pub const TASKS_RESULT: &str = "tasks/result";
    /// `tasks/list` (both; 2025-11-25 only).
    pub const TASKS_LIST: &str = "tasks/list";
    /// `tasks/cancel` (both in 2025-11-25; client → server in the tasks extension).
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// `tasks/update` (client → server; tasks extension).
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// `skills/list` (client → server; skills extension).
    pub const SKILLS_LIST: &str = "skills/list";
    /// `skills/get` (client → server; skills extension).
    pub const SKILLS_GET: &str = "skills/get";
    /// `resources/directory/read` (client → server; skills extension's `directoryRead`).
    pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";

    /// `notifications/initialized` (client → server; legacy).
    pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
    /// `notifications/cancelled` (both).
    pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
    /// `notifications/progress` (both; server → client in 2026-07-28).
    pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
    /// `notifications/message` (server → client).
    pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
    /// `notifications/resources/updated` (server → client).
    pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// `notifications/resources/list_changed` (server → client).
    pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/tools/list_changed` (server → client).
    pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed` (server → client).
    pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `notifications/roots/list_changed` (client → server; legacy).
    pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
    /// `notifications/elicitation/complete` (server → client; 2025-11-25).
    pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
    /// `notifications/tasks/status` (both; 2025-11-25).
    pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";
    /// `notifications/subscriptions/acknowledged` (server → client; 2026-07-28).
    pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
        "notifications/subscriptions/acknowledged";
    /// `notifications/tasks` (server → client; tasks extension).
    pub const NOTIFICATION_TASKS: &str = "notifications/tasks";

    /// Every request method above.
    pub const ALL_REQUESTS: &[&str] = &[
        INITIALIZE,
        PING,
        SERVER_DISCOVER,
        COMPLETION_COMPLETE,
        LOGGING_SET_LEVEL,
        PROMPTS_LIST,
        PROMPTS_GET,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
        RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE,
        SUBSCRIPTIONS_LISTEN,
        TOOLS_LIST,
        TOOLS_CALL,
        SAMPLING_CREATE_MESSAGE,
        ROOTS_LIST,
        ELICITATION_CREATE,
        TASKS_GET,
        TASKS_RESULT,
        TASKS_LIST,
        TASKS_CANCEL,
        TASKS_UPDATE,
        SKILLS_LIST,
        SKILLS_GET,
        RESOURCES_DIRECTORY_READ,
    ];

    /// Every notification method above.
    pub const ALL_NOTIFICATIONS: &[&str] = &[
        NOTIFICATION_INITIALIZED,
        NOTIFICATION_CANCELLED,
        NOTIFICATION_PROGRESS,
        NOTIFICATION_MESSAGE,
        NOTIFICATION_RESOURCES_UPDATED,
        NOTIFICATION_RESOURCES_LIST_CHANGED,
        NOTIFICATION_TOOLS_LIST_CHANGED,
        NOTIFICATION_PROMPTS_LIST_CHANGED,
        NOTIFICATION_ROOTS_LIST_CHANGED,
        NOTIFICATION_ELICITATION_COMPLETE,
        NOTIFICATION_TASKS_STATUS,
        NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
        NOTIFICATION_TASKS,
    ];
}
