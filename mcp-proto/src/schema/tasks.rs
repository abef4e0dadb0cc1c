//! Tasks. In 2025-11-25 (experimental, core protocol): task-augmented requests answered with
//! [`CreateTaskResult`], polled with `tasks/get`, fetched with `tasks/result`, listed with
//! `tasks/list`, cancelled with `tasks/cancel`, and `notifications/tasks/status`. From
//! 2026-07-28 tasks are the extension `io.modelcontextprotocol/tasks`, whose different
//! shapes live in [`extension`].

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use super::meta::{Cursor, JsonObject, Meta};

/// The state of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for input (elicitation, sampling, ...).
    InputRequired,
    /// Finished successfully (terminal).
    Completed,
    /// Failed (terminal).
    Failed,
    /// Cancelled (terminal).
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is final.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// `task` param of a task-augmented request (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// Requested retention in milliseconds from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// Value of `_meta["io.modelcontextprotocol/related-task"]` (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The related task.
    pub task_id: String,
}

/// A task (2025-11-25). Also the result of `tasks/get` and `tasks/cancel` and the params of
/// `notifications/tasks/status`, which add only `_meta`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task id.
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Human-readable detail of the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last update.
    pub last_updated_at: String,
    /// Retention in milliseconds from creation; `null` (None) for unlimited. Always written.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Metadata (when used as a result or notification params).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Task {
    /// A task in `status`, created and updated at `now` (ISO 8601).
    pub fn new(task_id: impl Into<String>, status: TaskStatus, now: impl Into<String>) -> Self {
        let now = now.into();
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl: None,
            poll_interval: None,
            meta: None,
        }
    }
}

/// Result of a task-augmented request (2025-11-25).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The created task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params naming one task (`tasks/get`, `tasks/result`, `tasks/cancel`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task id.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TaskIdParams {
    /// Names `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
            meta: None,
        }
    }
}

/// Params of `tasks/get`.
pub type GetTaskRequestParams = TaskIdParams;
/// Params of `tasks/result`.
pub type GetTaskPayloadRequestParams = TaskIdParams;
/// Params of `tasks/cancel`.
pub type CancelTaskRequestParams = TaskIdParams;
/// Result of `tasks/get` (2025-11-25).
pub type GetTaskResult = Task;
/// Result of `tasks/cancel` (2025-11-25).
pub type CancelTaskResult = Task;
/// Params of `notifications/tasks/status` (2025-11-25).
pub type TaskStatusNotificationParams = Task;
/// Result of `tasks/result`: the original request's result (e.g. a `CallToolResult`), open.
pub type GetTaskPayloadResult = JsonObject;
/// Params of `tasks/list`.
pub type ListTasksRequestParams = super::meta::PaginatedRequestParams;

/// Result of `tasks/list` (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// This page of tasks.
    pub tasks: Vec<Task>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `tasks.requests.sampling` of the client capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingTaskRequests {
    /// Task-augmented `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
}

/// `tasks.requests.elicitation` of the client capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationTaskRequests {
    /// Task-augmented `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
}

/// `tasks.requests` of the client capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTaskRequests {
    /// Sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingTaskRequests>,
    /// Elicitation requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationTaskRequests>,
}

/// Client `tasks` capability (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTasksCapability {
    /// Supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequests>,
}

/// `tasks.requests.tools` of the server capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsTaskRequests {
    /// Task-augmented `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
}

/// `tasks.requests` of the server capabilities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTaskRequests {
    /// Tool requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsTaskRequests>,
}

/// Server `tasks` capability (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTasksCapability {
    /// Supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequests>,
}

/// The tasks extension `io.modelcontextprotocol/tasks` (2026-07-28+, SEP-2663): the server
/// may answer `tools/call` with a task (`resultType: "task"`) when the client declares the
/// extension; the client polls `tasks/get`, answers input with `tasks/update`, cancels with
/// `tasks/cancel`, and may listen for `notifications/tasks` (filter `taskIds`). Not part of
/// the 2026-07-28 `schema.json`.
pub mod extension {
    use alloc::string::String;
    use serde::{Deserialize, Serialize};

    use super::TaskStatus;
    use crate::schema::meta::{JsonObject, Meta, ResultType};
    use crate::schema::tools::{InputRequests, InputResponses};

    /// The extension identifier (key in `capabilities.extensions`).
    pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";
    /// Method: poll a task.
    pub const TASKS_GET: &str = "tasks/get";
    /// Method: answer a task's input requests.
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// Method: ask to cancel a task.
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// Notification: a task's full state changed.
    pub const NOTIFICATION_TASKS: &str = "notifications/tasks";

