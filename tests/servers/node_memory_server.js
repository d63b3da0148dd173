// A minimal MCP server over stdio in plain Node.js (no packages): one tool, `remember`, that keeps a block of
// memory per call in a cache.
//
// Usage: node tests/servers/node_memory_server.js --kb N [--cap ENTRIES]
//
// Each call of `remember` allocates N KB (a Buffer, every page written, so the RSS sees it) and keeps it while the
// cache holds fewer than ENTRIES blocks; once full, the call keeps nothing more (a cache that fills up and stops
// growing). Without --cap every block is kept for ever (a leak of N KB per call). Answers initialize, ping,
// tools/list and tools/call; exits 0 on EOF.
"use strict";

const readline = require("readline");

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 && at + 1 < process.argv.length ? Number(process.argv[at + 1]) : fallback;
}

const blockBytes = option("--kb", 64) * 1024;
const cap = option("--cap", Infinity);
const cache = [];

const TOOL = {
  name: "remember",
  description: "Keep a block of memory for this call (until the cache is full).",
  inputSchema: { type: "object", properties: { n: { type: "integer" } } },
};

function answer(id, result) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n");
}

function fail(id, code, message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n");
}

function handle(message) {
  const { id, method } = message;
  if (id === undefined) return; // a notification
  if (method === "initialize") {
    answer(id, {
      protocolVersion: (message.params && message.params.protocolVersion) || "2025-11-25",
      capabilities: { tools: {} },
      serverInfo: { name: "node-memory-server", version: "1.0.0" },
    });
  } else if (method === "ping") {
    answer(id, {});
  } else if (method === "tools/list") {
    answer(id, { tools: [TOOL] });
  } else if (method === "tools/call") {
    if (cache.length < cap) cache.push(Buffer.alloc(blockBytes, cache.length % 251));
    answer(id, { content: [{ type: "text", text: `${cache.length} blocks kept` }], isError: false });
  } else {
    fail(id, -32601, `method not found: ${method}`);
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    fail(null, -32700, "parse error");
    return;
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    fail(null, -32600, "invalid request");
    return;
  }
  handle(message);
});
lines.on("close", () => process.exit(0));
