//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) on both ends
//! (feature `skills`).
//!
//! A skill is a directory of files with a `SKILL.md` at its root that begins with YAML
//! frontmatter (`name` and `description` at least). A server serves each file as a resource
//! `skill://<skill-path>/<file-path>` (the last segment of `<skill-path>` is the skill's
//! name), answers `skills/list`, `skills/get` and `resources/directory/read`, and declares
//! `{"directoryRead": true}` under `capabilities.extensions["io.modelcontextprotocol/skills"]`.
//!
//! **Serving.** Build a [`Skill`] from its `SKILL.md` text and files ([`Skill::new`],
//! [`Skill::file`]), or read one from disk ([`Skill::from_dir`], [`load_dir`] for a folder of
//! `<name>/SKILL.md` skills), and register it with
//! [`ServerBuilder::skill`](crate::ServerBuilder::skill) or
//! [`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir):
//!
//! ```
//! use mcp_service::Server;
//! use mcp_service::skills::Skill;
//!
//! let skill = Skill::new("---\nname: release-notes\ndescription: Write release notes\n---\n\nSee references/STYLE.md.\n")?
//!     .file("references/STYLE.md", "Short sentences.\n")?;
//! assert_eq!(skill.uri(), "skill://release-notes/SKILL.md");
//! let server = Server::builder("docs", "1.0").skill(skill).build();
//! # let _ = server;
//! # Ok::<(), mcp_service::Error>(())
//! ```
//!
//! The listing's entries carry the frontmatter verbatim (as JSON) and every file's SHA-256
//! digest and size; `SKILL.md` resources have `mimeType: text/markdown` and the frontmatter's
//! `name` and `description`. A skill may not exceed [`MAX_RESOURCES_PER_SKILL`] files or
//! [`MAX_SKILL_BYTES`] bytes, and a server serves at most
//! [`max_skills`](crate::ServerBuilder::max_skills) skills ([`DEFAULT_MAX_SKILLS`] unless set).
//!
//! **Changing skills at runtime.** A running server adds, replaces and removes skills
//! ([`Server::add_skill`](crate::Server::add_skill),
//! [`Server::replace_skill`](crate::Server::replace_skill),
//! [`Server::remove_skill`](crate::Server::remove_skill)) and re-reads the folders given to
//! [`skills_dir`](crate::ServerBuilder::skills_dir)
//! ([`Server::reload_skills`](crate::Server::reload_skills)). The extension defines no
//! notification of its own: skill files are resources, so connected clients are told with
//! `notifications/resources/list_changed` (handshake-era connections, and the 2026-07-28
//! `subscriptions/listen` streams that asked for resource list changes), and the clients
//! subscribed to a file that changed or went away with `notifications/resources/updated`. A
//! skill removed while a read of one of its files is under way answers that read with the
//! ordinary resource-not-found error (`-32602`; `-32002` before 2026-07-28), as `skills/get`
//! answers `-32602` for it.
//!
//! ```
//! use mcp_service::Server;
//! use mcp_service::skills::Skill;
//!
//! // Declared with no skill yet: skills come and go while the server runs.
//! let server = Server::builder("docs", "1.0").skills_extension().build();
//! let v1 = Skill::new("---\nname: triage\ndescription: Triage bug reports\n---\nv1\n")?;
//! server.add_skill(v1)?;
//! let v2 = Skill::new("---\nname: triage\ndescription: Triage bug reports\n---\nv2\n")?;
//! assert!(server.replace_skill(v2)?, "there was one to replace");
//! assert!(server.remove_skill("skill://triage/SKILL.md"));
//! # Ok::<(), mcp_service::Error>(())
//! ```
//!
//! **Using.** On the client, [`Client::list_skills`](crate::Client::list_skills) and
//! [`Client::get_skill`](crate::Client::get_skill) give entries without reading any file (a
//! host must not fetch a skill's files ahead of need);
//! [`Client::load_skill`](crate::Client::load_skill) fetches the `SKILL.md` and checks it
//! against the entry — size, digest, and the frontmatter field by field — and
//! [`Client::read_skill_file`](crate::Client::read_skill_file) reads one of its files, only if
//! the entry lists it, checked the same way. Content that fails is never returned: the error's
//! [`source`](std::error::Error::source) is a [`VerificationError`] (see [`verification_error`]).

