// A small stdio MCP server on the TypeScript SDK 2.x (@modelcontextprotocol/server), for stack detection: the 1.x
// SDK sits in the same node_modules, and what this file imports is what runs.
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const server = new McpServer({ name: "ts-sdk2-test-server", version: "0.1.0" });

server.registerTool(
  "echo",
  { description: "Return the text unchanged.", inputSchema: z.object({ text: z.string() }) },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);

await server.connect(new StdioServerTransport());
