"""`${VAR}` expansion in config and servers files; every expanded value is remembered as a secret except a path (unless
its variable's name says credential and no such file exists)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# ${NAME}, ${NAME:-default}, VS Code's ${env:NAME}; `$$` is a literal `$`. A name is what a shell accepts,
# plus the `prefix:` of VS Code's variables (`${workspaceFolder}`, `${input:id}`) so they are recognised.
_VARIABLE = re.compile(
    r"\$\$|\$\{(?:(?P<scope>[A-Za-z]+):)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?::-(?P<default>[^}]*))?\}")


class UnknownVariable(LookupError):
    """A `${VAR}` with no value and no default; `name` is the variable as written."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(reason)
        self.name = name
        self.reason = reason


@dataclass
class Expander:
    """Expands variables from `environ` (plus `extra`, e.g. VS Code's `workspaceFolder`) and keeps what it put in."""

    environ: Mapping[str, str]
    extra: Mapping[str, str] = field(default_factory=dict)
    # Variables other than environment ones: a hint for the error ("${input:x} prompts the user").
    unsupported: Callable[[str, str], str] | None = None
    values: list[str] = field(default_factory=list)

    def text(self, text: str) -> str:
        """`text` with its variables replaced (UnknownVariable when one has no value)."""
        return _VARIABLE.sub(self._replace, text)

    def value(self, value: Any) -> Any:
        """Strings anywhere in lists and tables expanded; other values unchanged."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def _replace(self, match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        scope, name, default = match.group("scope"), match.group("name"), match.group("default")
        written = match.group(0)
        if scope not in (None, "env"):
            hint = self.unsupported(scope, name) if self.unsupported else ""
            raise UnknownVariable(written, f"{written} is not an environment variable{hint}")
        if scope is None and name in self.extra:
            return self.extra[name]
        found = self.environ.get(name)
        if found is not None:
            # A value that came from the environment may be a credential: reports must never show it. A path
            # (${HOME}, a data folder) is none, and hiding it would cut that folder out of the server's command.
            from mcpfuzz.corpus.redact import is_secret_setting, looks_like_path  # its patterns: only when needed

            if not looks_like_path(found) or is_secret_setting(name, found):
                self.values.append(found)
            return found
        if default is None:
            raise UnknownVariable(written, f"{written}: the environment variable {name} is not set; "
                                           f"tip: export {name}=..., or write ${{{name}:-default}}")
        return default
