"""Census: mcpfuzz against real MCP servers from npm and PyPI chosen by a written rule. Prints one row per server.

THE RULE (docs/census.md says the same, with what was searched and what was left out and why):
  1. Candidates: packages of the npm and PyPI download lists (npm: downloads a month; PyPI: rank among the
     15,000 most downloaded, a package outside them by its month) whose name contains `mcp` and that ship an MCP
     server (a `bin`, a console script, or a platform binary), plus the official `@modelcontextprotocol/server-*`.
  2. Each candidate's SDK family is read from its declared dependencies (npm `dependencies`, PyPI `Requires-Dist`)
     or, for a compiled server, from its binary (Go build information, rmcp's source paths, .NET deps.json).
  3. Per family, candidates are taken in download order until the family has its quota (4 for the two big
     families, the TypeScript SDK 1.x and the Python SDK; 3 for every other; all there are when fewer), skipping
     only for safety or because it cannot start here:
       - it needs the network, an account or an API key to START (one that starts and fails only when a tool
         is called is kept: the sandbox has no network, so that tool answers an error);
       - a tool that cannot be sandboxed (runs shell commands or code on the host, drives a real browser or
         device) is excluded by name; a server left with nothing to call is skipped;
       - tools that delete, move or overwrite data are excluded by name (the filesystem is read-only anyway but
         for the row's own folder);
       - it is already measured by benchmarks/field.py;
       - it does not install from the registry on linux-x64 (a failed install is listed, not hidden).
  4. A server that offers streamable HTTP (a `--port`/`--transport http` flag or a PORT variable) gets a second
     row over HTTP, so that at least 8 rows are HTTP.
  5. The sandbox has no network, so tools annotated openWorldHint (and not destructiveHint) are named with
     --include-tool; a destructiveHint tool only where the server confines it to the row's own scratch data.
  6. At least 40 servers: the two big families take their next eligible candidates in download order.
  A new release of a listed server is a version bump here, not a new selection.

What a row shows: whether the server started and the official Python SDK client (mcp 1.x, in .venv-mcp1) can
talk to it, whether mcpfuzz's handshake succeeded and what it could not test, the stack mcpfuzz detected beside
the one checked by hand (with the installed versions), targets called of those callable, the share of the run
spent calling them, findings and the most any one oracle filed, mcpfuzz's own internal errors, wall time over
the budget, and processes of the sandbox still alive after mcpfuzz exited.

Run from a checkout with its virtual environment (and .venv-mcp1 for the SDK client column):
    python3 benchmarks/census.py                            # every server, 30 s each (about 40 minutes)
    python3 benchmarks/census.py --only mcp-hello-world --only server-pdf/http
    python3 benchmarks/census.py --mcpfuzz /other/checkout/.venv/bin/mcpfuzz --json after.json \\
        --markdown docs/census.md --section after
    python3 benchmarks/census.py --install-only             # fill the install cache first

Installs are cached in --cache (default ~/.cache/mcpfuzz-census) as benchmarks/field.py caches them, and every
run happens in field.py's sandbox (network, PID and mount namespaces) with the file system read-only but for
the row's own folder; each row's events, report, console, SDK probe answer and leftovers stay under
--cache/runs/.
"""

from __future__ import annotations

import argparse
import atexit
import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import field as bench  # noqa: E402  (the field benchmark's sandbox, installs and event readers)
from field import Registry, ServerSpec, Transport  # noqa: E402

ROOT = HERE.parent
DEFAULT_CACHE = bench.DEFAULT_CACHE.parent / "mcpfuzz-census"
SDK_PYTHON = ROOT / ".venv-mcp1" / "bin" / "python"
SDK_PROBE_TIMEOUT = 120.0  # seconds for the SDK client probe (it gives up by itself after 60)
OVER_BUDGET_SLACK = 10.0  # a run may end this much past --budget before it counts as over


class Family(str, Enum):
    """The SDK families the census covers, each with its quota of servers."""

    TS_SDK1 = "TypeScript SDK 1.x (@modelcontextprotocol/sdk)"
    TS_SDK2 = "TypeScript SDK 2.x (@modelcontextprotocol/server)"
    TMCP = "tmcp"
    FASTMCP_TS = "fastmcp (TypeScript)"
    MCP_FRAMEWORK = "mcp-framework"
    MASTRA = "@mastra/mcp"
    PY_SDK = "Python SDK (mcp)"
    FASTMCP_PY = "fastmcp (Python, standalone)"
    GO_MCP_GO = "Go mark3labs/mcp-go"
    GO_SDK = "Go modelcontextprotocol/go-sdk"
    RUST_RMCP = "Rust rmcp"
    RUST_OTHER = "Rust, hand-written"
    TS_OTHER = "TypeScript, another SDK"
    DOTNET = ".NET ModelContextProtocol"


# Where a family's version is read from the install: an npm package, a PyPI distribution, or the binary.
NPM_PACKAGE = {Family.TS_SDK1: "@modelcontextprotocol/sdk", Family.TS_SDK2: "@modelcontextprotocol/server",
               Family.TMCP: "tmcp", Family.FASTMCP_TS: "fastmcp", Family.MCP_FRAMEWORK: "mcp-framework",
               Family.MASTRA: "@mastra/mcp", Family.TS_OTHER: "@sylphx/mcp-server-sdk"}


@dataclass(frozen=True)
class CensusSpec(ServerSpec):
    """A field benchmark spec with the census's own facts: its family and its downloads when it was chosen."""

    family: Family = Family.TS_SDK1
    downloads: str = ""  # "N/month" (npm) or "rank N" (PyPI), from the lists the rule reads
    bundled: str = ""  # where a server bundles its SDK into its own build (no package to read a version from)
    # Tools annotated openWorldHint (and not destructiveHint) that the census calls all the same: the sandbox has no
    # network, so they reach nothing; and destructive ones whose server confines them to the row's scratch folder.
    include_tools: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The row's name for --only: NAME, or NAME/http for a second row over HTTP."""
        return self.name if self.transport is Transport.STDIO else f"{self.name}/http"


NPM = "$prefix/node_modules/.bin"
PY = "$prefix/venv/bin"
MCP_URL = "http://127.0.0.1:{port}/mcp"
DELETERS = ("delete", "remove", "drop")  # name parts of tools excluded on every server that has them


def with_included(argv: list[str], tools: Sequence[str]) -> list[str]:
    """mcpfuzz's command line with `--include-tool NAME` for each tool the rule calls despite its annotation."""
    extra = [word for tool in tools for word in ("--include-tool", tool)]
    return [*argv[:2], *extra, *argv[2:]]


def npm(name: str, package: str, version: str, family: Family, downloads: int, command: tuple[str, ...],
        **more: Any) -> CensusSpec:
    """An npm server's spec."""
    return CensusSpec(name, Registry.NPM, package, version, family.value, command, family=family,
                      downloads=f"{downloads:,}/month", **more)


