"""The pytest plugin (entry point `pytest11`): the `mcpfuzz` fixture and marker; idle unless a test asks for them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mcpfuzz.testing.fuzzer import Fuzzer

MARKER = "mcpfuzz"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, so `--strict-markers` suites accept it."""
    config.addinivalue_line("markers", f"{MARKER}(**options): default `mcpfuzz run` options for the mcpfuzz "
                                       "fixture in this test, e.g. budget=10, fail_on='high'")


@pytest.fixture
def mcpfuzz(request: pytest.FixtureRequest) -> Fuzzer:
    """Fuzz a server from a test: `mcpfuzz.run(["python", "server.py"], budget=30).assert_no_findings()`."""
    from mcpfuzz.testing.fuzzer import Fuzzer, default_corpus

    defaults: dict[str, Any] = {}
    seed = _option(request.config, "hypothesis_seed")
    if seed is not None:
        defaults["seed"] = _seed(str(seed))
    profile = _option(request.config, "hypothesis_profile")
    if profile is not None:
        # Only a profile named on the command line: mcpfuzz never follows the ambient one (CI=true derandomises).
        from hypothesis import settings

        defaults["max_examples"] = settings.get_profile(profile).max_examples
    cache = getattr(request.config, "cache", None)
    corpus = default_corpus(cache.mkdir("mcpfuzz") if cache is not None else None, request.node.nodeid)
    if corpus is not None:
        defaults["corpus"] = corpus
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        defaults.update(marker.kwargs)
    return Fuzzer(defaults)


def _option(config: pytest.Config, name: str) -> Any:
    try:
        return config.getoption(name)
    except ValueError:  # the hypothesis plugin is not loaded
        return None


def _seed(text: str) -> int:
    """--hypothesis-seed as mcpfuzz's seed: a number as it is, any other text hashed the same in every process."""
    if text.isdigit():
        return int(text)
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