mod client;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use mcp_proto::schema::skills::{
    self as wire, DIRECTORY_MIME_TYPE, SKILL_MD, SKILL_MD_MIME_TYPE, SKILL_SCHEME,
};
use mcp_proto::schema::{JsonObject, Resource, ResourceContents, SkillEntry, SkillResource};
use mcp_proto::{Error, ErrorKind};
use sha2::{Digest, Sha256};

pub use client::{
    LoadedSkill, SkillFile, VerificationError, VerificationFailure, verification_error,
};
pub use mcp_proto::schema::skills::{EXTENSION_ID, MAX_RESOURCES_PER_SKILL, MAX_SKILL_BYTES};

/// How many skills a server serves at most, unless
/// [`ServerBuilder::max_skills`](crate::ServerBuilder::max_skills) says otherwise.
pub const DEFAULT_MAX_SKILLS: usize = 1024;

/// What a change to a running server's skills did, by the URI of each skill's `SKILL.md`
/// ([`Server::reload_skills`](crate::Server::reload_skills)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillChanges {
    /// Skills served now that were not before.
    pub added: Vec<String>,
    /// Skills no longer served.
    pub removed: Vec<String>,
    /// Skills still served, with other files or contents.
    pub replaced: Vec<String>,
}

impl SkillChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.replaced.is_empty()
    }
}

/// The largest frontmatter block parsed (a `SKILL.md`'s YAML, on either end).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// How deep [`Skill::from_dir`] descends into a skill's subdirectories.
const MAX_DEPTH: usize = 16;

/// The error of an invalid skill definition (a registration error, not a peer's).
fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidParams, message)
}

/// The frontmatter of a `SKILL.md`: its leading `---` block parsed as YAML into a JSON object.
///
/// ```
/// let fm = mcp_service::skills::parse_frontmatter("---\nname: pdf\ndescription: PDFs\n---\nBody")?;
/// assert_eq!(fm["name"], "pdf");
/// # Ok::<(), mcp_service::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidParams`] (-32602): no frontmatter block, a block over
/// [`MAX_FRONTMATTER_BYTES`], YAML that does not parse or is not a mapping.
pub fn parse_frontmatter(skill_md: &str) -> Result<JsonObject, Error> {
    let (yaml, _) = wire::split_frontmatter(skill_md).ok_or_else(|| {
        invalid("the SKILL.md does not begin with a `---` frontmatter block".into())
    })?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(invalid(format!(
            "the SKILL.md frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"
        )));
    }
    match serde_norway::from_str::<serde_json::Value>(yaml) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        // An empty block parses as null: no fields.
        Ok(serde_json::Value::Null) => Ok(JsonObject::new()),
        Ok(other) => Err(invalid(format!(
            "the SKILL.md frontmatter is not a mapping but {}",
            json_kind(&other)
        ))),
        Err(e) => Err(invalid(format!(
            "the SKILL.md frontmatter is not YAML: {e}"
        ))),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a sequence",
        serde_json::Value::Object(_) => "a mapping",
    }
}

/// `sha256:{hex}` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash: [u8; 32] = Sha256::digest(bytes).into();
    wire::format_sha256_digest(&hash)
}

/// One file of a skill.
#[derive(Clone)]
pub(crate) struct FileData {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) mime_type: String,
    /// [`digest_of`] the bytes, computed once (a catalog is rebuilt on every change).
    pub(crate) digest: Arc<str>,
}

impl FileData {
    pub(crate) fn new(bytes: Vec<u8>, mime_type: String) -> Self {
        FileData {
            digest: digest_of(&bytes).into(),
            bytes: bytes.into(),
            mime_type,
        }
    }

    /// Whether the two are the same file (bytes, by digest, and MIME type).
    pub(crate) fn same(&self, other: &FileData) -> bool {
        self.digest == other.digest
            && self.bytes.len() == other.bytes.len()
            && self.mime_type == other.mime_type
    }
}

/// A skill to serve: its `SKILL.md`, parsed frontmatter and files, by path within the skill.
#[derive(Clone)]
pub struct Skill {
    /// The skill path: an optional prefix and the name (`acme/billing/refunds`).
    path: String,
    name: String,
    frontmatter: JsonObject,
    /// By path relative to the skill's root; `SKILL.md` included.
    files: BTreeMap<String, FileData>,
    total: u64,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill")
            .field("uri", &self.uri())
            .field("files", &self.files.keys().collect::<Vec<_>>())
            .field("bytes", &self.total)
            .finish()
    }
}

