"""`mcpfuzz soak`: the long run for CI (duration, N findings, checkpoints, --resume, --workers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.config_file import config_file_option
from mcpfuzz.cli.durations import Seconds
from mcpfuzz.cli.help_sections import SectionedCommand
from mcpfuzz.cli.options import build_config, exit_status, server_options
from mcpfuzz.cli.reporting import Reporting

if TYPE_CHECKING:
    from mcpfuzz.engine.config import RunConfig
    from mcpfuzz.engine.events import EventSink, RunFinished
    from mcpfuzz.engine.soak.checkpoint import Checkpoint
    from mcpfuzz.engine.soak.soak import SoakOptions

CHECKPOINT_NAME = "soak-checkpoint.json"


@click.command(cls=SectionedCommand, context_settings={"ignore_unknown_options": False})
@click.argument("server", nargs=-1, type=click.UNPROCESSED, metavar="URL | -- CMD [ARGS]...")
@click.option("--duration", type=Seconds(min=0, min_open=True), default="1h", show_default=True,
              metavar="DURATION",
              help="How long to soak in all (e.g. 30m, 2h, 1h30m); with --resume, including earlier sessions.")
@click.option("--max-findings", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop once N new findings are in (findings already in the corpus do not count).")
@click.option("--max-slices", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop after N slices (each worker, this session): the soak ends by its work, --duration bounds it.")
@click.option("--checkpoint", "checkpoint_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help=f"Checkpoint file, rewritten every --checkpoint-every seconds [default: DIR/{CHECKPOINT_NAME} "
                   "of --corpus].")
@click.option("--resume", is_flag=True, default=False,
              help="Go on from the checkpoint: same seed, new inputs, counters and findings carried over.")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=1, show_default=True, metavar="N",
              help="Soak N server instances in parallel processes (targets and seeds split between them).")
@click.option("--checkpoint-every", type=Seconds(min=1), default=60.0, show_default=True,
              metavar="DURATION", help="Time between two checkpoints (reports and transcripts are written too).")
@click.option("--ping-every", type=Seconds(min=0.1), default=5.0, show_default=True, metavar="DURATION",
              help="Time between two liveness pings of the server (sent between cases).")
@click.option("--sample-every", type=Seconds(min=0.05), default=1.0, show_default=True,
              metavar="DURATION", help="Time between two samples of the server's memory and open files.")
@click.option("--slice", "slice_seconds", type=Seconds(min=1), default=None, metavar="DURATION",
              help="How long one target is fuzzed before the next is picked [default: duration/30, 5 to 30].")
@server_options
@config_file_option
def soak(server: tuple[str, ...], duration: float, max_findings: int | None, max_slices: int | None,
         checkpoint_path: str | None, resume: bool, workers: int, checkpoint_every: float, ping_every: float,
         sample_every: float, slice_seconds: float | None, **options: Any) -> None:
    """Fuzz for a long time: `mcpfuzz soak [OPTIONS] -- CMD [ARGS]...` or `mcpfuzz soak [OPTIONS] URL`.

    Frames and tools are fuzzed in slices, the targets that still show new behaviour more often,
    until --duration, --max-findings, or Ctrl-C/SIGTERM. The server's memory is sampled (memory-growth)
    and pinged; a checkpoint, the transcripts and the reports are written every minute, so a job
    killed by its timeout still leaves them. Exit status as for `run`.
    """
    total = duration
    config = build_config(server, total, options)
    if workers > 1 and config.http is not None and config.http.launch and not config.http.picks_port:
        raise click.UsageError("--workers with --launch would start every worker's server on the same port; tip: "
                               "write {port} in the URL and the launch command (each worker then starts its server "
                               "on a free port of its own), or soak a running server (drop --launch)")
    config.sample_every = sample_every
    path = Path(checkpoint_path) if checkpoint_path else (config.corpus or Path(".")) / CHECKPOINT_NAME
    earlier = _resume_from(path, config, options["seed"], workers) if resume else None
    elapsed = earlier.elapsed if earlier is not None else 0.0
    if total - elapsed < 1.0:
        raise click.UsageError(f"the soak in {path} already ran {elapsed:.0f}s of --duration {total:.0f}s; give a "
                               "longer --duration to go on (it counts earlier sessions too)")
    config.budget = total - elapsed

    from mcpfuzz.engine.soak.soak import SoakOptions

    soak_options = SoakOptions(duration=total, max_findings=max_findings, max_slices=max_slices, checkpoint=path,
                               checkpoint_every=checkpoint_every, ping_every=ping_every,
                               slice_seconds=slice_seconds, resume=earlier)
    reporting = Reporting(config, options)
    finished = reporting.run(lambda sink: _soak(config, soak_options, workers, sink))
    reporting.exit_on_problem()
    click.echo(f"checkpoint: {path} (mcpfuzz soak --resume --duration LONGER to go on)", err=True)
    sys.exit(exit_status(config, finished))


def _soak(config: RunConfig, soak_options: SoakOptions, workers: int, sink: EventSink) -> RunFinished:
    """Run the soak in this process, or in `workers` processes whose events are relayed to `sink`."""
    import anyio

    if workers > 1:
        from mcpfuzz.engine.soak.workers import soak_workers

        return soak_workers(config, soak_options, workers, sink)
    from mcpfuzz.engine.soak.soak import Soak

    return anyio.run(Soak(config, soak_options, sink).execute)


def _resume_from(path: Path, config: RunConfig, seed: int | None, workers: int) -> Checkpoint:
    """The checkpoint to go on from, checked against this soak's server and seed (exit 2 when it does not fit)."""
    from mcpfuzz.corpus.redact import Redactor
    from mcpfuzz.engine.config import Shard
    from mcpfuzz.engine.soak.checkpoint import CheckpointError, read_checkpoint

    try:
        checkpoint = read_checkpoint(path)
        for index in range(1, workers):
            read_checkpoint(Shard(index, workers).worker_path(path))
    except CheckpointError as error:
        raise click.UsageError(str(error)) from None
    label = Redactor(config.secrets).text(config.server_label)
    if checkpoint.server != label:
        raise click.UsageError(f"the checkpoint {path} is of another server ({checkpoint.server}), not {label}; "
                               "resume with the same server, or give another --checkpoint")
    if seed is not None and seed != checkpoint.seed:
        raise click.UsageError(f"the checkpoint {path} was written with --seed {checkpoint.seed}; leave --seed out "
                               "when resuming (the seed is carried over)")
    config.seed = checkpoint.seed
    return checkpoint