def pypi(name: str, package: str, version: str, family: Family, rank: int, command: tuple[str, ...],
         **more: Any) -> CensusSpec:
    """A PyPI server's spec."""
    return CensusSpec(name, Registry.PYPI, package, version, family.value, command, family=family,
                      downloads=f"rank {rank:,}", **more)


def http(spec: CensusSpec, command: tuple[str, ...], url: str = MCP_URL, **more: Any) -> CensusSpec:
    """The same server's second row, launched over streamable HTTP on {port}."""
    from dataclasses import replace

    return replace(spec, command=command, transport=Transport.HTTP, url=url, **more)


def bin_of(package: str, binary: str) -> str:
    """The path of a platform binary inside its npm package."""
    return f"$prefix/node_modules/{package}/{binary}"


# ---------------------------------------------------------------- the census (chosen by the rule above)

CONTEXT7 = npm("context7-mcp", "@upstash/context7-mcp", "4.1.1", Family.TS_SDK2, 1425541, (f"{NPM}/context7-mcp",),
               include_tools=("resolve-library-id", "query-docs"))
NOTION = npm("notion-mcp-server", "@notionhq/notion-mcp-server", "2.5.2", Family.TS_SDK1, 239565,
             (f"{NPM}/notion-mcp-server",))
CHART = npm("mcp-server-chart", "@antv/mcp-server-chart", "0.9.10", Family.TS_SDK1, 67547,
            (f"{NPM}/mcp-server-chart",))
PLAYWRIGHT = npm("playwright-mcp", "@playwright/mcp", "0.0.83", Family.TS_SDK1, 6293363,
                 (f"{NPM}/playwright-mcp", "--headless", "--isolated", "--output-dir", "$scratch"),
                 exclude_tools=("browser_install", "browser_evaluate", "browser_run_code_unsafe",
                                "browser_file_upload"),
                 include_tools=("browser_console_messages", "browser_find", "browser_network_requests",
                                "browser_network_request", "browser_take_screenshot", "browser_snapshot",
                                "browser_wait_for"),
                 bundled="bundled in playwright-core")
PDF = npm("server-pdf", "@modelcontextprotocol/server-pdf", "2.0.4", Family.TS_SDK2, 2211,
          (f"{NPM}/mcp-pdf-server", "--stdio"))
SYSMON = npm("server-system-monitor", "@modelcontextprotocol/server-system-monitor", "2.0.3", Family.TS_SDK2, 1167,
             (f"{NPM}/mcp-system-monitor-server", "--stdio"))
MAP = npm("server-map", "@modelcontextprotocol/server-map", "2.0.3", Family.TS_SDK2, 1359,
          (f"{NPM}/mcp-map-server", "--stdio"))

# On the TypeScript SDK 2.x (`@modelcontextprotocol/node`); the SDK 1.32.2 in its install is @mcp-ui/server's.
MONGODB = npm("mongodb-mcp-server", "mongodb-mcp-server", "3.0.4", Family.TS_SDK2, 162003,
              (f"{NPM}/mongodb-mcp-server", "--readOnly", "--telemetry", "disabled"),
              include_tools=("aggregate-db", "aggregate", "collection-indexes", "collection-schema",
                             "collection-storage-size", "connect", "count", "db-stats", "disconnect", "explain",
                             "export", "find", "list-collections", "list-connections", "list-databases",
                             "mongodb-logs", "search-knowledge", "list-knowledge-sources"))
AGENTCORE_EXCLUDED = (
    "update_agent_runtime", "delete_agent_runtime", "update_agent_runtime_endpoint", "delete_agent_runtime_endpoint",
    "invoke_agent_runtime", "stop_runtime_session", "memory_update", "memory_delete", "memory_delete_event",
    "memory_delete_record", "memory_batch_update_records", "memory_batch_delete_records",
    "identity_update_workload_identity", "identity_delete_workload_identity", "identity_update_api_key_provider",
    "identity_delete_api_key_provider", "identity_update_oauth2_provider", "identity_delete_oauth2_provider",
    "identity_set_token_vault_cmk", "identity_put_resource_policy", "identity_delete_resource_policy",
    "gateway_update", "gateway_delete", "gateway_target_update", "gateway_target_delete", "gateway_resource_policy_put",
    "gateway_resource_policy_delete", "policy_engine_update", "policy_engine_delete", "policy_update", "policy_delete",
    "stop_browser_session", "browser_upload_file", "browser_evaluate", "browser_close",
    "stop_code_interpreter_session", "execute_code", "execute_command", "install_packages", "upload_file",
    "download_file")
MCP1 = "mcp==1.30.0"  # the last 1.x of the Python SDK, for the servers the rule installs beside it


def make_kubeconfig(scratch: Path) -> None:
    """A kubeconfig whose one context names a cluster on a closed loopback port (the server wants a context)."""
    (scratch / "kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: census\n"
        "clusters:\n- name: census\n  cluster:\n    server: https://127.0.0.1:9\n"
        "contexts:\n- name: census\n  context:\n    cluster: census\n    user: census\n"
        "users:\n- name: census\n  user:\n    token: census\n")


EXCEL = pypi("excel-mcp-server", "excel-mcp-server", "2.2.2", Family.PY_SDK, 4613, (f"{PY}/excel-mcp-server", "stdio"),
             env=(("EXCEL_FILES_PATH", "$scratch"),),
             # destructiveHint, but the server refuses any workbook outside EXCEL_FILES_PATH (the row's scratch)
             include_tools=("create_workbook", "import_workbook", "import_csv", "export_csv", "write_range",
                            "clear_range", "copy_range", "sort_range", "transform_range", "replace_cells", "goal_seek",
                            "merge_cells", "set_table", "create_chart", "set_defined_name", "set_note"))
MOTHERDUCK = pypi("mcp-server-motherduck", "mcp-server-motherduck", "1.1.0", Family.FASTMCP_PY, 13669,
                  (f"{PY}/mcp-server-motherduck", "--db-path", ":memory:", "--read-write"),
                  include_tools=("execute_query",))  # destructiveHint, on the run's own in-memory database
KUBERNETES = npm("kubernetes-mcp-server", "kubernetes-mcp-server-linux-amd64", "0.0.67", Family.GO_SDK, 11458,
                 (bin_of("kubernetes-mcp-server-linux-amd64", "bin/kubernetes-mcp-server-linux-amd64"), "--read-only",
                  "--kubeconfig", "$scratch/kubeconfig"), prepare=make_kubeconfig,
                 include_tools=("configuration_view", "events_list", "namespaces_list", "nodes_log",
                                "nodes_stats_summary", "nodes_top", "pods_get", "pods_list", "pods_list_in_namespace",
                                "pods_log", "pods_top", "projects_list", "resources_get", "resources_list"))
