//! Elicitation: `elicitation/create` (server to client, 2025-06-18+; an input request in
//! 2026-07-28) in form mode and (2025-11-25+) URL mode, the restricted primitive schemas a
//! form may use, the client's [`ElicitResult`], `notifications/elicitation/complete`
//! (2025-11-25) and the `data` of error `-32042` (2025-11-25).
//!
//! The form's `properties` keep their order ([`PropertyMap`]), since clients render fields in
//! that order.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{self, DeserializeOwned, Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::Meta;
use super::tasks::TaskMetadata;

macro_rules! const_tag {
    ($(#[$doc:meta])* $name:ident = $lit:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The wire string.
            pub const VALUE: &'static str = $lit;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <alloc::borrow::Cow<'de, str>>::deserialize(d)?;
                if s == $lit {
                    Ok($name)
                } else {
                    Err(D::Error::invalid_value(de::Unexpected::Str(&s), &$lit))
                }
            }
        }
    };
}

const_tag!(
    /// The constant `"object"` (`type` of a requested schema).
    ObjectType = "object"
);
const_tag!(
    /// The constant `"string"` (`type` of string and single-select schemas).
    StringType = "string"
);
const_tag!(
    /// The constant `"boolean"` (`type` of [`BooleanSchema`]).
    BooleanType = "boolean"
);
const_tag!(
    /// The constant `"array"` (`type` of multi-select schemas).
    ArrayType = "array"
);
const_tag!(
    /// The constant `"form"` (`mode` of a form elicitation).
    FormMode = "form"
);
const_tag!(
    /// The constant `"url"` (`mode` of a URL elicitation).
    UrlMode = "url"
);

/// Format of a [`StringSchema`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum StringFormat {
    /// `email`.
    Email,
    /// `uri`.
    Uri,
    /// `date`.
    Date,
    /// `date-time`.
    DateTime,
}

/// A string field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// `"string"`.
    pub r#type: StringType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `type` of a [`NumberSchema`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// A number field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    pub r#type: NumberType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<serde_json::Number>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<serde_json::Number>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Number>,
}

/// A boolean field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// `"boolean"`.
    pub r#type: BooleanType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// One option of a titled enum: a value and its label.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
}

impl EnumOption {
    /// Option `value` labelled `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
        }
    }
}

/// Single choice among plain values (2025-11-25+; the 2025-06-18 `EnumSchema` without
/// `enumNames` has the same shape).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// `"string"`.
    pub r#type: StringType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Single choice among labelled values (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// `"string"`.
    pub r#type: StringType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<EnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntitledEnumItems {
    /// `"string"`.
    pub r#type: StringType,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<EnumOption>,
}

/// Multiple choice among plain values (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// `"array"`.
    pub r#type: ArrayType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values.
    pub items: UntitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Multiple choice among labelled values (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// `"array"`.
    pub r#type: ArrayType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The options.
    pub items: TitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Single choice with labels in `enumNames` (the 2025-06-18 `EnumSchema`; legacy since
/// 2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// `"string"`.
    pub r#type: StringType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels of the values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// One field of a form: a restricted, flat JSON Schema (`PrimitiveSchemaDefinition`).
/// Told apart by `type` and by `enum` / `oneOf` / `enumNames` / `items.anyOf`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// `type: "string"`.
    String(StringSchema),
    /// `type: "number"` / `"integer"`.
    Number(NumberSchema),
    /// `type: "boolean"`.
    Boolean(BooleanSchema),
    /// `type: "string"` with `enum`.
    SingleSelect(UntitledSingleSelectEnumSchema),
    /// `type: "string"` with `oneOf`.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// `type: "array"` with `items.enum`.
    MultiSelect(UntitledMultiSelectEnumSchema),
    /// `type: "array"` with `items.anyOf`.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `type: "string"` with `enum` and `enumNames`.
    LegacyEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fn parse<T: DeserializeOwned, E: de::Error>(v: Value) -> Result<T, E> {
            serde_json::from_value(v).map_err(E::custom)
        }
        let v = Value::deserialize(d)?;
        let has = |k: &str| v.get(k).is_some();
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "string" if has("oneOf") => parse(v).map(Self::TitledSingleSelect),
            "string" if has("enum") && has("enumNames") => parse(v).map(Self::LegacyEnum),
            "string" if has("enum") => parse(v).map(Self::SingleSelect),
            "string" => parse(v).map(Self::String),
            "number" | "integer" => parse(v).map(Self::Number),
            "boolean" => parse(v).map(Self::Boolean),
            "array" if v.get("items").and_then(|i| i.get("anyOf")).is_some() => {
                parse(v).map(Self::TitledMultiSelect)
            }
            "array" => parse(v).map(Self::MultiSelect),
            other => Err(D::Error::custom(format_args!(
                "unsupported elicitation field type {other:?}"
            ))),
        }
    }
}

