"""Connects the Python MCP SDK client to the gateway through OAuth discovery and reads.

Used by test/integration/auth/oauth-provider.e2e.test.ts with the virtualenv that
`scripts/python-fixtures.sh mcp-client` prepares (mcp 2.x). The SDK's OAuthClientProvider
(mcp.client.auth) discovers the authorization server from the gateway's 401, registers the client,
and sends the user to the authorization URL; the redirect handler here plays the user (login and
consent over HTTP with httpx2, redirects followed by hand) and the callback handler returns what
reached the redirect URI. Prints one JSON object on stdout (its last line).

    python oauth_read.py MCP_URL [--workbook PATH] [--pause] [--read-after-expiry] [--reconnect]
                         [--browser-stdio]
        environment: OAUTH_LOGIN, OAUTH_PASSWORD (not with --browser-stdio), and optionally
          OAUTH_CLIENT_NAME    the registered client_name
          OAUTH_APPROVALS      JSON list, one entry per authorization: the scopes the user approves
                               at consent (space-separated), or null for every requested scope
          OAUTH_ACCESS_TOKEN   an access token the client's storage holds before the first request

The session initializes, lists the tools and reads once: `dags`, or with --workbook the `workbook`
target at PATH. With --pause it then prints {"event": "paused", "clientId": <registered client_id>} and waits for a line on stdin. With
--read-after-expiry it reads `dags` again once the access token has expired by the client's clock
(waiting exactly until then): the SDK refreshes the token before that request.

With --browser-stdio the user's browser is the test's: each authorization URL is printed as
{"event": "authorize", "url": <URL>} and the query that reached the redirect URI is read back as a
line on stdin (the gateway's built-in server, whose consent page and upstream sign-in the test's
user agent knows).

An exception from the session (the SDK's OAuth flow raising included) ends the reads; the output
lists it under "failures". With --reconnect a connect that failed (before or at `initialize`) is
made once more with the same OAuth provider and storage, as a host does when the user retries.
Every HTTP exchange the SDK's HTTP client made is listed under "requests".
"""

import argparse
import json
import os
import sys
import time
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

# A loopback redirect URI of a native application (RFC 8252); the port is never opened.
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"


class MemoryStorage(TokenStorage):
    def __init__(self, preset: OAuthToken | None) -> None:
        self.tokens: OAuthToken | None = preset
        self.client_info: OAuthClientInformationFull | None = None
        # Every access token the SDK saved, with the time it was saved (a refresh adds one).
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

    def __init__(self, login: str, password: str, approvals: list[str | None]) -> None:
        self.login = login
        self.password = password
        self.approvals = approvals
        self.callback: dict[str, list[str]] | None = None
        # The authorization requests the SDK sent the user to: their scope, resource and prompt.
        self.requests: list[dict[str, str | None]] = []

    def note_request(self, authorization_url: str) -> None:
        query = parse_qs(urlsplit(authorization_url).query)
        self.requests.append({name: (query.get(name) or [None])[0] for name in ("scope", "resource", "prompt")})

    async def redirect(self, authorization_url: str) -> None:
        self.note_request(authorization_url)
        approval = self.approvals[len(self.requests) - 1] if len(self.requests) <= len(self.approvals) else None
        self.callback = None
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
                    form = {} if approval is None else {"scope": approval}
                    response = await browser.post(f"{origin}{path}/confirm", data=form)
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


class StdioBrowser(HeadlessUser):
    """Hands each authorization URL to the test on stdout; reads the redirect's query from stdin."""

    def __init__(self) -> None:
        super().__init__("", "", [])

    async def redirect(self, authorization_url: str) -> None:
        self.note_request(authorization_url)
        self.callback = None
        print(json.dumps({"event": "authorize", "url": authorization_url}), flush=True)
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        self.callback = parse_qs(line.strip())


