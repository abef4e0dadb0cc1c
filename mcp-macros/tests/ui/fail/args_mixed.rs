use mcp_tokio::tool;

#[derive(serde::Deserialize, mcp_tokio::service::schemars::JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Args {
    a: u32,
}

#[tool]
async fn mixed(#[args] args: Args, extra: String) -> String {
    format!("{}{extra}", args.a)
}

fn main() {}
