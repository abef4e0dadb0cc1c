//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent Skills served as
//! resources.
//!
//! A skill is a directory of files, at least a `SKILL.md` that begins with YAML frontmatter
//! (`name`, `description`, …). Each file is a resource, conventionally
//! `skill://<skill-path>/<file-path>`, read with `resources/read`; the last segment of
//! `<skill-path>` is the skill's name. Three methods ride on top, available once the server
//! declares the extension in `capabilities.extensions` (whatever the protocol version):
//!
//! - `skills/list` ([`ListSkillsResult`]): the skills a server serves, paginated, each a
//!   [`SkillEntry`] — its `SKILL.md` URI, its frontmatter as JSON, and every file with its
//!   SHA-256 digest and size (or `"dynamic"`);
//! - `skills/get` ([`GetSkillRequestParams`], [`GetSkillResult`]): one entry by URI, `-32602`
//!   for a URI that is not a skill the server serves;
//! - `resources/directory/read` ([`ReadDirectoryRequestParams`], [`ReadDirectoryResult`]): the
//!   direct children of a directory resource (`mimeType` [`DIRECTORY_MIME_TYPE`]), only when
//!   the server declared [`SkillsCapability::directory_read`].
//!
//! Also here, as pure functions of strings and bytes: the URI rules
//! ([`skill_name_of_uri`], [`skill_root_of_uri`], [`is_valid_skill_name`]), the frontmatter
//! block of a `SKILL.md` ([`split_frontmatter`]; parsing the YAML is the caller's), and the
//! digest format ([`format_sha256_digest`], [`parse_sha256_digest`]; hashing is the caller's).
//! Nothing here reads files or computes hashes.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::meta::{CacheScope, Cursor, JsonObject, Meta, ResultType};
use super::resources::Resource;

/// The extension identifier (key in `capabilities.extensions`).
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";
/// Method: enumerate the skills a server serves.
pub const SKILLS_LIST: &str = "skills/list";
/// Method: one skill's entry by URI.
pub const SKILLS_GET: &str = "skills/get";
/// Method: the direct children of a directory resource (behind `directoryRead`).
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";
/// The conventional URI scheme of skill resources.
pub const SKILL_SCHEME: &str = "skill";
/// The `mimeType` of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The `mimeType` a `SKILL.md` resource should have.
pub const SKILL_MD_MIME_TYPE: &str = "text/markdown";
/// The prefix of `_meta` keys of skill resources.
pub const META_PREFIX: &str = "io.modelcontextprotocol.skills/";
/// The string form of [`SkillResources::Dynamic`].
pub const DYNAMIC: &str = "dynamic";
/// Servers should not serve a skill with more resource entries than this (`SKILL.md`
/// included).
pub const MAX_RESOURCES_PER_SKILL: usize = 512;
/// Servers should not serve a skill whose files add up to more bytes than this (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The longest skill name (Agent Skills naming rules).
pub const MAX_SKILL_NAME_LEN: usize = 64;

/// The extension's settings (`capabilities.extensions["io.modelcontextprotocol/skills"]`);
/// `{}` declares the extension with no optional feature.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsCapability {
    /// Whether the server implements `resources/directory/read` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_read: Option<bool>,
}

/// One file of a skill as its entry lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillResource {
    /// The file's resource URI (the `SKILL.md` itself, or a file within the skill's directory).
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits: the SHA-256 of the file's raw bytes.
    pub digest: String,
    /// The length of the file's raw bytes (the bytes the digest covers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// The files of a skill: every one with its digest, or `"dynamic"` for a skill generated on
/// demand, whose content cannot be digested in advance (and so cannot be verified).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum SkillResources {
    /// The complete list of the skill's files, each once, its `SKILL.md` included.
    Listed(Vec<SkillResource>),
    /// `"dynamic"` (also what an entry without `resources` is read as).
    #[default]
    Dynamic,
}

