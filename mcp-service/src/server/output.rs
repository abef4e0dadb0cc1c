//! What handlers may return beyond `Result<_, Error>`: any error type ([`IntoHandlerError`]),
//! prompt results from strings and messages ([`IntoPromptResult`]), and the registration of
//! handlers written with the `#[tool]`, `#[prompt]` and `#[router]` macros (feature `macros`):
//! [`ToolReturn`], [`PromptReturn`], [`Router`], [`FnTool`], [`FnPrompt`].

use std::sync::Arc;

use mcp_proto::Error;
use mcp_proto::schema::{GetPromptResult, PromptMessage, ResourceContents};

use super::ServerBuilder;

/// A handler's error of any type, as the server reports it: the conversion the macros apply to
/// a handler's `Err`, and that closures may use too (`.map_err(IntoHandlerError::into_handler_error)`).
///
/// Every `E` that converts into `Box<dyn std::error::Error + Send + Sync>` has it: any
/// `std::error::Error + Send + Sync + 'static` (`std::io::Error`, a `thiserror` type, this
/// crate's [`Error`]), `anyhow::Error`, an already boxed error, a `String` or a `&str`. When the
/// boxed error is this crate's [`Error`], it stays as it is, with its kind (so
/// `Error::new(ErrorKind::NotFound, ..)` is still a JSON-RPC error); anything else becomes
/// [`Error::handler`], a handler failure, which a tool reports as an `isError` result with the
/// error's message (the rule is on [`ServerBuilder::tool`]). The error's own
/// [`source`](std::error::Error::source) chain stays reachable.
///
/// ```
/// use mcp_service::server::IntoHandlerError;
/// use mcp_service::{Error, ErrorKind};
///
/// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// let e = io.into_handler_error();
/// assert_eq!((e.kind(), e.message()), (ErrorKind::HandlerFailed, "no such file"));
///
/// let boxed: Box<dyn std::error::Error + Send + Sync> =
///     Box::new(Error::new(ErrorKind::NotFound, "no note 7"));
/// assert_eq!(boxed.into_handler_error().kind(), ErrorKind::NotFound, "the kind is kept");
///
/// // In a closure: any error type, then `?`.
/// let parse = |s: &str| -> Result<u32, Error> {
///     s.parse::<u32>().map_err(IntoHandlerError::into_handler_error)
/// };
/// assert_eq!(parse("x").unwrap_err().message(), "invalid digit found in string");
/// ```
pub trait IntoHandlerError {
    /// The error as the server reports it.
    fn into_handler_error(self) -> Error;
}

impl<E> IntoHandlerError for E
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn into_handler_error(self) -> Error {
        match self.into().downcast::<Error>() {
            Ok(e) => *e,
            Err(other) => Error::handler(Boxed(other)),
        }
    }
}

