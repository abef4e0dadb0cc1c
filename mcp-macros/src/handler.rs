//! One `#[tool]` or `#[prompt]` handler: its options, its signature read into parameters, and
//! the code that registers it on a `ServerBuilder`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, FnArg, GenericArgument, Ident, Lit, LitBool, LitStr, Pat, Path, PathArguments,
    ReturnType, Signature, Type,
};

/// Which macro.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Prompt => "#[prompt]",
        }
    }
}

/// The options of `#[tool(..)]` / `#[prompt(..)]`.
#[derive(Default)]
pub(crate) struct Options {
    name: Option<LitStr>,
    description: Option<LitStr>,
    title: Option<LitStr>,
    /// `read_only`, `destructive`, `idempotent`, `open_world` (tools only).
    hints: [Option<bool>; 4],
    /// `crate = path`: the service crate's path.
    pub(crate) krate: Option<Path>,
    /// `__router`: the method was read by `#[router]` already.
    pub(crate) in_router: bool,
    /// `local` (free fns): registered on `LocalHandlers`, without the `Send` bound.
    pub(crate) local: Option<Ident>,
}

const HINTS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

impl Options {
    /// Parses the tokens inside `#[tool(..)]` / `#[prompt(..)]`.
    pub(crate) fn parse(kind: Kind, tokens: TokenStream) -> syn::Result<Options> {
        let mut options = Options::default();
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.get_ident().map(Ident::to_string);
            let key = key.as_deref().unwrap_or("");
            match key {
                "name" => options.name = Some(meta.value()?.parse()?),
                "description" => options.description = Some(meta.value()?.parse()?),
                "title" => options.title = Some(meta.value()?.parse()?),
                "crate" => options.krate = Some(parse_path(meta.value()?)?),
                "__router" => options.in_router = true,
                "local" => options.local = meta.path.get_ident().cloned(),
                _ if kind == Kind::Tool && HINTS.contains(&key) => {
                    let value = if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<LitBool>()?.value
                    } else {
                        true
                    };
                    let i = HINTS.iter().position(|h| *h == key).unwrap_or(0);
                    options.hints[i] = Some(value);
                }
                _ => {
                    let expected = match kind {
                        Kind::Tool => {
                            "name, description, title, read_only, destructive, idempotent, \
                             open_world, local, crate"
                        }
                        Kind::Prompt => "name, description, title, local, crate",
                    };
                    return Err(meta.error(format!(
                        "unknown {} option; expected one of: {expected}",
                        kind.attr()
                    )));
                }
            }
            Ok(())
        });
        syn::parse::Parser::parse2(parser, tokens)?;
        Ok(options)
    }
}

/// `crate = some::path` or `crate = "some::path"`.
pub(crate) fn parse_path(input: syn::parse::ParseStream<'_>) -> syn::Result<Path> {
    if input.peek(LitStr) {
        input.parse::<LitStr>()?.parse()
    } else {
        input.call(Path::parse_mod_style)
    }
}

/// A parameter of the handler.
enum Param {
    /// One argument (a field of the arguments object).
    Arg {
        ident: Ident,
        ty: Type,
        /// The attributes that go to the generated field (docs, `serde`, `schemars`).
        field_attrs: Vec<Attribute>,
        doc: Option<String>,
    },
    /// `#[args]`: the whole arguments object as one type.
    Whole { ty: Type },
    /// The handler's context, by value or by reference.
    Context { by_ref: bool },
}

/// A handler read from its signature.
pub(crate) struct Handler {
    kind: Kind,
    options: Options,
    ident: Ident,
    receiver: bool,
    params: Vec<Param>,
    output: Type,
    doc: Option<String>,
}

/// The types a context parameter is recognised by (the last segment of its path).
const CONTEXTS: [&str; 3] = ["ToolContext", "HandlerContext", "PromptContext"];

