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

/// The path of the service crate (`::mcp_tokio::service`, `::mcp_async_std::service` or
/// `::mcp_service`) as the package being compiled reaches it: the first of `mcp-tokio`,
/// `mcp-async-std` and `mcp-service` among the dependencies of its `Cargo.toml` (or the package
/// itself), under the name it gives it (`foo = { package = "mcp-tokio", .. }` is `::foo`).
pub(crate) fn service_path() -> syn::Result<TokenStream> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|dir| std::path::Path::new(&dir).join("Cargo.toml"))
        .and_then(|path| std::fs::read_to_string(path).ok());
    let found = manifest.as_deref().map(dependencies).unwrap_or_default();
    for (facade, inner) in FACADES {
        if let Some((name, _)) = found.iter().find(|(_, package)| package == facade) {
            let ident = syn::Ident::new(&name.replace('-', "_"), Span::call_site());
            return Ok(match inner {
                Some(inner) => {
                    let inner = syn::Ident::new(inner, Span::call_site());
                    quote!(::#ident::#inner)
                }
                None => quote!(::#ident),
            });
        }
    }
    Err(syn::Error::new(
        Span::call_site(),
        "cannot tell which MCP crate this package uses: none of `mcp-tokio`, `mcp-async-std` or \
         `mcp-service` is among the dependencies of its Cargo.toml; name the service crate with \
         `crate = ..` (e.g. `#[router(crate = mcp_tokio::service)]`)",
    ))
}

/// The dependencies a `Cargo.toml` declares (of every kind and target), as (the name the
/// package uses, the package's name); the package itself comes first, under its own name.
fn dependencies(manifest: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // The current table: `Some(None)` a table of dependencies, `Some(Some(i))` the table of
    // one dependency (`[dependencies.foo]`, entry `i` of `out`), `None` another table.
    let mut table: Option<Option<usize>> = None;
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']').trim();
            in_package = header == "package";
            table = dependency_table(header).map(|one| {
                one.map(|name| {
                    out.push((name.to_owned(), name.to_owned()));
                    out.len() - 1
                })
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
                out.insert(0, (name.clone(), name));
                table = table.map(|t| t.map(|i| i + 1));
            }
            continue;
        }
        match table {
            Some(None) => {
                let package = package_of(value).unwrap_or(key);
                out.push((key.to_owned(), package.to_owned()));
            }
            Some(Some(i)) if key == "package" => {
                if let Some(entry) = out.get_mut(i) {
                    entry.1 = unquote(value).to_owned();
                }
            }
            _ => {}
        }
    }
    out
}

/// What a table header is: `Some(None)` a table of dependencies (`dependencies`,
/// `dev-dependencies`, `target.'cfg(..)'.dependencies`), `Some(Some(name))` the table of one
/// dependency (`dependencies.name`), `None` another table.
fn dependency_table(header: &str) -> Option<Option<&str>> {
    for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if header == kind || header.ends_with(&format!(".{kind}")) {
            return Some(None);
        }
        let prefix = format!("{kind}.");
        let inner = format!(".{kind}.");
        if let Some(name) = header.strip_prefix(&prefix) {
            return Some(Some(unquote(name)));
        }
        if let Some(at) = header.rfind(&inner) {
            return Some(Some(unquote(&header[at + inner.len()..])));
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

[dependencies.driver]
version = "0.1"
package = "mcp-tokio"
"#;
        let found = dependencies(manifest);
        let pairs: Vec<(&str, &str)> = found
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("notes", "notes"),
                ("serde", "serde"),
                ("mcp", "mcp-async-std"),
                ("mcp-service", "mcp-service"),
                ("driver", "mcp-tokio"),
            ]
        );
    }

    #[test]
    fn other_tables_are_not_dependencies() {
        assert_eq!(dependency_table("features"), None);
        assert_eq!(dependency_table("workspace"), None);
        assert_eq!(dependency_table("dev-dependencies"), Some(None));
        assert_eq!(
            dependency_table("target.'cfg(unix)'.dependencies.mcp-tokio"),
            Some(Some("mcp-tokio"))
        );
        let found = dependencies("[features]\nmcp-tokio = []\n");
        assert!(found.is_empty(), "{found:?}");
    }
}
