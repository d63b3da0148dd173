// mcpfuzz's side-effect hook for Node servers, loaded first with `--require` in NODE_OPTIONS (Node's own modules only).
//
// It wraps the functions of fs (and fs/promises), child_process, net, dns, http and https a server calls, and reports
// each call, before it runs, to the file named by MCPFUZZ_OBSERVE_FILE: one JSON object per line, written whole with
// the original fs.writeSync (never stdout, the protocol). Each record carries the monotonic clock in ns
// (process.hrtime: the clock mcpfuzz reads), the pid, the program, and the path resolved (links followed; a deleted,
// renamed or linked name's last part kept). Named ESM imports of node:fs see the wrappers too
// (module.syncBuiltinESMExports). Reading a module to load it goes through Node's internals, not fs, and is not
// reported. Children inherit NODE_OPTIONS, so a Node child (or worker) loads this hook too.
"use strict";

const fs = require("fs");
const path = require("path");
const Module = require("module");

const LOG = process.env.MCPFUZZ_OBSERVE_FILE;
if (LOG && !globalThis.__mcpfuzzObserving) {
  globalThis.__mcpfuzzObserving = true;
  install(LOG);
}

function install(log) {
  const openSync = fs.openSync;
  const writeSync = fs.writeSync;
  const realpathSync = fs.realpathSync.native || fs.realpathSync;
  let fd;
  try {
    fd = openSync(log, "a");
  } catch {
    return;
  }
  const program = process.argv.slice(1, 2).join(" ") || process.argv0;
  let busy = false;

  function write(record) {
    record.t = String(process.hrtime.bigint());
    record.pid = process.pid;
    record.prog = `node ${program}`;
    try {
      writeSync(fd, JSON.stringify(record) + "\n");
    } catch {
      // a full disk: the server goes on, unobserved
    }
  }

  function text(value) {
    if (typeof value === "string") return value;
    if (Buffer.isBuffer(value)) return value.toString("utf8");
    if (value instanceof URL && value.protocol === "file:") return require("url").fileURLToPath(value);
    return null;
  }

  function resolved(value, follow) {
    const name = text(value);
    if (!name) return null;
    const absolute = path.resolve(name);
    const real = (p) => {
      // The longest part that exists, links followed, and the rest as written (a file not created yet).
      let head = p;
      const rest = [];
      for (;;) {
        try {
          return path.join(realpathSync(head), ...rest);
        } catch {
          const parent = path.dirname(head);
          if (parent === head) return p;
          rest.unshift(path.basename(head));
          head = parent;
        }
      }
    };
    if (follow) return real(absolute);
    return path.join(real(path.dirname(absolute)), path.basename(absolute));
  }

  function report(make) {
    if (busy) return;
    busy = true;
    try {
      const record = make();
      if (record) write(record);
    } catch {
      // never break the server's own call
    } finally {
      busy = false;
    }
  }

  function wrap(target, name, make) {
    const original = target && target[name];
    if (typeof original !== "function" || original.__mcpfuzzObserved) return;
    const wrapped = function (...args) {
      report(() => make(args));
      return original.apply(this, args);
    };
    Object.defineProperties(wrapped, {
      length: { value: original.length },
      name: { value: original.name },
      __mcpfuzzObserved: { value: true },
    });
    for (const key of Object.keys(original)) wrapped[key] = original[key]; // exec's promisify.custom and the like
    const custom = require("util").promisify.custom;
    if (original[custom]) wrapped[custom] = original[custom];
    target[name] = wrapped;
  }

  function openMode(flags) {
    if (typeof flags === "number") return flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT) ? "write" : "read";
    if (typeof flags === "string") return /[wa+]/.test(flags) ? "write" : "read";
    return "read";
  }

  const one = (op, follow = true) => (args) => {
    const p = typeof args[0] === "number" ? null : resolved(args[0], follow);
    return p ? { op, path: p } : null;
  };
  const two = (op) => (args) => ({ op, path: resolved(args[0], false), to: resolved(args[1], false) });
  const opened = (args) => {
    if (typeof args[0] === "number") return null;
    const flags = typeof args[1] === "object" && args[1] ? args[1].flags : args[1];
    return { op: openMode(flags), path: resolved(args[0], true) };
  };
  const written = (args) => (typeof args[0] === "number" ? null : { op: "write", path: resolved(args[0], true) });
  const stream = (op) => (args) => {
    if (typeof args[0] === "number") return null;
    const flags = typeof args[1] === "object" && args[1] ? args[1].flags : undefined;
    return { op: flags ? openMode(flags) : op, path: resolved(args[0], true) };
  };
  const linked = (args) => ({ op: "link", path: resolved(args[1], false), to: text(args[0]) });
  const files = {
    open: opened, readFile: (args) => (typeof args[0] === "number" ? null : { op: "read", path: resolved(args[0], true) }),
    writeFile: written, appendFile: written, truncate: written, copyFile: two("write"), cp: two("write"),
    unlink: one("delete", false), rm: one("delete", false), rmdir: one("delete", false), rename: two("rename"),
    mkdir: one("create", false), mkdtemp: one("create", false), symlink: linked, link: two("link"),
    chmod: one("chmod"), chown: one("chmod"), lchown: one("chmod", false), utimes: written,
    stat: one("stat", false), lstat: one("stat", false), access: one("stat", false), exists: one("stat", false),
    readdir: one("list"), opendir: one("list"), readlink: one("stat", false),
    watch: one("list"),
  };
  for (const [name, make] of Object.entries(files)) {
    wrap(fs, name, make);
    wrap(fs, `${name}Sync`, make);
    wrap(fs.promises, name, make);
  }
  wrap(fs, "createReadStream", stream("read"));
  wrap(fs, "createWriteStream", stream("write"));

  const childProcess = require("child_process");
  const command = (shell) => (args) => ({
    op: "exec", exe: shell ? "/bin/sh" : String(args[0]),
    argv: shell ? ["/bin/sh", "-c", String(args[0])] : [String(args[0]), ...(Array.isArray(args[1]) ? args[1].map(String) : [])],
  });
  const spawned = (args) => {
    const options = (Array.isArray(args[1]) ? args[2] : args[1]) || {};
    const argv = [String(args[0]), ...(Array.isArray(args[1]) ? args[1].map(String) : [])];
    return options.shell ? { op: "exec", exe: "/bin/sh", argv: ["/bin/sh", "-c", argv.join(" ")] } : { op: "exec", exe: argv[0], argv };
  };
  for (const name of ["exec", "execSync"]) wrap(childProcess, name, command(true));
  for (const name of ["spawn", "spawnSync", "execFile", "execFileSync"]) wrap(childProcess, name, spawned);
  wrap(childProcess, "fork", (args) => ({ op: "exec", exe: process.execPath, argv: [process.execPath, String(args[0])] }));

  const net = require("net");
  wrap(net.Socket.prototype, "connect", (args) => {
    let options = args[0];
    if (Array.isArray(options)) options = options[0];
    if (typeof options === "object" && options) {
      if (options.path) return { op: "connect", addr: String(options.path) };
      return { op: "connect", addr: `${options.host || "localhost"}:${options.port}` };
    }
    if (typeof options === "string" && !/^\d+$/.test(options)) return { op: "connect", addr: options };
    return { op: "connect", addr: `${typeof args[1] === "string" ? args[1] : "localhost"}:${options}` };
  });
  const dns = require("dns");
  const lookup = (args) => ({ op: "dns", addr: String(args[0]) });
  for (const name of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny"]) {
    wrap(dns, name, lookup);
    wrap(dns.promises, name, lookup);
  }
  const request = (scheme) => (args) => {
    const first = args[0];
    if (typeof first === "string" || first instanceof URL) return { op: "connect", addr: String(first) };
    if (first && typeof first === "object") return { op: "connect", addr: `${scheme}://${first.hostname || first.host || "localhost"}:${first.port || ""}` };
    return null;
  };
  for (const scheme of ["http", "https"]) {
    const module = require(scheme);
    wrap(module, "request", request(scheme));
    wrap(module, "get", request(scheme));
  }
  if (typeof globalThis.fetch === "function") {
    const original = globalThis.fetch;
    globalThis.fetch = function (input, init) {
      report(() => ({ op: "connect", addr: String(input && input.url ? input.url : input) }));
      return original.call(this, input, init);
    };
  }
  Module.syncBuiltinESMExports();
  write({ op: "hello", argv: process.argv, ppid: process.ppid });
}
