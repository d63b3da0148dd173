// A streamable HTTP MCP server on the TypeScript SDK, stateless (a server and a transport per request, the
// SDK's own pattern), on 127.0.0.1 only: the SDK's known behaviours over HTTP show on it, none of its own.
// Usage: node http_server.mjs --port PORT
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveStateless } from "./stateless.mjs";

const port = Number(process.argv[process.argv.indexOf("--port") + 1]);

function mcpServer() {
  const server = new McpServer({ name: "ts-sdk-http-test-server", version: "0.1.0" });
  server.registerTool(
    "echo",
    { description: "Return the text unchanged.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerResource(
    "about",
    "test://about",
    { description: "What this server is.", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "a test server" }] }),
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { Allow: "POST" }).end();
    return;
  }
  await serveStateless(mcpServer, req, res);
});

http.listen(port, "127.0.0.1", () => console.error(`ready http://127.0.0.1:${port}/mcp`));
