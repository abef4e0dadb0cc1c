//! The server's side of the skills extension (feature `skills`): registering skills on the
//! builder, serving their files as resources, answering `skills/list`, `skills/get` and
//! `resources/directory/read`, and changing the skills of a running server. What a skill is
//! lives in [`crate::skills`].
//!
//! The served skills live in the server's [`Registry`] (under its one lock, with the
//! resources their files are): a change builds the new catalog first, checks it against the
//! application's resources, and only then replaces the old one, so a request sees the skills
//! before or after a change, never half of it.

use std::path::{Path, PathBuf};

use mcp_proto::schema::skills::{EXTENSION_ID, RESOURCES_DIRECTORY_READ, SKILLS_GET, SKILLS_LIST};
use mcp_proto::schema::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, ReadDirectoryRequestParams,
    ReadDirectoryResult,
};

use super::*;
use crate::skills::{Catalog, DEFAULT_MAX_SKILLS, FileData, Skill, SkillChanges};

/// Where a served skill came from: [`reload_skills`](Server::reload_skills) replaces the skills
/// of the folders and keeps the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Given in code ([`ServerBuilder::skill`], [`Server::add_skill`]).
    Code,
    /// Read from the `n`th folder given to [`ServerBuilder::skills_dir`].
    Dir(usize),
}

/// What the builder was told about skills.
pub(super) struct Setup {
    skills: Vec<(Skill, Origin)>,
    dirs: Vec<PathBuf>,
    max: usize,
    /// Whether the extension is declared (a skill, a folder or `skills_extension` was given).
    pub(super) declared: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            skills: Vec::new(),
            dirs: Vec::new(),
            max: DEFAULT_MAX_SKILLS,
            declared: false,
        }
    }
}

/// The skills a server serves, in its registry.
pub(super) struct SkillSet {
    /// By the URI of their `SKILL.md`.
    skills: BTreeMap<String, (Skill, Origin)>,
    /// The folders [`Server::reload_skills`] reads again.
    dirs: Arc<[PathBuf]>,
    max: usize,
    catalog: Catalog,
    /// Every file served, by URI (a file two nested skills share, once).
    files: HashMap<String, FileData>,
}