impl Skill {
    /// A skill from its `SKILL.md` text, at `skill://<name>/SKILL.md` (`name` from the
    /// frontmatter).
    ///
    /// ```
    /// use mcp_service::skills::Skill;
    ///
    /// let skill = Skill::new("---\nname: pdf-forms\ndescription: Fills PDF forms\n---\nSteps…")?
    ///     .under("acme")?
    ///     .file("references/FIELDS.md", "# Fields")?;
    /// assert_eq!(skill.uri(), "skill://acme/pdf-forms/SKILL.md");
    /// assert!(Skill::new("---\nname: Not A Name\ndescription: x\n---\n").is_err());
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] (-32602): no frontmatter (see [`parse_frontmatter`]), a
    /// `name` that breaks the Agent Skills naming rules (1–64 lowercase letters, digits and
    /// single hyphens inside), a missing or empty `description`; [`ErrorKind::LimitExceeded`]
    /// for a `SKILL.md` over [`MAX_SKILL_BYTES`].
    pub fn new(skill_md: impl Into<String>) -> Result<Skill, Error> {
        let text = skill_md.into();
        let frontmatter = parse_frontmatter(&text)?;
        let name = match frontmatter.get("name") {
            Some(serde_json::Value::String(n)) if wire::is_valid_skill_name(n) => n.clone(),
            Some(serde_json::Value::String(n)) => {
                return Err(invalid(format!(
                    "skill name {n:?} breaks the naming rules (1-64 lowercase letters, digits \
                     and hyphens, no leading, trailing or double hyphen)"
                )));
            }
            _ => {
                return Err(invalid(
                    "the SKILL.md frontmatter has no string `name`".into(),
                ));
            }
        };
        match frontmatter.get("description") {
            Some(serde_json::Value::String(d)) if !d.is_empty() => {}
            _ => {
                return Err(invalid(format!(
                    "the SKILL.md frontmatter of `{name}` has no non-empty `description`"
                )));
            }
        }
        let mut skill = Skill {
            path: name.clone(),
            name,
            frontmatter,
            files: BTreeMap::new(),
            total: 0,
        };
        skill.insert(
            SKILL_MD,
            FileData::new(text.into_bytes(), SKILL_MD_MIME_TYPE.into()),
        )?;
        Ok(skill)
    }

    /// Places the skill under an organisational prefix: `skill://<prefix>/<name>/SKILL.md`
    /// (e.g. `acme/billing`). Segments are letters, digits, `-`, `.`, `_` and `~`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for an empty segment, `.` or `..`, or a segment with
    /// another character.
    pub fn under(mut self, prefix: &str) -> Result<Skill, Error> {
        let prefix = prefix.trim_matches('/');
        for seg in prefix.split('/') {
            let ok = !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
            if !ok {
                return Err(invalid(format!(
                    "skill prefix {prefix:?}: segment {seg:?} is not letters, digits, `-._~`"
                )));
            }
        }
        self.path = format!("{prefix}/{}", self.name);
        Ok(self)
    }

    /// Adds a file at `path` (relative to the skill's root, `/`-separated, e.g.
    /// `references/FORMS.md`), its MIME type guessed from the extension.
    ///
    /// # Errors
    /// As [`file_with_mime_type`](Self::file_with_mime_type).
    pub fn file(self, path: &str, contents: impl Into<Vec<u8>>) -> Result<Skill, Error> {
        let bytes = contents.into();
        let mime = guess_mime_type(path, &bytes);
        self.file_with_mime_type(path, bytes, mime)
    }

    /// Adds a file at `path` with this MIME type.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for a path that is empty, absolute, has `.`, `..` or empty
    /// segments, a backslash or control characters, is `SKILL.md` or clashes with a file or
    /// directory already there; [`ErrorKind::LimitExceeded`] past [`MAX_RESOURCES_PER_SKILL`]
    /// files or [`MAX_SKILL_BYTES`] bytes.
    pub fn file_with_mime_type(
        mut self,
        path: &str,
        contents: impl Into<Vec<u8>>,
        mime_type: impl Into<String>,
    ) -> Result<Skill, Error> {
        let bad = path.is_empty()
            || path
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
            || path.chars().any(|c| c == '\\' || c.is_control());
        if bad {
            return Err(invalid(format!(
                "skill `{}`: {path:?} is not a relative `/`-separated file path",
                self.name
            )));
        }
        if path == SKILL_MD {
            return Err(invalid(format!(
                "skill `{}`: SKILL.md is the skill's own text (Skill::new)",
                self.name
            )));
        }
        self.insert(path, FileData::new(contents.into(), mime_type.into()))?;
        Ok(self)
    }

    fn insert(&mut self, path: &str, data: FileData) -> Result<(), Error> {
        let clash = self.files.contains_key(path)
            || self.files.keys().any(|f| {
                f.strip_prefix(path).is_some_and(|r| r.starts_with('/'))
                    || path
                        .strip_prefix(f.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            });
        if clash {
            return Err(Error::new(
                ErrorKind::DuplicateRegistration,
                format!(
                    "skill `{}`: {path:?} clashes with a file already added",
                    self.name
                ),
            ));
        }
        if self.files.len() >= MAX_RESOURCES_PER_SKILL {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "skill `{}` would have more than {MAX_RESOURCES_PER_SKILL} files",
                    self.name
                ),
            ));
        }
        let total = self.total.saturating_add(data.bytes.len() as u64);
        if total > MAX_SKILL_BYTES {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "skill `{}` would be over {MAX_SKILL_BYTES} bytes",
                    self.name
                ),
            ));
        }
        self.total = total;
        self.files.insert(path.to_owned(), data);
        Ok(())
    }

    /// Reads a skill from a directory: its `SKILL.md` and every file below it (subdirectories
    /// included, entries whose name starts with `.` left out), within the limits. The
    /// frontmatter's `name` must be the directory's name.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] when a file or directory cannot be read (the I/O error is
    /// the source; a missing `SKILL.md` among them), when the frontmatter names another skill
    /// than the directory, for a file name that is not UTF-8, and as [`Skill::new`] and
    /// [`file`](Self::file) for the contents; [`ErrorKind::LimitExceeded`] for directories
    /// nested 16 deep, and past the file and byte limits.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Skill, Error> {
        let dir = dir.as_ref();
        let io = |what: &Path, e: std::io::Error| {
            Error::new(ErrorKind::InvalidParams, format!("{}: {e}", what.display())).with_source(e)
        };
        let md_path = dir.join(SKILL_MD);
        let text = std::fs::read_to_string(&md_path).map_err(|e| io(&md_path, e))?;
        let mut skill = Skill::new(text)?;
        if let Some(dir_name) = dir.file_name().and_then(|n| n.to_str())
            && dir_name != skill.name
        {
            return Err(invalid(format!(
                "{}: the frontmatter names the skill `{}`, not `{dir_name}`",
                md_path.display(),
                skill.name
            )));
        }
        let mut pending = vec![(dir.to_path_buf(), String::new(), 0usize)];
        while let Some((at, rel, depth)) = pending.pop() {
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&at).map_err(|e| io(&at, e))? {
                let entry = entry.map_err(|e| io(&at, e))?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    return Err(invalid(format!(
                        "{}: a file name that is not UTF-8",
                        at.display()
                    )));
                };
                if !name.starts_with('.') {
                    names.push(name);
                }
            }
            names.sort();
            for name in names {
                let path = at.join(&name);
                let rel_path = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                if rel_path == SKILL_MD {
                    continue;
                }
                let meta = std::fs::metadata(&path).map_err(|e| io(&path, e))?;
                if meta.is_dir() {
                    if depth + 1 >= MAX_DEPTH {
                        return Err(Error::new(
                            ErrorKind::LimitExceeded,
                            format!("{}: deeper than {MAX_DEPTH} levels", path.display()),
                        ));
                    }
                    pending.push((path, rel_path, depth + 1));
                } else if meta.is_file() {
                    if skill.total.saturating_add(meta.len()) > MAX_SKILL_BYTES {
                        return Err(Error::new(
                            ErrorKind::LimitExceeded,
                            format!(
                                "skill `{}` would be over {MAX_SKILL_BYTES} bytes",
                                skill.name
                            ),
                        ));
                    }
                    let bytes = std::fs::read(&path).map_err(|e| io(&path, e))?;
                    skill = skill.file(&rel_path, bytes)?;
                }
            }
        }
        Ok(skill)
    }

    /// The skill's name (the frontmatter's `name`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skill path (`<prefix>/<name>`, or the name).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> String {
        self.file_uri(SKILL_MD)
    }

    /// The frontmatter as JSON.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.frontmatter
    }

    /// The paths of its files (relative to the skill's root; `SKILL.md` included).
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Whether the two serve the same files with the same contents and MIME types.
    pub(crate) fn same_files(&self, other: &Skill) -> bool {
        self.path == other.path
            && self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|((p, a), (q, b))| p == q && a.same(b))
    }

    /// The URI of the file at `path` (relative to the skill's root).
    fn file_uri(&self, path: &str) -> String {
        let mut uri = format!("{SKILL_SCHEME}://{}", self.path);
        for seg in path.split('/') {
            uri.push('/');
            encode_segment(seg, &mut uri);
        }
        uri
    }

    /// The entry `skills/list` and `skills/get` carry: every file with its digest and size.
    pub fn entry(&self) -> SkillEntry {
        SkillEntry {
            uri: self.uri(),
            frontmatter: self.frontmatter.clone(),
            resources: mcp_proto::schema::SkillResources::Listed(
                self.files
                    .iter()
                    .map(|(path, f)| SkillResource {
                        uri: self.file_uri(path),
                        digest: f.digest.to_string(),
                        size: Some(f.bytes.len() as u64),
                    })
                    .collect(),
            ),
        }
    }

    /// The resource metadata of the file at `path`.
    fn resource(&self, path: &str, data: &FileData) -> Resource {
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let mut r = Resource::new(self.file_uri(path), file_name);
        r.mime_type = Some(data.mime_type.clone());
        r.size = Some(data.bytes.len() as u64);
        if path == SKILL_MD {
            r.name = self.name.clone();
            r.description = self
                .frontmatter
                .get("description")
                .and_then(|d| d.as_str())
                .map(str::to_owned);
        } else {
            r.description = Some(format!("{path} of the skill {}", self.name));
        }
        r
    }
}

