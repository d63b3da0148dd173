// A small stdio MCP server on the TypeScript SDK: the known behaviours of the SDK show on it, none of its own.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-sdk-test-server", version: "0.1.0" });

server.registerTool(
  "echo",
  { description: "Return the text unchanged.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);

server.registerTool(
  "add",
  {
    description: "Add two integers.",
    inputSchema: { a: z.number().int(), b: z.number().int() },
    annotations: { readOnlyHint: true },
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

// zod's lax coercion, as @modelcontextprotocol/server-sequential-thinking declares its thought numbers: the
// schema says integer, and Number() turns "3" or [3] into 3. Lax coercion is not a finding (--strict-types).
server.registerTool(
  "step",
  {
    description: "Say which step this is.",
    inputSchema: { step: z.coerce.number().int().min(1) },
    annotations: { readOnlyHint: true },
  },
  async ({ step }) => ({ content: [{ type: "text", text: `step ${step}` }] }),
);

await server.connect(new StdioServerTransport());
