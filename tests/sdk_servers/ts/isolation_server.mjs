// A streamable HTTP MCP server on the TypeScript SDK for concurrent clients, on 127.0.0.1 only.
// Default: the SDK's stateful pattern, a server and a transport per session. --shared: the pattern of
// GHSA-345p-7cg4-v4c7 (CVE-2026-25536), one server and one stateless transport for every request and client;
// SDK versions before 1.26.0 route answers by JSON-RPC id across clients there, later ones refuse the reuse.
// The `work` tool (read-only, no arguments) sends two progress notifications when asked and a log message.
// Usage: node isolation_server.mjs --port PORT [--shared]
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const port = Number(process.argv[process.argv.indexOf("--port") + 1]);
const shared = process.argv.includes("--shared");

function mcpServer() {
  const server = new McpServer({ name: "ts-sdk-isolation-server", version: "0.1.0" },
    { capabilities: { logging: {} } });
  server.registerTool(
    "work",
    { description: "Report progress, log, and say done.", annotations: { readOnlyHint: true } },
    async (extra) => {
      const token = extra._meta?.progressToken;
      for (const progress of [1, 2]) {
        if (token !== undefined) {
          await extra.sendNotification({ method: "notifications/progress",
            params: { progressToken: token, progress, total: 2 } });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await extra.sendNotification({ method: "notifications/message",
        params: { level: "info", logger: "work", data: "work done" } });
      return { content: [{ type: "text", text: "done" }] };
    },
  );
  return server;
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

const sessions = new Map();
let sharedTransport;

async function handle(req, res) {
  const body = req.method === "POST" ? await readJson(req) : undefined;
  if (shared) {
    if (!sharedTransport) {
      sharedTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await mcpServer().connect(sharedTransport);
    }
    await sharedTransport.handleRequest(req, res, body);
    return;
  }
  const id = req.headers["mcp-session-id"];
  if (id && sessions.has(id)) {
    await sessions.get(id).handleRequest(req, res, body);
    return;
  }
  if (req.method !== "POST" || id || !isInitializeRequest(body)) {
    res.writeHead(id ? 404 : 400, { "Content-Type": "application/json" }).end(JSON.stringify(
      { jsonrpc: "2.0", id: null, error: { code: -32000, message: id ? "unknown session" : "no session" } }));
    return;
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => sessions.set(sid, transport),
  });
  transport.onclose = () => sessions.delete(transport.sessionId);
  await mcpServer().connect(transport);
  await transport.handleRequest(req, res, body);
}

const http = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/sessions") {
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ open: sessions.size }));
    return;
  }
  handle(req, res).catch((error) => {
    console.error(`request failed: ${error.message}`);
    if (!res.headersSent) {
      res.writeHead(500, { "Content-Type": "application/json" }).end(JSON.stringify(
        { jsonrpc: "2.0", id: null, error: { code: -32603, message: "internal error" } }));
    }
  });
});

http.listen(port, "127.0.0.1", () => console.error(`ready http://127.0.0.1:${port}/mcp`));
