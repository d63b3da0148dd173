"""The SDK a Node server reaches through its vendor's own packages, resolved as Node loads them: `exports` under
run-time conditions (never `types`), the nearest hop deciding, a transport import telling two versions apart,
nothing named when that cannot be told, type-only imports and listed dependencies never counting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution import reach
from mcpfuzz.engine.attribution.node import node_stack, package_file
from mcpfuzz.engine.attribution.node_exports import exported_target
from mcpfuzz.engine.attribution.sdks import Sdk

pytestmark = pytest.mark.unit


def _package(folder: Path, name: str, files: dict[str, str], **manifest: object) -> Path:
    """A package under `folder`/node_modules with its package.json and files."""
    root = folder / "node_modules" / name
    root.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0", **manifest}))
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _sdk(folder: Path, name: str, version: str) -> Path:
    """A copy of an SDK package: what detection reads of it is its package.json."""
    return _package(folder, name, {"index.js": ""}, version=version, main="index.js")


def _entry(app: Path, source: str, name: str = "index.mjs") -> Path:
    app.mkdir(parents=True, exist_ok=True)
    (app / "package.json").write_text(json.dumps({"name": "app", "type": "module"}))
    (app / name).write_text(source)
    return app / name


def test_exports_give_the_file_node_runs_never_the_declarations() -> None:
    exports = {".": {"types": "./d/index.d.ts", "import": "./esm/index.js", "require": "./cjs/index.cjs"},
               "./stdio": {"types": "./d/stdio.d.ts", "default": "./esm/stdio.js"},
               "./server/*": "./esm/server/*", "./server/private/*": None, "./package.json": "./package.json"}
    assert exported_target(exports, ".") == "./esm/index.js"
    assert exported_target(exports, "./stdio") == "./esm/stdio.js"
    assert exported_target(exports, "./server/mcp.js") == "./esm/server/mcp.js"
    assert exported_target(exports, "./server/private/x.js") is None  # the more specific pattern closes it
    assert exported_target(exports, "./missing") is None
    assert exported_target("./main.js", ".") == "./main.js"
    assert exported_target({"node": {"import": "./n.mjs"}, "default": "./d.js"}, ".") == "./n.mjs"
    assert exported_target([{"types": "./x.d.ts"}, "./fallback.js"], ".") == "./fallback.js"


def test_a_package_without_exports_loads_its_main_or_index(tmp_path: Path) -> None:
    with_main = _package(tmp_path, "a", {"lib/start.js": ""}, main="lib/start")
    plain = _package(tmp_path, "b", {"index.js": "", "sub/x.js": ""})
    assert package_file(with_main, "a") == (with_main / "lib" / "start.js").resolve()
    assert package_file(plain, "b") == (plain / "index.js").resolve()
    assert package_file(plain, "b/sub/x.js") == (plain / "sub" / "x.js").resolve()


def test_the_sdk_a_vendor_package_imports_is_reached_through_its_exports(tmp_path: Path) -> None:
    app = tmp_path / "app"
    _package(app, "@v/cli", {"dist/cli.js": 'import { run } from "@v/core/runners";\n'},
             exports={".": {"types": "./dist/cli.d.ts", "import": "./dist/cli.js"}})
    _package(app, "@v/core", {"dist/runners/index.js": 'import "../common.js";\n',
                              "dist/common.js": 'import { Server } from "@modelcontextprotocol/server";\n'},
             exports={"./runners": "./dist/runners/index.js"})
    _sdk(app, "@modelcontextprotocol/server", "2.3.1")
    found = node_stack(_entry(app, 'import "@v/cli";\n'))
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "2.3.1")


def test_a_dependency_listed_or_imported_for_types_only_is_never_reached(tmp_path: Path) -> None:
    """A UI helper that lists the SDK and imports its types in its declarations and TypeScript sources."""
    app = tmp_path / "app"
    _package(app, "ui", {"dist/index.js": "export const card = (x) => x;\n",
                         "dist/index.d.ts": 'import type { Tool } from "@modelcontextprotocol/sdk/types.js";\n',
                         "src/index.ts": 'import type { Tool } from "@modelcontextprotocol/sdk/types.js";\n'},
             exports={".": {"types": "./dist/index.d.ts", "import": "./dist/index.js"}},
             dependencies={"@modelcontextprotocol/sdk": "^1.25.0"})
    _sdk(app, "@modelcontextprotocol/sdk", "1.25.1")
    assert node_stack(_entry(app, 'import { card } from "ui";\n')) is None
    typed = _entry(tmp_path / "typed", 'import type { Tool } from "@modelcontextprotocol/sdk/types.js";\n'
                                       'export type { Server } from "@modelcontextprotocol/sdk/server/index.js";\n',
                   name="index.ts")
    _sdk(tmp_path / "typed", "@modelcontextprotocol/sdk", "1.25.1")
    assert node_stack(typed) is None


def test_the_nearest_hop_that_imports_an_mcp_package_decides(tmp_path: Path) -> None:
    app = tmp_path / "app"
    _package(app, "core", {"index.js": 'import "@modelcontextprotocol/server";\nimport "helper";\n'})
    _package(app, "helper", {"index.js": 'import "@modelcontextprotocol/sdk/server/stdio.js";\n'})
    _sdk(app, "@modelcontextprotocol/server", "2.4.0")
    _sdk(app, "@modelcontextprotocol/sdk", "1.32.2")
    found = node_stack(_entry(app, 'import "core";\n'))
    assert found is not None and found.version == "2.4.0"


def test_two_versions_at_one_hop_are_told_apart_by_the_transport_imported(tmp_path: Path) -> None:
    app = tmp_path / "app"
    _package(app, "core", {"index.js": 'import { serveStdio } from "@modelcontextprotocol/server/stdio";\n'})
    _package(app, "ui", {"index.js": 'import { Tool } from "@modelcontextprotocol/sdk/types.js";\n'})
    _sdk(app, "@modelcontextprotocol/server", "2.4.0")
    _sdk(app, "@modelcontextprotocol/sdk", "1.32.2")
    found = node_stack(_entry(app, 'import "core";\nimport "ui";\n'))
    assert found is not None and found.version == "2.4.0"


def test_two_versions_that_nothing_tells_apart_name_no_stack(tmp_path: Path) -> None:
    """Both imported through a transport (or neither): naming one could mark the server's findings wrongly."""
    app = tmp_path / "app"
    _package(app, "a", {"index.js": 'import "@modelcontextprotocol/server/stdio";\n'})
    _package(app, "b", {"index.js": 'import "@modelcontextprotocol/sdk/server/stdio.js";\n'})
    _sdk(app, "@modelcontextprotocol/server", "2.4.0")
    _sdk(app, "@modelcontextprotocol/sdk", "1.32.2")
    assert node_stack(_entry(app, 'import "a";\nimport "b";\n')) is None
    reached = reach.reached_packages([("a", app), ("b", app)])
    assert sorted(item.stack.version for item in reached) == ["1.32.2", "2.4.0"]


