//! Capabilities as the method table's gates see them: which declared capability a method needs.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::method::Gate;
use crate::version::ProtocolVersion;
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CapSet {
    tools: bool,
    resources: bool,
    pub(crate) resources_subscribe: bool,
    prompts: bool,
    logging: bool,
    completions: bool,
    sampling: bool,
    roots: bool,
    elicitation: bool,
    tasks: bool,
    /// The tasks extension (`extensions["io.modelcontextprotocol/tasks"]`, 2026-07-28).
    pub(crate) tasks_extension: bool,
    /// The skills extension (`extensions["io.modelcontextprotocol/skills"]`).
    skills: bool,
    /// Its `directoryRead: true`.
    skills_directory_read: bool,
    /// `tools.listChanged`.
    pub(crate) tools_list_changed: bool,
    /// `prompts.listChanged`.
    pub(crate) prompts_list_changed: bool,
    /// `resources.listChanged`.
    pub(crate) resources_list_changed: bool,
}

impl CapSet {
    pub(crate) fn parse(raw: &RawValue) -> CapSet {
        #[derive(Deserialize)]
        struct Sub {
            subscribe: Option<bool>,
            #[serde(rename = "listChanged")]
            list_changed: Option<bool>,
        }
        #[derive(Deserialize)]
        struct Listed {
            #[serde(rename = "listChanged")]
            list_changed: Option<bool>,
        }
        #[derive(Deserialize)]
        struct Caps<'a> {
            tools: Option<Listed>,
            resources: Option<Sub>,
            prompts: Option<Listed>,
            logging: Option<serde::de::IgnoredAny>,
            completions: Option<serde::de::IgnoredAny>,
            sampling: Option<serde::de::IgnoredAny>,
            roots: Option<serde::de::IgnoredAny>,
            elicitation: Option<serde::de::IgnoredAny>,
            tasks: Option<serde::de::IgnoredAny>,
            #[serde(borrow)]
            extensions: Option<Extensions<'a>>,
        }
        #[derive(Deserialize)]
        struct Extensions<'a> {
            #[serde(rename = "io.modelcontextprotocol/tasks")]
            tasks: Option<serde::de::IgnoredAny>,
            // Raw, so that settings of an unexpected shape cost only this extension's flag.
            #[serde(rename = "io.modelcontextprotocol/skills", borrow)]
            skills: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct SkillsSettings {
            #[serde(rename = "directoryRead")]
            directory_read: Option<bool>,
        }
        match serde_json::from_str::<Caps<'_>>(raw.get()) {
            Ok(c) => CapSet {
                skills: c.extensions.as_ref().is_some_and(|e| e.skills.is_some()),
                skills_directory_read: c
                    .extensions
                    .as_ref()
                    .and_then(|e| e.skills)
                    .and_then(|s| serde_json::from_str::<SkillsSettings>(s.get()).ok())
                    .and_then(|s| s.directory_read)
                    == Some(true),
                tools: c.tools.is_some(),
                tools_list_changed: c.tools.as_ref().and_then(|t| t.list_changed) == Some(true),
                prompts_list_changed: c.prompts.as_ref().and_then(|p| p.list_changed) == Some(true),
                resources_list_changed: c.resources.as_ref().and_then(|r| r.list_changed)
                    == Some(true),
                resources_subscribe: c
                    .resources
                    .as_ref()
                    .and_then(|r| r.subscribe)
                    .unwrap_or(false),
                resources: c.resources.is_some(),
                prompts: c.prompts.is_some(),
                logging: c.logging.is_some(),
                completions: c.completions.is_some(),
                sampling: c.sampling.is_some(),
                roots: c.roots.is_some(),
                elicitation: c.elicitation.is_some(),
                tasks: c.tasks.is_some(),
                tasks_extension: c.extensions.is_some_and(|e| e.tasks.is_some()),
            },
            Err(_) => CapSet::default(),
        }
    }

    /// Whether a server with these capabilities has anything to deliver on a
    /// `subscriptions/listen` stream (a list that changes, resources to subscribe to, or the
    /// tasks extension's task statuses).
    pub(crate) fn serves_listen(&self) -> bool {
        self.tools_list_changed
            || self.prompts_list_changed
            || self.resources_list_changed
            || self.resources_subscribe
            || self.tasks_extension
    }

    pub(super) fn allows(&self, gate: Gate, version: ProtocolVersion) -> bool {
        match gate {
            Gate::None => true,
            Gate::Tools => self.tools,
            Gate::Resources => self.resources,
            Gate::ResourcesSubscribe => self.resources_subscribe,
            Gate::Prompts => self.prompts,
            Gate::Logging => self.logging,
            Gate::Completions => self.completions || !version.has_completions_capability(),
            Gate::Sampling => self.sampling,
            Gate::Roots => self.roots,
            Gate::Elicitation => self.elicitation,
            // The handshake era's `tasks` capability; the extension in the stateless era.
            Gate::Tasks if version.is_stateless() => self.tasks_extension,
            Gate::Tasks => self.tasks,
            Gate::Skills => self.skills,
            Gate::SkillsDirectoryRead => self.skills && self.skills_directory_read,
        }
    }
}