    /// A task with its status-specific details (`DetailedTask`), flat. Serves as
    /// `CreateTaskResult` (`resultType: "task"`), `GetTaskResult` (`resultType: "complete"`)
    /// and the params of `notifications/tasks` (no `resultType`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Task {
        /// `"task"` when creating, `"complete"` for `tasks/get`, absent in notifications.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub result_type: Option<ResultType>,
        /// The task id.
        pub task_id: String,
        /// Current status.
        pub status: TaskStatus,
        /// Human-readable detail of the status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub status_message: Option<String>,
        /// ISO 8601 creation time.
        pub created_at: String,
        /// ISO 8601 time of the last update.
        pub last_updated_at: String,
        /// Retention in milliseconds; `null` (None) for unlimited. Always written.
        #[serde(default)]
        pub ttl_ms: Option<u64>,
        /// Suggested polling interval in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub poll_interval_ms: Option<u64>,
        /// Outstanding requests (status `input_required`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub input_requests: Option<InputRequests>,
        /// The original request's result (status `completed`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub result: Option<JsonObject>,
        /// The JSON-RPC error (status `failed`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub error: Option<JsonObject>,
        /// Metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<Meta>,
    }

    /// The schema's name for a task with details.
    pub type DetailedTask = Task;
    /// A task handle answering a request (`resultType: "task"`).
    pub type CreateTaskResult = Task;
    /// Result of `tasks/get` (`resultType: "complete"`).
    pub type GetTaskResult = Task;
    /// Params of `notifications/tasks`.
    pub type TaskStatusNotificationParams = Task;
    /// Params of `tasks/get` and `tasks/cancel`.
    pub type TaskIdParams = super::TaskIdParams;
    /// Result of `tasks/update` and `tasks/cancel`: an empty acknowledgement.
    pub type AckResult = crate::schema::lifecycle::EmptyResult;

    /// Params of `tasks/update`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct UpdateTaskRequestParams {
        /// The task.
        pub task_id: String,
        /// Answers to outstanding input requests, by key.
        pub input_responses: InputResponses,
        /// Request metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<Meta>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::elicitation::{ElicitRequestParams, ElicitResult, ElicitationSchema};
    use crate::schema::meta::ResultType;
    use crate::schema::tools::{InputRequest, InputResponse};
    use alloc::vec;
    use serde_json::json;

    #[test]
    fn status_names_and_terminality() {
        for (s, wire, terminal) in [
            (TaskStatus::Working, "working", false),
            (TaskStatus::InputRequired, "input_required", false),
            (TaskStatus::Completed, "completed", true),
            (TaskStatus::Failed, "failed", true),
            (TaskStatus::Cancelled, "cancelled", true),
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(wire));
            assert_eq!(
                serde_json::from_value::<TaskStatus>(json!(wire)).unwrap(),
                s
            );
            assert_eq!(s.is_terminal(), terminal, "{wire}");
        }
        for bad in ["inputRequired", "canceled", "paused", "Working"] {
            assert!(
                serde_json::from_value::<TaskStatus>(json!(bad)).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn task_new_writes_null_ttl() {
        let t = Task::new("t-1", TaskStatus::Working, "2025-11-25T10:00:00Z");
        assert_eq!(t.created_at, t.last_updated_at);
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({
                "taskId": "t-1",
                "status": "working",
                "createdAt": "2025-11-25T10:00:00Z",
                "lastUpdatedAt": "2025-11-25T10:00:00Z",
                "ttl": null
            })
        );
    }

    #[test]
    fn task_full_round_trip_and_missing_ttl() {
        let wire = json!({
            "taskId": "t-2",
            "status": "input_required",
            "statusMessage": "waiting for the user",
            "createdAt": "2025-11-25T10:00:00Z",
            "lastUpdatedAt": "2025-11-25T10:05:00Z",
            "ttl": 60000,
            "pollInterval": 500,
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-2"}}
        });
        let t: Task = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert_eq!(t.ttl, Some(60000));
        assert_eq!(t.poll_interval, Some(500));
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);

        let t: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b"
        }))
        .unwrap();
        assert_eq!(t.ttl, None);

        for bad in [
            json!({"taskId": "t", "createdAt": "a", "lastUpdatedAt": "b"}),
            json!({"taskId": "t", "status": "paused", "createdAt": "a", "lastUpdatedAt": "b"}),
            json!({"status": "working", "createdAt": "a", "lastUpdatedAt": "b"}),
            json!({"taskId": "t", "status": "working", "lastUpdatedAt": "b"}),
        ] {
            assert!(
                serde_json::from_value::<Task>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn small_param_types() {
        assert_eq!(
            serde_json::to_value(TaskMetadata::default()).unwrap(),
            json!({})
        );
        assert_eq!(
            serde_json::to_value(TaskMetadata { ttl: Some(1) }).unwrap(),
            json!({"ttl": 1})
        );
        let r = RelatedTaskMetadata {
            task_id: "abc".into(),
        };
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"taskId": "abc"}));
        assert_eq!(
            serde_json::to_value(TaskIdParams::new("abc")).unwrap(),
            json!({"taskId": "abc"})
        );
        assert!(serde_json::from_value::<TaskIdParams>(json!({"task_id": "abc"})).is_err());
    }

    #[test]
    fn create_task_and_list_results() {
        let c = CreateTaskResult {
            task: Task::new("t", TaskStatus::Working, "now"),
            meta: None,
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["task"]["taskId"], json!("t"));
        assert_eq!(serde_json::from_value::<CreateTaskResult>(v).unwrap(), c);

        let l = ListTasksResult {
            tasks: vec![Task::new("a", TaskStatus::Failed, "now")],
            next_cursor: Some("next".into()),
            meta: None,
        };
        let v = serde_json::to_value(&l).unwrap();
        assert_eq!(v["nextCursor"], json!("next"));
        assert_eq!(v["tasks"][0]["status"], json!("failed"));
        assert_eq!(serde_json::from_value::<ListTasksResult>(v).unwrap(), l);
        assert_eq!(
            serde_json::to_value(ListTasksResult::default()).unwrap(),
            json!({"tasks": []})
        );
    }

    #[test]
    fn capability_names() {
        let client = json!({
            "list": {},
            "cancel": {},
            "requests": {
                "sampling": {"createMessage": {}},
                "elicitation": {"create": {}}
            }
        });
        let c: ClientTasksCapability = serde_json::from_value(client.clone()).unwrap();
        assert!(
            c.requests
                .as_ref()
                .unwrap()
                .sampling
                .as_ref()
                .unwrap()
                .create_message
                .is_some()
        );
        assert_eq!(serde_json::to_value(&c).unwrap(), client);

        let server = json!({"list": {}, "requests": {"tools": {"call": {}}}});
        let s: ServerTasksCapability = serde_json::from_value(server.clone()).unwrap();
        assert!(s.cancel.is_none());
        assert!(
            s.requests
                .as_ref()
                .unwrap()
                .tools
                .as_ref()
                .unwrap()
                .call
                .is_some()
        );
        assert_eq!(serde_json::to_value(&s).unwrap(), server);
        assert_eq!(
            serde_json::to_value(ClientTasksCapability::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn extension_task_shapes() {
        assert_eq!(extension::EXTENSION_ID, "io.modelcontextprotocol/tasks");
        let t = extension::Task {
            result_type: Some(ResultType::Task),
            task_id: "x".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: "c".into(),
            last_updated_at: "u".into(),
            ttl_ms: None,
            poll_interval_ms: Some(250),
            input_requests: None,
            result: None,
            error: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({
                "resultType": "task",
                "taskId": "x",
                "status": "working",
                "createdAt": "c",
                "lastUpdatedAt": "u",
                "ttlMs": null,
                "pollIntervalMs": 250
            })
        );

        let wire = json!({
            "taskId": "x",
            "status": "input_required",
            "createdAt": "c",
            "lastUpdatedAt": "u",
            "ttlMs": 1000,
            "inputRequests": {
                "ask": {
                    "method": "elicitation/create",
                    "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}
                }
            }
        });
        let t: extension::Task = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(t.result_type, None);
        assert_eq!(
            t.input_requests.as_ref().unwrap()["ask"],
            InputRequest::Elicit(ElicitRequestParams::form("ok?", ElicitationSchema::new()))
        );
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);

        let done = json!({
            "resultType": "complete",
            "taskId": "x",
            "status": "completed",
            "createdAt": "c",
            "lastUpdatedAt": "u",
            "ttlMs": null,
            "result": {"content": [], "isError": false}
        });
        let t: extension::Task = serde_json::from_value(done.clone()).unwrap();
        assert_eq!(t.result_type, Some(ResultType::Complete));
        assert!(t.result.is_some());
        assert_eq!(serde_json::to_value(&t).unwrap(), done);
    }

    #[test]
    fn extension_update_params() {
        let wire = json!({"taskId": "x", "inputResponses": {"ask": {"action": "cancel"}}});
        let p: extension::UpdateTaskRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            p.input_responses["ask"],
            InputResponse::Elicit(ElicitResult::cancel())
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(
            serde_json::from_value::<extension::UpdateTaskRequestParams>(json!({"taskId": "x"}))
                .is_err()
        );
    }
}
