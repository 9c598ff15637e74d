//! `webdata mcp`: the MCP tools over stdio, for desktop MCP hosts that
//! start a command (Claude Desktop, Cursor, VS Code). The tools call the
//! server at `WEBDATA_URL` with `WEBDATA_API_KEY`, or else the embedded
//! store in this process. Standard output carries only MCP messages; logs
//! go to standard error.

use super::connect::{ConnectArgs, Connection};
use crate::mcp::WebdataMcp;
use rmcp::ServiceExt;

/// `webdata mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Serves MCP on stdin/stdout until the host closes it.
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    super::connect::quiet_logs();
    let conn = Connection::open(&args.connect).await?;
    let server = WebdataMcp::with_client(conn.client.clone())
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("starting MCP on stdio: {e}"))?;
    let ended = server.waiting().await;
    conn.close();
    ended.map_err(|e| anyhow::anyhow!("MCP on stdio: {e}"))?;
    Ok(())
}
