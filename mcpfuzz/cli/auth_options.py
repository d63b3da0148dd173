"""The options that keep a protected HTTP server's token fresh for the whole run (docs/auth.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from mcpfuzz.transport.auth.settings import AuthSettings

if TYPE_CHECKING:
    from mcpfuzz.transport.http_target import HttpTarget

AUTH_OPTIONS = [
    click.option("--auth-token-command", default=None, metavar="'CMD'",
                 help="HTTP: a shell command printing a bearer token (or JSON with access_token and expires_in); "
                      "run again before the token expires and after a 401. The token is never written."),
    click.option("--oauth-client-id", default=None, metavar="ID",
                 help="HTTP: get tokens by OAuth 2.1 client credentials, the authorization server discovered from "
                      "the server's 401 (RFC 9728, RFC 8414); renewed before expiry and after a 401."),
    click.option("--oauth-client-secret-env", default=None, metavar="VAR",
                 help="With --oauth-client-id: the environment variable holding the client secret."),
    click.option("--oauth-scope", default=None, metavar="SCOPE",
                 help="With --oauth-client-id: the scope to ask for (default: the 401's scope, else the resource "
                      "metadata's scopes_supported)."),
]
OPTION_NAMES = ("auth_token_command", "oauth_client_id", "oauth_client_secret_env", "oauth_scope")
# A servers file's `auth` object: the same settings, spelled as MCP client configs spell keys.
ENTRY_KEYS = {"tokenCommand": "auth_token_command", "clientId": "oauth_client_id",
              "clientSecretEnv": "oauth_client_secret_env", "scope": "oauth_scope"}


def auth_settings(options: Mapping[str, Any]) -> AuthSettings | None:
    """The settings the options ask for (None without any); a usage error when they do not go together."""
    command, client, secret_env, scope = (options.get(name) or None for name in OPTION_NAMES)
    if command is None and client is None and secret_env is None and scope is None:
        return None
    try:
        return AuthSettings(command, client, secret_env, scope)
    except ValueError as error:
        raise click.UsageError(f"--auth-token-command / --oauth-*: {error}") from None


def with_auth(http: HttpTarget | None, options: Mapping[str, Any]) -> HttpTarget | None:
    """The HTTP target with its authentication; the options are refused for a stdio server."""
    settings = auth_settings(options)
    if settings is None:
        return http
    if http is None:
        raise click.UsageError("--auth-token-command and --oauth-* only apply to an HTTP URL; this server is a stdio "
                               "command (give it its credentials with --env)")
    return replace(http, auth=settings)


def entry_auth_options(spec: Any) -> dict[str, str]:
    """The options a servers file entry's `auth` object sets (`{"tokenCommand": ...}` or the OAuth keys)."""
    if not isinstance(spec, Mapping):
        return {}
    return {ENTRY_KEYS[key]: value for key, value in spec.items() if key in ENTRY_KEYS and isinstance(value, str)}
