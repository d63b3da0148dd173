"""The corpus folder: one JSON transcript per distinct failure, written atomically, plus a manifest."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mcpfuzz import __version__

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TEMP_PREFIX = ".tmp-"
REQUIRED_KEYS = ("target", "oracle", "fingerprint")
# Long enough for any real target, short enough for every file system's 255-byte name limit.
MAX_NAME_LENGTH = 150
# A temp file this old belongs to a writer that died (a live write takes milliseconds).
STALE_TEMP_SECONDS = 60.0
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class CorpusError(Exception):
    """A corpus folder or transcript that cannot be used, with where it is and what to do."""

    def __init__(self, message: str, *, path: Path | None = None, tip: str = "") -> None:
        self.message = message
        self.path = path
        self.tip = tip
        super().__init__(str(self))

    def __str__(self) -> str:
        """What went wrong, where, and the tip, as one user-facing text."""
        where = f" ({self.path})" if self.path is not None else ""
        tip = f"\nTip: {self.tip}" if self.tip else ""
        return f"{self.message}{where}{tip}"


def _safe(part: str) -> str:
    """A name part with every character outside [A-Za-z0-9._-] (including "/") mapped to "-"."""
    return _UNSAFE.sub("-", part)


def transcript_name(target: str, oracle: str, fingerprint: str) -> str:
    """`<target>_<oracle>_<fingerprint>.json`, sanitised and capped; the fingerprint always survives."""
    fingerprint = _safe(fingerprint)[:64]
    oracle = _safe(oracle)[:40]
    safe_target = _safe(target) or "-"
    room = MAX_NAME_LENGTH - len(f"_{oracle}_{fingerprint}.json")
    if len(safe_target) > room:
        # A digest of the whole target keeps two long targets that share a prefix apart.
        digest = hashlib.sha256(target.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe_target = f"{safe_target[:room - len(digest) - 1]}-{digest}"
    name = f"{safe_target}_{oracle}_{fingerprint}.json"
    # A leading dot would hide the file, or make it look like one of our temp files.
    return "-" + name[1:] if name.startswith(".") else name


def _utc_now() -> str:
    """The current time as ISO-8601 UTC."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json_bytes(data: dict) -> bytes:
    """`data` as indented UTF-8 JSON; escaped ASCII when it holds text UTF-8 cannot encode (lone surrogates)."""
    try:
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(data, indent=2) + "\n").encode("ascii")


def _fsync_directory(directory: Path) -> None:
    """Make a rename in `directory` durable, where the platform lets a directory be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: dict, *, sync_folder: bool = True) -> None:
    """Write `data` so that a kill at any moment leaves the old file or the new one, never a partial one.

    `sync_folder` False leaves making the rename durable to the caller (one folder sync after many writes)."""
    payload = _json_bytes(data)  # serialise first: a bad value must not leave a temp file behind
    import tempfile  # here: the command line checks a corpus folder before anything is written

    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if sync_folder:
        _fsync_directory(path.parent)


def _problem(data: Any) -> str | None:
    """Why a parsed file is not a transcript this version can read, or None."""
    if not isinstance(data, dict):
        return f"not a JSON object (found {type(data).__name__})"
    missing = [key for key in REQUIRED_KEYS if not isinstance(data.get(key), str)]
    if missing:
        return f"missing or non-text {', '.join(missing)}"
    version = data.get("format", FORMAT_VERSION)
    if isinstance(version, int) and version > FORMAT_VERSION:
        return f"transcript format {version} is newer than this mcpfuzz reads ({FORMAT_VERSION})"
    return None


def _read(path: Path) -> tuple[dict | None, str | None]:
    """A transcript and None, or None and why it cannot be read."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, "no such file"
    except OSError as error:
        return None, f"cannot read it: {error.strerror or error}"
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, f"not valid JSON: {error}"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"
    problem = _problem(data)
    return (None, problem) if problem else (data, None)