impl From<StringSchema> for PrimitiveSchemaDefinition {
    fn from(s: StringSchema) -> Self {
        PrimitiveSchemaDefinition::String(s)
    }
}

impl From<NumberSchema> for PrimitiveSchemaDefinition {
    fn from(s: NumberSchema) -> Self {
        PrimitiveSchemaDefinition::Number(s)
    }
}

impl From<BooleanSchema> for PrimitiveSchemaDefinition {
    fn from(s: BooleanSchema) -> Self {
        PrimitiveSchemaDefinition::Boolean(s)
    }
}

impl From<UntitledSingleSelectEnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: UntitledSingleSelectEnumSchema) -> Self {
        PrimitiveSchemaDefinition::SingleSelect(s)
    }
}

impl From<TitledSingleSelectEnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: TitledSingleSelectEnumSchema) -> Self {
        PrimitiveSchemaDefinition::TitledSingleSelect(s)
    }
}

impl From<UntitledMultiSelectEnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: UntitledMultiSelectEnumSchema) -> Self {
        PrimitiveSchemaDefinition::MultiSelect(s)
    }
}

impl From<TitledMultiSelectEnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: TitledMultiSelectEnumSchema) -> Self {
        PrimitiveSchemaDefinition::TitledMultiSelect(s)
    }
}

impl From<LegacyTitledEnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: LegacyTitledEnumSchema) -> Self {
        PrimitiveSchemaDefinition::LegacyEnum(s)
    }
}

/// The fields of a form, in order (a JSON object on the wire).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropertyMap(pub Vec<(String, PrimitiveSchemaDefinition)>);

impl PropertyMap {
    /// No fields.
    pub fn new() -> Self {
        PropertyMap(Vec::new())
    }

    /// Appends (or replaces) the field `name`.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) {
        let name = name.into();
        let schema = schema.into();
        if let Some(slot) = self.0.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = schema;
        } else {
            self.0.push((name, schema));
        }
    }

    /// The field `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// The fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PrimitiveSchemaDefinition)> {
        self.0.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for PropertyMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for PropertyMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PropertyMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of field schemas")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<PropertyMap, A::Error> {
                let mut out = PropertyMap::new();
                while let Some((k, v)) = a.next_entry::<String, PrimitiveSchemaDefinition>()? {
                    out.insert(k, v);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// The requested schema of a form: a flat object of primitive fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSchema {
    /// `$schema` (2025-11-25+).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// `"object"`.
    pub r#type: ObjectType,
    /// The fields, in order.
    pub properties: PropertyMap,
    /// Names of the required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitationSchema {
    /// An empty form.
    pub fn new() -> Self {
        ElicitationSchema::default()
    }

    /// Adds an optional field.
    pub fn field(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        self.properties.insert(name, schema);
        self
    }

    /// Adds a required field.
    pub fn required_field(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        let name = name.into();
        self.required
            .get_or_insert_with(Vec::new)
            .push(name.clone());
        self.properties.insert(name, schema);
        self
    }
}

/// Params of a form-mode `elicitation/create`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"` if written out (2025-11-25+; absent means form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is asked and why.
    pub message: String,
    /// The form.
    pub requested_schema: ElicitationSchema,
    /// Asks for task-augmented execution (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (not in 2026-07-28 input requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of a URL-mode `elicitation/create` (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// `"url"`.
    pub mode: UrlMode,
    /// Why the user should go there.
    pub message: String,
    /// Id of the elicitation (required in 2025-11-25; gone in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Where the user should go.
    pub url: String,
    /// Asks for task-augmented execution (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (not in 2026-07-28 input requests).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `elicitation/create`: a form, or (2025-11-25+) a URL to visit. Told apart by
/// `mode` (absent means form).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestUrlParams),
}

