"""A wheel built by hand (no build backend, no network) holding the nested-conditions server as a console script,
for the launcher tests (`uvx --from WHEEL`, `pipx run --spec WHEEL`)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from tests.conftest import SERVERS_DIR

PACKAGE = "nested_tool"
SCRIPT = "nested-tool"


def build_wheel(folder: Path) -> Path:
    """The wheel `nested_tool-0.1-py3-none-any.whl` in `folder`: the server and the module it builds on as a package,
    and a console script `nested-tool` that runs it."""
    server = (SERVERS_DIR / "nested_conditions_server.py").read_text()
    run = "def run() -> int:\n    return main(server_class=NestedConditionsServer)\n"
    files = {
        f"{PACKAGE}/__init__.py": "",
        # The server puts its own folder on sys.path and imports mcp_server from there: the package's folder.
        f"{PACKAGE}/mcp_server.py": (SERVERS_DIR / "mcp_server.py").read_text(),
        f"{PACKAGE}/server.py": f"{server}\n\n{run}",
        f"{PACKAGE}-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: nested-tool\nVersion: 0.1\n",
        f"{PACKAGE}-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                                          "Tag: py3-none-any\n",
        f"{PACKAGE}-0.1.dist-info/entry_points.txt": f"[console_scripts]\n{SCRIPT} = {PACKAGE}.server:run\n",
    }
    record = []
    wheel = folder / f"{PACKAGE}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            data = text.encode()
            archive.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{PACKAGE}-0.1.dist-info/RECORD,,")
        archive.writestr(f"{PACKAGE}-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel
