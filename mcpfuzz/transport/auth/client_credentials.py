"""OAuth 2.1 client credentials (RFC 6749 section 4.4) against the token endpoint discovery found."""

from __future__ import annotations

import base64
import os
from urllib.parse import quote_plus

import httpx

from mcpfuzz.transport.auth.discovery import SHOWN, Discovery, discover
from mcpfuzz.transport.auth.errors import AuthError
from mcpfuzz.transport.auth.token import Token, TokenFormatError, token_response

REQUEST_TIMEOUT = 30.0


class ClientCredentialsSource:
    """Asks the authorization server for a token for this server's resource (RFC 8707), discovering it once."""

    def __init__(self, url: str, client_id: str, secret_env: str, scope: str | None) -> None:
        self.url = url
        self.client_id = client_id
        self.secret_env = secret_env
        self.scope = scope
        self.discovery: Discovery | None = None

    def _secret(self) -> str:
        secret = os.environ.get(self.secret_env)
        if not secret:
            raise AuthError(f"--oauth-client-secret-env names ${self.secret_env}, which is not set (or empty)")
        return secret

    async def fetch(self, resource: str | None = None) -> Token:
        """A fresh token (for this server, or for `resource`); AuthError saying which URL failed and what it answered
        (never the secret)."""
        secret = self._secret()
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT, follow_redirects=False, trust_env=False) as client:
            if self.discovery is None:
                self.discovery = await discover(client, self.url)
            endpoint = self.discovery.token_endpoint
            assert endpoint is not None  # discover() refuses metadata without one
            form = {"grant_type": "client_credentials", "resource": resource or self.discovery.resource_id or self.url}
            scope = self.scope or self.discovery.scope
            if scope:
                form["scope"] = scope
            headers = {"Accept": "application/json"}
            if self._basic_allowed():
                # RFC 6749 section 2.3.1: the id and secret form-encoded, then joined for HTTP Basic.
                pair = f"{quote_plus(self.client_id)}:{quote_plus(secret)}".encode()
                headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
            else:
                form.update(client_id=self.client_id, client_secret=secret)
            try:
                response = await client.post(endpoint, data=form, headers=headers)
            except httpx.HTTPError as error:
                raise AuthError(f"OAuth token request to {endpoint} failed ({type(error).__name__})") from None
        if response.status_code != 200:
            raise AuthError(f"OAuth token request to {endpoint} got HTTP {response.status_code}: "
                            f"{response.text[:SHOWN]!r}")
        try:
            return token_response(response.json())
        except (ValueError, TokenFormatError) as error:
            raise AuthError(f"OAuth token endpoint {endpoint} answered no usable token: {error}") from None

    def _basic_allowed(self) -> bool:
        """client_secret_basic unless the metadata lists methods without it (RFC 8414 default: basic)."""
        server = self.discovery.authorization_server if self.discovery else None
        methods = server.document.get("token_endpoint_auth_methods_supported") if server and server.document else None
        return not isinstance(methods, list) or "client_secret_basic" in methods
