//! The server's side of the skills extension (feature `skills`): registering skills on the
//! builder, serving their files as resources, and answering `skills/list`, `skills/get` and
//! `resources/directory/read`. What a skill is lives in [`crate::skills`].

use std::path::Path;

use mcp_proto::schema::skills::{EXTENSION_ID, RESOURCES_DIRECTORY_READ, SKILLS_GET, SKILLS_LIST};
use mcp_proto::schema::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, ReadDirectoryRequestParams,
    ReadDirectoryResult,
};

use super::*;
use crate::skills::{Catalog, Skill};

impl ServerBuilder {
    /// Serves a skill (skills extension, `io.modelcontextprotocol/skills`; see
    /// [`crate::skills`]): each of its files becomes a resource, and the server answers
    /// `skills/list`, `skills/get` and `resources/directory/read` and declares the extension
    /// (with `directoryRead`). A URI registered twice is reported by
    /// [`try_build`](Self::try_build).
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.get_or_insert_with(Vec::new).push(skill);
        self
    }

    /// Serves every skill in the directory `root` (each `<name>/SKILL.md` folder, read now;
    /// see [`crate::skills::load_dir`]). A folder that cannot be read or is not a valid skill
    /// is reported by [`try_build`](Self::try_build). An empty `root` still declares the
    /// extension.
    pub fn skills_dir(mut self, root: impl AsRef<Path>) -> Self {
        match crate::skills::load_dir(root) {
            Ok(skills) => self.skills.get_or_insert_with(Vec::new).extend(skills),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }
}

/// At build: registers the skills' files as resources and declares the extension in `caps`.
pub(super) fn install(
    builder: &mut ServerBuilder,
    caps: &mut Value,
) -> Result<Option<Arc<Catalog>>, Error> {
    let Some(skills) = builder.skills.take() else {
        return Ok(None);
    };
    let (catalog, files) = Catalog::build(&skills)?;
    for served in files {
        let uri = served.resource.uri.clone();
        let data = served.data;
        let resource = served.resource;
        let handler = boxed_resource(move |uri: String, _vars, _cx: ToolContext| {
            let contents = crate::skills::contents_of(uri, &data);
            async move { Ok(vec![contents]) }
        });
        if let Err(taken) = insert_unique(&mut builder.registry.resources, uri, || ResourceEntry {
            resource,
            handler,
        }) {
            return Err(Error::new(
                ErrorKind::DuplicateRegistration,
                format!("resource `{taken}` is registered twice (as a skill file)"),
            ));
        }
    }
    if let Some(obj) = caps.as_object_mut() {
        let extensions = obj
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(ext) = extensions.as_object_mut() {
            ext.insert(EXTENSION_ID.into(), crate::skills::capability());
        }
    }
    Ok(Some(Arc::new(catalog)))
}

/// `skills/list`, `skills/get` and `resources/directory/read`.
pub(super) fn handle(
    inner: &Inner,
    method: &str,
    params: Option<&RawValue>,
    cache: (Option<u64>, Option<CacheScope>),
) -> Result<Box<RawValue>, Error> {
    let Some(catalog) = &inner.skills else {
        return Err(Error::method_not_found(method));
    };
    let (ttl_ms, cache_scope) = cache;
    match method {
        SKILLS_LIST => {
            let q: PaginatedRequestParams = parse(params)?;
            let (skills, next_cursor) =
                page(catalog.entries(), q.cursor.as_deref(), inner.page_size)?;
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
