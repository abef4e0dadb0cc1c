//! The client's side of the skills extension: listing and getting entries, loading a skill
//! (its `SKILL.md` checked against the entry), reading its files (checked the same way), and
//! reading directories. Nothing is fetched before it is asked for.

use std::collections::HashSet;

use base64::Engine as _;
use mcp_proto::schema::skills::{self as wire, SKILLS_GET, SKILLS_LIST};
use mcp_proto::schema::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, PaginatedRequestParams,
    ReadDirectoryRequestParams, ReadDirectoryResult, Resource, ResourceContents, SkillEntry,
    SkillResources,
};
use mcp_proto::{Error, ErrorKind};
use serde_json::Value;

use super::{digest_of, parse_frontmatter};
use crate::Client;

/// The most entries (or directory children) gathered over all pages of one listing.
const MAX_LISTED: usize = 10_000;
/// The most pages one listing follows.
const MAX_PAGES: usize = 1_000;

/// Why content was refused: it is not what the skill's entry promised.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerificationFailure {
    /// The entry does not list the file (while acting on a skill, an unlisted file is a
    /// change to the skill).
    Unlisted,
    /// The entry's digest is not `sha256:` and 64 lowercase hex digits.
    MalformedDigest(String),
    /// The bytes are not as many as the entry says.
    SizeMismatch {
        /// The entry's `size`.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The bytes do not hash to the entry's digest.
    DigestMismatch {
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes read.
        actual: String,
    },
    /// `resources/read` gave no contents for the URI, or a blob that is not base64.
    NoContents,
    /// The `SKILL.md` is not UTF-8 text.
    NotText,
    /// The `SKILL.md` frontmatter is missing or does not parse.
    InvalidFrontmatter(String),
    /// The `SKILL.md` frontmatter differs from the entry's in this field.
    FrontmatterMismatch(String),
}

impl std::fmt::Display for VerificationFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerificationFailure::Unlisted => f.write_str("the skill's entry does not list it"),
            VerificationFailure::MalformedDigest(d) => {
                write!(f, "the entry's digest {d:?} is malformed")
            }
            VerificationFailure::SizeMismatch { expected, actual } => {
                write!(f, "{actual} bytes where the entry says {expected}")
            }
            VerificationFailure::DigestMismatch { expected, actual } => {
                write!(f, "digest {actual} where the entry says {expected}")
            }
            VerificationFailure::NoContents => f.write_str("the read returned no usable contents"),
            VerificationFailure::NotText => f.write_str("the SKILL.md is not UTF-8 text"),
            VerificationFailure::InvalidFrontmatter(why) => {
                write!(f, "invalid frontmatter: {why}")
            }
            VerificationFailure::FrontmatterMismatch(field) => {
                write!(f, "the frontmatter's `{field}` differs from the entry's")
            }
        }
    }
}

/// A file of a skill that failed verification: its content was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerificationError {
    /// The file's URI.
    pub uri: String,
    /// What was wrong.
    pub failure: VerificationFailure,
}

impl std::fmt::Display for VerificationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed verification: {}", self.uri, self.failure)
    }
}

impl std::error::Error for VerificationError {}

impl VerificationError {
    fn into_error(self) -> Error {
        Error::new(ErrorKind::ProtocolInvalid, self.to_string()).with_source(self)
    }
}

fn failed(uri: &str, failure: VerificationFailure) -> Error {
    VerificationError {
        uri: uri.to_owned(),
        failure,
    }
    .into_error()
}

/// The verification failure behind `error`, if it is one (from [`Client::load_skill`] or
/// [`Client::read_skill_file`]).
pub fn verification_error(error: &Error) -> Option<&VerificationError> {
    std::error::Error::source(error).and_then(|s| s.downcast_ref::<VerificationError>())
}

/// A loaded skill: its entry and its verified `SKILL.md`.
#[derive(Clone, Debug)]
pub struct LoadedSkill {
    entry: SkillEntry,
    text: String,
    body_at: usize,
}

