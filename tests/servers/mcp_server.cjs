// A small MCP server for Node (built-ins only), over stdio or streamable HTTP: the legacy era's initialize handshake,
// ping, tools/list and tools/call; JSON-RPC errors for unparseable, invalid and unknown requests.
//
// Test servers give it their tools and a `callTool(name, args)` that returns a tool result; an exception a handler
// throws is not caught (a crash of the process over stdio: the bug those servers carry). Usage from a server:
//     serve({ tools, callTool, name })   // stdio, or HTTP on 127.0.0.1 with `--port N` on the command line
"use strict";

const http = require("node:http");
const readline = require("node:readline");

const VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST = VERSIONS[VERSIONS.length - 1];

function error(id, code, message) {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

function isId(value) {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

function answer(server, message) {
  // The answer to one parsed message, or null for a notification.
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    return error(null, -32600, "invalid request");
  }
  const { id, method, params } = message;
  const hasId = Object.prototype.hasOwnProperty.call(message, "id");
  if (method === undefined && ("result" in message || "error" in message)) return null; // a response: not ours
  if (message.jsonrpc !== "2.0" || typeof method !== "string" || (hasId && !isId(id))) {
    return error(hasId && isId(id) ? id : null, -32600, "invalid request");
  }
  if (params !== undefined && (params === null || typeof params !== "object")) {
    return hasId ? error(id, -32600, "invalid request: params must be an object or array") : null;
  }
  if (!hasId) return null;
  const args = params || {};
  switch (method) {
    case "initialize": {
      if (typeof args.protocolVersion !== "string") return error(id, -32602, "protocolVersion is required");
      const version = VERSIONS.includes(args.protocolVersion) ? args.protocolVersion : LATEST;
      return { jsonrpc: "2.0", id, result: { protocolVersion: version, capabilities: { tools: {} },
        serverInfo: { name: server.name, version: "0.1.0" } } };
    }
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return { jsonrpc: "2.0", id, result: { tools: server.tools } };
    case "tools/call": {
      if (Array.isArray(args) || typeof args.name !== "string") return error(id, -32602, "name is required");
      if (!server.tools.some((tool) => tool.name === args.name)) return error(id, -32602, `unknown tool ${args.name}`);
      const toolArgs = args.arguments === undefined ? {} : args.arguments;
      if (toolArgs === null || typeof toolArgs !== "object" || Array.isArray(toolArgs)) {
        return error(id, -32602, "arguments must be an object");
      }
      return { jsonrpc: "2.0", id, result: server.callTool(args.name, toolArgs) };
    }
    default:
      return error(id, -32601, `method not found: ${method}`);
  }
}

const RAW_ID = /"id"\s*:\s*(-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)/;
const ID_MARK = "\u0000id";

function reply(server, text) {
  // The answer's text to one line or body (a batch is not served: -32600), or null when nothing is owed. An
  // integer id beyond 2**53 goes back as the digits it came as (a JavaScript number would round it).
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return JSON.stringify(error(null, -32700, "parse error"));
  }
  if (Array.isArray(message)) return JSON.stringify(error(null, -32600, "batches are not supported"));
  const raw = message && typeof message.id === "number" ? RAW_ID.exec(text) : null;
  if (raw && /[.eE]/.test(raw[1])) return JSON.stringify(error(null, -32600, "id must be a string or an integer"));
  if (raw && Number.isSafeInteger(message.id)) raw[1] = null;
  const out = answer(server, raw && raw[1] ? { ...message, id: ID_MARK } : message);
  if (out === null) return null;
  return raw && raw[1] ? JSON.stringify(out).replace(JSON.stringify(ID_MARK), raw[1]) : JSON.stringify(out);
}

function serveStdio(server) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    const out = reply(server, line);
    if (out !== null) process.stdout.write(`${out}\n`);
  });
}

function serveHttp(server, port) {
  const listener = http.createServer((request, response) => {
    if (request.url.split("?")[0] !== "/mcp") {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== "POST") {
      response.writeHead(405, { Allow: "POST" }).end();
      return;
    }
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const out = reply(server, Buffer.concat(chunks).toString("utf8"));
      if (out === null) {
        response.writeHead(202).end();
        return;
      }
      response.writeHead(200, { "Content-Type": "application/json" }).end(out);
    });
  });
  listener.listen(port, "127.0.0.1", () => {
    process.stderr.write(`ready http://127.0.0.1:${listener.address().port}/mcp\n`);
  });
}

function serve(server) {
  const at = process.argv.indexOf("--port");
  if (at >= 0) serveHttp(server, Number(process.argv[at + 1]));
  else serveStdio(server);
}

module.exports = { serve };
