"""`--shared URL` and its companions for `run` and `soak`, checked (and Redis reached) before the run starts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.cli.durations import Seconds

if TYPE_CHECKING:
    from mcpfuzz.engine.shared.options import SharedOptions

EXIT_ERROR = 2
HEARTBEATS_KEPT = 4  # a machine's heartbeat lives this many intervals (three missed beats are forgiven)
DEFAULT_PREFIX = "mcpfuzz"  # mcpfuzz.engine.shared.options.DEFAULT_PREFIX (kept here for a fast --help)

SHARED_OPTIONS = [
    click.option("--shared", "shared_url", default=None, metavar="URL", envvar="MCPFUZZ_SHARED",
                 help="Share one search with other processes through Redis: redis://[:PASSWORD@]HOST:PORT/DB, "
                      "rediss:// for TLS (also $MCPFUZZ_SHARED; the password is never printed or written)."),
    click.option("--shared-prefix", default=DEFAULT_PREFIX, show_default=True, metavar="NAME",
                 help="Prefix of every key written to the shared store (one per project or server)."),
    click.option("--shared-ttl", type=Seconds(min=0, min_open=True), default="7d", show_default=True,
                 metavar="DURATION",
                 help="How long shared examples and findings live after their last write (e.g. 12h, 7d)."),
    click.option("--shared-heartbeat", type=Seconds(min=0.2, max=3600), default=5.0, show_default=True,
                 metavar="DURATION", help="Time between two heartbeats; a machine silent for four of them is "
                                         "gone from `mcpfuzz status`."),
    click.option("--shared-optional", is_flag=True, default=False,
                 help="When the shared store cannot be reached at the start, fuzz locally (and join it when it "
                      "answers) instead of exit 2."),
]


def shared_from_options(options: dict[str, Any]) -> SharedOptions | None:
    """The shared store's options, the URL checked and Redis reached; exit 2 with why (or a warning when optional)."""
    url = options.get("shared_url")
    if not url:
        return None
    from mcpfuzz.engine.shared.link import SharedLink, SharedUnavailable, redis_client
    from mcpfuzz.engine.shared.options import SharedOptions, SharedUrlError, check_prefix, check_url

    try:
        check_url(url)
        check_prefix(options["shared_prefix"])
    except SharedUrlError as error:
        raise click.BadParameter(str(error), param_hint="--shared") from None
    ttl = options["shared_ttl"]
    every = options["shared_heartbeat"]
    shared = SharedOptions(url=url, prefix=options["shared_prefix"], ttl=ttl, optional=options["shared_optional"],
                           heartbeat_every=every, heartbeat_ttl=max(2.0, every * HEARTBEATS_KEPT))
    try:
        client = redis_client(shared)
    except SharedUnavailable as error:  # the redis package is missing: no --shared-optional helps there
        click.echo(f"error: {error}", err=True)
        raise SystemExit(EXIT_ERROR) from None
    try:
        link = SharedLink(shared, client)
        link.check()
        link.close()
    except SharedUnavailable as error:
        if not shared.optional:
            click.echo(f"error: {error}", err=True)
            raise SystemExit(EXIT_ERROR) from None
        click.echo(f"warning: {str(error).splitlines()[0]}; fuzzing locally until it answers (--shared-optional)",
                   err=True)
    return shared
