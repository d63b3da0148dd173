// mcpfuzz's V8 coverage reporter, loaded into a Node server with `--require` (NODE_OPTIONS); Node built-ins only.
//
// It opens an in-process inspector session (no port, no network), starts V8's precise block coverage in binary
// mode, and takes it just before the server writes anything to stdout or to an HTTP response, at exit, and on a
// slow timer. In-process inspector calls run their callback synchronously, so the lines of a call are appended to
// MCPFUZZ_COVERAGE_FILE before the answer of that call goes out. Records are the Python tracer's: `LINE<TAB>PATH`
// once per line, and a first `#tracer<TAB>v8<TAB>PID`. Never stdout (the protocol) nor stderr.
//
// A "line" is a source line whose first non-blank character lies in a block V8 ran: the innermost range (a
// function or a block inside it) around that character had a count. Binary coverage is reset by each take, so a
// take lists only the functions run since the one before; a function known from an earlier take and absent now
// did not run, and its body is not counted for the function around it. Offsets are read against the file on disk.
"use strict";

(function install() {
  const log = process.env.MCPFUZZ_COVERAGE_FILE;
  if (!log) return;
  // npm and npx run the server as a child process (which loads this file too); their own code never counts.
  const main = process.argv[1] || "";
  if (/(^|[\\/])np[mx](-cli\.js)?$/.test(main)) return;

  const fs = require("node:fs");
  const path = require("node:path");
  const { fileURLToPath } = require("node:url");
  let inspector;
  try {
    inspector = require("node:inspector");
  } catch {
    return; // a Node built without the inspector: no #tracer record, and mcpfuzz turns coverage off
  }
  const sep = path.sep;
  const roots = (process.env.MCPFUZZ_COVERAGE_ROOTS || "").split(path.delimiter).filter(Boolean)
    .map((root) => realpath(root).replace(/[\\/]*$/, sep));
  const includeSdk = process.env.MCPFUZZ_COVERAGE_SDK === "1";
  const own = realpath(__filename);

  let fd;
  try {
    fd = fs.openSync(log, "a", 0o600);
  } catch {
    return;
  }
  const session = new inspector.Session();
  try {
    session.connect();
    session.post("Profiler.enable");
    session.post("Profiler.startPreciseCoverage", { callCount: false, detailed: true });
  } catch {
    return;
  }

  const files = new Map(); // a script's url -> its state (path, line offsets, lines seen), null when not counted
  let taking = false;

  function realpath(file) {
    try {
      return fs.realpathSync(file);
    } catch {
      return file;
    }
  }

  function write(text) {
    try {
      fs.writeSync(fd, text);
    } catch {
      // a full disk: the server goes on, its lines unreported
    }
  }

  function counted(file) {
    if (file === own) return false;
    if (includeSdk) return true;
    for (const root of roots) {
      if (file.startsWith(root)) return !file.slice(root.length).split(/[\\/]/).includes("node_modules");
    }
    return false;
  }

  function script(url) {
    if (files.has(url)) return files.get(url);
    let state = null;
    if (url.startsWith("file:")) {
      const file = realpath(fileURLToPath(url));
      if (counted(file)) state = { file, starts: null, numbers: null, seen: new Set(), known: new Map() };
    }
    files.set(url, state);
    return state;
  }

  function lineStarts(state) {
    // Each line's first non-blank character, with its number; blank, comment-only and #! lines are left out.
    if (state.starts !== null) return;
    let source = "";
    try {
      source = fs.readFileSync(state.file, "utf8");
    } catch {
      // gone or unreadable: no lines for it
    }
    const starts = [];
    const numbers = [];
    let offset = 0;
    const lines = source.split("\n");
    for (let index = 0; index < lines.length; index += 1) {
      const text = lines[index];
      const blank = text.length - text.trimStart().length;
      const rest = text.slice(blank);
      if (rest && !/^(\/\/|\/\*|\*|#!)/.test(rest)) {
        starts.push(offset + blank);
        numbers.push(index + 1);
      }
      offset += text.length + 1;
    }
    state.starts = starts;
    state.numbers = numbers;
  }

  function firstAtOrAfter(starts, offset) {
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (starts[middle] < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  function reached(state, functions) {
    // The lines of this take: each counted line's innermost range, from a sweep over ranges nested in each other.
    lineStarts(state);
    const ranges = [];
    let low = Infinity;
    let high = -Infinity;
    const present = new Set();
    for (const fn of functions) {
      const top = fn.ranges[0];
      present.add(top.startOffset);
      state.known.set(top.startOffset, top.endOffset);
      for (const range of fn.ranges) {
        ranges.push(range);
        if (range.count > 0) {
          low = Math.min(low, range.startOffset);
          high = Math.max(high, range.endOffset);
        }
      }
    }
    if (low >= high) return "";
    for (const [start, end] of state.known) {
      if (!present.has(start) && start < high && end > low) ranges.push({ startOffset: start, endOffset: end, count: 0 });
    }
    ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
    const stack = [];
    let next = 0;
    let text = "";
    const { starts, numbers, seen } = state;
    for (let index = firstAtOrAfter(starts, low); index < starts.length && starts[index] < high; index += 1) {
      const offset = starts[index];
      while (next < ranges.length && ranges[next].startOffset <= offset) {
        const range = ranges[next];
        while (stack.length && stack[stack.length - 1].endOffset <= range.startOffset) stack.pop();
        stack.push(range);
        next += 1;
      }
      while (stack.length && stack[stack.length - 1].endOffset <= offset) stack.pop();
      const innermost = stack[stack.length - 1];
      const number = numbers[index];
      if (innermost !== undefined && innermost.count > 0 && !seen.has(number)) {
        seen.add(number);
        text += `${number}\t${state.file}\n`;
      }
    }
    return text;
  }

  function take() {
    if (taking) return;
    taking = true;
    try {
      let result = null;
      session.post("Profiler.takePreciseCoverage", (error, answer) => {
        if (!error) result = answer.result;
      });
      if (result === null) return; // not answered at once (never seen in-process): the next take has it all
      let text = "";
      for (const entry of result) {
        const state = script(entry.url);
        if (state !== null && entry.functions.length) text += reached(state, entry.functions);
      }
      if (text) write(text);
    } catch {
      // coverage must never break the server
    } finally {
      taking = false;
    }
  }

  function before(owner, name) {
    const original = owner[name];
    if (typeof original !== "function") return;
    owner[name] = function coveredFirst(...args) {
      take();
      return original.apply(this, args);
    };
  }

  before(process.stdout, "write");
  try {
    const http = require("node:http");
    before(http.ServerResponse.prototype, "write");
    before(http.ServerResponse.prototype, "end");
  } catch {
    // no http module: stdio servers only
  }
  process.on("exit", take);
  setInterval(take, 500).unref();
  write(`#tracer\tv8\t${process.pid}\n`);
})();