impl LoadedSkill {
    /// The entry it was loaded from (and its files are checked against).
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.entry.uri
    }

    /// Its name.
    pub fn name(&self) -> Option<&str> {
        self.entry.name()
    }

    /// The whole `SKILL.md`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `SKILL.md` after its frontmatter: the instructions.
    pub fn body(&self) -> &str {
        self.text.get(self.body_at..).unwrap_or("")
    }

    /// Whether its files can be verified (the entry lists them with digests; `false` for a
    /// `"dynamic"` skill, whose files are read unverified).
    pub fn verifiable(&self) -> bool {
        matches!(self.entry.resources, SkillResources::Listed(_))
    }
}

/// A file of a loaded skill, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillFile {
    /// Its URI.
    pub uri: String,
    /// Its MIME type, as the server gave it.
    pub mime_type: Option<String>,
    /// Its raw bytes.
    pub bytes: Vec<u8>,
    /// Whether the bytes were checked against a digest and size (`false` only for a
    /// `"dynamic"` skill).
    pub verified: bool,
}

impl SkillFile {
    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// Follows a paginated listing: bounded in pages and items, a repeated cursor is an error.
async fn all_pages<T, F, Fut>(what: &str, mut fetch: F) -> Result<Vec<T>, Error>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), Error>>,
{
    let mut all = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let (items, next) = fetch(cursor).await?;
        if all.len() + items.len() > MAX_LISTED {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("{what}: more than {MAX_LISTED} items"),
            ));
        }
        all.extend(items);
        match next {
            None => return Ok(all),
            Some(c) if !seen.insert(c.clone()) => {
                return Err(Error::new(
                    ErrorKind::ProtocolInvalid,
                    format!("{what}: the server repeated the cursor {c:?}"),
                ));
            }
            Some(c) => cursor = Some(c),
        }
    }
    Err(Error::new(
        ErrorKind::LimitExceeded,
        format!("{what}: more than {MAX_PAGES} pages"),
    ))
}

/// The raw bytes of the contents for `uri` in a read result.
fn bytes_of(uri: &str, contents: &[ResourceContents]) -> Option<(Vec<u8>, Option<String>)> {
    let pick = contents
        .iter()
        .find(|c| content_uri(c) == uri)
        .or(match contents {
            [only] => Some(only),
            _ => None,
        })?;
    match pick {
        ResourceContents::Text(t) => Some((t.text.clone().into_bytes(), t.mime_type.clone())),
        ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD
            .decode(&b.blob)
            .ok()
            .map(|bytes| (bytes, b.mime_type.clone())),
    }
}

fn content_uri(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
    }
}

/// Checks `bytes` against the entry's listing of `uri`; `Ok(false)` when the entry is dynamic
/// (nothing to check against).
fn verify(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<bool, Error> {
    if let SkillResources::Dynamic = entry.resources {
        return Ok(false);
    }
    let listed = entry
        .resource(uri)
        .ok_or_else(|| failed(uri, VerificationFailure::Unlisted))?;
    if wire::parse_sha256_digest(&listed.digest).is_none() {
        return Err(failed(
            uri,
            VerificationFailure::MalformedDigest(listed.digest.clone()),
        ));
    }
    let actual = bytes.len() as u64;
    if let Some(expected) = listed.size
        && expected != actual
    {
        return Err(failed(
            uri,
            VerificationFailure::SizeMismatch { expected, actual },
        ));
    }
    let digest = digest_of(bytes);
    if digest != listed.digest {
        return Err(failed(
            uri,
            VerificationFailure::DigestMismatch {
                expected: listed.digest.clone(),
                actual: digest,
            },
        ));
    }
    Ok(true)
}

/// JSON values equal in content (numbers by value, so `1` and `1.0` agree).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The first field in which the two frontmatters differ (an absent field is `null`).
fn frontmatter_difference(
    file: &serde_json::Map<String, Value>,
    entry: &serde_json::Map<String, Value>,
) -> Option<String> {
    file.keys()
        .chain(entry.keys())
        .find(|k| {
            let a = file.get(*k).unwrap_or(&Value::Null);
            let b = entry.get(*k).unwrap_or(&Value::Null);
            !same(a, b)
        })
        .cloned()
}

impl Client {
    /// `method` with `params`, answered from the response cache when it holds a fresh result
    /// under `key`, kept there as the result's cache hints say otherwise (2026-07-28).
    async fn cacheable<T: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        key: &str,
        params: &impl serde::Serialize,
    ) -> Result<T, Error> {
        if let Some(hit) = self.cached(method, key) {
            return crate::peer::parse_result(&hit);
        }
        let raw = self.request(method, params).await?;
        self.keep(method, key, &raw);
        crate::peer::parse_result(&raw)
    }

    /// `skills/list`, every page (skills extension, feature `skills`): the skills the server
    /// serves, as entries. No skill file is read. The listing may be empty or partial.
    ///
    /// In the 2026-07-28 era, pages are kept in the client's response cache for their
    /// `ttlMs` (see [`crate::cache`]); a `notifications/resources/list_changed` (what a
    /// server says when its skills change: skill files are resources) drops them, and the
    /// entries of [`get_skill`](Self::get_skill).
    ///
    /// ```
    /// use mcp_service::server::Server;
    /// use mcp_service::sim::Sim;
    /// use mcp_service::skills::Skill;
    ///
    /// let skill = Skill::new("---\nname: greet\ndescription: Greets people\n---\nSay hello.")?;
    /// let server = Server::builder("skilled", "1.0").skill(skill).build();
    /// let sim = Sim::new();
    /// let loaded = sim
    ///     .block_on(async {
    ///         let client = server.test_client(sim.runtime()).await?;
    ///         let skills = client.list_skills().await?;
    ///         client.load_skill(&skills[0]).await // read and checked against its entry
    ///     })
    ///     .expect("nothing left waiting")?;
    /// assert_eq!(loaded.name(), Some("greet"));
    /// assert_eq!(loaded.body(), "Say hello.");
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server did not declare the skills
    /// extension; [`ErrorKind::LimitExceeded`] past 10 000 skills or 1 000 pages;
    /// [`ErrorKind::ProtocolInvalid`] (-32600) when the server repeats a cursor or a page is
    /// not a `skills/list` result; and the
    /// [errors of every request](crate::client#errors-of-every-request).
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, Error> {
        all_pages(SKILLS_LIST, |cursor| async move {
            let key = cursor.clone().unwrap_or_default();
            let params = PaginatedRequestParams { cursor, meta: None };
            let page: ListSkillsResult = self.cacheable(SKILLS_LIST, &key, &params).await?;
            Ok((page.skills, page.next_cursor))
        })
        .await
    }

    /// `skills/get` (skills extension): the entry of the skill whose `SKILL.md` is at `uri`,
    /// listed or not (`InvalidParams` when the server serves no such skill). Cached as
    /// [`list_skills`](Self::list_skills)' pages are.
    ///
    /// # Errors
    /// -32602 [`ErrorKind::InvalidParams`] for a URI the server serves no skill at;
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server did not declare the skills
    /// extension; and the [errors of every request](crate::client#errors-of-every-request).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        let r: GetSkillResult = self
            .cacheable(SKILLS_GET, uri, &GetSkillRequestParams::new(uri))
            .await?;
        Ok(r.skill)
    }

    /// `resources/directory/read`, every page (skills extension, when the server declared
    /// `directoryRead`): the direct children of the directory `uri`; subdirectories have
    /// `mimeType: inode/directory`.
    ///
    /// # Errors
    /// [`ErrorKind::MethodNotFound`] (-32601) when the server did not declare
    /// `directoryRead`; the server's -32602 for a URI that is not a directory it serves; the
    /// page limits and repeated cursors as [`list_skills`](Self::list_skills); and the
    /// [errors of every request](crate::client#errors-of-every-request).
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Resource>, Error> {
        all_pages(wire::RESOURCES_DIRECTORY_READ, |cursor| async move {
            let mut params = ReadDirectoryRequestParams::new(uri);
            params.cursor = cursor;
            let page: ReadDirectoryResult = self
                .request(wire::RESOURCES_DIRECTORY_READ, &params)
                .typed()
                .await?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// Loads a skill: reads its `SKILL.md` (now, not before) and checks it against `entry` —
    /// the size and digest the entry lists for it, then its frontmatter, field by field,
    /// against the entry's. Content that fails is not returned; the error's source is a
    /// [`VerificationError`]. (A `"dynamic"` entry has no digests: only the frontmatter is
    /// checked.)
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] (nothing sent) when `entry.uri` is not the URI of a
    /// `SKILL.md`; those of [`read_resource`](Self::read_resource); and
    /// [`ErrorKind::ProtocolInvalid`] (-32600) with a [`VerificationError`] as its source
    /// ([`verification_error`]) when the contents are missing, are not UTF-8 text, differ
    /// from the entry's size or digest, have no valid frontmatter, or a frontmatter field
    /// differs from the entry's.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, Error> {
        let uri = entry.uri.as_str();
        if wire::skill_root_of_uri(uri).is_none() {
            return Err(Error::invalid_params(format!(
                "{uri} is not the URI of a SKILL.md"
            )));
        }
        let read = self.read_resource(uri).await?;
        let (bytes, _) = bytes_of(uri, &read.contents)
            .ok_or_else(|| failed(uri, VerificationFailure::NoContents))?;
        verify(entry, uri, &bytes)?;
        let text =
            String::from_utf8(bytes).map_err(|_| failed(uri, VerificationFailure::NotText))?;
        let frontmatter = parse_frontmatter(&text).map_err(|e| {
            failed(
                uri,
                VerificationFailure::InvalidFrontmatter(e.message().to_owned()),
            )
        })?;
        if let Some(field) = frontmatter_difference(&frontmatter, &entry.frontmatter) {
            return Err(failed(uri, VerificationFailure::FrontmatterMismatch(field)));
        }
        let body_at = wire::split_frontmatter(&text)
            .map(|(_, body)| text.len() - body.len())
            .unwrap_or(0);
        Ok(LoadedSkill {
            entry: entry.clone(),
            text,
            body_at,
        })
    }

    /// Reads a file of a loaded skill — `reference` relative to the skill's root
    /// (`references/FORMS.md`) or a URI within it — and checks it against the skill's entry:
    /// only a listed file is read, and its size and digest must match. The error's source is
    /// a [`VerificationError`] when the file is unlisted or does not match; a reference outside
    /// the skill is `InvalidParams`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] (nothing sent) for a reference outside the skill; those
    /// of [`read_resource`](Self::read_resource); and [`ErrorKind::ProtocolInvalid`] (-32600)
    /// with a [`VerificationError`] as its source for a file the entry does not list, one
    /// with no contents, or one whose size or digest differs.
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        reference: &str,
    ) -> Result<SkillFile, Error> {
        let entry = &skill.entry;
        let uri = entry.resolve(reference).ok_or_else(|| {
            Error::invalid_params(format!(
                "{reference:?} is not a file of the skill {}",
                entry.uri
            ))
        })?;
        if matches!(entry.resources, SkillResources::Listed(_)) && entry.resource(&uri).is_none() {
            return Err(failed(&uri, VerificationFailure::Unlisted));
        }
        let read = self.read_resource(&uri).await?;
        let (bytes, mime_type) = bytes_of(&uri, &read.contents)
            .ok_or_else(|| failed(&uri, VerificationFailure::NoContents))?;
        let verified = verify(entry, &uri, &bytes)?;
        Ok(SkillFile {
            uri,
            mime_type,
            bytes,
            verified,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::schema::SkillResource;
    use serde_json::json;

    fn entry(body: &str) -> SkillEntry {
        SkillEntry {
            uri: "skill://a/SKILL.md".into(),
            frontmatter: serde_json::from_value(json!({"name": "a", "description": "d"})).unwrap(),
            resources: SkillResources::Listed(vec![SkillResource {
                uri: "skill://a/SKILL.md".into(),
                digest: digest_of(body.as_bytes()),
                size: Some(body.len() as u64),
            }]),
        }
    }

    fn failure(e: Error) -> VerificationFailure {
        assert_eq!(e.kind(), ErrorKind::ProtocolInvalid);
        verification_error(&e)
            .expect("a verification error")
            .failure
            .clone()
    }

    #[test]
    fn bytes_are_checked_for_size_then_digest() {
        let body = "---\nname: a\ndescription: d\n---\nBody\n";
        let e = entry(body);
        assert!(verify(&e, &e.uri, body.as_bytes()).unwrap());
        let longer = format!("{body}x");
        assert!(matches!(
            failure(verify(&e, &e.uri, longer.as_bytes()).unwrap_err()),
            VerificationFailure::SizeMismatch { expected, actual } if actual == expected + 1
        ));
        let same_size = body.replace("Body", "Evil");
        assert!(matches!(
            failure(verify(&e, &e.uri, same_size.as_bytes()).unwrap_err()),
            VerificationFailure::DigestMismatch { .. }
        ));
        assert_eq!(
            failure(verify(&e, "skill://a/other.md", b"x").unwrap_err()),
            VerificationFailure::Unlisted
        );
        let mut bad = e.clone();
        if let SkillResources::Listed(l) = &mut bad.resources {
            l[0].digest = "sha256:ABC".into();
        }
        assert!(matches!(
            failure(verify(&bad, &e.uri, body.as_bytes()).unwrap_err()),
            VerificationFailure::MalformedDigest(_)
        ));
        let mut dynamic = e.clone();
        dynamic.resources = SkillResources::Dynamic;
        assert!(!verify(&dynamic, &e.uri, b"anything").unwrap());
    }

    #[test]
    fn frontmatter_fields_compare_by_content() {
        let obj = |v: Value| v.as_object().unwrap().clone();
        let a = obj(json!({"name": "a", "description": "d", "metadata": {"v": 1}}));
        assert_eq!(frontmatter_difference(&a, &a), None);
        let b = obj(json!({"name": "a", "description": "d", "metadata": {"v": 1.0}}));
        assert_eq!(frontmatter_difference(&a, &b), None);
        let c = obj(json!({"name": "a", "description": "x", "metadata": {"v": 1}}));
        assert_eq!(
            frontmatter_difference(&a, &c).as_deref(),
            Some("description")
        );
        // An absent field equals null; an extra one differs.
        let d =
            obj(json!({"name": "a", "description": "d", "metadata": {"v": 1}, "license": null}));
        assert_eq!(frontmatter_difference(&a, &d), None);
        let e =
            obj(json!({"name": "a", "description": "d", "metadata": {"v": 1}, "license": "MIT"}));
        assert_eq!(frontmatter_difference(&a, &e).as_deref(), Some("license"));
        let f = obj(json!({"name": "a", "description": "d", "metadata": {"v": 1, "w": 2}}));
        assert_eq!(frontmatter_difference(&a, &f).as_deref(), Some("metadata"));
    }

    #[test]
    fn contents_are_picked_by_uri_and_decoded() {
        let text = ResourceContents::text("skill://a/x", "hi");
        let blob = ResourceContents::blob("skill://a/y", "AAE=");
        let both = [text.clone(), blob.clone()];
        assert_eq!(bytes_of("skill://a/x", &both).unwrap().0, b"hi");
        assert_eq!(bytes_of("skill://a/y", &both).unwrap().0, [0, 1]);
        assert!(bytes_of("skill://a/z", &both).is_none());
        // A single content under another URI still counts.
        assert_eq!(bytes_of("skill://a/z", &[text]).unwrap().0, b"hi");
        assert!(
            bytes_of(
                "skill://a/y",
                &[ResourceContents::blob("skill://a/y", "!!")]
            )
            .is_none()
        );
    }

    #[test]
    fn pagination_is_bounded() {
        let run = |pages: Vec<(Vec<u32>, Option<&'static str>)>| {
            let mut it = pages.into_iter();
            futures_executor::block_on(all_pages("t", move |_| {
                let next = it.next();
                async move {
                    let (items, c) = next.unwrap_or((vec![], None));
                    Ok((items, c.map(String::from)))
                }
            }))
        };
        assert_eq!(
            run(vec![(vec![1], Some("a")), (vec![2], None)]).unwrap(),
            [1, 2]
        );
        assert_eq!(
            run(vec![(vec![1], Some("a")), (vec![2], Some("a"))])
                .unwrap_err()
                .kind(),
            ErrorKind::ProtocolInvalid
        );
        assert_eq!(
            run(vec![((0..10_001).collect(), None)]).unwrap_err().kind(),
            ErrorKind::LimitExceeded
        );
    }
}