GRAFANA = pypi("mcp-grafana", "mcp-grafana", "2.1.1", Family.GO_SDK, 9345, (f"{PY}/mcp-grafana",),
               env=(("GRAFANA_URL", "http://127.0.0.1:9"),),
               include_tools=("get_doc", "install_plugin", "search_docs", "search_plugin_information"))

SERVERS: tuple[CensusSpec, ...] = (
    # TypeScript SDK 1.x
    PLAYWRIGHT,
    http(PLAYWRIGHT, (f"{NPM}/playwright-mcp", "--headless", "--isolated", "--output-dir", "$scratch",
                      "--host", "127.0.0.1", "--port", "{port}", "--allowed-hosts", "127.0.0.1:{port}")),
    npm("chrome-devtools-mcp", "chrome-devtools-mcp", "1.11.0", Family.TS_SDK2, 1848520,
        (f"{NPM}/chrome-devtools-mcp", "--headless", "--isolated"),
        exclude_tools=("evaluate_script", "upload_file"),
        bundled="@modelcontextprotocol/server 2.3.1 bundled in its build/src/third_party (its bundled-packages.json)"),
    NOTION,
    http(NOTION, (f"{NPM}/notion-mcp-server", "--transport", "http", "--port", "{port}", "--unsafe-disable-auth")),
    MONGODB,
    http(MONGODB, (f"{NPM}/mongodb-mcp-server", "--readOnly", "--telemetry", "disabled", "--transport", "http",
                   "--httpHost", "127.0.0.1", "--httpPort", "{port}")),
    npm("server-github", "@modelcontextprotocol/server-github", "2025.4.8", Family.TS_SDK1, 280864,
        (f"{NPM}/mcp-server-github",)),
    npm("server-postgres", "@modelcontextprotocol/server-postgres", "0.6.2", Family.TS_SDK1, 251900,
        (f"{NPM}/mcp-server-postgres", "postgresql://127.0.0.1:1/census")),
    npm("nx-mcp", "nx-mcp", "0.25.0", Family.TS_SDK1, 198174, (f"{NPM}/nx-mcp", "$scratch", "--disableTelemetry"),
        include_tools=("nx_docs",), bundled="bundled in its single main.js"),
    npm("next-devtools-mcp", "next-devtools-mcp", "0.4.0", Family.TS_SDK1, 181159, (f"{NPM}/next-devtools-mcp",)),
    npm("mcp-hello-world", "mcp-hello-world", "1.1.2", Family.TS_SDK1, 93352, (f"{NPM}/mcp-hello-world",)),
    npm("eslint-mcp", "@eslint/mcp", "0.3.13", Family.TS_SDK1, 77255, (f"{NPM}/mcp",)),
    # Next in download order when the census grew to 40 servers (docs/census.md says which it passed over and why).
    # Its tools run xcodebuild, xcrun and simctl on the host: excluded by name; the session and discovery tools stay.
    npm("xcodebuildmcp", "xcodebuildmcp", "2.7.0", Family.TS_SDK1, 52686, (f"{NPM}/xcodebuildmcp", "mcp"),
        exclude_tools=("boot_sim", "open_sim", "build_sim", "build_run_sim", "test_sim", "get_sim_app_path",
                       "install_app_sim", "launch_app_sim", "stop_app_sim", "record_sim_video", "clean", "list_sims",
                       "list_schemes", "show_build_settings", "get_app_bundle_id", "screenshot", "snapshot_ui",
                       "get_coverage_report", "get_file_coverage")),
    CHART,
    http(CHART, (f"{NPM}/mcp-server-chart", "--transport", "streamable", "--host", "127.0.0.1", "--port", "{port}")),
    # TypeScript SDK 2.x (the MCP Apps example servers: HTTP on $PORT by default, --stdio for stdio)
    CONTEXT7,
    http(CONTEXT7, (f"{NPM}/context7-mcp", "--transport", "http", "--port", "{port}")),
    PDF,
    http(PDF, ("env", "PORT={port}", f"{NPM}/mcp-pdf-server")),
    MAP,
    http(MAP, ("env", "PORT={port}", f"{NPM}/mcp-map-server")),
    SYSMON,
    http(SYSMON, ("env", "PORT={port}", f"{NPM}/mcp-system-monitor-server")),
    npm("server-threejs", "@modelcontextprotocol/server-threejs", "2.0.3", Family.TS_SDK2, 1103,
        (f"{NPM}/mcp-threejs-server", "--stdio")),
    npm("server-budget-allocator", "@modelcontextprotocol/server-budget-allocator", "2.0.3", Family.TS_SDK2, 951,
        (f"{NPM}/mcp-budget-allocator-server", "--stdio")),
    # Other TypeScript frameworks
    npm("firecrawl-mcp", "firecrawl-mcp", "3.26.0", Family.FASTMCP_TS, 128690, (f"{NPM}/firecrawl-mcp",),
        env=(("FIRECRAWL_API_URL", "http://127.0.0.1:9"),),
        include_tools=("firecrawl_scrape", "firecrawl_map", "firecrawl_search", "firecrawl_search_feedback",
                       "firecrawl_feedback", "firecrawl_crawl", "firecrawl_extract", "firecrawl_agent",
                       "firecrawl_interact", "firecrawl_monitor_create", "firecrawl_monitor_run",
                       "firecrawl_research_search_papers", "firecrawl_research_inspect_paper",
                       "firecrawl_research_related_papers", "firecrawl_research_read_paper",
                       "firecrawl_research_search_github", "firecrawl_developer_search")),
    npm("mastra-docs", "@mastra/mcp-docs-server", "1.2.27", Family.MASTRA, 75559, (f"{NPM}/mcp-docs-server",)),
    # Python SDK (mcp), 1.x or 2.x as the package's own requirements resolve
    pypi("mcp-server-fetch", "mcp-server-fetch", "2026.10.24", Family.PY_SDK, 4216, (f"{PY}/mcp-server-fetch",),
         include_tools=("fetch",)),
    pypi("aws-documentation", "awslabs-aws-documentation-mcp-server", "1.2.3", Family.PY_SDK, 4204,
         (f"{PY}/awslabs.aws-documentation-mcp-server",)),
    pypi("markitdown-mcp", "markitdown-mcp", "0.0.1a8", Family.PY_SDK, 13079, (f"{PY}/markitdown-mcp",)),
    pypi("mcp-server-duckdb", "mcp-server-duckdb", "1.1.0", Family.PY_SDK, 6490,
         (f"{PY}/mcp-server-duckdb", "--db-path", "$scratch/census.duckdb"), pins=(MCP1,)),
    pypi("duckduckgo-mcp-server", "duckduckgo-mcp-server", "0.7.0", Family.PY_SDK, 12310,
         (f"{PY}/duckduckgo-mcp-server",)),
    pypi("jcodemunch-mcp", "jcodemunch-mcp", "1.108.399", Family.PY_SDK, 10216, (f"{PY}/jcodemunch-mcp",),
         include_tools=("order", "route")),
    pypi("arxiv-mcp-server", "arxiv-mcp-server", "0.8.2", Family.PY_SDK, 11091,
         (f"{PY}/arxiv-mcp-server", "--storage-path", "$scratch/papers"),
         include_tools=("search_papers", "download_paper", "get_abstract", "citation_graph", "export_citations",
                        "check_alerts", "get_paper_latex", "list_paper_latex_sections", "get_paper_latex_section")),
    # Next in download order when the census grew to 40 servers. Its tools call AWS (no network here); those that
    # delete, update, stop or put, and those that run code, commands or move files, are excluded by name.
    pypi("bedrock-agentcore", "awslabs-amazon-bedrock-agentcore-mcp-server", "0.2.1", Family.PY_SDK, 13404,
         (f"{PY}/awslabs.amazon-bedrock-agentcore-mcp-server",), exclude_tools=AGENTCORE_EXCLUDED),
    EXCEL,
    # It listens on 8017 whatever FASTMCP_PORT says (on mcp 2.x): a fixed port, alone in its sandbox's network.
    http(EXCEL, (f"{PY}/excel-mcp-server", "streamable-http"), url="http://127.0.0.1:8017/mcp"),
    # fastmcp (Python, standalone)
    MOTHERDUCK,
    http(MOTHERDUCK, (f"{PY}/mcp-server-motherduck", "--db-path", ":memory:", "--read-write", "--transport", "http",
                      "--host", "127.0.0.1", "--port", "{port}")),
    pypi("mcp-clickhouse", "mcp-clickhouse", "0.7.0", Family.FASTMCP_PY, 9353, (f"{PY}/mcp-clickhouse",),
         env=(("CLICKHOUSE_HOST", "127.0.0.1"), ("CLICKHOUSE_PORT", "9"), ("CLICKHOUSE_SECURE", "false"))),
    pypi("office-word-mcp-server", "office-word-mcp-server", "1.1.11", Family.FASTMCP_PY, 4359,
         (f"{PY}/word_mcp_server",)),
    # Go: modelcontextprotocol/go-sdk (three versions) and mark3labs/mcp-go, binaries on npm and PyPI
    KUBERNETES,
    http(KUBERNETES, (bin_of("kubernetes-mcp-server-linux-amd64", "bin/kubernetes-mcp-server-linux-amd64"),
                      "--read-only", "--kubeconfig", "$scratch/kubeconfig", "--port", "{port}",
                      "--bind-address", "127.0.0.1")),
    npm("mcp-prometheus", "mcp-prometheus-linux-amd64", "2.1.1", Family.GO_SDK, 1582,
        (bin_of("mcp-prometheus-linux-amd64", "bin/mcp-prometheus-linux-amd64"), "--url", "http://127.0.0.1:9")),
    GRAFANA,
    http(GRAFANA, (f"{PY}/mcp-grafana", "-t", "streamable-http", "--address", "127.0.0.1:{port}")),
    # Rust: rmcp (three versions) and hand-written, binaries on npm
    npm("cortex-mcp", "@temporal-cortex/cortex-mcp-linux-x64", "0.9.1", Family.RUST_RMCP, 3663,
        (bin_of("@temporal-cortex/cortex-mcp-linux-x64", "bin/cortex-mcp"),),
        include_tools=("book_slot", "check_availability", "find_free_slots", "get_availability", "list_calendars",
                       "list_events", "query_public_availability", "request_booking", "resolve_contact",
                       "resolve_identity", "search_contacts")),
    npm("vaulttools-mcp", "@vaulttools/mcp-linux-x64", "0.1.7", Family.RUST_RMCP, 739,
        (bin_of("@vaulttools/mcp-linux-x64", "bin/vaulttools-mcp"), "--allowed-dir", "$scratch/files",
         "--output-dir", "$scratch/out"), prepare=bench.make_files_dir),
    npm("onshape-mcp", "@onshape-mcp/linux-x64", "0.5.2", Family.RUST_RMCP, 1043,
        (bin_of("@onshape-mcp/linux-x64", "bin/onshape-mcp"),)),
    npm("leanspec-mcp", "@leanspec/mcp-linux-x64", "0.3.0", Family.RUST_OTHER, 790,
        (bin_of("@leanspec/mcp-linux-x64", "leanspec-mcp"),)),
    # .NET
    npm("azure-mcp", "@azure/mcp-linux-x64", "2.0.5", Family.DOTNET, 114153,
        (bin_of("@azure/mcp-linux-x64", "dist/azmcp"), "server", "start", "--read-only"),
        env=(("AZURE_MCP_COLLECT_TELEMETRY", "false"),)),
)

# Untuned, 2026-12-08: servers that appear nowhere else in benchmarks/ or docs/, chosen in download order for their
# families and judged by hand (docs/census.md, "Census on servers not tuned on, 2026-12-08").
ARGOCD = npm("argocd-mcp", "argocd-mcp", "0.9.0", Family.TS_SDK1, 19950, (f"{NPM}/argocd-mcp", "stdio"),
             env=(("ARGOCD_BASE_URL", "http://127.0.0.1:9"), ("ARGOCD_API_TOKEN", "census"),
                  ("MCP_READ_ONLY", "true")))
SEARXNG = npm("mcp-searxng", "mcp-searxng", "2.4.0", Family.TS_SDK2, 10606, (f"{NPM}/mcp-searxng",),
              env=(("SEARXNG_URL", "http://127.0.0.1:9"),),
              include_tools=("searxng_web_search", "searxng_search_suggestions", "searxng_instance_info",
                             "web_url_read"))
AIRFLOW = pypi("astro-airflow-mcp", "astro-airflow-mcp", "0.9.1", Family.FASTMCP_PY, 11334,
               (f"{PY}/astro-airflow-mcp", "--transport", "stdio"),
               env=(("AIRFLOW_API_URL", "http://127.0.0.1:9"),),
               # every openWorldHint tool (the sandbox's Airflow is a closed port); the destructiveHint ones stay out
               include_tools=("list_connections", "get_variable", "list_variables", "get_airflow_version",
                              "get_airflow_config", "get_pool", "list_pools", "list_plugins", "list_providers",
                              "list_assets", "list_asset_events", "get_upstream_asset_events", "get_dag_details",
                              "list_dags", "get_dag_source", "get_dag_stats", "pause_dag", "unpause_dag",
                              "list_dag_runs", "get_dag_run", "trigger_dag", "trigger_dag_and_wait",
                              "list_dag_warnings", "list_import_errors", "explore_dag", "diagnose_dag_run",
                              "get_system_health", "get_task", "list_tasks", "get_task_instance", "get_task_logs"))