pub(super) fn gate_name(gate: Gate) -> &'static str {
    match gate {
        Gate::None => "none",
        Gate::Tools => "tools",
        Gate::Resources => "resources",
        Gate::ResourcesSubscribe => "resources.subscribe",
        Gate::Prompts => "prompts",
        Gate::Logging => "logging",
        Gate::Completions => "completions",
        Gate::Sampling => "sampling",
        Gate::Roots => "roots",
        Gate::Elicitation => "elicitation",
        Gate::Tasks => "tasks",
        Gate::Skills => "extensions.io.modelcontextprotocol/skills",
        Gate::SkillsDirectoryRead => "extensions.io.modelcontextprotocol/skills.directoryRead",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.into()).unwrap()
    }

    #[test]
    fn capability_gates() {
        let c = CapSet::parse(&raw(
            r#"{"tools":{},"resources":{"subscribe":true},"logging":{}}"#,
        ));
        assert!(c.allows(Gate::Tools, ProtocolVersion::V2025_06_18));
        assert!(c.allows(Gate::ResourcesSubscribe, ProtocolVersion::V2025_06_18));
        assert!(!c.allows(Gate::Prompts, ProtocolVersion::V2025_06_18));
        assert!(!c.allows(Gate::Completions, ProtocolVersion::V2025_06_18));
        assert!(c.allows(Gate::Completions, ProtocolVersion::V2024_11_05));
        assert!(c.serves_listen(), "resources.subscribe");
        let c = CapSet::parse(&raw(r#"{"resources":{}}"#));
        assert!(c.resources && !c.resources_subscribe);
        assert!(!c.serves_listen());
        let c = CapSet::parse(&raw("[]"));
        assert!(!c.tools);
        let c = CapSet::parse(&raw(r#"{"tools":{},"prompts":{"listChanged":false}}"#));
        assert!(c.tools && !c.serves_listen());
        let c = CapSet::parse(&raw(r#"{"prompts":{"listChanged":true}}"#));
        assert!(c.prompts_list_changed && !c.tools_list_changed && c.serves_listen());
    }

    #[test]
    fn skills_extension_gates() {
        let v = ProtocolVersion::V2025_11_25;
        let c = CapSet::parse(&raw(
            r#"{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{}}}"#,
        ));
        assert!(c.allows(Gate::Skills, v) && c.allows(Gate::Skills, ProtocolVersion::V2026_07_28));
        assert!(!c.allows(Gate::SkillsDirectoryRead, v));
        let c = CapSet::parse(&raw(
            r#"{"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}}}"#,
        ));
        assert!(c.allows(Gate::Skills, v) && c.allows(Gate::SkillsDirectoryRead, v));
        let c = CapSet::parse(&raw(
            r#"{"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":false}}}"#,
        ));
        assert!(c.allows(Gate::Skills, v) && !c.allows(Gate::SkillsDirectoryRead, v));
        // Settings of another shape: declared, without optional features; the rest stands.
        let c = CapSet::parse(&raw(
            r#"{"tools":{},"extensions":{"io.modelcontextprotocol/skills":true}}"#,
        ));
        assert!(c.tools && c.allows(Gate::Skills, v) && !c.allows(Gate::SkillsDirectoryRead, v));
        let c = CapSet::parse(&raw(
            r#"{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}"#,
        ));
        assert!(!c.allows(Gate::Skills, v) && !c.allows(Gate::SkillsDirectoryRead, v));
        assert!(gate_name(Gate::SkillsDirectoryRead).ends_with("directoryRead"));
    }
}