impl ServerBuilder {
    /// Serves a skill (skills extension, `io.modelcontextprotocol/skills`; see
    /// [`crate::skills`]): each of its files becomes a resource, and the server answers
    /// `skills/list`, `skills/get` and `resources/directory/read` and declares the extension
    /// (with `directoryRead`). A URI registered twice is reported by
    /// [`try_build`](Self::try_build).
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.skills.push((skill, Origin::Code));
        self.skills.declared = true;
        self
    }

    /// Serves every skill in the directory `root` (each `<name>/SKILL.md` folder, read now;
    /// see [`crate::skills::load_dir`]). A folder that cannot be read or is not a valid skill
    /// is reported by [`try_build`](Self::try_build). An empty `root` still declares the
    /// extension. [`Server::reload_skills`] reads `root` again.
    pub fn skills_dir(mut self, root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        let n = self.skills.dirs.len();
        self.skills.dirs.push(root.to_path_buf());
        self.skills.declared = true;
        // One more than the bound, so that a folder over it is reported as such at build.
        match crate::skills::load_dir_at_most(root, self.skills.max.saturating_add(1)) {
            Ok(skills) => self
                .skills
                .skills
                .extend(skills.into_iter().map(|s| (s, Origin::Dir(n)))),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Declares the skills extension even without any skill yet, for a server whose skills
    /// are all added while it runs ([`Server::add_skill`]). (A server declares the extension
    /// as well with any [`skill`](Self::skill) or [`skills_dir`](Self::skills_dir).)
    pub fn skills_extension(mut self) -> Self {
        self.skills.declared = true;
        self
    }

    /// The most skills the server serves ([`DEFAULT_MAX_SKILLS`] unless set): more at build is
    /// a [`try_build`](Self::try_build) error, and a runtime change that would go over it is
    /// refused (`LimitExceeded`). Each skill is bounded on its own too
    /// ([`crate::skills::MAX_RESOURCES_PER_SKILL`] files, [`crate::skills::MAX_SKILL_BYTES`]
    /// bytes).
    pub fn max_skills(mut self, n: usize) -> Self {
        self.skills.max = n;
        self
    }
}

/// At build: registers the skills' files as resources and declares the extension in `caps`.
pub(super) fn install(builder: &mut ServerBuilder, caps: &mut Value) -> Result<(), Error> {
    let setup = std::mem::take(&mut builder.skills);
    if !setup.declared {
        return Ok(());
    }
    let mut skills = BTreeMap::new();
    for (skill, origin) in setup.skills {
        let uri = skill.uri();
        if skills.insert(uri.clone(), (skill, origin)).is_some() {
            return Err(Error::new(
                ErrorKind::DuplicateRegistration,
                format!("skill {uri} is registered twice"),
            ));
        }
    }
    let registry = &mut builder.registry;
    registry.skills = Some(SkillSet {
        skills: BTreeMap::new(),
        dirs: setup.dirs.into(),
        max: setup.max,
        catalog: Catalog::default(),
        files: HashMap::new(),
    });
    apply(registry, skills)?;
    if let Some(obj) = caps.as_object_mut() {
        let extensions = obj
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(ext) = extensions.as_object_mut() {
            ext.insert(EXTENSION_ID.into(), crate::skills::capability());
        }
    }
    Ok(())
}

/// Serves `skills` instead of the registry's skills: their catalog, and their files as
/// resources. Nothing changes on an error (a skill over the bounds, two skills at one URI, a
/// file at the URI of an application's resource). What changed, and the URIs of the files
/// whose contents changed or that are gone.
fn apply(
    registry: &mut Registry,
    skills: BTreeMap<String, (Skill, Origin)>,
) -> Result<(SkillChanges, Vec<String>), Error> {
    let Some(set) = registry.skills.as_ref() else {
        return Err(not_declared());
    };
    if skills.len() > set.max {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!("a server serves at most {} skills", set.max),
        ));
    }
    let (catalog, served) = Catalog::build(skills.values().map(|(s, _)| s))?;
    for file in &served {
        let uri = &file.resource.uri;
        if !set.files.contains_key(uri) && registry.resources.contains_key(uri) {
            return Err(Error::new(
                ErrorKind::DuplicateRegistration,
                format!("resource `{uri}` is registered twice (as a skill file)"),
            ));
        }
    }
    let mut changes = SkillChanges::default();
    for (uri, (old, _)) in &set.skills {
        match skills.get(uri) {
            None => changes.removed.push(uri.clone()),
            Some((new, _)) if !new.same_files(old) => changes.replaced.push(uri.clone()),
            Some(_) => {}
        }
    }
    changes.added = skills
        .keys()
        .filter(|uri| !set.skills.contains_key(*uri))
        .cloned()
        .collect();
    let mut files = HashMap::with_capacity(served.len());
    let handler = skill_file_handler();
    let mut resources = Vec::with_capacity(served.len());
    for file in served {
        files.insert(file.resource.uri.clone(), file.data);
        resources.push(file.resource);
    }
    let updated: Vec<String> = set
        .files
        .iter()
        .filter(|(uri, old)| files.get(*uri).is_none_or(|new| !new.same(old)))
        .map(|(uri, _)| uri.clone())
        .collect();
    for uri in set.files.keys() {
        if !files.contains_key(uri) {
            registry.resources.remove(uri);
        }
    }
    for resource in resources {
        registry.resources.insert(
            resource.uri.clone(),
            Arc::new(ResourceEntry {
                resource,
                handler: handler.clone(),
            }),
        );
    }
    if let Some(set) = registry.skills.as_mut() {
        set.skills = skills;
        set.catalog = catalog;
        set.files = files;
    }
    Ok((changes, updated))
}

/// The `resources/read` handler of every skill file: the file as the server serves it when
/// the read runs, the resource-not-found error once its skill is gone.
fn skill_file_handler() -> Arc<ResourceFn> {
    boxed_resource(|uri: String, _vars, cx: ResourceContext| async move {
        let version = cx
            .protocol_version()
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE);
        let registry = cx.server.registry.read().unwrap_or_else(|e| e.into_inner());
        match registry.skills.as_ref().and_then(|s| s.files.get(&uri)) {
            Some(data) => Ok(vec![crate::skills::contents_of(uri, data)]),
            None => Err(Error::resource_not_found(&uri, version)),
        }
    })
}