/// Reads every skill in `root`: each subdirectory with a `SKILL.md` is one
/// ([`Skill::from_dir`]); other entries are left out. Sorted by name.
///
/// # Errors
/// [`ErrorKind::InvalidParams`] when `root` cannot be read (the I/O error is the source);
/// then the first error of [`Skill::from_dir`] among the skills, and no skill is returned.
pub fn load_dir(root: impl AsRef<Path>) -> Result<Vec<Skill>, Error> {
    load_dir_at_most(root.as_ref(), usize::MAX)
}

/// [`load_dir`], `LimitExceeded` (before any skill is read) when `root` holds more than `max`
/// skill folders.
pub(crate) fn load_dir_at_most(root: &Path, max: usize) -> Result<Vec<Skill>, Error> {
    let io = |e: std::io::Error| {
        Error::new(ErrorKind::InvalidParams, format!("{}: {e}", root.display())).with_source(e)
    };
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.join(SKILL_MD).is_file() {
            if dirs.len() >= max {
                return Err(Error::new(
                    ErrorKind::LimitExceeded,
                    format!("{}: more than {max} skills", root.display()),
                ));
            }
            dirs.push(path);
        } else if path.is_dir() {
            tracing::debug!(target: "mcp", dir = %path.display(), "no SKILL.md: not a skill");
        }
    }
    dirs.sort();
    dirs.iter().map(Skill::from_dir).collect()
}

