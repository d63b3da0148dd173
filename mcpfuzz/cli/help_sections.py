"""`--help` in sections a person scans (target, budget and time, selection, output, CI, advanced), declared once."""

from __future__ import annotations

import click

# Each option by its parameter name; an option not named here is listed under "Advanced", so a new option
# shows up in --help without being placed first.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Target": ("servers_file", "server_name", "cwd", "env_pairs", "header_lines", "launch", "transport",
               "protocol_version", "plain_jsonrpc", "openrpc_path", "method_names", "params_schemas"),
    "Budget and time": ("budget", "duration", "timeout", "call_timeout", "startup_timeout", "exit_first",
                        "max_findings", "max_slices", "workers", "slice_seconds", "resume", "checkpoint_path",
                        "checkpoint_every"),
    "Selection": ("phases", "oracles", "exclude_oracles", "include_tools", "exclude_tools", "include_targets",
                  "exclude_targets", "read_only", "security", "observe", "allow_paths", "coverage", "coverage_sdk",
                  "strict_types", "args_path",
                  "seed", "max_examples", "list_rules", "dry_run", "arguments_text"),
    "Output": ("quiet", "verbose", "json_path", "html_path", "junit_path", "sarif_path", "summary_path",
               "events_path", "output_format", "output_path", "log_frames", "as_json"),
    "CI": ("fail_on", "strict", "baseline_path", "corpus_dir", "no_replay", "config_file", "all_servers",
           "compare_with", "compare_ignore", "shared_url", "shared_prefix", "shared_ttl", "shared_heartbeat",
           "shared_optional"),
}
# `mcpfuzz snapshot` and `run --snapshot`: the check's reports with the others, the check itself with CI.
SECTIONS["Output"] += ("check_json_path", "check_sarif_path", "check_junit_path")
SECTIONS["CI"] += ("check_path", "update", "fail_on_change", "snapshot_path")
ADVANCED = "Advanced"
SECTION_OF = {name: title for title, names in SECTIONS.items() for name in names}


class SectionedCommand(click.Command):
    """A command whose options are listed in SECTIONS' order, each section under its title."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        grouped: dict[str, list[tuple[int, tuple[str, str]]]] = {title: [] for title in (*SECTIONS, ADVANCED)}
        for position, param in enumerate(self.get_params(ctx)):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is None:
                continue  # an argument (the usage line shows it), or a hidden option
            title = SECTION_OF.get(param.name or "", ADVANCED)
            # SECTIONS' order within a section; the declaration order for the advanced ones.
            order = SECTIONS[title].index(param.name or "") if title in SECTIONS else position
            grouped[title].append((order, record))
        for title, records in grouped.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl([record for _, record in sorted(records, key=lambda item: item[0])])
