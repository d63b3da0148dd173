// The nested-conditions server in Node (CommonJS): one tool whose crash sits behind four nested conditions.
//
// Usage: node tests/servers/nested_conditions_server.cjs [--port N]
//
// `route(a, b, c, d)` throws (an uncaught exception: the process exits) when a == 7, then b is all decimal digits
// (any script's, as Python's str.isdigit mostly means in the Python twin), then c > 1000, then d holds exactly 3
// items; each condition met runs lines the ones before did not, so V8 coverage (`--coverage`) sees each step.
// Protocol code: mcp_server.cjs.
"use strict";

const { serve } = require("./mcp_server.cjs");

const TOOLS = [{
  name: "route",
  description: "Route a parcel.",
  inputSchema: {
    type: "object",
    properties: {
      a: { type: "integer", minimum: 0, maximum: 255 },
      b: { type: "string", maxLength: 20 },
      c: { type: "integer" },
      d: { type: "array", items: { type: "integer" }, maxItems: 8 },
    },
    required: ["a", "b", "c", "d"],
    additionalProperties: false,
  },
}];

function valid(args) {
  const keys = Object.keys(args).sort().join("");
  const { a, b, c, d } = args;
  return keys === "abcd" && Number.isInteger(a) && a >= 0 && a <= 255 && typeof b === "string" && b.length <= 20 &&
    Number.isInteger(c) && Array.isArray(d) && d.length <= 8 && d.every(Number.isInteger);
}

function route(args) {
  if (!valid(args)) {
    return { content: [{ type: "text", text: "invalid arguments" }], isError: true };
  }
  const { a, b, c, d } = args;
  let depth = 0;
  if (a === 7) {
    depth = 1;
    if (/^\p{Nd}+$/u.test(b)) {
      depth = 2;
      if (c > 1000) {
        depth = 3;
        if (d.length === 3) {
          throw new Error("routing table corrupted at depth 4");
        }
      }
    }
  }
  return { content: [{ type: "text", text: `routed at depth ${depth}` }], isError: false };
}

serve({ name: "nested-conditions-node", tools: TOOLS, callTool: (name, args) => route(args) });