/// Appends `seg` to `out`, percent-encoding what is not a URI path character.
fn encode_segment(seg: &str, out: &mut String) {
    for b in seg.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// A MIME type from the file's extension (text or octet stream when unknown).
fn guess_mime_type(path: &str, bytes: &[u8]) -> String {
    let ext = path
        .rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase());
    let known = match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    };
    known.to_owned()
}

/// What a server serves of its skills: the entries, and the directories and their children.
#[derive(Default)]
pub(crate) struct Catalog {
    /// Sorted by URI.
    entries: Vec<SkillEntry>,
    by_uri: HashMap<String, usize>,
    /// Directory URI → its direct children (sorted by URI).
    dirs: BTreeMap<String, Vec<Resource>>,
}

/// A file to register as a resource.
pub(crate) struct Served {
    pub(crate) resource: Resource,
    pub(crate) data: FileData,
}

impl Catalog {
    /// The catalog of `skills` and the files to serve (a file two nested skills share, once).
    pub(crate) fn build<'a>(
        skills: impl IntoIterator<Item = &'a Skill>,
    ) -> Result<(Catalog, Vec<Served>), Error> {
        let mut sorted: Vec<&Skill> = skills.into_iter().collect();
        let mut entries = Vec::with_capacity(sorted.len());
        let mut by_uri = HashMap::new();
        let mut files: BTreeMap<String, Served> = BTreeMap::new();
        sorted.sort_by_key(|s| s.uri());
        for skill in sorted {
            let entry = skill.entry();
            if by_uri.insert(entry.uri.clone(), entries.len()).is_some() {
                return Err(Error::new(
                    ErrorKind::DuplicateRegistration,
                    format!("skill {} is registered twice", entry.uri),
                ));
            }
            entries.push(entry);
            for (path, data) in &skill.files {
                let resource = skill.resource(path, data);
                match files.get_mut(&resource.uri) {
                    Some(other) if other.data.digest != data.digest => {
                        return Err(Error::new(
                            ErrorKind::DuplicateRegistration,
                            format!(
                                "{} is served by two skills with different contents",
                                resource.uri
                            ),
                        ));
                    }
                    // A nested skill's SKILL.md, also a file of the enclosing skill: listed
                    // with the nested skill's name and description.
                    Some(other) if path == SKILL_MD => other.resource = resource,
                    Some(_) => {}
                    None => {
                        files.insert(
                            resource.uri.clone(),
                            Served {
                                resource,
                                data: data.clone(),
                            },
                        );
                    }
                }
            }
        }
        let mut dirs: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        for served in files.values() {
            let uri = &served.resource.uri;
            let Some((scheme, path)) = uri.split_once("://") else {
                continue;
            };
            let segments: Vec<&str> = path.split('/').collect();
            let mut dir = format!("{scheme}://");
            for (i, seg) in segments.iter().enumerate() {
                let child = if i == 0 {
                    format!("{dir}{seg}")
                } else {
                    format!("{dir}/{seg}")
                };
                if i > 0 {
                    let children = dirs.entry(dir.clone()).or_default();
                    if i + 1 == segments.len() {
                        children.insert(child.clone(), served.resource.clone());
                    } else {
                        children.entry(child.clone()).or_insert_with(|| {
                            let mut r = Resource::new(child.clone(), decode_segment(seg));
                            r.mime_type = Some(DIRECTORY_MIME_TYPE.into());
                            r
                        });
                    }
                } else {
                    dirs.entry(child.clone()).or_default();
                }
                dir = child;
            }
        }
        let dirs = dirs
            .into_iter()
            .map(|(k, v)| (k, v.into_values().collect()))
            .collect();
        Ok((
            Catalog {
                entries,
                by_uri,
                dirs,
            },
            files.into_values().collect(),
        ))
    }

    /// Every entry, sorted by URI.
    pub(crate) fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The entry of the skill whose `SKILL.md` is `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<&SkillEntry> {
        self.by_uri.get(uri).and_then(|i| self.entries.get(*i))
    }

    /// The children of the directory `uri`, if it is one.
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Resource]> {
        self.dirs.get(uri).map(Vec::as_slice)
    }
}

/// The contents `resources/read` answers for a served file: text when it is UTF-8.
pub(crate) fn contents_of(uri: String, data: &FileData) -> ResourceContents {
    use base64::Engine as _;
    match std::str::from_utf8(&data.bytes) {
        Ok(text) => ResourceContents::Text(mcp_proto::schema::TextResourceContents {
            uri,
            mime_type: Some(data.mime_type.clone()),
            text: text.to_owned(),
            meta: None,
        }),
        Err(_) => ResourceContents::Blob(mcp_proto::schema::BlobResourceContents {
            uri,
            mime_type: Some(data.mime_type.clone()),
            blob: base64::engine::general_purpose::STANDARD.encode(&data.bytes),
            meta: None,
        }),
    }
}

/// A percent-encoded segment decoded (as it is when it does not decode to UTF-8).
fn decode_segment(seg: &str) -> String {
    let b = seg.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = |n: Option<&u8>| n.and_then(|c| char::from(*c).to_digit(16));
        match (c, hex(b.get(i + 1)), hex(b.get(i + 2))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| seg.to_owned())
}

/// The `extensions` entry a server with skills declares.
pub(crate) fn capability() -> serde_json::Value {
    serde_json::json!({"directoryRead": true})
}

#[cfg(test)]
mod tests;