def test_a_chain_longer_than_the_bound_is_not_followed(tmp_path: Path) -> None:
    app = tmp_path / "app"
    hops = reach.MAX_HOPS + 1
    for index in range(hops):
        onward = f'import "p{index + 1}";\n' if index + 1 < hops else 'import "@modelcontextprotocol/server";\n'
        _package(app, f"p{index}", {"index.js": onward})
    _sdk(app, "@modelcontextprotocol/server", "2.4.0")
    assert node_stack(_entry(app, 'import "p0";\n')) is None
    assert node_stack(_entry(tmp_path / "app", 'import "p1";\n', name="near.mjs")) is not None


EXPRESS = "@modelcontextprotocol/express"


def test_the_sdks_express_package_is_known_only_where_the_server_loads_it(tmp_path: Path) -> None:
    """Its Express rows need it: imported by the entry, by a vendor's runner at the hop that names the SDK, or
    bundled."""
    direct = tmp_path / "direct"
    _sdk(direct, "@modelcontextprotocol/server", "2.4.0")
    _sdk(direct, EXPRESS, "2.4.0")
    found = node_stack(_entry(direct, f'import "@modelcontextprotocol/server";\nimport "{EXPRESS}";\n'))
    assert found is not None and found.packages == {EXPRESS}

    vendor = tmp_path / "vendor"
    _package(vendor, "core", {"index.js": 'import "@modelcontextprotocol/server";\n'})
    _package(vendor, "runner", {"index.js": f'import {{ createMcpExpressApp }} from "{EXPRESS}";\n'})
    _sdk(vendor, "@modelcontextprotocol/server", "2.4.0")
    _sdk(vendor, EXPRESS, "2.4.0")
    found = node_stack(_entry(vendor, 'import "core";\nimport "runner";\n'))
    assert found is not None and found.packages == {EXPRESS}

    own = tmp_path / "own"
    _package(own, "core", {"index.js": 'import "@modelcontextprotocol/server";\nimport express from "express";\n'})
    _package(own, "express", {"index.js": "module.exports = () => {};\n"})
    _sdk(own, "@modelcontextprotocol/server", "2.4.0")
    found = node_stack(_entry(own, 'import "core";\n'))
    assert found is not None and found.packages == frozenset()


def test_a_bundle_carrying_the_sdks_express_app_says_so(tmp_path: Path) -> None:
    from mcpfuzz.engine.attribution.bundled import SERVER_MARKS
    marks = "\n".join(f"throw new Error('{mark.decode()}');" for mark in SERVER_MARKS)
    plain = _entry(tmp_path / "plain", marks + "\n", name="index.js")
    assert node_stack(plain) is not None and node_stack(plain).packages == frozenset()  # type: ignore[union-attr]
    app = _entry(tmp_path / "app", marks + "\nfunction createMcpExpressApp(options) {}\n", name="index.js")
    found = node_stack(app)
    assert found is not None and found.packages == {EXPRESS}