fn not_declared() -> Error {
    Error::invalid_params(
        "this server does not serve skills: declare the extension when building it \
         (ServerBuilder::skill, skills_dir or skills_extension)",
    )
}

impl Server {
    /// Changes the served skills with `change` (on a copy), then tells connected clients.
    fn change_skills<T>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, (Skill, Origin)>) -> Result<T, Error>,
    ) -> Result<(T, SkillChanges), Error> {
        let (out, changes, updated) = {
            let mut registry = self
                .inner
                .registry
                .write()
                .unwrap_or_else(|e| e.into_inner());
            let Some(set) = registry.skills.as_ref() else {
                return Err(not_declared());
            };
            let mut skills = set.skills.clone();
            let out = change(&mut skills)?;
            let (changes, updated) = apply(&mut registry, skills)?;
            (out, changes, updated)
        };
        self.skills_changed(&changes, &updated);
        Ok((out, changes))
    }

    /// Tells connected clients that skills changed: the resource list (skill files are
    /// resources; the extension has no notification of its own), and each file that changed
    /// or went away to those subscribed to it.
    fn skills_changed(&self, changes: &SkillChanges, updated: &[String]) {
        if changes.is_empty() {
            return;
        }
        self.list_changed(RESOURCES_CHANGED);
        for uri in updated {
            self.resource_updated(uri);
        }
    }

    /// Serves one more skill on the running server (skills extension; see
    /// [`crate::skills`]): its files become resources, and connected clients are told the
    /// resource list changed.
    ///
    /// Errors: `DuplicateRegistration` when a skill is already served at its URI (see
    /// [`replace_skill`](Self::replace_skill)) or one of its files clashes with a resource;
    /// `LimitExceeded` past [`max_skills`](ServerBuilder::max_skills); `InvalidParams` when the
    /// server was built without the extension
    /// ([`skills_extension`](ServerBuilder::skills_extension)).
    pub fn add_skill(&self, skill: Skill) -> Result<(), Error> {
        self.change_skills(|skills| match skills.entry(skill.uri()) {
            Entry::Occupied(e) => Err(Error::new(
                ErrorKind::DuplicateRegistration,
                format!("skill {} is already served", e.key()),
            )),
            Entry::Vacant(v) => {
                v.insert((skill, Origin::Code));
                Ok(())
            }
        })
        .map(|_| ())
    }

    /// Serves `skill` instead of the skill at its URI, or in addition when there is none;
    /// whether there was one. Clients are told when the files or their contents differ;
    /// those subscribed to a file that changed or is gone get `notifications/resources/updated`.
    /// A skill read from a [`skills_dir`](ServerBuilder::skills_dir) folder stays the folder's:
    /// [`reload_skills`](Self::reload_skills) serves what the folder holds again.
    ///
    /// Errors as [`add_skill`](Self::add_skill) (but for a skill already served).
    pub fn replace_skill(&self, skill: Skill) -> Result<bool, Error> {
        self.change_skills(|skills| {
            let uri = skill.uri();
            let origin = skills.get(&uri).map_or(Origin::Code, |(_, o)| *o);
            Ok(skills.insert(uri, (skill, origin)).is_some())
        })
        .map(|(replaced, _)| replaced)
    }

    /// Stops serving the skill whose `SKILL.md` is at `uri` (`skill://<path>/SKILL.md`, as
    /// [`Skill::uri`]); `false` if there was none (or the server does not serve skills). Its
    /// files are no longer resources: reading one, even a read already under way, answers the
    /// resource-not-found error, and `skills/get` answers `-32602`. Clients are told as for
    /// [`replace_skill`](Self::replace_skill).
    pub fn remove_skill(&self, uri: &str) -> bool {
        self.change_skills(|skills| Ok(skills.remove(uri).is_some()))
            .is_ok_and(|(removed, _)| removed)
    }

    /// Reads the [`skills_dir`](ServerBuilder::skills_dir) folders again and serves what they
    /// hold now instead of what they held: new skill folders are added, folders gone are
    /// removed, changed ones replaced; skills given in code stay. Clients are told as for
    /// [`replace_skill`](Self::replace_skill).
    ///
    /// Errors (nothing changes): a folder that cannot be read or a skill in it that is invalid
    /// or over the bounds, a skill at the URI of one given in code (`DuplicateRegistration`),
    /// more than [`max_skills`](ServerBuilder::max_skills) skills in all (`LimitExceeded`), no
    /// skills extension (`InvalidParams`).
    pub fn reload_skills(&self) -> Result<SkillChanges, Error> {
        let (dirs, max) = {
            let registry = self
                .inner
                .registry
                .read()
                .unwrap_or_else(|e| e.into_inner());
            let Some(set) = registry.skills.as_ref() else {
                return Err(not_declared());
            };
            (set.dirs.clone(), set.max)
        };
        // The folders are read before the registry is locked: requests are served meanwhile.
        let mut scanned = Vec::new();
        for (n, dir) in dirs.iter().enumerate() {
            let bound = max.saturating_add(1).saturating_sub(scanned.len());
            for skill in crate::skills::load_dir_at_most(dir, bound)? {
                scanned.push((skill, Origin::Dir(n)));
            }
        }
        self.change_skills(|skills| {
            skills.retain(|_, (_, origin)| *origin == Origin::Code);
            for (skill, origin) in scanned {
                match skills.entry(skill.uri()) {
                    Entry::Vacant(v) => {
                        v.insert((skill, origin));
                    }
                    Entry::Occupied(e) => {
                        return Err(Error::new(
                            ErrorKind::DuplicateRegistration,
                            format!("skill {} is served twice", e.key()),
                        ));
                    }
                }
            }
            Ok(())
        })
        .map(|(_, changes)| changes)
    }
}

/// `skills/list`, `skills/get` and `resources/directory/read`.
pub(super) fn handle(
    inner: &Inner,
    method: &str,
    params: Option<&RawValue>,
    cache: (Option<u64>, Option<CacheScope>),
) -> Result<Box<RawValue>, Error> {
    let registry = inner.registry.read().unwrap_or_else(|e| e.into_inner());
    let Some(set) = registry.skills.as_ref() else {
        return Err(Error::method_not_found(method));
    };
    let catalog = &set.catalog;
    let (ttl_ms, cache_scope) = cache;
    match method {
        SKILLS_LIST => {
            let q: PaginatedRequestParams = parse(params)?;
            let (skills, next_cursor) =
                page(catalog.entries(), q.cursor.as_deref(), inner.page_size)?;
            drop(registry);
            to_raw(&ListSkillsResult {
                skills,
                next_cursor,
                ttl_ms,
                cache_scope,
                ..Default::default()
            })
        }
        SKILLS_GET => {
            let q: GetSkillRequestParams = parse_required(params)?;
            let Some(skill) = catalog.get(&q.uri).cloned() else {
                return Err(not_served(&q.uri, "is not a skill this server serves"));
            };
            drop(registry);
            to_raw(&GetSkillResult {
                skill,
                ttl_ms,
                cache_scope,
                result_type: None,
                meta: None,
            })
        }
        RESOURCES_DIRECTORY_READ => {
            let q: ReadDirectoryRequestParams = parse_required(params)?;
            let Some(children) = catalog.directory(&q.uri) else {
                return Err(not_served(&q.uri, "is not a directory resource"));
            };
            let (resources, next_cursor) = page(children, q.cursor.as_deref(), inner.page_size)?;
            drop(registry);
            to_raw(&ReadDirectoryResult {
                resources,
                next_cursor,
                ttl_ms,
                cache_scope,
                ..Default::default()
            })
        }
        other => Err(Error::method_not_found(other)),
    }
}

/// -32602 naming the URI (as `resources/read` does for an unknown resource).
fn not_served(uri: &str, why: &str) -> Error {
    Error::invalid_params(format!("{uri} {why}")).with_data(
        to_raw(&serde_json::json!({ "uri": uri }))
            .unwrap_or_else(|_| mcp_proto::jsonrpc::empty_object()),
    )
}
