//! Which MCP crate the generated code names: the one the package being compiled depends on.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The crates that re-export the service layer, in the order they are preferred, with the path
/// of the service layer inside each.
const FACADES: [(&str, Option<&str>); 3] = [
    ("mcp-tokio", Some("service")),
    ("mcp-async-std", Some("service")),
    ("mcp-service", None),
];

/// How a package is reached, best first: the package itself, a dependency, a dev-dependency
/// (which only tests, examples and benches see).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Itself,
    Normal,
    Dev,
}

/// The path of the service crate (`::mcp_tokio::service`, `::mcp_async_std::service` or
/// `::mcp_service`) as the package being compiled reaches it, under the name it gives it
/// (`foo = { package = "mcp-tokio", .. }` is `::foo`): the package itself if it is one of
/// `mcp-tokio`, `mcp-async-std` and `mcp-service`, else the first of them among its
/// dependencies, else among its dev-dependencies (in that order each time).
pub(crate) fn service_path() -> syn::Result<TokenStream> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| std::path::Path::new(&dir).join("Cargo.toml"))
        .and_then(|path| std::fs::read_to_string(path).ok());
    let found = manifest.as_deref().map(dependencies).unwrap_or_default();
    let best = found
        .iter()
        .filter_map(|(name, package, reach)| {
            let order = FACADES.iter().position(|(f, _)| f == package)?;
            Some(((*reach, order), name))
        })
        .min();
    if let Some(((_, order), name)) = best {
        let ident = syn::Ident::new(&name.replace('-', "_"), Span::call_site());
        return Ok(match FACADES.get(order).and_then(|(_, inner)| *inner) {
            Some(inner) => {
                let inner = syn::Ident::new(inner, Span::call_site());
                quote!(::#ident::#inner)
            }
            None => quote!(::#ident),
        });
    }
    Err(syn::Error::new(
        Span::call_site(),
        "cannot tell which MCP crate this package uses: none of `mcp-tokio`, `mcp-async-std` or \
         `mcp-service` is among the dependencies of its Cargo.toml; name the service crate with \
         `crate = ..` (e.g. `#[router(crate = mcp_tokio::service)]`)",
    ))
}

/// The dependencies a `Cargo.toml` declares (normal and dev, of every target), as (the name
/// the package uses, the package's name, how it is reached), and the package itself.
fn dependencies(manifest: &str) -> Vec<(String, String, Reach)> {
    let mut out = Vec::new();
    // The current table: `Some((reach, None))` a table of dependencies, `Some((reach,
    // Some(i)))` the table of one dependency (`[dependencies.foo]`, entry `i` of `out`),
    // `None` another table.
    let mut table: Option<(Reach, Option<usize>)> = None;
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']').trim();
            in_package = header == "package";
            table = dependency_table(header).map(|(reach, one)| {
                let one = one.map(|name| {
                    out.push((name.to_owned(), name.to_owned(), reach));
                    out.len() - 1
                });
                (reach, one)
            });
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = unquote(key.trim());
        let value = value.trim();
        if in_package {
            if key == "name" {
                let name = unquote(value).to_owned();
                out.push((name.clone(), name, Reach::Itself));
            }
            continue;
        }
        match table {
            Some((reach, None)) => {
                let package = package_of(value).unwrap_or(key);
                out.push((key.to_owned(), package.to_owned(), reach));
            }
            Some((_, Some(i))) if key == "package" => {
                if let Some(entry) = out.get_mut(i) {
                    entry.1 = unquote(value).to_owned();
                }
            }
            _ => {}
        }
    }
    out
}

/// What a table header is: `Some((reach, None))` a table of dependencies (`dependencies`,
/// `dev-dependencies`, `target.'cfg(..)'.dependencies`), `Some((reach, Some(name)))` the table
/// of one dependency (`dependencies.name`), `None` another table (build dependencies too: the
/// build script is not where the macros are used).
fn dependency_table(header: &str) -> Option<(Reach, Option<&str>)> {
    for (kind, reach) in [
        ("dependencies", Reach::Normal),
        ("dev-dependencies", Reach::Dev),
    ] {
        if header == kind || header.ends_with(&format!(".{kind}")) {
            return (!header.starts_with("workspace.")).then_some((reach, None));
        }
        let prefix = format!("{kind}.");
        let inner = format!(".{kind}.");
        if let Some(name) = header.strip_prefix(&prefix) {
            return Some((reach, Some(unquote(name))));
        }
        if let Some(at) = header.rfind(&inner) {
            return Some((reach, Some(unquote(&header[at + inner.len()..]))));
        }
    }
    None
}

/// The `package = ".."` of an inline dependency table, if it has one.
fn package_of(value: &str) -> Option<&str> {
    let at = value.find("package")?;
    let rest = value[at + "package".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    rest.split('"').next()
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches(|c| c == '"' || c == '\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_dependencies_under_their_names() {
        let manifest = r#"
[package]
name = "notes"   # the package
version = "0.1.0"

[dependencies]
serde = { version = "1", features = ["derive"] }
mcp = { package = "mcp-async-std", version = "0.1" }

[target.'cfg(unix)'.dev-dependencies]
"mcp-service" = "0.1"

[build-dependencies]
mcp-tokio = "0.1"

[dependencies.driver]
version = "0.1"
package = "mcp-tokio"
"#;
        let found = dependencies(manifest);
        let triples: Vec<(&str, &str, Reach)> = found
            .iter()
            .map(|(a, b, r)| (a.as_str(), b.as_str(), *r))
            .collect();
        assert_eq!(
            triples,
            [
                ("notes", "notes", Reach::Itself),
                ("serde", "serde", Reach::Normal),
                ("mcp", "mcp-async-std", Reach::Normal),
                ("mcp-service", "mcp-service", Reach::Dev),
                ("driver", "mcp-tokio", Reach::Normal),
            ]
        );
    }

    #[test]
    fn other_tables_are_not_dependencies() {
        assert_eq!(dependency_table("features"), None);
        assert_eq!(dependency_table("workspace.dependencies"), None);
        assert_eq!(dependency_table("build-dependencies"), None);
        assert_eq!(
            dependency_table("dev-dependencies"),
            Some((Reach::Dev, None))
        );
        assert_eq!(
            dependency_table("target.'cfg(unix)'.dependencies.mcp-tokio"),
            Some((Reach::Normal, Some("mcp-tokio")))
        );
        let found = dependencies("[features]\nmcp-tokio = []\n");
        assert!(found.is_empty(), "{found:?}");
    }
}