HOWTOCOOK = npm("howtocook-mcp", "howtocook-mcp", "0.2.2", Family.TS_SDK1, 7192, (f"{NPM}/howtocook-mcp",))
UNTUNED_20261208: tuple[CensusSpec, ...] = (
    npm("mcp-server-airbnb", "@openbnb/mcp-server-airbnb", "0.3.0", Family.TS_SDK1, 18545,
        (f"{NPM}/mcp-server-airbnb", "--ignore-robots-txt")),
    ARGOCD,
    http(ARGOCD, (f"{NPM}/argocd-mcp", "http", "--port", "{port}")),
    npm("mcp-deepwiki", "mcp-deepwiki", "0.0.10", Family.TS_SDK1, 12909, (f"{NPM}/mcp-instruct",)),  # its bin's name
    npm("reddit-mcp-buddy", "reddit-mcp-buddy", "1.1.14", Family.TS_SDK1, 12417, (f"{NPM}/reddit-mcp-buddy",)),
    # Skipped: @chakra-ui/react-mcp 2.1.1 (9,769/month) fetches its component examples while starting;
    # @benborla29/mcp-server-mysql 2.0.9 (26,222/month) exits during initialize without a database.
    HOWTOCOOK,
    http(HOWTOCOOK, (f"{NPM}/howtocook-mcp", "--transport", "http", "--port", "{port}")),
    SEARXNG,
    http(SEARXNG, ("env", "MCP_HTTP_HOST=127.0.0.1", "MCP_HTTP_PORT={port}", f"{NPM}/mcp-searxng")),
    npm("pdf-reader-mcp", "@sylphx/pdf-reader-mcp", "2.4.0", Family.TS_OTHER, 10662, (f"{NPM}/pdf-reader-mcp",)),
    npm("azure-mcp-template", "@azure/mcp-template-linux-x64", "0.0.12-alpha.6621500", Family.DOTNET, 1080,
        (bin_of("@azure/mcp-template-linux-x64", "dist/mcptmp"), "server", "start")),
    pypi("mcp-yahoo-finance", "mcp-yahoo-finance", "0.2.0", Family.PY_SDK, 13966, (f"{PY}/mcp-yahoo-finance",)),
    # mcp-scholarly 0.1.0 (rank 13,810) is skipped: its resolved bibtexparser 2.x has no `bibtexparser.bibdatabase`.
    # The next two import the 1.x API (`mcp.server.fastmcp`) without capping `mcp`: 1.30.0 beside them (rule 4).
    pypi("pymupdf4llm-mcp", "pymupdf4llm-mcp", "1.28.0", Family.PY_SDK, 14237, (f"{PY}/pymupdf4llm-mcp", "stdio"),
         pins=(MCP1,)),
    # postgres-mcp 0.3.0 (rank 10,633) is skipped: it needs Python 3.12.
    pypi("office-powerpoint-mcp-server", "office-powerpoint-mcp-server", "2.0.7", Family.PY_SDK, 7411,
         (f"{PY}/ppt_mcp_server",), pins=(MCP1,)),
    AIRFLOW,
    http(AIRFLOW, (f"{PY}/astro-airflow-mcp", "--transport", "http", "--host", "127.0.0.1", "--port", "{port}")),
)
SERVERS = SERVERS + UNTUNED_20261208


# ---------------------------------------------------------------- the stack, checked from the install

RUST_RMCP = re.compile(rb"rmcp-(\d+\.\d+\.\d+[\w.-]*)")
DOTNET_SDK = re.compile(rb'"ModelContextProtocol(?:\.Core)?/(\d[\w.-]*)"')


def npm_version(prefix: Path, package: str) -> str | None:
    """The version of an npm package installed anywhere under the prefix (the shallowest copy)."""
    found = sorted(prefix.glob(f"node_modules/**/node_modules/{package}/package.json"), key=lambda p: len(p.parts))
    top = prefix / "node_modules" / package / "package.json"
    for manifest in ([top] if top.exists() else []) + found:
        return str(json.loads(manifest.read_text()).get("version", "?"))
    return None


def dist_version(prefix: Path, distribution: str) -> str | None:
    """The version of a Python distribution installed in the prefix's virtual environment."""
    for info in prefix.glob("venv/lib/python*/site-packages/*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").rpartition("-")
        if name.lower().replace("-", "_") == distribution.replace("-", "_"):
            return version
    return None


def installed_stack(spec: CensusSpec, prefix: Path, argv: Sequence[str]) -> str:
    """The family checked by hand, with the versions the install actually holds."""
    if spec.family in NPM_PACKAGE:
        versions = [f"{package} {version}" for package in (NPM_PACKAGE[spec.family], "@modelcontextprotocol/sdk")
                    if (version := npm_version(prefix, package)) is not None]
        return f"{spec.family.value}: " + (", ".join(dict.fromkeys(versions)) or spec.bundled or "?")
    if spec.registry is Registry.PYPI and spec.family in (Family.PY_SDK, Family.FASTMCP_PY):
        versions = [f"{name} {version}" for name in ("fastmcp", "mcp") if (version := dist_version(prefix, name))]
        return f"{spec.family.value}: " + (", ".join(versions) or "?")
    # The binary is the command itself, or (a PyPI wrapper script) one shipped inside the package.
    binaries = [Path(word) for word in argv if Path(word).is_file() and "/node_modules/.bin/" not in word]
    binaries += sorted(prefix.glob("venv/lib/python*/site-packages/*/bin/*"))
    for binary in binaries:
        data = binary.read_bytes()
        for pattern in (bench.GO_SDK, RUST_RMCP, DOTNET_SDK):
            match = pattern.search(data)
            if match:
                return f"{spec.family.value}: {match.group(match.lastindex or 0).decode(errors='replace')}"
    return spec.family.value


# ---------------------------------------------------------------- what a row reads (pure: unit-tested)

INTERNAL = re.compile(r"Traceback \(most recent call last\)|mcpfuzz bug|internal error", re.IGNORECASE)


@dataclass
class Row:
    """One server's census figures: the table's row and the JSON written with --json."""

    server: str
    transport: str
    package: str
    stack_truth: str = ""
    stack_detected: str = ""
    sdk_client: str = ""  # the official SDK client: "ok: N tools (version)" or its error
    started: str = ""
    handshake: str = ""
    untested: str = ""
    callable: int = 0
    called: int = 0
    uncalled: dict[str, str] = field(default_factory=dict)
    call_share: float | None = None
    findings: int = 0
    by_oracle: dict[str, int] = field(default_factory=dict)
    upstream_marked: int = 0
    internal_errors: list[str] = field(default_factory=list)
    exit_status: int | None = None
    wall_s: float = 0.0
    over_budget_s: float | None = None
    leftovers: list[str] | None = None  # None: unknown (the sandbox itself was killed)
    notices: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def top_oracle(self) -> tuple[str, int]:
        """The oracle that filed the most findings, and how many."""
        return max(self.by_oracle.items(), key=lambda item: (item[1], item[0]), default=("", 0))


