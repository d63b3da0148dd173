"""Which SDK a server is built on, read from package files laid out here (nothing is run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpfuzz.engine.attribution.detect import Sdk, detect_sdk
from mcpfuzz.engine.attribution.known import explain


def _venv(root: Path, *dist_infos: str) -> Path:
    """A virtual environment's files: pyvenv.cfg, bin/python (never run) and the named dist-info folders."""
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = root / "bin" / "python"
    python.write_text("")
    python.chmod(0o755)
    site = root / "lib" / "python3.11" / "site-packages"
    for name in dist_infos:
        (site / name).mkdir(parents=True)
    return python


def _script(folder: Path, text: str) -> Path:
    script = folder / "server.py"
    script.write_text(text)
    return script


def test_a_server_on_the_standalone_fastmcp_names_fastmcp_over_its_mcp(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info", "fastmcp-4.2.3.dist-info",
                   "fastmcp_slim-4.2.3.dist-info")
    script = _script(tmp_path, "from fastmcp import FastMCP\nmcp = FastMCP('x')\n")
    found = detect_sdk([str(python), str(script)])
    assert found is not None and (found.sdk, found.version) == (Sdk.FASTMCP, "4.2.3")
    assert found.base is not None and (found.base.sdk, found.base.version) == (Sdk.PYTHON, "2.3.0")
    assert found.describe() == "FastMCP 4.2.3 (on the Python SDK (mcp) 2.3.0)"
    # mcp's known behaviours (its stdio transport) are FastMCP's too, and say so under FastMCP's name.
    known = explain(found, "stdio", "parse-error", "silent-low")
    assert known is not None and known.id == "python-stdio-drops-unparseable"


def test_mcps_bundled_fastmcp_is_mcp(tmp_path: Path) -> None:
    """`from mcp.server.fastmcp import FastMCP` is mcp's own copy, even where fastmcp is installed too."""
    python = _venv(tmp_path / "venv", "mcp-1.30.0.dist-info", "fastmcp-4.2.3.dist-info")
    script = _script(tmp_path, "from mcp.server.fastmcp import FastMCP\n")
    found = detect_sdk([str(python), str(script)])
    assert found is not None and (found.sdk, found.version, found.base) == (Sdk.PYTHON, "1.30.0", None)


def test_a_script_that_imports_neither_is_no_sdk_server(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info", "fastmcp-4.2.3.dist-info")
    assert detect_sdk([str(python), str(_script(tmp_path, "import json\n"))]) is None


def _node_package(root: Path) -> Path:
    manifest = root / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"name": "@modelcontextprotocol/sdk", "version": "1.32.2"}')
    script = root / "node_modules" / "server" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("")
    return script


@pytest.mark.parametrize("prefix", [[], ["env", "PORT={port}"], ["PORT=3001"], ["/usr/bin/env", "-i", "A=1"]])
def test_a_launch_command_with_env_and_node_options_finds_the_typescript_sdk(tmp_path: Path,
                                                                              prefix: list[str]) -> None:
    """`env PORT={port} node --require preload.cjs dist/index.js streamableHttp`: the script's SDK."""
    script = _node_package(tmp_path / "app")
    preload = tmp_path / "elsewhere" / "preload.cjs"
    preload.parent.mkdir()
    preload.write_text("")
    found = detect_sdk([*prefix, "node", "--require", str(preload), os.fspath(script), "streamableHttp"])
    assert found is not None and (found.sdk, found.version) == (Sdk.TYPESCRIPT, "1.32.2")


def test_python_dash_m_of_a_package_that_imports_mcp_beyond_its_main_is_mcps(tmp_path: Path) -> None:
    """mcp-server-time's __main__.py imports only its own package's `main`; its server module imports mcp."""
    python = _venv(tmp_path / "venv", "mcp-2.3.0.dist-info")
    package = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "time_server"
    package.mkdir()
    (package / "__main__.py").write_text("from time_server import main\nmain()\n")
    (package / "__init__.py").write_text("from .server import serve\n\ndef main():\n    serve()\n")
    (package / "server.py").write_text("from mcp.server import Server\n")
    found = detect_sdk([str(python), "-m", "time_server"])
    assert found is not None and (found.sdk, found.version) == (Sdk.PYTHON, "2.3.0")
    (package / "server.py").write_text("import json\n")  # a hand-written server in an environment with mcp
    assert detect_sdk([str(python), "-m", "time_server"]) is None