/// A boxed error as an error type of its own (`Box<dyn Error>` is not one): its message and
/// its source are the boxed error's.
struct Boxed(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Debug for Boxed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for Boxed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Boxed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Something a resource or resource template handler may return: its contents (a `Vec` or
/// one [`ResourceContents`]), or a `String` (the text of the URI read, as `text/plain`).
///
/// ```
/// use mcp_service::server::IntoResourceContents;
///
/// let contents = String::from("# Notes").into_resource_contents("note://1".into());
/// assert_eq!(contents[0].uri(), "note://1");
/// assert_eq!(contents[0].as_text(), Some("# Notes"));
/// ```
pub trait IntoResourceContents {
    /// The contents of a `resources/read` of `uri`.
    fn into_resource_contents(self, uri: String) -> Vec<ResourceContents>;
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_resource_contents(self, _uri: String) -> Vec<ResourceContents> {
        self
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_resource_contents(self, _uri: String) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for String {
    fn into_resource_contents(self, uri: String) -> Vec<ResourceContents> {
        vec![text_plain(uri, self)]
    }
}

impl IntoResourceContents for &'static str {
    fn into_resource_contents(self, uri: String) -> Vec<ResourceContents> {
        vec![text_plain(uri, self.to_owned())]
    }
}

fn text_plain(uri: String, text: String) -> ResourceContents {
    match ResourceContents::text(uri, text) {
        ResourceContents::Text(mut t) => {
            t.mime_type = Some("text/plain".to_owned());
            ResourceContents::Text(t)
        }
        other => other,
    }
}

/// Something a prompt handler may return: a [`GetPromptResult`], its messages (one
/// [`PromptMessage`] or a `Vec`), or a `String` (one user message of that text).
///
/// ```
/// use mcp_service::server::IntoPromptResult;
///
/// let result = String::from("Review this code").into_prompt_result();
/// assert_eq!(result.messages.len(), 1);
/// assert_eq!(result.messages[0].content.as_text(), Some("Review this code"));
/// ```
pub trait IntoPromptResult {
    /// Converts into a `GetPromptResult`.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            messages: self,
            ..GetPromptResult::default()
        }
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> GetPromptResult {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> GetPromptResult {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> GetPromptResult {
        PromptMessage::user(self).into_prompt_result()
    }
}

/// What a `#[tool]` handler may return: a tool result ([`ToolOutput`](super::ToolOutput):
/// `String`, `Json<T>`, `CallToolResult`, content, …) or a `Result` of one with any error type
/// ([`IntoHandlerError`]). Feature `schemars`.
///
/// ```
/// use mcp_service::server::ToolReturn;
///
/// let ok: Result<String, std::io::Error> = Ok("done".into());
/// assert_eq!(ok.into_tool_return().unwrap(), "done");
/// let failed: Result<String, std::io::Error> = Err(std::io::Error::other("disk full"));
/// assert_eq!(failed.into_tool_return().unwrap_err().message(), "disk full");
/// assert_eq!("plain".into_tool_return().unwrap(), "plain");
/// ```
#[cfg(feature = "schemars")]
pub trait ToolReturn {
    /// The result on success.
    type Output: super::ToolOutput;
    /// Splits into the result or the error the server reports.
    ///
    /// # Errors
    /// The handler's error, converted by [`IntoHandlerError`].
    fn into_tool_return(self) -> Result<Self::Output, Error>;
}

#[cfg(feature = "schemars")]
impl<R: super::ToolOutput> ToolReturn for R {
    type Output = R;
    fn into_tool_return(self) -> Result<R, Error> {
        Ok(self)
    }
}

#[cfg(feature = "schemars")]
impl<R: super::ToolOutput, E: IntoHandlerError> ToolReturn for Result<R, E> {
    type Output = R;
    fn into_tool_return(self) -> Result<R, Error> {
        self.map_err(IntoHandlerError::into_handler_error)
    }
}

/// What a `#[prompt]` handler may return: an [`IntoPromptResult`] or a `Result` of one with any
/// error type ([`IntoHandlerError`]).
///
/// ```
/// use mcp_service::server::PromptReturn;
///
/// let failed: Result<String, std::fmt::Error> = Err(std::fmt::Error);
/// assert!(failed.into_prompt_return().is_err());
/// assert_eq!("hi".into_prompt_return().unwrap().messages.len(), 1);
/// ```
pub trait PromptReturn {
    /// Converts into the prompt's result or the error the server reports.
    ///
    /// # Errors
    /// The handler's error, converted by [`IntoHandlerError`].
    fn into_prompt_return(self) -> Result<GetPromptResult, Error>;
}

impl<R: IntoPromptResult> PromptReturn for R {
    fn into_prompt_return(self) -> Result<GetPromptResult, Error> {
        Ok(self.into_prompt_result())
    }
}

impl<R: IntoPromptResult, E: IntoHandlerError> PromptReturn for Result<R, E> {
    fn into_prompt_return(self) -> Result<GetPromptResult, Error> {
        self.map(IntoPromptResult::into_prompt_result)
            .map_err(IntoHandlerError::into_handler_error)
    }
}

/// The tools and prompts of an impl block marked `#[router]` (feature `macros`), registered
/// together by [`ServerBuilder::router`] on one shared `Arc` of the state.
///
/// The macro implements it for the block's type, with the bounds of the block plus
/// `Self: Send + Sync + 'static` (the handlers run on any task of the server).
pub trait Router: Send + Sync + 'static {
    /// Registers every `#[tool]` and `#[prompt]` method of the block on `builder`, each
    /// calling its method on `self`.
    fn register(self: Arc<Self>, builder: ServerBuilder) -> ServerBuilder;
}

/// A free `async fn` marked `#[tool]` (feature `macros`): the macro defines a type of the fn's
/// name (an empty enum, in the type namespace, so the fn stays callable) that implements it,
/// for [`ServerBuilder::tool_fn`].
pub trait FnTool {
    /// Registers the tool on `builder`.
    fn register(builder: ServerBuilder) -> ServerBuilder;
}

/// A free `async fn` marked `#[prompt]` (feature `macros`), for [`ServerBuilder::prompt_fn`]:
/// as [`FnTool`] for tools.
pub trait FnPrompt {
    /// Registers the prompt on `builder`.
    fn register(builder: ServerBuilder) -> ServerBuilder;
}

impl ServerBuilder {
    /// Registers the `#[tool]` and `#[prompt]` methods of a `#[router]` impl block (feature
    /// `macros`), all sharing `state` (kept in one `Arc`). Errors are those of
    /// [`tool`](Self::tool) and [`prompt`](Self::prompt), reported by
    /// [`try_build`](Self::try_build).
    ///
    #[cfg_attr(feature = "macros", doc = "```")]
    #[cfg_attr(not(feature = "macros"), doc = "```ignore")]
    /// use mcp_service::{Server, router, tool};
    ///
    /// struct Notes {
    ///     prefix: String,
    /// }
    ///
    /// #[router]
    /// impl Notes {
    ///     /// Adds a note.
    ///     #[tool]
    ///     async fn add(&self, text: String) -> String {
    ///         format!("{}{text}", self.prefix)
    ///     }
    /// }
    ///
    /// let notes = Notes { prefix: "note: ".into() };
    /// let server = Server::builder("notes", "1.0").router(notes).try_build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn router<S: Router>(self, state: S) -> Self {
        self.router_arc(Arc::new(state))
    }

    /// [`router`](Self::router) with state already in an `Arc` (one the application keeps a
    /// clone of).
    pub fn router_arc<S: Router>(self, state: Arc<S>) -> Self {
        state.register(self)
    }

    /// Registers a free `async fn` marked `#[tool]` (feature `macros`): `.tool_fn::<echo>()`
    /// for `#[tool] async fn echo(..)`. Errors are those of [`tool`](Self::tool), reported by
    /// [`try_build`](Self::try_build).
    pub fn tool_fn<T: FnTool>(self) -> Self {
        T::register(self)
    }

    /// Registers a free `async fn` marked `#[prompt]` (feature `macros`): `.prompt_fn::<review>()`
    /// for `#[prompt] async fn review(..)`. Errors are those of [`prompt`](Self::prompt),
    /// reported by [`try_build`](Self::try_build).
    pub fn prompt_fn<T: FnPrompt>(self) -> Self {
        T::register(self)
    }
}

/// Support of the code the macros generate; not an API.
#[doc(hidden)]
pub mod __private {
    use super::*;
    use mcp_proto::schema::{Prompt, PromptArgument, Tool, ToolAnnotations};

    pub use serde;
    pub use std::collections::BTreeMap;
    pub use std::string::String;
    pub use std::sync::Arc;

    #[cfg(feature = "schemars")]
    pub use schemars;

    /// A tool's description without its schemas.
    pub fn tool(
        name: &str,
        description: Option<&str>,
        title: Option<&str>,
        [read_only, destructive, idempotent, open_world]: [Option<bool>; 4],
    ) -> Tool {
        let hints = [read_only, destructive, idempotent, open_world];
        Tool {
            name: name.to_owned(),
            title: title.map(str::to_owned),
            description: description.map(str::to_owned),
            annotations: hints.iter().any(Option::is_some).then(|| ToolAnnotations {
                read_only_hint: read_only,
                destructive_hint: destructive,
                idempotent_hint: idempotent,
                open_world_hint: open_world,
                ..ToolAnnotations::default()
            }),
            ..Tool::default()
        }
    }

    /// The schemas of a `#[tool]`'s types; `generated` when its argument type is the macro's
    /// own (whose name is no title for the schema).
    #[cfg(feature = "schemars")]
    fn typed_tool<T, Out>(tool: Tool, generated: bool) -> Result<Tool, Error>
    where
        T: schemars::JsonSchema,
        Out: super::super::ToolOutput,
    {
        let mut tool = super::super::typed::typed::<T, Out>(tool)?;
        if generated {
            // The macro's own type: its name is no title, and a tool without parameters still
            // lists (no) properties, which some clients expect.
            tool.input_schema.remove("title");
            tool.input_schema
                .entry("properties")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        }
        Ok(tool)
    }

    /// Registers a typed tool whose handler returns any [`ToolReturn`]; `generated` when its
    /// argument type is the macro's own.
    #[cfg(feature = "schemars")]
    pub fn register_tool<T, F, Fut>(
        mut builder: ServerBuilder,
        tool: Tool,
        generated: bool,
        handler: F,
    ) -> ServerBuilder
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, super::super::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future + Send + 'static,
        Fut::Output: ToolReturn,
        <Fut::Output as ToolReturn>::Output: 'static,
    {
        type Out<Fut> = <<Fut as std::future::Future>::Output as ToolReturn>::Output;
        match typed_tool::<T, Out<Fut>>(tool, generated) {
            Ok(tool) => builder.tool(tool, move |args: T, cx| {
                let run = handler(args, cx);
                async move { run.await.into_tool_return() }
            }),
            Err(e) => {
                builder.error.get_or_insert(e);
                builder
            }
        }
    }

    /// [`register_tool`] on [`LocalHandlers`](super::super::LocalHandlers) (`#[router(local)]`):
    /// neither the handler nor its future need be `Send`.
    #[cfg(feature = "schemars")]
    pub fn register_local_tool<T, F, Fut>(
        mut local: super::super::LocalHandlers,
        tool: Tool,
        generated: bool,
        handler: F,
    ) -> super::super::LocalHandlers
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, super::super::ToolContext) -> Fut + 'static,
        Fut: std::future::Future + 'static,
        Fut::Output: ToolReturn,
        <Fut::Output as ToolReturn>::Output: Send + 'static,
    {
        type Out<Fut> = <<Fut as std::future::Future>::Output as ToolReturn>::Output;
        match typed_tool::<T, Out<Fut>>(tool, generated) {
            Ok(tool) => local.tool(tool, move |args: T, cx| {
                let run = handler(args, cx);
                async move { run.await.into_tool_return() }
            }),
            Err(e) => {
                local.error.get_or_insert(e);
                local
            }
        }
    }

    /// A prompt's description.
    pub fn prompt(
        name: &str,
        description: Option<&str>,
        title: Option<&str>,
        arguments: Vec<PromptArgument>,
    ) -> Prompt {
        Prompt {
            name: name.to_owned(),
            title: title.map(str::to_owned),
            description: description.map(str::to_owned),
            arguments: (!arguments.is_empty()).then_some(arguments),
            ..Prompt::default()
        }
    }

    /// One argument of a prompt.
    pub fn prompt_argument(
        name: &str,
        description: Option<&str>,
        required: bool,
    ) -> PromptArgument {
        PromptArgument {
            name: name.to_owned(),
            description: description.map(str::to_owned),
            required: Some(required),
            ..PromptArgument::default()
        }
    }

    /// The arguments of a prompt that takes them as one type: its properties, their
    /// descriptions, and which are required.
    #[cfg(feature = "schemars")]
    pub fn prompt_arguments_of<T: schemars::JsonSchema>() -> Vec<PromptArgument> {
        let schema = super::super::typed::input_schema_of::<T>().to_value();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(serde_json::Value::as_array)
            .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        let Some(serde_json::Value::Object(properties)) = schema.get("properties") else {
            return Vec::new();
        };
        properties
            .iter()
            .map(|(name, p)| {
                let description = p.get("description").and_then(serde_json::Value::as_str);
                prompt_argument(name, description, required.contains(&name.as_str()))
            })
            .collect()
    }

    /// A prompt's arguments as one type.
    pub fn prompt_arguments_into<T: serde::de::DeserializeOwned>(
        arguments: BTreeMap<String, String>,
    ) -> Result<T, Error> {
        let object = arguments
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect::<serde_json::Map<_, _>>();
        serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| Error::invalid_params(format!("invalid arguments: {e}")))
    }

    /// A required prompt argument, parsed.
    pub fn prompt_arg<T>(arguments: &BTreeMap<String, String>, name: &str) -> Result<T, Error>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        prompt_arg_opt(arguments, name)?
            .ok_or_else(|| Error::invalid_params(format!("missing required argument `{name}`")))
    }

    /// An optional prompt argument, parsed.
    pub fn prompt_arg_opt<T>(
        arguments: &BTreeMap<String, String>,
        name: &str,
    ) -> Result<Option<T>, Error>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        arguments
            .get(name)
            .map(|v| {
                v.parse::<T>()
                    .map_err(|e| Error::invalid_params(format!("invalid argument `{name}`: {e}")))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::ErrorKind;
    use std::collections::BTreeMap;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("outer")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn errors_keep_their_kind_or_become_handler_failures() {
        let e = Error::invalid_params("bad").into_handler_error();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        let e = "plain text".into_handler_error();
        assert_eq!(
            (e.kind(), e.message()),
            (ErrorKind::HandlerFailed, "plain text")
        );
        // The source chain of a boxed error stays reachable.
        let boxed: Box<dyn std::error::Error + Send + Sync> =
            Box::new(Outer(std::io::Error::other("inner")));
        let e = boxed.into_handler_error();
        assert_eq!(e.message(), "outer");
        let source = std::error::Error::source(&e).and_then(std::error::Error::source);
        assert_eq!(source.map(ToString::to_string).as_deref(), Some("inner"));
    }

    #[test]
    fn prompt_arguments_parse() {
        let mut args = BTreeMap::new();
        args.insert("n".to_owned(), "7".to_owned());
        args.insert("x".to_owned(), "seven".to_owned());
        assert_eq!(__private::prompt_arg::<u32>(&args, "n").unwrap(), 7);
        assert_eq!(__private::prompt_arg_opt::<u32>(&args, "m").unwrap(), None);
        let e = __private::prompt_arg::<u32>(&args, "x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        assert!(e.message().contains("`x`"), "{}", e.message());
        let e = __private::prompt_arg::<String>(&args, "m").unwrap_err();
        assert!(e.message().contains("missing"), "{}", e.message());
    }
}
