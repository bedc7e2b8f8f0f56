/** Paths into the installed test tools (scripts/test-tools.mjs). */
export interface TestTools {
  /** The cache folder for the current lockfile. */
  folder: string;
  node22: string;
  node24: string;
  /** The MCP conformance suite's entry script. */
  conformance: string;
  /** MCP Inspector's launcher (`--cli` for the CLI); run it with node22. */
  inspector: string;
  /** MCP Inspector's v1-line web UI, static files (its "Direct" connection type runs in the browser). */
  inspectorWebV1: string;
}

/** The cache folder for the current lockfile, installing it first when it is not complete. */
export function testTools(): TestTools;
