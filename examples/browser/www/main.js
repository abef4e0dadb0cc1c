// Loads the module, walks the server in the page, then the remote server named by `?server=`,
// over Streamable HTTP, in both eras; every result goes into the page, and `#status` ends as
// `ok` or `error: ...`.
import init, { McpClient, McpServer } from "./pkg/mcp_example_browser.js";

const params = new URLSearchParams(location.search);
const serverUrl = params.get("server") ?? "http://127.0.0.1:8080/mcp";
const text = params.get("text") ?? "hello from the browser";
const status = document.getElementById("status");
document.getElementById("server-url").textContent = serverUrl;

function row(table, cells) {
  const tr = document.createElement("tr");
  for (const [cls, value] of cells) {
    const td = document.createElement("td");
    td.className = cls;
    td.textContent = value;
    tr.appendChild(td);
  }
  document.getElementById(table).appendChild(tr);
}

// Lists the tools and calls `echo` with `text`, checking the answer.
async function walk(client) {
  const listed = await client.listTools();
  const names = listed.tools.map((t) => t.name);
  if (!names.includes("echo")) throw new Error(`no echo tool among ${names.join(", ")}`);
  const result = await client.callTool("echo", JSON.stringify({ text }));
  const echoed = result.content?.[0]?.text;
  if (echoed !== text) throw new Error(`echo answered ${JSON.stringify(result)}`);
  return { names, echoed };
}

async function main() {
  await init();
  const server = new McpServer();
  for (const discovery of ["auto", "initialize"]) {
    const client = await McpClient.connectInPage(server, discovery);
    const { names, echoed } = await walk(client);
    row("in-page", [["discovery", discovery], ["protocol", client.protocolVersion],
      ["tools", names.join(", ")], ["echo", echoed]]);
    await client.close();
  }
  document.getElementById("served").textContent = String(server.served);
  for (const discovery of ["auto", "initialize"]) {
    const client = await McpClient.connect(serverUrl, discovery);
    const { names, echoed } = await walk(client);
    row("remote", [["discovery", discovery], ["protocol", client.protocolVersion],
      ["session", client.sessionId ?? "(none)"], ["tools", names.join(", ")], ["echo", echoed]]);
    await client.close();
  }
  // A call the server refuses comes back as a rejected Promise, not a crash.
  const client = await McpClient.connect(serverUrl, "auto");
  try {
    await client.callTool("echo", "not json");
    throw new Error("bad arguments were accepted");
  } catch (e) {
    if (!String(e.message).includes("not JSON")) throw e;
  }
  await client.close();
}

main().then(
  () => { status.textContent = "ok"; status.className = "ok"; },
  (e) => {
    status.textContent = `error: ${e?.message ?? e}`;
    status.className = "error";
    console.error(e);
  },
);