impl SkillResources {
    /// The listed files (none for a dynamic skill).
    pub fn listed(&self) -> &[SkillResource] {
        match self {
            SkillResources::Listed(l) => l,
            SkillResources::Dynamic => &[],
        }
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Listed(l) => l.serialize(s),
            SkillResources::Dynamic => s.serialize_str(DYNAMIC),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SkillResources;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of {uri, digest, size} or \"dynamic\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SkillResources, E> {
                if v == DYNAMIC {
                    Ok(SkillResources::Dynamic)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SkillResources, A::Error> {
                // Bounded by the message that carries it; no size hint is trusted.
                let mut out = Vec::new();
                while let Some(r) = seq.next_element()? {
                    out.push(r);
                }
                Ok(SkillResources::Listed(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A skill entry: an element of `skills/list`, and the `skill` of `skills/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillEntry {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter, verbatim, as a JSON object (`name` and `description`
    /// at least).
    pub frontmatter: JsonObject,
    /// The skill's files with their digests, or `"dynamic"`.
    #[serde(default)]
    pub resources: SkillResources,
}

impl SkillEntry {
    /// `frontmatter.name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// `frontmatter.description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The skill's root directory URI (`uri` without `/SKILL.md`), if `uri` ends so.
    pub fn root(&self) -> Option<&str> {
        skill_root_of_uri(&self.uri)
    }

    /// The listed file with this URI.
    pub fn resource(&self, uri: &str) -> Option<&SkillResource> {
        self.resources.listed().iter().find(|r| r.uri == uri)
    }

    /// The URI a reference inside the skill names: a URI within the skill's directory as it
    /// is, or a path relative to the skill's root (`references/GUIDE.md`, `./a/../b.md`).
    /// `None` for anything that leaves the skill's directory.
    pub fn resolve(&self, reference: &str) -> Option<String> {
        let root = self.root()?;
        if reference == self.uri {
            return Some(reference.into());
        }
        let relative = match reference.strip_prefix(root) {
            Some(rest) => rest.strip_prefix('/')?,
            None if reference.contains("://") => return None,
            None => reference,
        };
        let mut segments: Vec<&str> = Vec::new();
        for seg in relative.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    segments.pop()?;
                }
                s => segments.push(s),
            }
        }
        if segments.is_empty() {
            return None;
        }
        let mut out = String::from(root);
        for s in segments {
            out.push('/');
            out.push_str(s);
        }
        Some(out)
    }
}

/// Params of `skills/list`: an optional cursor.
pub type ListSkillsRequestParams = super::meta::PaginatedRequestParams;

/// Result of `skills/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// This page of entries (an entry is never split across pages).
    pub skills: Vec<SkillEntry>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `skills/get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl GetSkillRequestParams {
    /// Asks for the skill at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillRequestParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

/// Result of `skills/get` (no cursor: a single entry is not a list).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The entry, shaped as in `skills/list`.
    pub skill: SkillEntry,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `resources/directory/read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryRequestParams {
    /// The directory's URI (no trailing slash).
    pub uri: String,
    /// Where to continue from (the `nextCursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ReadDirectoryRequestParams {
    /// Reads the directory at `uri`, from its first page.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadDirectoryRequestParams {
            uri: uri.into(),
            ..ReadDirectoryRequestParams::default()
        }
    }
}

/// Result of `resources/directory/read`: the directory's direct children, files with their
/// resource metadata and subdirectories as directory resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryResult {
    /// This page of children.
    pub resources: Vec<Resource>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Whether `name` satisfies the Agent Skills naming rules: 1–64 characters, lowercase ASCII
/// letters, digits and hyphens, no leading, trailing or consecutive hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_SKILL_NAME_LEN
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b.first() != Some(&b'-')
        && b.last() != Some(&b'-')
        && !name.contains("--")
}

/// The skill name a `SKILL.md` URI carries: the segment before `/SKILL.md`
/// (`skill://acme/billing/refunds/SKILL.md` → `refunds`). `None` if the URI has no scheme,
/// does not end in `/SKILL.md`, or has no skill path.
pub fn skill_name_of_uri(uri: &str) -> Option<&str> {
    let root = skill_root_of_uri(uri)?;
    let (_, path) = root.split_once("://")?;
    path.rsplit('/').next().filter(|s| !s.is_empty())
}

/// The root directory of the skill whose `SKILL.md` is at `uri` (`uri` without `/SKILL.md`),
/// if `uri` is `<scheme>://<skill-path>/SKILL.md` with a non-empty skill path.
pub fn skill_root_of_uri(uri: &str) -> Option<&str> {
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let (scheme, path) = root.split_once("://")?;
    (!scheme.is_empty() && !path.is_empty() && !path.split('/').any(str::is_empty)).then_some(root)
}

/// The YAML frontmatter of a `SKILL.md` and the body after it: the text must begin (after an
/// optional byte order mark) with a `---` line, and the block ends at the next line that is
/// `---` (trailing spaces or tabs allowed). `None` when there is no such block.
pub fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut from = 0;
    loop {
        let at = from + rest.get(from..)?.find("\n---")?;
        let after = rest.get(at + 4..)?;
        let trimmed = after.trim_start_matches([' ', '\t']);
        let body = if trimmed.is_empty() {
            Some("")
        } else {
            trimmed
                .strip_prefix('\n')
                .or_else(|| trimmed.strip_prefix("\r\n"))
        };
        if let Some(body) = body {
            let yaml = rest.get(..at)?;
            return Some((yaml.strip_suffix('\r').unwrap_or(yaml), body));
        }
        from = at + 1;
    }
}

