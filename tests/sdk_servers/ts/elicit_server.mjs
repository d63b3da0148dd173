// A small stdio MCP server on the TypeScript SDK whose tool asks the client for a name (elicitation).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "ts-sdk-elicit-server", version: "0.1.0" });

server.registerTool(
  "greet",
  { description: "Greet the user by the name they give." },
  async () => {
    const answer = await server.server.elicitInput({
      message: "What is your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    if (answer.action !== "accept") {
      return { content: [{ type: "text", text: `no name (${answer.action})` }] };
    }
    return { content: [{ type: "text", text: `Hello, ${answer.content?.name}` }] };
  },
);

await server.connect(new StdioServerTransport());
