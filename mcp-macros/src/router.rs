//! `#[router]`: the `#[tool]` and `#[prompt]` methods of an impl block, registered together.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, Meta};

use crate::handler::{Errors, Handler, Kind, Options, parse_path};

/// The options of `#[router(..)]`.
#[derive(Default)]
pub(crate) struct RouterOptions {
    /// `crate = path`: where the service crate is.
    krate: Option<syn::Path>,
    /// `local`: the block's handlers need not be `Send` (registered on `LocalHandlers`).
    local: bool,
}

/// Parses the options of `#[router(..)]`: `crate = path` and `local`.
pub(crate) fn options(tokens: TokenStream) -> syn::Result<RouterOptions> {
    let mut options = RouterOptions::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            options.krate = Some(parse_path(meta.value()?)?);
            Ok(())
        } else if meta.path.is_ident("local") {
            options.local = true;
            Ok(())
        } else {
            Err(meta.error("unknown #[router] option; expected: crate, local"))
        }
    });
    syn::parse::Parser::parse2(parser, tokens)?;
    Ok(options)
}

/// The handler kind of a method's attribute (`#[tool]`, `#[mcp_tokio::prompt(..)]`, …).
fn kind_of(attr: &syn::Attribute) -> Option<Kind> {
    let last = attr.path().segments.last()?;
    if last.ident == "tool" {
        Some(Kind::Tool)
    } else if last.ident == "prompt" {
        Some(Kind::Prompt)
    } else {
        None
    }
}

/// Expands `#[router]` on `block`: the block itself (its handler methods' parameter
/// attributes removed, their `#[tool]`/`#[prompt]` told they are handled) and an `impl Router`
/// that registers them.
pub(crate) fn expand(options: RouterOptions, mut block: ItemImpl) -> syn::Result<TokenStream> {
    let RouterOptions { krate, local } = options;
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new_spanned(
            path,
            "#[router] goes on an inherent impl block (`impl Notes { .. }`), not a trait impl",
        ));
    }
    let krate = match krate {
        Some(path) => quote!(#path),
        None => crate::manifest::service_path()?,
    };
    let mut errors = Errors::default();
    let mut registrations = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(at) = method.attrs.iter().position(|a| kind_of(a).is_some()) else {
            continue;
        };
        let kind = kind_of(&method.attrs[at]).unwrap_or(Kind::Tool);
        let attr = &mut method.attrs[at];
        let tokens = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(nv) => {
                errors.push(syn::Error::new(
                    nv.eq_token.span(),
                    format!(
                        "write {} or {}",
                        kind.attr(),
                        kind.attr().replace(']', "(..)]")
                    ),
                ));
                continue;
            }
        };
        // The attribute stays (so its import is used) but does nothing more.
        let path = attr.path().clone();
        *attr = syn::parse_quote!(#[#path(__router)]);
        let options = match Options::parse(kind, tokens) {
            Ok(o) => o,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Some(l) = &options.local {
            errors.push(syn::Error::new_spanned(
                l,
                "inside #[router], mark the whole block: #[router(local)]",
            ));
        }
        if let Some(k) = &options.krate {
            errors.push(syn::Error::new_spanned(
                k,
                "inside #[router], name the crate on the router: #[router(crate = ..)]",
            ));
        }
        let attrs = method.attrs.clone();
        match Handler::read(kind, options, &attrs, &mut method.sig, true) {
            Ok(h) => registrations.push(h.register(&krate, true, local)),
            Err(e) => errors.push(e),
        }
    }
    let (impl_generics, _, where_clause) = block.generics.split_for_impl();
    let self_ty = &block.self_ty;
    let mut predicates = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p,)).collect::<Vec<_>>())
        .unwrap_or_default();
    let registry = if local {
        // Neither the state nor the futures need be `Send`: only `'static`.
        predicates.push(quote_spanned!(self_ty.span()=> #self_ty: 'static,));
        quote! {
            impl #impl_generics #krate::server::LocalRouter for #self_ty where #(#predicates)* {
                fn register(
                    self: ::std::rc::Rc<Self>,
                    builder: #krate::server::LocalHandlers,
                ) -> #krate::server::LocalHandlers {
                    #(let builder = #registrations;)*
                    let _ = self;
                    builder
                }
            }
        }
    } else {
        // Spanned at the type: a state the server cannot share is reported there.
        predicates.push(quote_spanned!(self_ty.span()=>
            #self_ty: ::core::marker::Send + ::core::marker::Sync + 'static,
        ));
        quote! {
            impl #impl_generics #krate::server::Router for #self_ty where #(#predicates)* {
                fn register(
                    self: #krate::server::__macros::Arc<Self>,
                    builder: #krate::ServerBuilder,
                ) -> #krate::ServerBuilder {
                    #(let builder = #registrations;)*
                    let _ = self;
                    builder
                }
            }
        }
    };
    let out = quote!(#block #registry);
    match errors.finish() {
        Ok(()) => Ok(out),
        Err(e) => {
            let e = e.into_compile_error();
            Ok(quote!(#e #block))
        }
    }
}