def read_leftovers(path: Path) -> list[str] | None:
    """The `pid command` lines the sandbox wrote after mcpfuzz exited, or None when it wrote none."""
    if not path.exists():
        return None
    return processes(path.read_text(errors="replace").splitlines())


PROCESS_LINE = re.compile(r"^\d+ ")


def processes(lines: Sequence[str]) -> list[str]:
    """The `pid command` lines of a listing (a command line cut at a newline of its own continues a line)."""
    return [line for line in lines if PROCESS_LINE.match(line)]


def internal_errors(console: str, exit_status: int | None) -> list[str]:
    """mcpfuzz's own failures: tracebacks and bug reports on its console, an exit status it never means."""
    found = [line.strip()[:200] for line in console.splitlines() if INTERNAL.search(line)]
    if exit_status is not None and exit_status not in (0, 1, 2):
        found.append(f"exit status {exit_status}")
    return found


def untested_reason(report: dict[str, Any], events: list[dict[str, Any]], console: str) -> str:
    """What mcpfuzz said it could not test: the report's `untested`, its error, or the console's last word."""
    finished = next(bench.of_type(events, "RunFinished"), {})
    for text in (report.get("untested"), finished.get("untested"), report.get("error"), finished.get("error")):
        if text:
            return " ".join(str(text).split())[:300]
    if not report and not finished:
        last = [line.strip() for line in console.splitlines() if line.strip()]
        return ("no report: " + last[-1])[:300] if last else "no report and no console output"
    return ""


SOURCE = re.compile(r" \((?:/|<redacted>)[^()]*\)$")  # the notice's "(where it was read)", redacted or not


def detected_stack(events: list[dict[str, Any]], report: dict[str, Any] | None = None) -> str:
    """The stack mcpfuzz said the server runs: the report's `stack` or its StackFound event (`Go SDK v1.8.0`,
    `TypeScript SDK 1.29.0 (bundled)`), else an older mcpfuzz's `built on ...` notice, or nothing."""
    stacks = [(report or {}).get("stack")] + [found.get("stack") for found in bench.of_type(events, "StackFound")]
    for stack in stacks:
        if isinstance(stack, dict) and stack.get("name"):
            bundled = " (bundled)" if str(stack.get("evidence", "")).startswith("bundled in ") else ""
            base = stack.get("built_on")
            on = f" on {base.get('name')} {base.get('version')}" if isinstance(base, dict) else ""
            return f"{stack.get('name')} {stack.get('version')}{bundled}{on}"
    for notice in bench.of_type(events, "Notice"):
        message = str(notice.get("message", ""))
        if message.startswith("built on "):
            return SOURCE.sub("", message.removeprefix("built on ").split(": findings", 1)[0])
    return ""


def fill_row(row: Row, events: list[dict[str, Any]], report: dict[str, Any], console: str,
             excluded: set[str]) -> None:
    """Everything a row reads from one run's events, JSON report and console."""
    probe = next(bench.of_type(events, "ProbeDone"), None)
    row.handshake = "no" if probe is None else f"{probe.get('protocol_version')} ({probe.get('era')})"
    row.stack_detected = detected_stack(events, report)
    row.untested = untested_reason(report, events, console)
    fuzzed, skipped = bench.planned_targets(events, excluded)
    targets = set(fuzzed) | set(skipped)
    callable_targets = set(fuzzed) | {t for t, reason in skipped.items() if bench.eligible(reason)}
    calls = bench.target_calls(events, targets)
    row.callable, row.called = len(callable_targets), len(set(calls) & callable_targets)
    row.uncalled = {t: skipped.get(t, "planned, never called") for t in sorted(callable_targets - set(calls))}
    row.call_share = bench.call_share(events)
    findings = report.get("findings")
    if not isinstance(findings, list):
        findings = [event["finding"] for event in bench.of_type(events, "FindingFound")]
    row.findings = len(findings)
    row.by_oracle = dict(Counter(str(finding.get("oracle")) for finding in findings).most_common())
    row.upstream_marked = sum(1 for finding in findings if finding.get("upstream"))
    row.internal_errors = internal_errors(console, row.exit_status)
    if not row.internal_errors:  # the report lists those the console did not already show
        row.internal_errors = [" ".join(str(error).split())[:200] for error in report.get("internal_errors") or ()]
    row.notices = [str(event.get("message"))[:300] for event in bench.of_type(events, "Notice")
                   if event.get("level") == "warning"]


def started(row: Row) -> str:
    """Whether the server started and answered anyone: mcpfuzz's handshake or the SDK client's."""
    if row.handshake not in ("", "no") or row.sdk_client.startswith("ok"):
        return "yes"
    return "no"


# ---------------------------------------------------------------- running one row

@dataclass(frozen=True)
class Options:
    """The census's settings: the field benchmark's, and its own."""

    base: bench.Options
    jobs: int
    sdk_python: Path | None
    markdown: Path | None
    section: str


def row_confinement(folder: Path, leftovers: Path | None = None) -> bench.Confinement:
    """The sandbox of one row: only its own folder writable (its HOME, its scratch)."""
    return bench.Confinement(writable=(folder,), leftovers=leftovers)