class CorpusStore:
    """A corpus folder: transcripts by name, a manifest, and nothing half-written."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._last_sweep = float("-inf")
        self._check_folder()

    @property
    def manifest_path(self) -> Path:
        """Where the manifest lives."""
        return self.root / MANIFEST

    def save(self, transcript: dict, *, count: bool = True) -> tuple[Path, bool]:
        """Write a transcript under its name; a repeat keeps `created` and counts `seen` (unless `count` is
        False: the same run writing its finding again). Returns (path, is_new)."""
        (saved,) = self.save_many([(transcript, count)])
        return saved

    def save_many(self, transcripts: list[tuple[dict, bool]]) -> list[tuple[Path, bool]]:
        """`save` for each (transcript, count), the folder listed once and the manifest written once: a run's
        thousand findings cost a thousand file writes, not a thousand listings of the folder."""
        for transcript, _ in transcripts:
            missing = [key for key in REQUIRED_KEYS if not isinstance(transcript.get(key), str)]
            if missing:
                raise ValueError(f"a transcript needs text values for {', '.join(missing)}")
        if not transcripts:
            return []
        self._ensure_folder()
        self._sweep_stale_temps()
        by_fingerprint = self._by_fingerprint()
        now = _utc_now()
        saved = []
        for transcript, count in transcripts:
            fingerprint = transcript["fingerprint"]
            path = self.root / transcript_name(transcript["target"], transcript["oracle"], fingerprint)
            previous, _ = _read(path)
            for other in by_fingerprint.get(_safe(fingerprint)[:64], ()):
                if other == path or not other.is_file():
                    continue
                # One root cause, one transcript: it moved to a smaller or worse reproducer on another target.
                previous = previous or _read(other)[0]
                other.unlink(missing_ok=True)
            by_fingerprint[_safe(fingerprint)[:64]] = [path]
            is_new = not path.exists()
            data = dict(transcript)
            data.update(format=FORMAT_VERSION, mcpfuzz_version=__version__, updated=now)
            if previous is not None:
                seen = previous.get("seen")
                data["created"] = previous.get("created") or now
                data["seen"] = (seen if isinstance(seen, int) and not isinstance(seen, bool) else 1) + int(count)
            else:
                # A broken old file is replaced as if it were not there: its counts cannot be trusted.
                data["created"] = now
                data["seen"] = 1
            write_json_atomic(path, data, sync_folder=False)
            saved.append((path, is_new))
        self._write_manifest(now)  # syncs the folder: every rename above is durable with it
        return saved

    def _by_fingerprint(self) -> dict[str, list[Path]]:
        """The transcripts in the folder by the fingerprint their name ends with (one listing)."""
        found: dict[str, list[Path]] = {}
        with os.scandir(self.root) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".json") or name == MANIFEST or name.startswith(TEMP_PREFIX):
                    continue
                found.setdefault(name[:-len(".json")].rsplit("_", 1)[-1], []).append(self.root / name)
        return found

    def load_all(self) -> tuple[list[tuple[Path, dict]], list[tuple[Path, str]]]:
        """Every transcript sorted by name, and the files that could not be read with the reason."""
        loaded: list[tuple[Path, dict]] = []
        broken: list[tuple[Path, str]] = []
        if not self.root.is_dir():
            return loaded, broken
        for path in sorted(self.root.glob("*.json"), key=lambda p: p.name):
            if path.name == MANIFEST or path.name.startswith(TEMP_PREFIX) or not path.is_file():
                continue
            data, problem = _read(path)
            if data is not None:
                loaded.append((path, data))
            else:
                broken.append((path, problem or "unreadable"))
        return loaded, broken

    def load(self, path: Path) -> dict:
        """One transcript; a missing or broken file raises CorpusError."""
        path = Path(path)
        data, problem = _read(path)
        if data is None:
            raise CorpusError(f"cannot load the corpus transcript: {problem}", path=path,
                              tip="pass a file written by `mcpfuzz run` (see the corpus folder), or delete this one")
        return data

    def remove(self, path: Path) -> None:
        """Delete a transcript (already gone is fine)."""
        Path(path).unlink(missing_ok=True)

    def mark(self, path: Path, **fields: Any) -> dict:
        """Rewrite a transcript atomically with extra fields (e.g. status="fixed"); returns the new content."""
        path = Path(path)
        data = self.load(path)
        data.update(fields)
        write_json_atomic(path, data)
        self._write_manifest(_utc_now())
        return data

    def _check_folder(self) -> None:
        """Refuse a path that is not a folder, or a corpus written by a newer format."""
        if self.root.exists() and not self.root.is_dir():
            raise CorpusError("the corpus path is not a folder", path=self.root,
                              tip="pass a folder with --corpus, or move the file away")
        if not self.manifest_path.exists():
            return
        try:
            manifest = json.loads(self.manifest_path.read_bytes())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CorpusError(f"the corpus manifest cannot be read: {error}", path=self.manifest_path,
                              tip="delete manifest.json; mcpfuzz writes a new one on the next save") from error
        version = manifest.get("format") if isinstance(manifest, dict) else None
        if not isinstance(version, int) or isinstance(version, bool):
            raise CorpusError("the corpus manifest has no format number", path=self.manifest_path,
                              tip="is this a mcpfuzz corpus? Delete manifest.json if it is, or pick another folder")
        if version > FORMAT_VERSION:
            raise CorpusError(
                f"the corpus uses format {version}, newer than this mcpfuzz {__version__} understands "
                f"(format {FORMAT_VERSION})", path=self.root,
                tip="upgrade mcpfuzz (pip install -U mcp-wirefuzz), or use another corpus folder")

    def _ensure_folder(self) -> None:
        """Create the folder on first write (re-checking it, since another process may have made it)."""
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
        self._check_folder()

    def _write_manifest(self, now: str) -> None:
        """Record the format and the writer's version."""
        manifest = {"format": FORMAT_VERSION, "mcpfuzz_version": __version__, "updated": now}
        write_json_atomic(self.manifest_path, manifest)

    def _sweep_stale_temps(self) -> None:
        """Remove temp files left by killed writers, at most once a minute (a sweep lists the folder)."""
        now = time.time()
        if now - self._last_sweep < STALE_TEMP_SECONDS:
            return
        self._last_sweep = now
        for temp in self.root.glob(TEMP_PREFIX + "*"):
            # Another process may be sweeping or finishing the same file: a vanished file is fine.
            with contextlib.suppress(OSError):
                if now - temp.stat().st_mtime > STALE_TEMP_SECONDS:
                    temp.unlink()
