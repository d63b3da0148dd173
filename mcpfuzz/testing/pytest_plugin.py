"""The pytest plugin (entry point `pytest11`): the `mcpfuzz` fixture and marker; idle unless a test asks for them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mcpfuzz.testing.suite import FuzzSuite, SuiteCollector

if TYPE_CHECKING:
    from mcpfuzz.testing.fuzzer import Fuzzer

MARKER = "mcpfuzz"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, so `--strict-markers` suites accept it."""
    config.addinivalue_line("markers", f"{MARKER}(**options): default `mcpfuzz run` options for the mcpfuzz "
                                       "fixture in this test, e.g. budget=10, fail_on='high'")


@pytest.fixture
def mcpfuzz(request: pytest.FixtureRequest, tmp_path: Path) -> Fuzzer:
    """Fuzz a server from a test: `mcpfuzz.run(["python", "server.py"], budget=30).assert_no_findings()`."""
    from mcpfuzz.testing.fuzzer import Fuzzer

    defaults = session_defaults(request.config, request.node.nodeid)
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        defaults.update(marker.kwargs)
    return Fuzzer(defaults, files=tmp_path / "mcpfuzz", brief_console=True)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> pytest.Collector | None:
    """A `test_*` name holding `fuzz_suite(...)` is collected as one run and an item per root cause it found."""
    if not isinstance(obj, FuzzSuite) or not name.startswith("test"):
        return None
    suite: pytest.Collector = SuiteCollector.from_parent(collector, name=name, suite=obj)
    return suite


def session_defaults(config: pytest.Config, node_id: str) -> dict[str, Any]:
    """The options every run of the session starts from: pytest's Hypothesis seed and profile, and the test's
    corpus in pytest's cache."""
    from mcpfuzz.testing.fuzzer import default_corpus

    defaults: dict[str, Any] = {}
    seed = _option(config, "hypothesis_seed")
    if seed is not None:
        defaults["seed"] = _seed(str(seed))
    profile = _option(config, "hypothesis_profile")
    if profile is not None:
        # Only a profile named on the command line: mcpfuzz never follows the ambient one (CI=true derandomises).
        from hypothesis import settings

        defaults["max_examples"] = settings.get_profile(profile).max_examples
    cache = getattr(config, "cache", None)
    corpus = default_corpus(cache.mkdir("mcpfuzz") if cache is not None else None, node_id)
    if corpus is not None:
        defaults["corpus"] = corpus
    return defaults


def temporary_folder(config: pytest.Config, name: str) -> Path:
    """A fresh folder under pytest's temporary root (what `tmp_path_factory` hands out) for a run's files."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:  # the tmpdir plugin is disabled: a folder of the system's temporary root
        import tempfile

        return Path(tempfile.mkdtemp(prefix="mcpfuzz-"))
    folder: Path = factory.mktemp(f"mcpfuzz-{name}", numbered=True)
    return folder


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