def sdk_client_probe(spec: CensusSpec, setting: bench.Setting, folder: Path, python: Path) -> str:
    """Ask the official SDK client, in the sandbox, whether it can talk to the server: "ok: ..." or the error."""
    request = json.dumps({"argv": setting.argv, "env": setting.env, "url": spec.url, "cwd": str(setting.scratch)})
    argv = bench.sandboxed([str(python), str(HERE / "sdk_client_probe.py"), request], row_confinement(folder))
    probe = bench.start(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        out, _ = probe.communicate(timeout=SDK_PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "the probe itself timed out"
    finally:
        bench.end(probe)
    (folder / "sdk-client.json").write_bytes(out)
    try:
        answer = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "the probe printed nothing"
    if answer.get("ok"):
        return f"ok: {answer['tools']} tools ({answer['protocol']})"
    return " ".join(str(answer.get("error", "?")).split())


def read_run(row: Row, folder: Path, excluded: set[str]) -> None:
    """Fill a row from one run folder's events, JSON report and console."""
    try:
        report = json.loads((folder / "report.json").read_text())
    except (OSError, ValueError):
        report = {}
    console_file = folder / "console.txt"
    console = console_file.read_text(errors="replace") if console_file.exists() else ""
    fill_row(row, bench.read_events(folder / "events.jsonl"), report, console, excluded)
    row.started = started(row)


def run_row(spec: CensusSpec, options: Options) -> Row:
    """Install, probe with the SDK client, run mcpfuzz and read what it wrote, for one server."""
    base = options.base
    row = Row(spec.label, spec.transport.value, f"{spec.registry.value}:{spec.package}=={spec.version}")
    try:
        prefix = bench.install(spec, base.cache)
    except (subprocess.SubprocessError, OSError) as error:
        row.note = f"install failed: {error}"[:200]
        return row
    files = bench.RunFiles(base.runs / spec.key.replace("/", "-"))
    files.folder.mkdir(parents=True)
    setting = bench.resolve(spec, prefix, bench.fresh_scratch(spec, files.folder))
    row.stack_truth = installed_stack(spec, prefix, setting.argv)
    if options.sdk_python is not None:
        probe_setting = bench.resolve(spec, prefix, bench.fresh_scratch(spec, files.folder))
        row.sdk_client = sdk_client_probe(spec, probe_setting, files.folder, options.sdk_python)
    argv = with_included(bench.mcpfuzz_argv(base.mcpfuzz.resolve(), spec, setting, files, base), spec.include_tools)
    leftovers = files.folder / "leftovers.txt"
    status, row.wall_s = bench.run_mcpfuzz(argv, files, base.seconds + bench.HARD_TIMEOUT_MARGIN,
                                           row_confinement(files.folder, leftovers))
    row.exit_status = status
    row.over_budget_s = round(row.wall_s - base.seconds, 1)
    row.leftovers = read_leftovers(leftovers)
    if status is None:
        row.note = f"killed after {base.seconds + bench.HARD_TIMEOUT_MARGIN:.0f} s"
    read_run(row, files.folder, {f"tool/{t}" for t in spec.exclude_tools})
    return row


# ---------------------------------------------------------------- the table

COLUMNS = ("server", "transport", "started", "SDK client", "handshake", "untested", "stack (mcpfuzz)",
           "stack (by hand)", "called/callable", "calling share", "findings", "most by one oracle",
           "internal errors", "wall - budget s", "left behind")


def cells(row: Row) -> tuple[str, ...]:
    """A row as the table's text cells."""
    oracle, most = row.top_oracle
    share = "-" if row.call_share is None else f"{row.call_share:.0%}"
    over = "-" if row.over_budget_s is None else f"{row.over_budget_s:+.1f}"
    left = "?" if row.leftovers is None else str(len(row.leftovers))
    untested = row.untested or row.note
    return (row.server, "HTTP" if row.transport == Transport.HTTP.value else "stdio", row.started,
            row.sdk_client, row.handshake, untested.replace("|", "/"), row.stack_detected or "-", row.stack_truth,
            f"{row.called}/{row.callable}", share, f"{row.findings} ({row.upstream_marked} SDK)",
            f"{most} {oracle}" if most else "0", str(len(row.internal_errors)), over, left)


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell.replace("\n", " ") for cell in cells(row)) + " |" for row in rows]
    return "\n".join(lines)


@dataclass(frozen=True)
class Totals:
    """The census's totals, against the issue's targets."""

    servers: int
    started: int
    sdk_client_ok: int
    tested: int  # handshake done and nothing reported untested
    sdk_ok_untested: int  # the SDK client talks to it, mcpfuzz did not test it
    internal_errors: int
    over_budget: int  # runs past the budget + OVER_BUDGET_SLACK
    left_behind: int  # processes alive after mcpfuzz exited, over all rows
    every_target_called: int  # tested rows whose callable targets were all called (none callable: all called)
    findings: int

    def lines(self) -> list[str]:
        """The totals as the lines under the table."""
        return [f"- rows: {self.servers}; started: {self.started}; the SDK client talks to {self.sdk_client_ok}",
                f"- tested by mcpfuzz (handshake, nothing untested): {self.tested}; the SDK client talks to it but "
                f"mcpfuzz did not test it: {self.sdk_ok_untested} (target: 0)",
                f"- internal errors: {self.internal_errors} (target: 0)",
                f"- runs over budget + {OVER_BUDGET_SLACK:.0f} s: {self.over_budget} (target: 0)",
                f"- processes left behind: {self.left_behind} (target: 0)",
                f"- every callable target called: {self.every_target_called} of {self.servers} servers "
                f"(target: >= 95%)",
                f"- findings: {self.findings}"]


def totals(rows: Sequence[Row]) -> Totals:
    """Sum the rows up."""
    tested = [row for row in rows if row.handshake not in ("", "no") and not row.untested]
    return Totals(
        servers=len(rows), started=sum(row.started == "yes" for row in rows),
        sdk_client_ok=sum(row.sdk_client.startswith("ok") for row in rows), tested=len(tested),
        sdk_ok_untested=sum(row.sdk_client.startswith("ok") and row not in tested for row in rows),
        internal_errors=sum(len(row.internal_errors) for row in rows),
        over_budget=sum(row.over_budget_s is not None and row.over_budget_s > OVER_BUDGET_SLACK for row in rows),
        left_behind=sum(len(row.leftovers or ()) for row in rows),
        every_target_called=sum(row.called == row.callable for row in tested),
        findings=sum(row.findings for row in rows))


def write_section(markdown: Path, section: str, text: str) -> None:
    """Put text between the section's markers in the markdown file (appended when the markers are missing)."""
    start, end = f"<!-- census:{section} -->", f"<!-- /census:{section} -->"
    old = markdown.read_text() if markdown.exists() else ""
    block = f"{start}\n{text.rstrip()}\n{end}"
    if start in old and end in old:
        head, rest = old.split(start, 1)
        new = head + block + rest.split(end, 1)[1]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    markdown.write_text(new)


# ---------------------------------------------------------------- the command line

def selected(only: Sequence[str]) -> list[CensusSpec]:
    """The servers to run: all, or those named with --only (NAME runs both transports, NAME/http one)."""
    if not only:
        return list(SERVERS)
    return [spec for spec in SERVERS if spec.name in only or spec.key in only]