impl ElicitRequestParams {
    /// A form asking `message` with `schema` (no `mode` written: valid in every version).
    pub fn form(message: impl Into<String>, schema: ElicitationSchema) -> Self {
        ElicitRequestParams::Form(ElicitRequestFormParams {
            message: message.into(),
            requested_schema: schema,
            ..ElicitRequestFormParams::default()
        })
    }

    /// A URL elicitation (give `elicitation_id` for 2025-11-25, none for 2026-07-28).
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: Option<String>,
    ) -> Self {
        ElicitRequestParams::Url(ElicitRequestUrlParams {
            message: message.into(),
            url: url.into(),
            elicitation_id,
            ..ElicitRequestUrlParams::default()
        })
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(p) => &p.message,
            ElicitRequestParams::Url(p) => &p.message,
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // One flat pass (no buffering, so the form's field order survives).
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            #[serde(default)]
            mode: Option<String>,
            message: String,
            #[serde(default)]
            requested_schema: Option<ElicitationSchema>,
            #[serde(default)]
            elicitation_id: Option<String>,
            #[serde(default)]
            url: Option<String>,
            #[serde(default)]
            task: Option<TaskMetadata>,
            #[serde(rename = "_meta", default)]
            meta: Option<Meta>,
        }
        let raw = Raw::deserialize(d)?;
        match raw.mode.as_deref() {
            None | Some("form") => Ok(ElicitRequestParams::Form(ElicitRequestFormParams {
                mode: raw.mode.map(|_| FormMode),
                message: raw.message,
                requested_schema: raw
                    .requested_schema
                    .ok_or_else(|| D::Error::missing_field("requestedSchema"))?,
                task: raw.task,
                meta: raw.meta,
            })),
            Some("url") => Ok(ElicitRequestParams::Url(ElicitRequestUrlParams {
                mode: UrlMode,
                message: raw.message,
                elicitation_id: raw.elicitation_id,
                url: raw.url.ok_or_else(|| D::Error::missing_field("url"))?,
                task: raw.task,
                meta: raw.meta,
            })),
            Some(other) => Err(D::Error::unknown_variant(other, &["form", "url"])),
        }
    }
}

/// What the user did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted / confirmed.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One submitted form value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// A number (the 2025-11-25 and 2026-07-28 `schema.json` only admit integers here).
    Number(serde_json::Number),
    /// A boolean.
    Boolean(bool),
    /// Choices of a multi-select (2025-11-25+).
    StringArray(Vec<String>),
}

impl From<&str> for ElicitValue {
    fn from(s: &str) -> Self {
        ElicitValue::String(s.into())
    }
}

impl From<String> for ElicitValue {
    fn from(s: String) -> Self {
        ElicitValue::String(s)
    }
}

impl From<bool> for ElicitValue {
    fn from(b: bool) -> Self {
        ElicitValue::Boolean(b)
    }
}

