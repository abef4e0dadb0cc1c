//! The HTTP client's grants without a user on tokio, against a local MCP server with its
//! authorization server and identity provider (`support/grants.rs`, which checks the
//! requests itself): `client_credentials` with a secret (Basic, post) and with
//! `private_key_jwt`, DPoP-bound tokens with nonces at both servers, enterprise-managed
//! authorization (ID-JAG), workload identity from a token file (and a refusal that is not
//! retried), renewal before expiry, the next authorization server when the first does not
//! answer, and a file token store across runs.

#[path = "support/grants.rs"]
mod grants;

use mcp_tokio::TokioRuntime;

#[tokio::test]
async fn client_credentials_with_a_secret() {
    grants::client_credentials_with_a_secret(TokioRuntime::current()).await;
}

#[tokio::test]
async fn private_key_jwt_with_dpop_nonces() {
    grants::private_key_jwt_with_dpop_nonces(TokioRuntime::current()).await;
}

#[tokio::test]
async fn enterprise_managed() {
    grants::enterprise_managed(TokioRuntime::current()).await;
}

#[tokio::test]
async fn workload_identity() {
    grants::workload_identity(TokioRuntime::current()).await;
}

#[tokio::test]
async fn renews_before_expiry() {
    grants::renews_before_expiry(TokioRuntime::current()).await;
}

#[tokio::test]
async fn next_authorization_server() {
    grants::next_authorization_server(TokioRuntime::current()).await;
}

#[tokio::test]
async fn file_store_across_runs() {
    grants::file_store_across_runs(TokioRuntime::current()).await;
}
