"""A JVM server's MCP SDK (Java's `io.modelcontextprotocol.sdk`, Kotlin's `io.modelcontextprotocol`) and version.

Read from the jars it runs: Maven's `pom.properties` inside a fat jar, the jar names of a Spring Boot jar's
`BOOT-INF/lib`, a jar manifest's `Class-Path`, or the `-cp` words of the command. Only the zip's central
directory and a few small entries are read.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

from mcpfuzz.engine.attribution.sdks import Sdk, SdkInfo

MAX_JARS = 200  # classpath entries looked at
MAX_SMALL_ENTRY = 64 << 10  # a manifest or pom.properties larger than this is not one
_POM = re.compile(r"^META-INF/maven/(io\.modelcontextprotocol(?:\.sdk)?)/([\w.-]+)/pom\.properties$")
_JAR_NAME = re.compile(r"(?:^|[/\\])(mcp|mcp-core|kotlin-sdk(?:-server|-core)?(?:-jvm)?)-(\d[\w.-]*?)\.jar$")
_REPO_PATH = re.compile(r"io[/\\]modelcontextprotocol[/\\](?:sdk[/\\])?[\w.-]+[/\\](\d[\w.-]*)[/\\]")
_CLASS_PREFIXES = (("io/modelcontextprotocol/kotlin/sdk/", Sdk.KOTLIN), ("io/modelcontextprotocol/spec/", Sdk.JAVA),
                   ("io/modelcontextprotocol/server/", Sdk.JAVA))


def java_sdk(words: Sequence[str]) -> SdkInfo | None:
    """The JVM MCP SDK of `java ... -jar app.jar` or `java -cp a.jar:b.jar Main`, or None."""
    for entry in classpath(words)[:MAX_JARS]:
        found = _from_name(entry) or (jar_sdk(Path(entry)) if entry.endswith(".jar") else None)
        if found is not None:
            return found
    return None


def classpath(words: Sequence[str]) -> list[str]:
    """The jars a `java` command runs: the `-jar` file, then each `-cp`/`-classpath`/`--class-path` entry."""
    found: list[str] = []
    for index, word in enumerate(words[:-1]):
        following = words[index + 1]
        if word == "-jar":
            found.append(following)
        elif word in ("-cp", "-classpath", "--class-path"):
            found += [part for part in re.split(r"[:;]", following) if part]
    return found


def jar_sdk(jar: Path) -> SdkInfo | None:
    """The SDK inside one jar: its Maven metadata, its nested jars, its manifest's Class-Path, or its classes."""
    try:
        with zipfile.ZipFile(jar) as archive:
            names = archive.namelist()
            for name in names:
                match = _POM.match(name)
                sdk = _sdk_of(match.group(1), match.group(2)) if match else None
                version = _pom_version(archive, name) if sdk is not None else None
                if sdk is not None and version is not None:
                    return SdkInfo(sdk, version, f"{jar}!/{name}")
            for name in names:  # a Spring Boot jar's BOOT-INF/lib/mcp-core-0.11.0.jar
                found = _from_name(name) if name.endswith(".jar") else None
                if found is not None:
                    return SdkInfo(found.sdk, found.version, f"{jar}!/{name}")
            for word in _manifest_class_path(archive):
                found = _from_name(word)
                if found is not None:
                    return SdkInfo(found.sdk, found.version, f"{jar} (Class-Path {word})")
            for prefix, sdk in _CLASS_PREFIXES:  # shaded without its Maven metadata: the SDK, version unknown
                if any(name.startswith(prefix) for name in names):
                    return SdkInfo(sdk, "unknown", str(jar))
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    return None


def _sdk_of(group: str, artifact: str) -> Sdk | None:
    if group == "io.modelcontextprotocol.sdk" and artifact in ("mcp", "mcp-core"):
        return Sdk.JAVA
    if group == "io.modelcontextprotocol" and artifact.startswith("kotlin-sdk"):
        return Sdk.KOTLIN
    return None


def _from_name(path: str) -> SdkInfo | None:
    """`lib/mcp-0.10.0.jar`, `kotlin-sdk-jvm-0.5.0.jar`, or a Maven repository path of the SDK."""
    match = _JAR_NAME.search(path)
    if match is None:
        return None
    sdk = Sdk.KOTLIN if match.group(1).startswith("kotlin-sdk") else Sdk.JAVA
    if sdk is Sdk.JAVA and match.group(1) == "mcp" and "modelcontextprotocol" not in path:
        # `mcp-1.0.jar` alone could be anything; in the SDK's Maven path it is the SDK.
        repo = _REPO_PATH.search(path)
        if repo is None and not _in_lib_folder(path):
            return None
    return SdkInfo(sdk, match.group(2), path)


def _in_lib_folder(path: str) -> bool:
    """A jar in an app's `lib` (Gradle, Maven assembly) or Spring Boot's `BOOT-INF/lib`."""
    return Path(path).parent.name == "lib"


def _pom_version(archive: zipfile.ZipFile, name: str) -> str | None:
    if archive.getinfo(name).file_size > MAX_SMALL_ENTRY:
        return None
    for line in archive.read(name).decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "version" and value.strip():
            return value.strip()
    return None


def _manifest_class_path(archive: zipfile.ZipFile) -> list[str]:
    """The words of META-INF/MANIFEST.MF's Class-Path (its 72-byte lines folded back first)."""
    try:
        info = archive.getinfo("META-INF/MANIFEST.MF")
    except KeyError:
        return []
    if info.file_size > MAX_SMALL_ENTRY:
        return []
    text = archive.read(info).decode("utf-8", "replace").replace("\r\n", "\n").replace("\n ", "")
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "class-path":
            return value.split()
    return []
