"""The Python MCP SDK client (mcp 2.x) against the gateway, over HTTP with a bearer or over stdio.

Used by test/integration/mcp/real-clients.e2e.test.ts with the virtualenv that
`scripts/python-fixtures.sh mcp-client` prepares. Lists and calls the tool, lists and reads a
resource, lists and gets a prompt, completes a prompt argument, and prints one JSON object on stdout.
A refused connection prints {"refused": "<the error>"} instead.

    python read_client.py http MCP_URL BEARER DAG_NAME
    python read_client.py stdio DAG_NAME -- COMMAND [ARG...]
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PromptReference


async def exercise(session: ClientSession, dag: str) -> dict:
    await session.initialize()
    tools = await session.list_tools()
    call = await session.call_tool("dagu_read", {"target": "dags"})
    resources = await session.list_resources()
    topic = await session.read_resource("dagu://reference/read-tool")
    prompts = await session.list_prompts()
    prompt = await session.get_prompt("summarize_dag", {"name": dag})
    completion = await session.complete(
        PromptReference(type="ref/prompt", name="summarize_dag"), {"name": "name", "value": dag[:3]}
    )
    items = ((call.structured_content or {}).get("data") or {}).get("items") or []
    return {
        "tools": [tool.name for tool in tools.tools],
        "callIsError": bool(call.is_error),
        "dags": [item["name"] for item in items],
        "resources": [str(resource.uri) for resource in resources.resources],
        "topicChars": sum(len(getattr(content, "text", "") or "") for content in topic.contents),
        "prompts": [p.name for p in prompts.prompts],
        "promptMessages": len(prompt.messages),
        "completion": list(completion.completion.values),
    }


async def over_http(url: str, token: str, dag: str) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    statuses: list[int] = []

    async def record(response) -> None:
        statuses.append(response.status_code)

    try:
        async with httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [record]}) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    return await exercise(session, dag)
    except BaseException as error:  # the SDK raises an exception group from its task group
        refused = [status for status in statuses if status >= 400]
        return {"refused": f"HTTP {refused[0] if refused else 'none'}: {describe(error)}"}


async def over_stdio(dag: str, command: list[str]) -> dict:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            return await exercise(session, dag)


def describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return " | ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def main(argv: list[str]) -> None:
    if argv[0] == "http":
        result = await over_http(argv[1], argv[2], argv[3])
    else:
        separator = argv.index("--")
        result = await over_stdio(argv[1], argv[separator + 1 :])
    print(json.dumps(result))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