def read_summary(result: CallToolResult) -> dict[str, Any]:
    data = (result.structured_content or {}).get("data") or {}
    return {
        "isError": bool(result.is_error),
        "dags": [item["name"] for item in data.get("items") or []],
        "sheets": len(data.get("sheets") or []),
        "error": result.structured_content if result.is_error else None,
    }


def failure_summary(error: BaseException, step: str) -> dict[str, Any]:
    # anyio task groups raise exception groups: the first leaf is reported.
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    code = error.code if isinstance(error, MCPError) else None
    return {"step": step, "type": type(error).__name__, "code": code, "message": str(error)[:500]}


async def main(args: argparse.Namespace) -> None:
    approvals: list[str | None] = json.loads(os.environ.get("OAUTH_APPROVALS", "[]"))
    user = (
        StdioBrowser()
        if args.browser_stdio
        else HeadlessUser(os.environ["OAUTH_LOGIN"], os.environ["OAUTH_PASSWORD"], approvals)
    )
    preset = os.environ.get("OAUTH_ACCESS_TOKEN")
    storage = MemoryStorage(OAuthToken(access_token=preset) if preset else None)
    provider = OAuthClientProvider(
        server_url=args.mcp_url,
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
    requests: list[dict[str, Any]] = []

    async def record(response: httpx2.Response) -> None:
        authorization = response.request.headers.get("authorization", "")
        requests.append(
            {
                "method": response.request.method,
                "url": str(response.request.url.copy_with(query=None)),
                "status": response.status_code,
                "bearer": authorization[len("Bearer ") :] if authorization.startswith("Bearer ") else None,
                "challenge": response.headers.get("www-authenticate"),
            }
        )

    tools: list[str] = []
    reads: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    step = "connect"

    async def connect_and_read() -> None:
        nonlocal step, tools
        step = "connect"
        async with httpx2.AsyncClient(auth=provider, timeout=30, event_hooks={"response": [record]}) as http:
            async with streamable_http_client(args.mcp_url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    step = "initialize"
                    await session.initialize()
                    step = "list_tools"
                    tools = [tool.name for tool in (await session.list_tools()).tools]
                    step = "read"
                    first = {"target": "workbook", "path": args.workbook} if args.workbook else {"target": "dags"}
                    reads.append(read_summary(await session.call_tool("dagu_read", first)))
                    if args.pause:
                        client_id = storage.client_info.client_id if storage.client_info else None
                        print(json.dumps({"event": "paused", "clientId": client_id}), flush=True)
                        await anyio.to_thread.run_sync(sys.stdin.readline)
                    if args.read_after_expiry:
                        _, saved_at, expires_in = storage.saved[-1]
                        if expires_in is None:
                            raise RuntimeError("the token response has no expires_in")
                        await anyio.sleep(max(0.0, saved_at + expires_in - time.time()) + 0.1)
                        step = "read after expiry"
                        reads.append(read_summary(await session.call_tool("dagu_read", {"target": "dags"})))

    for _ in range(2 if args.reconnect else 1):
        try:
            await connect_and_read()
            break
        except Exception as error:
            failures.append(failure_summary(error, step))
            # Only a connect that failed is made again (--reconnect); a failure once connected ends the run.
            if step not in ("connect", "initialize"):
                break
    tokens = storage.tokens
    print(
        json.dumps(
            {
                "tools": tools,
                "reads": reads,
                "failures": failures,
                "authorizations": len(user.requests),
                "authorizationRequests": user.requests,
                "accessTokens": [token for token, _, _ in storage.saved],
                "scope": tokens.scope if tokens else None,
                "refreshToken": bool(tokens and tokens.refresh_token),
                "requests": requests,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("mcp_url")
    parser.add_argument("--workbook", metavar="PATH")
    parser.add_argument("--pause", action="store_true")
    parser.add_argument("--read-after-expiry", action="store_true")
    parser.add_argument("--reconnect", action="store_true")
    parser.add_argument("--browser-stdio", action="store_true")
    anyio.run(main, parser.parse_args())