impl From<i64> for ElicitValue {
    fn from(n: i64) -> Self {
        ElicitValue::Number(n.into())
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

/// Result of `elicitation/create`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
    /// Result metadata (legacy versions).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitResult {
    /// The user accepted and submitted `content`.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }

    /// The user declined.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25): a URL elicitation finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The elicitation that finished.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `error.data` of `-32042` URL elicitation required (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations to complete first.
    pub elicitations: Vec<ElicitRequestUrlParams>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use serde_json::json;

    fn field(v: Value) -> PrimitiveSchemaDefinition {
        serde_json::from_value(v).unwrap()
    }

    fn names(p: &PropertyMap) -> Vec<&str> {
        p.iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn const_tags_accept_only_their_literal() {
        assert_eq!(serde_json::to_value(ObjectType).unwrap(), json!("object"));
        assert_eq!(serde_json::to_value(UrlMode).unwrap(), json!("url"));
        assert_eq!(FormMode::VALUE, "form");
        assert_eq!(ArrayType::VALUE, "array");
        assert_eq!(
            serde_json::from_value::<StringType>(json!("string")).unwrap(),
            StringType
        );
        assert_eq!(
            serde_json::from_value::<BooleanType>(json!("boolean")).unwrap(),
            BooleanType
        );
        // Escaped (owned) strings work too.
        assert_eq!(
            serde_json::from_str::<FormMode>(r#""f\u006frm""#).unwrap(),
            FormMode
        );
        assert!(serde_json::from_value::<ObjectType>(json!("Object")).is_err());
        assert!(serde_json::from_value::<UrlMode>(json!("form")).is_err());
        assert!(serde_json::from_value::<ArrayType>(json!(["array"])).is_err());
    }

    #[test]
    fn string_format_is_kebab_case() {
        for (f, s) in [
            (StringFormat::Email, "email"),
            (StringFormat::Uri, "uri"),
            (StringFormat::Date, "date"),
            (StringFormat::DateTime, "date-time"),
        ] {
            assert_eq!(serde_json::to_value(f).unwrap(), json!(s));
            assert_eq!(serde_json::from_value::<StringFormat>(json!(s)).unwrap(), f);
        }
        assert!(serde_json::from_value::<StringFormat>(json!("dateTime")).is_err());
    }

    #[test]
    fn primitive_schema_variants_are_told_apart() {
        let cases = [
            (
                json!({"type": "string", "title": "Email", "minLength": 3, "maxLength": 64, "format": "email", "default": "a@b.c"}),
                "String",
            ),
            (
                json!({"type": "number", "minimum": 0.5, "maximum": 9.5}),
                "Number",
            ),
            (json!({"type": "integer", "default": 3.0}), "Number"),
            (json!({"type": "boolean", "default": true}), "Boolean"),
            (
                json!({"type": "string", "enum": ["a", "b"], "default": "a"}),
                "SingleSelect",
            ),
            (
                json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}),
                "LegacyEnum",
            ),
            (
                json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
                "TitledSingleSelect",
            ),
            (
                json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["x", "y"]}, "default": ["x"]}),
                "MultiSelect",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}}),
                "TitledMultiSelect",
            ),
        ];
        for (wire, want) in cases {
            let f = field(wire.clone());
            let got = match &f {
                PrimitiveSchemaDefinition::String(_) => "String",
                PrimitiveSchemaDefinition::Number(_) => "Number",
                PrimitiveSchemaDefinition::Boolean(_) => "Boolean",
                PrimitiveSchemaDefinition::SingleSelect(_) => "SingleSelect",
                PrimitiveSchemaDefinition::TitledSingleSelect(_) => "TitledSingleSelect",
                PrimitiveSchemaDefinition::MultiSelect(_) => "MultiSelect",
                PrimitiveSchemaDefinition::TitledMultiSelect(_) => "TitledMultiSelect",
                PrimitiveSchemaDefinition::LegacyEnum(_) => "LegacyEnum",
            };
            assert_eq!(got, want, "{wire}");
            assert_eq!(serde_json::to_value(&f).unwrap(), wire);
        }
    }

    #[test]
    fn primitive_schema_details() {
        let PrimitiveSchemaDefinition::Number(n) = field(json!({"type": "integer"})) else {
            panic!("not a number");
        };
        assert_eq!(n.r#type, NumberType::Integer);
        assert_eq!(NumberType::default(), NumberType::Number);

        let PrimitiveSchemaDefinition::String(s) =
            field(json!({"type": "string", "format": "date-time"}))
        else {
            panic!("not a string");
        };
        assert_eq!(s.format, Some(StringFormat::DateTime));

        let PrimitiveSchemaDefinition::TitledSingleSelect(t) = field(
            json!({"type": "string", "enum": ["ignored"], "oneOf": [{"const": "v", "title": "V"}]}),
        ) else {
            panic!("not titled");
        };
        assert_eq!(t.one_of, vec![EnumOption::new("v", "V")]);
        assert_eq!(
            serde_json::to_value(EnumOption::new("v", "V")).unwrap(),
            json!({"const": "v", "title": "V"})
        );
    }

    #[test]
    fn malformed_primitive_schemas_are_rejected() {
        for bad in [
            json!({"type": "object", "properties": {}}),
            json!({"title": "no type"}),
            json!({"type": 1}),
            json!({"type": "null"}),
            json!({"type": "array"}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "string", "minLength": "3"}),
            json!({"type": "string", "format": "phone"}),
            json!({"type": "number", "minimum": "0"}),
            json!({"type": "boolean", "default": "yes"}),
            json!({"type": "string", "oneOf": [{"const": "a"}]}),
            json!("string"),
        ] {
            assert!(
                serde_json::from_value::<PrimitiveSchemaDefinition>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn property_map_keeps_insertion_order() {
        let mut m = PropertyMap::new();
        assert!(m.is_empty());
        m.insert("zeta", StringSchema::default());
        m.insert("alpha", BooleanSchema::default());
        m.insert("mid", NumberSchema::default());
        assert_eq!(m.len(), 3);
        assert_eq!(names(&m), ["zeta", "alpha", "mid"]);

        // Replacing keeps the original position.
        m.insert("zeta", NumberSchema::default());
        assert_eq!(m.len(), 3);
        assert_eq!(names(&m), ["zeta", "alpha", "mid"]);
        assert!(matches!(
            m.get("zeta"),
            Some(PrimitiveSchemaDefinition::Number(_))
        ));
        assert_eq!(m.get("missing"), None);

        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"zeta":{"type":"number"},"alpha":{"type":"boolean"},"mid":{"type":"number"}}"#
        );
    }

    #[test]
    fn property_map_deserialises_in_wire_order() {
        let m: PropertyMap = serde_json::from_str(
            r#"{"z":{"type":"string"},"a":{"type":"boolean"},"m":{"type":"integer"},"z":{"type":"number"}}"#,
        )
        .unwrap();
        assert_eq!(names(&m), ["z", "a", "m"]);
        assert!(matches!(
            m.get("z"),
            Some(PrimitiveSchemaDefinition::Number(_))
        ));
        assert!(serde_json::from_str::<PropertyMap>(r#"[]"#).is_err());
        assert!(serde_json::from_str::<PropertyMap>(r#"{"a":{"type":"date"}}"#).is_err());
    }

    #[test]
    fn elicitation_schema_builders() {
        let s = ElicitationSchema::new()
            .required_field("name", StringSchema::default())
            .field(
                "age",
                NumberSchema {
                    r#type: NumberType::Integer,
                    minimum: Some(0.into()),
                    ..NumberSchema::default()
                },
            )
            .required_field("agree", BooleanSchema::default());
        assert_eq!(s.required, Some(vec!["name".into(), "agree".into()]));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"agree":{"type":"boolean"}},"required":["name","agree"]}"#
        );
        assert_eq!(
            serde_json::to_value(ElicitationSchema::new()).unwrap(),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn elicitation_schema_round_trip_and_rejection() {
        let wire = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "boolean"}},
            "required": ["b"]
        });
        let s: ElicitationSchema = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            s.schema.as_deref(),
            Some("https://json-schema.org/draft/2020-12/schema")
        );
        assert_eq!(serde_json::to_value(&s).unwrap(), wire);
        for bad in [
            json!({"properties": {}}),
            json!({"type": "array", "properties": {}}),
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"x": {"type": "object"}}}),
        ] {
            assert!(
                serde_json::from_value::<ElicitationSchema>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn request_params_constructors() {
        let f = ElicitRequestParams::form(
            "Your name?",
            ElicitationSchema::new().required_field("name", StringSchema::default()),
        );
        assert_eq!(f.message(), "Your name?");
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({
                "message": "Your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }
            })
        );

        let u = ElicitRequestParams::url("Sign in", "https://x/auth", Some("e-1".into()));
        assert_eq!(u.message(), "Sign in");
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"mode": "url", "message": "Sign in", "elicitationId": "e-1", "url": "https://x/auth"})
        );
        let u = ElicitRequestParams::url("Sign in", "https://x/auth", None);
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"mode": "url", "message": "Sign in", "url": "https://x/auth"})
        );
    }

    #[test]
    fn request_params_dispatch_on_mode() {
        let schema = json!({"type": "object", "properties": {}});
        let p: ElicitRequestParams =
            serde_json::from_value(json!({"message": "m", "requestedSchema": schema})).unwrap();
        assert!(matches!(&p, ElicitRequestParams::Form(f) if f.mode.is_none()));

        let wire = json!({
            "mode": "form",
            "message": "m",
            "requestedSchema": schema,
            "task": {"ttl": 5},
            "_meta": {"k": 1}
        });
        let p: ElicitRequestParams = serde_json::from_value(wire.clone()).unwrap();
        let ElicitRequestParams::Form(f) = &p else {
            panic!("not a form");
        };
        assert_eq!(f.mode, Some(FormMode));
        assert_eq!(f.task, Some(TaskMetadata { ttl: Some(5) }));
        assert!(f.meta.is_some());
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);

        let wire = json!({
            "mode": "url",
            "message": "go",
            "elicitationId": "e",
            "url": "https://x",
            "_meta": {"k": 2}
        });
        let p: ElicitRequestParams = serde_json::from_value(wire.clone()).unwrap();
        let ElicitRequestParams::Url(u) = &p else {
            panic!("not a url");
        };
        assert_eq!(u.elicitation_id.as_deref(), Some("e"));
        assert_eq!(u.url, "https://x");
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn malformed_request_params_are_rejected() {
        let schema = json!({"type": "object", "properties": {}});
        for bad in [
            json!({"mode": "sms", "message": "m", "requestedSchema": schema}),
            json!({"message": "m"}),
            json!({"mode": "form", "message": "m"}),
            json!({"mode": "url", "message": "m"}),
            json!({"mode": "url", "url": "https://x"}),
            json!({"requestedSchema": schema}),
            json!({"message": 1, "requestedSchema": schema}),
            json!({"mode": 1, "message": "m", "requestedSchema": schema}),
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"x": {"type": "object"}}}}),
        ] {
            assert!(
                serde_json::from_value::<ElicitRequestParams>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn request_params_keep_field_order() {
        let p: ElicitRequestParams = serde_json::from_str(
            r#"{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"boolean"},"k":{"type":"number"}}}}"#,
        )
        .unwrap();
        let ElicitRequestParams::Form(f) = &p else {
            panic!("not a form");
        };
        assert_eq!(names(&f.requested_schema.properties), ["z", "a", "k"]);
        let out = serde_json::to_string(&p).unwrap();
        assert!(out.contains(r#""properties":{"z":{"type":"string"},"a":{"type":"boolean"},"k":{"type":"number"}}"#), "{out}");
    }

    #[test]
    fn elicit_result_constructors() {
        assert_eq!(
            serde_json::to_value(ElicitResult::decline()).unwrap(),
            json!({"action": "decline"})
        );
        assert_eq!(
            serde_json::to_value(ElicitResult::cancel()).unwrap(),
            json!({"action": "cancel"})
        );
        let mut content = BTreeMap::new();
        content.insert("name".into(), ElicitValue::from("Ada"));
        content.insert("age".into(), ElicitValue::from(36));
        content.insert("ok".into(), ElicitValue::from(true));
        content.insert(
            "tags".into(),
            ElicitValue::from(vec![String::from("a"), String::from("b")]),
        );
        let r = ElicitResult::accept(content);
        let wire = json!({
            "action": "accept",
            "content": {"name": "Ada", "age": 36, "ok": true, "tags": ["a", "b"]}
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(serde_json::from_value::<ElicitResult>(wire).unwrap(), r);
    }

    #[test]
    fn elicit_values_and_actions_parse() {
        assert_eq!(
            serde_json::from_value::<ElicitValue>(json!("s")).unwrap(),
            ElicitValue::String("s".into())
        );
        assert_eq!(
            serde_json::from_value::<ElicitValue>(json!(-7)).unwrap(),
            ElicitValue::from(-7)
        );
        assert!(matches!(
            serde_json::from_value::<ElicitValue>(json!(2.5)).unwrap(),
            ElicitValue::Number(n) if n.as_f64() == Some(2.5)
        ));
        assert_eq!(
            serde_json::from_value::<ElicitValue>(json!(false)).unwrap(),
            ElicitValue::Boolean(false)
        );
        assert_eq!(
            serde_json::from_value::<ElicitValue>(json!([])).unwrap(),
            ElicitValue::StringArray(Vec::new())
        );
        for bad in [json!(null), json!({"a": 1}), json!([1, 2])] {
            assert!(
                serde_json::from_value::<ElicitValue>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        for bad in [
            json!({"action": "submit"}),
            json!({"action": "Accept"}),
            json!({}),
            json!({"action": "accept", "content": {"x": null}}),
        ] {
            assert!(
                serde_json::from_value::<ElicitResult>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn completion_notification_and_url_required_data() {
        let n = ElicitationCompleteNotificationParams {
            elicitation_id: "e-9".into(),
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"elicitationId": "e-9"})
        );
        assert!(
            serde_json::from_value::<ElicitationCompleteNotificationParams>(json!({})).is_err()
        );

        let wire = json!({
            "elicitations": [
                {"mode": "url", "message": "auth", "elicitationId": "e", "url": "https://x"}
            ]
        });
        let d: UrlElicitationRequiredData = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(d.elicitations[0].url, "https://x");
        assert_eq!(serde_json::to_value(&d).unwrap(), wire);
        assert!(
            serde_json::from_value::<UrlElicitationRequiredData>(json!({
                "elicitations": [{"message": "auth", "url": "https://x"}]
            }))
            .is_err()
        );
    }
}
