// An ES module MCP server for Node: one tool, `classify(n)`, whose answer takes one of three branches.
//
// Usage: node tests/servers/esm_branches_server.mjs
//
// It shows that V8 coverage (`--coverage`) reaches an ES module's code: the CommonJS preload mcpfuzz adds to
// NODE_OPTIONS runs before the module loader. Protocol code: mcp_server.cjs (a CommonJS module imported here).
import protocol from "./mcp_server.cjs";

const TOOLS = [{
  name: "classify",
  description: "Say whether an integer is negative, small or large.",
  inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
}];

function classify(n) {
  if (!Number.isInteger(n)) {
    return { content: [{ type: "text", text: "n must be an integer" }], isError: true };
  }
  let kind;
  if (n < 0) {
    kind = "negative";
  } else if (n < 100) {
    kind = "small";
  } else {
    kind = "large";
  }
  return { content: [{ type: "text", text: kind }], isError: false };
}

protocol.serve({ name: "esm-branches", tools: TOOLS, callTool: (name, args) => classify(args.n) });
