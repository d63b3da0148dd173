"""Installing mcpfuzz ships `mcpfuzz.strategies` and never a top-level `strategies` module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

# Never copied into the build tree: caches anywhere, and at the top venvs and earlier build output that
# could leak into the wheel.
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache", ".hypothesis")
TOP_LEVEL_JUNK = shutil.ignore_patterns(".git", "build", "dist", ".venv*")
STRATEGIES_DIR = REPO_ROOT / "strategies"


def clean_env() -> dict[str, str]:
    """Our environment without anything that would put the repository on sys.path."""
    return {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PYTHONHOME")}


def python(executable: Path | str, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `python -c CODE` in `cwd`."""
    return subprocess.run([str(executable), "-c", code], capture_output=True, text=True, cwd=cwd,
                          env=clean_env(), timeout=60, stdin=subprocess.DEVNULL)


def pip(*args: str, cwd: Path, executable: Path | str = sys.executable) -> subprocess.CompletedProcess[str]:
    """Run pip quietly with a given interpreter."""
    return subprocess.run([str(executable), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, cwd=cwd, env=clean_env(), timeout=300,
                          stdin=subprocess.DEVNULL)


def not_sources(directory: str, names: list[str]) -> set[str]:
    """`shutil.copytree` ignore hook: the names under `directory` that are not sources."""
    skipped = set(CACHES(directory, names))
    if Path(directory) == REPO_ROOT:
        skipped |= TOP_LEVEL_JUNK(directory, names)
    return skipped


def build_wheel(tmp_path: Path) -> Path:
    """Build a wheel from a copy of the repository sources (a build must not litter the work tree)."""
    source = tmp_path / "src"
    shutil.copytree(REPO_ROOT, source, ignore=not_sources)
    out = tmp_path / "wheels"
    result = pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(source), cwd=tmp_path)
    if result.returncode != 0:
        # The running environment's setuptools may be older than the build needs (70.1 for bdist_wheel without
        # the `wheel` package, 77 for an SPDX `license`): build in the isolated environment pip provisions.
        result = pip("wheel", "--no-deps", "-w", str(out), str(source), cwd=tmp_path)
    assert result.returncode == 0, f"wheel build failed:\n{result.stdout}\n{result.stderr}"
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def fresh_venv(tmp_path: Path) -> Path:
    """A new venv whose dependencies come from the running environment; returns its python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   capture_output=True, timeout=120)
    venv_python = venv / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        # Made from inside a venv, --system-site-packages reaches the base interpreter's packages, not
        # ours: a .pth line adds our site-packages (after the new venv's own, and without processing our
        # .pth files, so an editable install of mcpfuzz here stays invisible there).
        purelib = python(venv_python, "import sysconfig; print(sysconfig.get_paths()['purelib'])", tmp_path)
        assert purelib.returncode == 0, purelib.stderr
        Path(purelib.stdout.strip(), "running-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv_python


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh venv with the built wheel installed (no dependencies fetched)."""
    tmp_path = tmp_path_factory.mktemp("packaging")
    wheel = build_wheel(tmp_path)
    venv_python = fresh_venv(tmp_path)
    result = pip("install", "--no-deps", "--no-index", str(wheel), cwd=tmp_path, executable=venv_python)
    assert result.returncode == 0, f"install failed:\n{result.stdout}\n{result.stderr}"
    return venv_python


def test_wheel_installs_mcpfuzz_strategies(installed_python: Path, tmp_path: Path) -> None:
    """From the wheel, `mcpfuzz.strategies.catalogue` imports from the venv, not from the repository."""
    result = python(installed_python, "import mcpfuzz.strategies.catalogue as c; print(c.__file__)", tmp_path)
    assert result.returncode == 0, result.stderr
    location = Path(result.stdout.strip())
    assert location.is_relative_to(installed_python.parent.parent), location
    assert not location.is_relative_to(REPO_ROOT), location


def test_wheel_has_no_top_level_strategies(installed_python: Path, tmp_path: Path) -> None:
    """From the wheel, `import strategies` fails."""
    result = python(installed_python, "import strategies", tmp_path)
    assert result.returncode != 0, "the wheel installed a top-level `strategies` module"
    assert "ModuleNotFoundError" in result.stderr, result.stderr


def test_wheel_console_script_runs(installed_python: Path, tmp_path: Path) -> None:
    """The wheel's `mcpfuzz` console script lists the oracles."""
    script = installed_python.with_name("mcpfuzz")
    result = subprocess.run([str(script), "oracles"], capture_output=True, text=True, cwd=tmp_path,
                            env=clean_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "id-preserved" in result.stdout


def test_editable_install_imports_mcpfuzz_strategies(tmp_path: Path) -> None:
    """In the running (editable) environment, `mcpfuzz.strategies` maps to the repository's strategies/."""
    result = python(sys.executable, "import mcpfuzz.strategies as s; print(s.__file__)", tmp_path)
    assert result.returncode == 0, result.stderr
    location = Path(result.stdout.strip()).resolve()
    if location.is_relative_to(REPO_ROOT.resolve()):
        assert location.parent == STRATEGIES_DIR.resolve(), location


def test_editable_install_has_no_top_level_strategies(tmp_path: Path) -> None:
    """In the running environment, away from the repository, `import strategies` fails."""
    result = python(sys.executable, "import strategies", tmp_path)
    assert result.returncode != 0, "`strategies` is importable as a top-level module"
    assert "ModuleNotFoundError" in result.stderr, result.stderr


def test_wheel_ships_the_mcp_schemas_and_the_surface_strategies(installed_python: Path, tmp_path: Path) -> None:
    """The specification's JSON schemas are package data: a result is judged against them from the wheel."""
    code = ("import mcpfuzz.strategies.surfaces.templates\n"
            "from mcpfuzz.oracles.spec_schema import spec_result_problems as problems\n"
            "print(problems('resources/read', '2026-07-28', {'contents': [{'text': 'x'}]}))")
    result = python(installed_python, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "'uri' is a required property" in result.stdout and "ttlMs" in result.stdout, result.stdout


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """The wheel takes only the packages pyproject.toml lists: a new folder left out installs editable and then
    fails with ModuleNotFoundError from a wheel, pipx or the GitHub Action."""
    import tomllib

    setuptools = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {".".join(init.parent.relative_to(REPO_ROOT).parts)
               for init in (REPO_ROOT / "mcpfuzz").rglob("__init__.py")}
    folders |= {".".join(("mcpfuzz", *init.parent.relative_to(REPO_ROOT).parts))
                for init in STRATEGIES_DIR.rglob("__init__.py")}
    assert folders - listed == set()
    assert {name for name in listed if name.startswith("mcpfuzz.strategies.")} <= set(setuptools["package-dir"])
