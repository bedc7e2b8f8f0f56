"""Connects the Python MCP SDK client to the gateway through OAuth discovery and reads once.

Used by test/integration/auth/oauth-provider.e2e.test.ts with the virtualenv that
`scripts/python-fixtures.sh mcp-client` prepares (mcp 2.x). The SDK's OAuthClientProvider
(mcp.client.auth) discovers the authorization server from the gateway's 401, registers the client,
and sends the user to the authorization URL; the redirect handler here plays the user (login and
consent over HTTP with httpx2, redirects followed by hand) and the callback handler returns what
reached the redirect URI. Prints one JSON object on stdout.

    python oauth_read.py MCP_URL [--read-after-expiry]
        environment: OAUTH_LOGIN, OAUTH_PASSWORD, OAUTH_CLIENT_NAME (optional)

With --read-after-expiry the session reads a second time once the access token has expired by the
client's clock (waiting exactly until then): the SDK refreshes the token before that request.
"""

import json
import os
import sys
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

# A loopback redirect URI of a native application (RFC 8252); the port is never opened.
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        # Every access token saved, with the time it was saved (a refresh adds one).
        self.saved: list[tuple[str, float, int | None]] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.saved.append((tokens.access_token, time.time(), tokens.expires_in))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessUser:
    """Follows the authorization URL through login and consent until the redirect URI."""

    def __init__(self, login: str, password: str) -> None:
        self.login = login
        self.password = password
        self.callback: dict[str, list[str]] | None = None
        self.authorizations = 0

    async def redirect(self, authorization_url: str) -> None:
        self.authorizations += 1
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(authorization_url))
        async with httpx2.AsyncClient(follow_redirects=False, timeout=15) as browser:
            response = await browser.get(authorization_url)
            for _ in range(20):
                if response.is_redirect:
                    location = urljoin(str(response.url), response.headers["location"])
                    if not location.startswith(origin + "/"):
                        self.callback = parse_qs(urlsplit(location).query)
                        return
                    response = await browser.get(location)
                    continue
                path = urlsplit(str(response.url)).path
                if response.status_code != 200 or not path.startswith("/interaction/"):
                    raise RuntimeError(f"authorization stopped at {path}: HTTP {response.status_code} {response.text[:300]}")
                prompt = response.json()["prompt"]
                if prompt == "login":
                    form = {"login": self.login, "password": self.password}
                    response = await browser.post(f"{origin}{path}/login", data=form)
                elif prompt == "consent":
                    response = await browser.post(f"{origin}{path}/confirm", data={})
                else:
                    raise RuntimeError(f"unexpected interaction prompt {prompt}")
        raise RuntimeError("authorization did not reach the redirect URI within 20 steps")

    async def callback_result(self) -> AuthorizationCodeResult:
        if self.callback is None:
            raise RuntimeError("the redirect URI was never reached")
        first = {name: values[0] for name, values in self.callback.items()}
        if "code" not in first:
            raise RuntimeError(f"authorization failed: {first}")
        return AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))


def dag_names(result) -> list[str]:
    items = ((result.structured_content or {}).get("data") or {}).get("items") or []
    return [item["name"] for item in items]


async def main(mcp_url: str, read_after_expiry: bool) -> None:
    user = HeadlessUser(os.environ["OAUTH_LOGIN"], os.environ["OAUTH_PASSWORD"])
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=os.environ.get("OAUTH_CLIENT_NAME", "gateway-tests (Python SDK)"),
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=user.redirect,
        callback_handler=user.callback_result,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with streamable_http_client(mcp_url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                results = [await session.call_tool("dagu_read", {"target": "dags"})]
                if read_after_expiry:
                    _, saved_at, expires_in = storage.saved[-1]
                    if expires_in is None:
                        raise RuntimeError("the token response has no expires_in")
                    await anyio.sleep(max(0.0, saved_at + expires_in - time.time()) + 0.1)
                    results.append(await session.call_tool("dagu_read", {"target": "dags"}))
    tokens = storage.tokens
    print(
        json.dumps(
            {
                "tools": [tool.name for tool in tools.tools],
                "reads": [
                    {
                        "isError": bool(result.is_error),
                        "dags": dag_names(result),
                        "error": result.structured_content if result.is_error else None,
                    }
                    for result in results
                ],
                "authorizations": user.authorizations,
                "accessTokens": [token for token, _, _ in storage.saved],
                "scope": tokens.scope if tokens else None,
                "refreshToken": bool(tokens and tokens.refresh_token),
            }
        )
    )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], "--read-after-expiry" in sys.argv[2:])