def parse_args(argv: Sequence[str]) -> Options:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="install folder (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=30.0, help="mcpfuzz --budget per server")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mcpfuzz", type=Path, default=ROOT / ".venv" / "bin" / "mcpfuzz",
                        help="the mcpfuzz to measure (default: this checkout's)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this server (repeatable; NAME/http picks its HTTP row)")
    parser.add_argument("--jobs", type=int, default=1, help="rows run at once (default 1: keep the load modest)")
    parser.add_argument("--sdk-python", default=str(SDK_PYTHON),
                        help="a Python with the `mcp` package, for the SDK client column ('' to skip it)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--markdown", type=Path, help="write the table into this file's census section")
    parser.add_argument("--section", default="latest", help="the section's name in --markdown (e.g. before)")
    parser.add_argument("--option", action="append", default=[], metavar="OPT",
                        help="pass this option to every mcpfuzz run (repeatable)")
    parser.add_argument("--retable", type=Path, nargs="+", metavar="JSON",
                        help="run nothing: the table of saved --json files (a later file's row replaces an earlier "
                             "one of the same server and transport), the by-hand stack read again from the cache")
    parser.add_argument("--runs", type=Path, action="append", default=[], metavar="DIR",
                        help="with --retable: read each row again from its folder in DIR (repeatable; a later DIR's "
                             "folder wins), with this checkout's readers")
    parser.add_argument("--list", action="store_true", help="list the servers and exit")
    parser.add_argument("--install-only", action="store_true", help="install the selected servers and exit")
    args = parser.parse_args(argv)
    if args.list:
        for spec in SERVERS:
            print(f"{spec.key:32} {spec.registry.value}:{spec.package}=={spec.version}  [{spec.family.value}]")
        raise SystemExit(0)
    if not selected(args.only):
        parser.error(f"--only {args.only}: no such server (see --list)")
    if args.install_only:
        for spec in dict.fromkeys((spec.registry, spec.package, spec.version, spec) for spec in selected(args.only)):
            try:
                print(f"{spec[3].label}: {bench.install(spec[3], args.cache)}", flush=True)
            except (subprocess.SubprocessError, OSError) as error:
                print(f"{spec[3].label}: install failed: {error}", flush=True)
        raise SystemExit(0)
    if not args.mcpfuzz.exists():
        parser.error(f"--mcpfuzz {args.mcpfuzz}: no such file")
    if args.retable:
        raise SystemExit(retable(args.retable, args.cache, args.markdown, args.section, args.json, args.runs))
    # A string, not a Path: Path('') is '.', which exists, so '' would not skip the column.
    sdk_python = Path(args.sdk_python) if args.sdk_python and Path(args.sdk_python).is_file() else None
    runs = args.cache / "runs" / time.strftime("%Y%m%dT%H%M%S")
    base = bench.Options(args.cache, args.seconds, args.seed, args.mcpfuzz, tuple(args.only), runs, args.json,
                         tuple(args.option))
    return Options(base, max(1, args.jobs), sdk_python, args.markdown, args.section)


def merged_rows(paths: Sequence[Path]) -> tuple[dict[str, Any], list[Row]]:
    """Rows of saved runs, in the order of the census's list; a later file's row replaces an earlier one's."""
    first: dict[str, Any] = {}
    rows: dict[tuple[str, str], Row] = {}
    for path in paths:
        data = json.loads(path.read_text())
        first = first or data
        for saved in data["rows"]:
            row = Row(**saved)
            row.leftovers = None if row.leftovers is None else processes(row.leftovers)
            rows[(row.server, row.transport)] = row
    order = {(spec.label, spec.transport.value): index for index, spec in enumerate(SERVERS)}
    listed = [row for key, row in rows.items() if key in order]  # a server the rule has since dropped goes
    return first, sorted(listed, key=lambda row: order[(row.server, row.transport)])


def retable(paths: Sequence[Path], cache: Path, markdown: Path | None, section: str, json_out: Path | None,
            runs: Sequence[Path] = ()) -> int:
    """Print (and write) the table of saved runs, with the by-hand stack read again from the current specs."""
    first, rows = merged_rows(paths)
    specs = {(spec.label, spec.transport.value): spec for spec in SERVERS}
    for row in rows:
        spec = specs.get((row.server, row.transport))
        folders = [] if spec is None else [run / spec.key.replace("/", "-") for run in runs]
        for folder in [folder for folder in folders if (folder / "events.jsonl").exists()][-1:]:
            read_run(row, folder, {f"tool/{t}" for t in spec.exclude_tools} if spec else set())
        row.stack_detected = SOURCE.sub("", row.stack_detected)
        if spec is not None and bench.install_dir(spec, cache).exists():
            prefix = bench.install_dir(spec, cache)
            argv = bench.resolve(spec, prefix, prefix).argv
            row.stack_truth = installed_stack(spec, prefix, argv)
    summary = totals(rows)
    text = (f"mcpfuzz at {first.get('revision')}; {first.get('seconds')} s budget per server, seed {first.get('seed')}"
            f", {first.get('jobs')} at once; {str(first.get('date'))[:10]}; load before: "
            f"{str(first.get('load_before')).split('load average:')[-1]}\n\n{table(rows)}\n\n"
            + "\n".join(summary.lines()))
    print(text)
    if markdown is not None:
        write_section(markdown, section, text)
    if json_out is not None:
        text = json.dumps({**first, "totals": asdict(summary), "rows": [asdict(row) for row in rows]}, indent=1)
        for folder, name in ((cache, "$CACHE"), (ROOT, "$CHECKOUT"), (Path.home(), "~")):
            text = text.replace(str(folder.resolve()), name)
        json_out.write_text(text + "\n")
    return 0


def main(argv: Sequence[str]) -> int:
    """Run every selected server, print the rows as they finish, then the table and the totals."""
    options = parse_args(argv)
    base = options.base
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, bench.on_signal)
    atexit.register(bench.end_all)
    revision = bench.mcpfuzz_revision(base.mcpfuzz)
    load_before = bench.load()
    print(f"mcpfuzz {base.mcpfuzz} ({revision}), {base.seconds:g} s each, seed {base.seed}, {options.jobs} at once; "
          f"runs kept in {base.runs}\nload before: {load_before}", flush=True)
    specs = selected(base.only)
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(run_row, spec, options) for spec in specs]
        rows = []
        for future in futures:
            rows.append(future.result())
            print("  " + " | ".join(cells(rows[-1])), flush=True)
    load_after = bench.load()
    summary = totals(rows)
    text = (f"mcpfuzz at {revision}; {base.seconds:g} s budget per server, seed {base.seed}, {options.jobs} at once; "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}; load before: {load_before.split('load average:')[-1]}, "
            f"after: {load_after.split('load average:')[-1]}\n\n{table(rows)}\n\n" + "\n".join(summary.lines()))
    print(f"\n{text}")
    if options.markdown is not None:
        write_section(options.markdown, options.section, text)
    if base.json_out is not None:
        data = {"mcpfuzz": str(base.mcpfuzz), "revision": revision, "seconds": base.seconds, "seed": base.seed,
                "jobs": options.jobs, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "load_before": load_before, "load_after": load_after, "totals": asdict(summary),
                "rows": [asdict(row) for row in rows]}
        base.json_out.write_text(bench.portable(json.dumps(data, indent=1), base) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))