/// `sha256:` followed by the 64 lowercase hex digits of `hash`.
pub fn format_sha256_digest(hash: &[u8; 32]) -> String {
    let hex = |n: u8| char::from(if n < 10 { b'0' + n } else { b'a' + n - 10 });
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in hash {
        s.push(hex(b >> 4));
        s.push(hex(b & 0xf));
    }
    s
}

/// The hash a `sha256:{64 lowercase hex}` digest names; `None` for anything else.
pub fn parse_sha256_digest(digest: &str) -> Option<[u8; 32]> {
    let hex = digest.strip_prefix("sha256:")?.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let (hi, lo) = match pair {
            [hi, lo] => (nibble(*hi)?, nibble(*lo)?),
            _ => return None,
        };
        *o = (hi << 4) | lo;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_round_trip_with_listed_or_dynamic_resources() {
        let wire = json!({
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "PDFs", "metadata": {"v": "2"}},
            "resources": [
                {"uri": "skill://pdf-processing/SKILL.md", "digest": format!("sha256:{}", "a".repeat(64)), "size": 10},
                {"uri": "skill://pdf-processing/references/FORMS.md", "digest": format!("sha256:{}", "b".repeat(64)), "size": 3}
            ]
        });
        let e: SkillEntry = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(e.name(), Some("pdf-processing"));
        assert_eq!(e.description(), Some("PDFs"));
        assert_eq!(e.root(), Some("skill://pdf-processing"));
        assert_eq!(e.resources.listed().len(), 2);
        assert_eq!(
            e.resource("skill://pdf-processing/references/FORMS.md")
                .unwrap()
                .size,
            Some(3)
        );
        assert_eq!(serde_json::to_value(&e).unwrap(), wire);

        let dynamic = json!({"uri": "skill://gen/SKILL.md", "frontmatter": {"name": "gen", "description": "d"}, "resources": "dynamic"});
        let e: SkillEntry = serde_json::from_value(dynamic.clone()).unwrap();
        assert_eq!(e.resources, SkillResources::Dynamic);
        assert!(e.resources.listed().is_empty());
        assert_eq!(serde_json::to_value(&e).unwrap(), dynamic);
        // No `resources` at all (an earlier draft): read as dynamic.
        let e: SkillEntry = serde_json::from_value(
            json!({"uri": "skill://gen/SKILL.md", "frontmatter": {"name": "gen"}}),
        )
        .unwrap();
        assert_eq!(e.resources, SkillResources::Dynamic);
        // Anything else is refused.
        for bad in [json!("static"), json!(3), json!({"uri": "x"})] {
            let v = json!({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": bad});
            assert!(serde_json::from_value::<SkillEntry>(v).is_err());
        }
    }

    #[test]
    fn results_and_params_round_trip() {
        let list = json!({
            "skills": [],
            "nextCursor": "o1",
            "ttlMs": 0,
            "cacheScope": "private",
            "resultType": "complete"
        });
        let l: ListSkillsResult = serde_json::from_value(list.clone()).unwrap();
        assert_eq!(l.next_cursor.as_deref(), Some("o1"));
        assert_eq!(serde_json::to_value(&l).unwrap(), list);
        // The handshake era's shape: no cache hints, no resultType.
        assert_eq!(
            serde_json::to_value(ListSkillsResult::default()).unwrap(),
            json!({"skills": []})
        );

        let get = json!({"skill": {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "b"}, "resources": []}, "ttlMs": 5, "cacheScope": "public"});
        let g: GetSkillResult = serde_json::from_value(get.clone()).unwrap();
        assert_eq!(g.skill.uri, "skill://a/SKILL.md");
        assert_eq!(serde_json::to_value(&g).unwrap(), get);
        assert_eq!(
            serde_json::to_value(GetSkillRequestParams::new("skill://a/SKILL.md")).unwrap(),
            json!({"uri": "skill://a/SKILL.md"})
        );

        let mut p = ReadDirectoryRequestParams::new("skill://a/templates");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"uri": "skill://a/templates"})
        );
        p.cursor = Some("o2".into());
        assert_eq!(serde_json::to_value(&p).unwrap()["cursor"], "o2");
        let dir = json!({"resources": [
            {"uri": "skill://a/templates/x.md", "name": "x.md", "mimeType": "text/markdown"},
            {"uri": "skill://a/templates/regional", "name": "regional", "mimeType": DIRECTORY_MIME_TYPE}
        ]});
        let d: ReadDirectoryResult = serde_json::from_value(dir.clone()).unwrap();
        assert_eq!(d.resources.len(), 2);
        assert_eq!(serde_json::to_value(&d).unwrap(), dir);

        let caps: SkillsCapability = serde_json::from_value(json!({})).unwrap();
        assert_eq!(caps.directory_read, None);
        let caps = SkillsCapability {
            directory_read: Some(true),
        };
        assert_eq!(
            serde_json::to_value(&caps).unwrap(),
            json!({"directoryRead": true})
        );
    }

    #[test]
    fn names_and_uris() {
        for ok in ["a", "pdf-processing", "a1-b2", &"x".repeat(64)] {
            assert!(is_valid_skill_name(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_skill_name(bad), "{bad}");
        }
        assert_eq!(
            skill_name_of_uri("skill://acme/billing/refunds/SKILL.md"),
            Some("refunds")
        );
        assert_eq!(
            skill_root_of_uri("skill://acme/billing/refunds/SKILL.md"),
            Some("skill://acme/billing/refunds")
        );
        assert_eq!(
            skill_name_of_uri("skill://git-workflow/SKILL.md"),
            Some("git-workflow")
        );
        for bad in [
            "skill://SKILL.md",
            "skill:///SKILL.md",
            "skill://a//SKILL.md",
            "skill://a/skill.md",
            "a/SKILL.md",
            "://a/SKILL.md",
            "skill://a/xSKILL.md",
        ] {
            assert_eq!(skill_name_of_uri(bad), None, "{bad}");
        }
    }

    #[test]
    fn references_resolve_within_the_skill_only() {
        let e = SkillEntry {
            uri: "skill://acme/refunds/SKILL.md".into(),
            frontmatter: JsonObject::new(),
            resources: SkillResources::Dynamic,
        };
        let r = |s: &str| e.resolve(s);
        assert_eq!(
            r("references/GUIDE.md").as_deref(),
            Some("skill://acme/refunds/references/GUIDE.md")
        );
        assert_eq!(
            r("./a/../b.md").as_deref(),
            Some("skill://acme/refunds/b.md")
        );
        assert_eq!(
            r("skill://acme/refunds/x/y.md").as_deref(),
            Some("skill://acme/refunds/x/y.md")
        );
        assert_eq!(
            r("skill://acme/refunds/SKILL.md").as_deref(),
            Some("skill://acme/refunds/SKILL.md")
        );
        for escape in [
            "../other/SKILL.md",
            "a/../../x",
            "skill://acme/other/x.md",
            "skill://acme/refundsx/y",
            "https://example.com/x",
            "",
            ".",
        ] {
            assert_eq!(r(escape), None, "{escape}");
        }
    }

    #[test]
    fn frontmatter_blocks() {
        let text = "---\nname: a\ndescription: b\n---\n\nBody.\n";
        assert_eq!(
            split_frontmatter(text),
            Some(("name: a\ndescription: b", "\nBody.\n"))
        );
        assert_eq!(
            split_frontmatter("\u{feff}---\r\nname: a\r\n---  \r\nx"),
            Some(("name: a", "x"))
        );
        assert_eq!(
            split_frontmatter("---\nname: a\n---"),
            Some(("name: a", ""))
        );
        // A `---` that is not alone on its line does not close the block.
        assert_eq!(
            split_frontmatter("---\na: ---x\nb: 1\n---x\n---\nbody"),
            Some(("a: ---x\nb: 1\n---x", "body"))
        );
        for none in [
            "",
            "name: a",
            "--- \nname: a\n---\n",
            "---\nname: a\n",
            " ---\na: 1\n---\n",
        ] {
            assert_eq!(split_frontmatter(none), None, "{none:?}");
        }
    }

    #[test]
    fn digests() {
        let mut h = [0u8; 32];
        h[0] = 0xab;
        h[31] = 0x01;
        let d = format_sha256_digest(&h);
        assert_eq!(d.len(), 71);
        assert!(d.starts_with("sha256:ab00"));
        assert!(d.ends_with("01"));
        assert_eq!(parse_sha256_digest(&d), Some(h));
        for bad in [
            "sha256:",
            "sha1:00",
            &format!("sha256:{}", "A".repeat(64)),
            &format!("sha256:{}", "0".repeat(63)),
            &format!("sha256:{}", "0".repeat(65)),
            &format!("sha256:{}g", "0".repeat(63)),
        ] {
            assert_eq!(parse_sha256_digest(bad), None, "{bad}");
        }
    }
}
