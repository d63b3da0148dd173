// An MCP server on the TypeScript SDK whose bugs answer nothing about themselves (blind), and its clean twin.
//
//   node blind_server.mjs ROOT           the blind bugs
//   node blind_server.mjs ROOT --clean   the same tools, done right
//
// The tools and their bugs are those of tests/sdk_servers/sdk2_blind_server.py: a write and a delete wherever the
// path leads, an exists check by prefix, a read through a symlink, a shell line holding the argument, a read-only
// tool that writes a cache file, a closed-world tool that connects. Kept harmless whatever it is sent: files are
// written or deleted only in the temporary folder, connections go to loopback addresses only, and the shell runs only
// lines made of `wc`, `echo` and `touch` of files in the temporary folder.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { execSync } from "node:child_process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const given = process.argv[2] && !process.argv[2].startsWith("-") ? process.argv[2] : process.cwd();
const ROOT = fs.realpathSync(given);
const CLEAN = process.argv.includes("--clean");
const TEMP = fs.realpathSync(os.tmpdir()) + path.sep;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
const text = (value) => ({ content: [{ type: "text", text: String(value) }] });

function confined(name) {
  // What a right check does: the real path, inside ROOT.
  let real;
  try {
    real = fs.realpathSync(path.resolve(ROOT, name));
  } catch {
    real = path.join(fs.realpathSync(path.dirname(path.resolve(ROOT, name))), path.basename(name));
  }
  return real === ROOT || real.startsWith(ROOT + path.sep) ? real : null;
}

function safeConfined(name) {
  try {
    return confined(name);
  } catch {
    return null;
  }
}

const inTemp = (target) => path.resolve(target).startsWith(TEMP);

function harmless(line) {
  for (const segment of line.split(/[;|&\n`()$]+/)) {
    const words = segment.split(/\s+/).map((word) => word.replace(/^['"]+|['"]+$/g, "")).filter(Boolean);
    if (!words.length) continue;
    if (words[0] === "touch") {
      if (!words.slice(1).every((word) => word.startsWith(TEMP))) return false;
    } else if (!["wc", "echo", "x", "-l"].includes(words[0])) return false;
  }
  return true;
}

const server = new McpServer({ name: "ts-blind-server", version: "0.1.0" });

server.registerTool("write_note", { description: "Save a note at path (relative to the root).", inputSchema: { path: z.string(), text: z.string() } },
  async ({ path: name, text: body }) => {
    const target = CLEAN ? safeConfined(name) : path.join(ROOT, name);
    if (!target || !inTemp(target)) return text("refused");
    try {
      fs.writeFileSync(target, body);
    } catch {
      return text("failed");
    }
    return text("saved");
  });

server.registerTool("exists", { description: "Whether a file exists under the root.", inputSchema: { path: z.string() } },
  async ({ path: name }) => {
    if (CLEAN) {
      const target = safeConfined(name);
      return text(JSON.stringify({ exists: Boolean(target) && fs.existsSync(target) }));
    }
    const full = path.resolve(ROOT, name);
    if (!full.startsWith(ROOT)) return text(JSON.stringify({ exists: false })); // the bug: no separator
    return text(JSON.stringify({ exists: fs.existsSync(full) }));
  });

server.registerTool("read_size", { description: "The size of a file under the root, in bytes.", inputSchema: { path: z.string() } },
  async ({ path: name }) => {
    let target;
    if (CLEAN) target = safeConfined(name);
    else {
      const full = path.resolve(ROOT, name);
      target = full.startsWith(ROOT + path.sep) ? full : null; // the bug: checked as written, links followed
    }
    if (!target) return text("refused");
    try {
      return text(`${fs.readFileSync(target).length} bytes`);
    } catch {
      return text("unreadable");
    }
  });

server.registerTool("count_lines", { description: "How many lines a file under the root has.", inputSchema: { path: z.string() } },
  async ({ path: name }) => {
    if (CLEAN) {
      const target = safeConfined(name);
      if (!target) return text("refused");
      try {
        return text(fs.readFileSync(target, "utf8").split("\n").length - 1);
      } catch {
        return text("0");
      }
    }
    const line = `wc -l ${name}`;
    if (!harmless(line)) return text("0");
    try {
      return text(execSync(line, { cwd: ROOT, encoding: "utf8", timeout: 10000, stdio: ["ignore", "pipe", "ignore"] }).trim().split(" ")[0] || "0");
    } catch {
      return text("0");
    }
  });

server.registerTool("lookup", { description: "Look a key up (read-only).", inputSchema: { key: z.string() }, annotations: { readOnlyHint: true } },
  async ({ key }) => {
    if (!CLEAN) fs.appendFileSync(path.join(ROOT, ".lookup-cache"), key.slice(0, 40) + "\n"); // the bug: a write
    return text(`no entry for ${JSON.stringify(key.slice(0, 40))}`);
  });

server.registerTool("ping", { description: "Tell whether a URL's server is reachable.", inputSchema: { url: z.string() } },
  async ({ url }) => {
    let parsed;
    try {
      parsed = new URL(url.includes("//") ? url : `http://${url}`);
    } catch {
      return text("invalid");
    }
    if (!LOOPBACK.has(parsed.hostname)) return text("unsupported host");
    if (CLEAN) return text("not checked");
    const reachable = await new Promise((resolve) => {
      const socket = net.connect({ host: parsed.hostname.replace(/^\[|\]$/g, ""), port: Number(parsed.port || 80) });
      socket.setTimeout(1000, () => { socket.destroy(); resolve(false); });
      socket.on("connect", () => { socket.end(); resolve(true); });
      socket.on("error", () => resolve(false));
    });
    return text(reachable ? "reachable" : "unreachable");
  });

server.registerTool("delete_file", { description: "Delete a file under the root.", inputSchema: { path: z.string() } },
  async ({ path: name }) => {
    const target = CLEAN ? safeConfined(name) : path.join(ROOT, name);
    if (!target || !inTemp(target)) return text("no such file");
    try {
      fs.unlinkSync(target);
    } catch {
      return text("no such file");
    }
    return text("deleted");
  });

await server.connect(new StdioServerTransport());