impl Handler {
    /// Reads a handler and strips the attributes of its parameters (`#[doc]`, `#[args]`,
    /// `#[context]`, `#[serde]`, `#[schemars]`) from `sig`. `in_impl`: the fn is a method of a
    /// `#[router]` block (so it may take `&self`).
    pub(crate) fn read(
        kind: Kind,
        options: Options,
        attrs: &[Attribute],
        sig: &mut Signature,
        in_impl: bool,
    ) -> syn::Result<Handler> {
        let mut errors = Errors::default();
        let attr = kind.attr();
        if sig.asyncness.is_none() {
            errors.push(syn::Error::new(
                sig.fn_token.span,
                format!(
                    "{attr} goes on an `async fn`: write `async fn {}`",
                    sig.ident
                ),
            ));
        }
        if !sig.generics.params.is_empty() {
            errors.push(syn::Error::new_spanned(
                &sig.generics,
                format!(
                    "a {attr} fn cannot have generic parameters of its own (the argument types \
                     make its schema); a generic impl block works"
                ),
            ));
        }
        if let Some(v) = &sig.variadic {
            errors.push(syn::Error::new_spanned(
                v,
                "a variadic handler is not supported",
            ));
        }
        let mut receiver = false;
        let mut params = Vec::new();
        let mut context_seen = false;
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => {
                    let problem = if !in_impl {
                        Some(format!(
                            "a {attr} method needs `#[router]` on its impl block (which \
                             registers it with the state it is called on)"
                        ))
                    } else if r.colon_token.is_some() {
                        Some("take the state as `&self`".to_owned())
                    } else if r.reference.is_none() {
                        Some(
                            "`self` by value: a handler is called many times, on one shared \
                             state; take `&self`"
                                .to_owned(),
                        )
                    } else if r.mutability.is_some() {
                        Some(
                            "`&mut self`: handlers run concurrently on one shared state; take \
                             `&self` and keep what changes behind a lock"
                                .to_owned(),
                        )
                    } else {
                        None
                    };
                    if let Some(problem) = problem {
                        errors.push(syn::Error::new_spanned(&*r, problem));
                    }
                    r.attrs.clear();
                    receiver = true;
                }
                FnArg::Typed(pt) => {
                    let mut field_attrs = Vec::new();
                    let mut whole = None;
                    let mut context = None;
                    let mut kept = Vec::new();
                    for a in pt.attrs.drain(..) {
                        let p = a.path();
                        if p.is_ident("args") {
                            whole = Some(a.span());
                        } else if p.is_ident("context") {
                            context = Some(a.span());
                        } else if p.is_ident("doc") || p.is_ident("serde") || p.is_ident("schemars")
                        {
                            field_attrs.push(a);
                        } else {
                            kept.push(a);
                        }
                    }
                    pt.attrs = kept;
                    let by_ref = matches!(&*pt.ty, Type::Reference(_));
                    let is_context = context.is_some() || is_context_type(&pt.ty);
                    if is_context {
                        if context_seen {
                            errors.push(syn::Error::new_spanned(
                                &*pt,
                                "a second context parameter: a handler takes at most one",
                            ));
                        }
                        context_seen = true;
                        params.push(Param::Context { by_ref });
                    } else if whole.is_some() {
                        params.push(Param::Whole {
                            ty: (*pt.ty).clone(),
                        });
                    } else {
                        match &*pt.pat {
                            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                                let doc = doc_text(&field_attrs);
                                params.push(Param::Arg {
                                    ident: p.ident.clone(),
                                    ty: (*pt.ty).clone(),
                                    field_attrs,
                                    doc,
                                });
                            }
                            other => errors.push(syn::Error::new_spanned(
                                other,
                                "unsupported parameter pattern: an argument parameter is a plain \
                                 name (the argument's name); to take the whole arguments as one \
                                 type, mark the parameter `#[args]`",
                            )),
                        }
                    }
                }
            }
        }
        let wholes = params
            .iter()
            .filter(|p| matches!(p, Param::Whole { .. }))
            .count();
        let args = params
            .iter()
            .filter(|p| matches!(p, Param::Arg { .. }))
            .count();
        if wholes > 1 || (wholes == 1 && args > 0) {
            errors.push(syn::Error::new_spanned(
                &sig.inputs,
                "an `#[args]` parameter takes the whole arguments: it is the only argument \
                 parameter (beside the context)",
            ));
        }
        let output = match &sig.output {
            ReturnType::Default => syn::parse_quote_spanned!(sig.ident.span()=> ()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        };
        errors.finish()?;
        Ok(Handler {
            kind,
            doc: doc_text(attrs),
            options,
            ident: sig.ident.clone(),
            receiver,
            params,
            output,
        })
    }

    /// The name the client calls it by.
    fn name(&self) -> String {
        match &self.options.name {
            Some(n) => n.value(),
            None => {
                let s = self.ident.to_string();
                s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
            }
        }
    }

    /// An expression that registers the handler on `builder` (a `ServerBuilder` in scope)
    /// and is the builder. In a `#[router]` impl, `self` is the `Arc` of the state and
    /// methods are called through `Self`. With `local`, `builder` is `LocalHandlers` (and
    /// `self` an `Rc`).
    pub(crate) fn register(&self, krate: &TokenStream, in_impl: bool, local: bool) -> TokenStream {
        let m = quote!(#krate::server::__macros);
        let ident = &self.ident;
        let span = ident.span();
        let name = self.name();
        let description = option_str(
            self.options
                .description
                .as_ref()
                .map(LitStr::value)
                .or_else(|| self.doc.clone()),
        );
        let title = option_str(self.options.title.as_ref().map(LitStr::value));
        let has_context = self
            .params
            .iter()
            .any(|p| matches!(p, Param::Context { .. }));
        let cx = if has_context { quote!(__cx) } else { quote!(_) };
        let this = self
            .receiver
            .then(|| quote!(let __this = ::core::clone::Clone::clone(&__this);));
        let this_outer = self
            .receiver
            .then(|| quote!(let __this = ::core::clone::Clone::clone(&self);));
        let callee = if in_impl {
            quote_spanned!(span=> Self::#ident)
        } else {
            quote_spanned!(span=> #ident)
        };
        let receiver_arg = self.receiver.then(|| quote!(&*__this,));
        let output = &self.output;
        let ret_span = output.span();
        match self.kind {
            Kind::Tool => {
                let hints = self.options.hints.iter().map(|h| match h {
                    Some(b) => quote!(::core::option::Option::Some(#b)),
                    None => quote!(::core::option::Option::None),
                });
                let tool = quote!(#m::tool(#name, #description, #title, [#(#hints),*]));
                let whole = self.params.iter().find_map(|p| match p {
                    Param::Whole { ty } => Some(ty),
                    _ => None,
                });
                let (args_struct, args_ty, generated) = match whole {
                    Some(ty) => (quote!(), quote!(#ty), false),
                    None => {
                        let fields = self.params.iter().filter_map(|p| match p {
                            Param::Arg {
                                ident,
                                ty,
                                field_attrs,
                                ..
                            } => Some(quote!(#(#field_attrs)* #ident: #ty,)),
                            _ => None,
                        });
                        let serde = LitStr::new(&format!("{m}::serde"), Span::call_site());
                        let schemars = LitStr::new(&format!("{m}::schemars"), Span::call_site());
                        (
                            quote! {
                                #[derive(#m::serde::Deserialize, #m::schemars::JsonSchema)]
                                #[serde(crate = #serde)]
                                #[schemars(crate = #schemars)]
                                #[allow(non_camel_case_types, non_snake_case)]
                                struct __McpArgs { #(#fields)* }
                            },
                            quote!(__McpArgs),
                            true,
                        )
                    }
                };
                let call_args = self.params.iter().map(|p| match p {
                    Param::Arg { ident, .. } => quote!(__args.#ident,),
                    Param::Whole { .. } => quote!(__args,),
                    Param::Context { by_ref: false } => quote!(::core::convert::Into::into(__cx),),
                    Param::Context { by_ref: true } => quote!(&__cx,),
                });
                // Spanned at the return type (all but the call of the fn): a result the
                // server cannot take is reported there.
                let k = respan(krate.clone(), ret_span);
                let tool = respan(tool, ret_span);
                let generated_tokens = respan(quote!(#generated), ret_span);
                let args_ty = if generated {
                    respan(args_ty, ret_span)
                } else {
                    args_ty
                };
                let this = respan(quote!(#this), ret_span);
                let cx = respan(cx.clone(), ret_span);
                let call = quote!(#callee(#receiver_arg #(#call_args)*));
                let register_fn = if local {
                    quote_spanned!(ret_span=> register_local_tool)
                } else {
                    quote_spanned!(ret_span=> register_tool)
                };
                let register = quote_spanned! {ret_span=>
                    #k::server::__macros::#register_fn(
                        builder,
                        #tool,
                        #generated_tokens,
                        move |__args: #args_ty, #cx: #k::server::ToolContext| {
                            #this
                            async move { #call.await }
                        },
                    )
                };
                quote! {{
                    #args_struct
                    #this_outer
                    #register
                }}
            }
            Kind::Prompt => {
                let whole = self.params.iter().find_map(|p| match p {
                    Param::Whole { ty } => Some(ty),
                    _ => None,
                });
                let arguments = match whole {
                    Some(ty) => quote!(#m::prompt_arguments_of::<#ty>()),
                    None => {
                        let each = self.params.iter().filter_map(|p| match p {
                            Param::Arg { ident, ty, doc, .. } => {
                                let arg = unraw(ident);
                                let doc = option_str(doc.clone());
                                let required = option_inner(ty).is_none();
                                Some(quote!(#m::prompt_argument(#arg, #doc, #required)))
                            }
                            _ => None,
                        });
                        quote!(::std::vec![#(#each),*])
                    }
                };
                let prompt = quote!(#m::prompt(#name, #description, #title, #arguments));
                let reads = self.params.iter().enumerate().map(|(i, p)| {
                    let var = format_ident!("__a{}", i);
                    match p {
                        Param::Arg { ident, ty, .. } => {
                            let arg = unraw(ident);
                            let read = match option_inner(ty) {
                                Some(inner) => {
                                    quote_spanned!(ty.span()=> #m::prompt_arg_opt::<#inner>(&__args, #arg)?)
                                }
                                None => quote_spanned!(ty.span()=> #m::prompt_arg::<#ty>(&__args, #arg)?),
                            };
                            quote!(let #var = #read;)
                        }
                        Param::Whole { ty } => quote_spanned! {ty.span()=>
                            let #var = #m::prompt_arguments_into::<#ty>(
                                ::core::mem::take(&mut __args)
                            )?;
                        },
                        Param::Context { .. } => quote!(),
                    }
                });
                let call_args = self.params.iter().enumerate().map(|(i, p)| {
                    let var = format_ident!("__a{}", i);
                    match p {
                        Param::Arg { .. } | Param::Whole { .. } => quote!(#var,),
                        Param::Context { by_ref: false } => {
                            quote!(::core::convert::Into::into(__cx),)
                        }
                        Param::Context { by_ref: true } => quote!(&__cx,),
                    }
                });
                let into = quote_spanned!(ret_span=> <#output as #krate::server::PromptReturn>::into_prompt_return);
                let mutable = whole.is_some().then(|| quote!(mut));
                quote! {{
                    #this_outer
                    builder.prompt(
                        #prompt,
                        move |#mutable __args: #m::BTreeMap<#m::String, #m::String>, #cx: #krate::server::PromptContext| {
                            #this
                            async move {
                                #(#reads)*
                                #into(#callee(#receiver_arg #(#call_args)*).await)
                            }
                        },
                    )
                }}
            }
        }
    }
}

/// Errors gathered while reading a handler, reported together.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Whether `ty` is a handler context (`ToolContext`, `&ToolContext`, …).
fn is_context_type(ty: &Type) -> bool {
    let ty = match ty {
        Type::Reference(r) => &*r.elem,
        other => other,
    };
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| CONTEXTS.iter().any(|c| s.ident == c)),
        _ => false,
    }
}

/// `T` of `Option<T>` (by the last segment's name).
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(t)) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// The text of the `#[doc]` attributes (doc comments), as rustdoc reads it; `None` if empty.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta
            && let Expr::Lit(lit) = &nv.value
            && let Lit::Str(s) = &lit.lit
        {
            for line in s.value().lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// `tokens` with every span set to `span` (for generated code that is to be reported at
/// one place of the user's).
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                t = proc_macro2::TokenTree::Group(group);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

fn option_str(s: Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn unraw(ident: &Ident) -> String {
    let s = ident.to_token_stream().to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}
