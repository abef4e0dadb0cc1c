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
    pub minimum: Option<f64>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Default value (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
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
