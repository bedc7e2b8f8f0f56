import type { GetPromptResult, McpServer, Prompt, PromptMessage } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { pathEscape, queryEscape } from '../read/input/index.ts';
import { resourceLinkFor } from './links.ts';
import { paramsSchema } from './params.ts';
import { READ_TOOL_NAME } from './tool.ts';

/**
 * Prompts for the investigations agents repeat. A prompt reads nothing itself: its messages say which
 * `dagu_read` calls and `dagu://` resources answer the question, so every read still goes through the
 * tool (its allowlist, rate limit and audit). Arguments complete through `completion/complete`.
 */

/** What a prompt argument completes to: a tool field (through Dagu) or a fixed list. */
export type ArgumentCompletion = { field: 'name' | 'dagRunId' } | { values: readonly string[] };

interface PromptArgumentDefinition {
  name: string;
  description: string;
  required: boolean;
  completion: ArgumentCompletion;
}

interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: readonly PromptArgumentDefinition[];
  messages(args: Readonly<Record<string, string>>): PromptMessage[];
}

const DAG_NAME: PromptArgumentDefinition = {
  name: 'name',
  description: 'The DAG name.',
  required: true,
  completion: { field: 'name' },
};

const RUN_ID: PromptArgumentDefinition = {
  name: 'dagRunId',
  description: 'The DAG-run id, or `latest` (the default).',
  required: false,
  completion: { field: 'dagRunId' },
};

const RUN_COUNT = { min: 2, max: 50, default: 5 } as const;

const RUN_COUNT_ARGUMENT: PromptArgumentDefinition = {
  name: 'count',
  description: `How many of the newest runs to compare, ${RUN_COUNT.min} to ${RUN_COUNT.max} (default ${RUN_COUNT.default}).`,
  required: false,
  completion: { values: ['3', '5', '10', '20'] },
};

/** One `dagu_read` call as the agent should send it (JSON, so every value is escaped as JSON). */
const call = (args: Record<string, unknown>) => `${READ_TOOL_NAME} ${JSON.stringify(args)}`;

const segment = pathEscape;

const text = (body: string): PromptMessage => ({ role: 'user', content: { type: 'text', text: body } });

const link = (uri: string): PromptMessage => ({ role: 'user', content: resourceLinkFor(uri) });

export const PROMPTS: readonly PromptDefinition[] = [
  {
    name: 'why_did_run_fail',
    title: 'Why did this run fail?',
    description: 'Find the failing step of a DAG run, its error output, and the cause.',
    arguments: [DAG_NAME, RUN_ID],
    messages: ({ name = '', dagRunId = 'latest' }) => [
      text(
        [
          `Find out why run ${JSON.stringify(dagRunId)} of the Dagu DAG ${JSON.stringify(name)} failed. Read only; change nothing.`,
          '',
          `1. ${call({ target: 'run', name, dagRunId })}: the run's status and its steps. Note every step whose status is failed, its exit code and error, and the run's real dagRunId (when you asked for latest).`,
          `2. For each failed step: ${call({ target: 'step_log', name, dagRunId, stepName: '<step name>', query: 'stream=stderr&tail=200' })}, then the same with stream=stdout.`,
          `3. ${call({ target: 'run_logs', name, dagRunId, query: 'tail=200' })}: the scheduler log, for failures outside any step (preconditions, timeouts, cancellation).`,
          `4. ${call({ target: 'dag_spec', name })}: what the failed step runs, its retry and continue-on settings and its dependencies.`,
          `5. A failed step that calls a sub DAG lists sub runs: read ${call({ target: 'run', name, dagRunId, subRunId: '<sub run id>' })} and repeat steps 1–2 there.`,
          '',
          'Answer with: the failing step, the error as logged (quoted), the most likely cause, and what would fix it. Say which reads you made; if a read fails, report its error code instead of guessing.',
        ].join('\n'),
      ),
      link(`dagu://runs/${segment(name)}/${segment(dagRunId)}`),
    ],
  },
  {
    name: 'summarize_dag',
    title: 'Summarize this DAG',
    description:
      'Describe what a DAG does, how it is scheduled and configured, and how its recent runs went.',
    arguments: [DAG_NAME],
    messages: ({ name = '' }) => [
      text(
        [
          `Summarize the Dagu DAG ${JSON.stringify(name)}. Read only; change nothing.`,
          '',
          `1. ${call({ target: 'dag_spec', name })}: the definition (YAML).`,
          `2. ${call({ target: 'dag', name })}: schedule, labels, parameters and the latest run.`,
          `3. ${call({ target: 'runs', query: `name=${queryEscape(name)}&limit=10` })}: the ten newest runs.`,
          '',
          'Answer with: its purpose in one sentence; the schedule; the steps in order with their dependencies; parameters and their defaults; and how the recent runs went (successes, failures, typical duration).',
        ].join('\n'),
      ),
      link(`dagu://dags/${segment(name)}/spec`),
    ],
  },
  {
    name: 'compare_runs',
    title: 'Compare the last runs of a DAG',
    description: 'Compare the newest runs of a DAG: status, duration, failing steps and what changed.',
    arguments: [DAG_NAME, RUN_COUNT_ARGUMENT],
    messages: ({ name = '', count = String(RUN_COUNT.default) }) => [
      text(
        [
          `Compare the ${count} newest runs of the Dagu DAG ${JSON.stringify(name)}. Read only; change nothing.`,
          '',
          `1. ${call({ target: 'runs', query: `name=${queryEscape(name)}&limit=${count}` })}: the runs, newest first.`,
          `2. For each run: ${call({ target: 'run', name, dagRunId: '<dagRunId>' })}: its steps, their status and timing.`,
          `3. For a run that failed where others succeeded: ${call({ target: 'step_log', name, dagRunId: '<dagRunId>', stepName: '<step name>', query: 'stream=stderr&tail=100' })}.`,
          '',
          'Answer with a table (run id, start time, status, duration, failed steps) and then what differs between the runs: parameters, the step that fails, durations that grew.',
        ].join('\n'),
      ),
    ],
  },
];

const BY_NAME: ReadonlyMap<string, PromptDefinition> = new Map(
  PROMPTS.map((prompt) => [prompt.name, prompt]),
);

/** The completion source of one prompt argument; undefined for an unknown prompt or argument. */
export function promptArgumentCompletion(prompt: string, argument: string): ArgumentCompletion | undefined {
  return BY_NAME.get(prompt)?.arguments.find((candidate) => candidate.name === argument)?.completion;
}

const LISTED: Prompt[] = PROMPTS.map((prompt) => ({
  name: prompt.name,
  title: prompt.title,
  description: prompt.description,
  arguments: prompt.arguments.map(({ name, description, required }) => ({ name, description, required })),
}));

const invalidParams = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);

const GET_PROMPT = paramsSchema<{ name: string; arguments?: Record<string, string> }>({
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    arguments: { type: 'object', additionalProperties: { type: 'string' } },
    _meta: { type: 'object' },
  },
});

/** The arguments a prompt gets: blank values count as absent, unknown names are refused. */
function promptArguments(prompt: PromptDefinition, given: Readonly<Record<string, string>> | undefined) {
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(given ?? {})) {
    if (!prompt.arguments.some((argument) => argument.name === key)) {
      throw invalidParams(`Prompt ${prompt.name} has no argument ${JSON.stringify(key)}.`);
    }
    if (value.trim() !== '') args[key] = value.trim();
  }
  for (const argument of prompt.arguments) {
    if (argument.required && args[argument.name] === undefined) {
      throw invalidParams(`Prompt ${prompt.name} needs the argument ${argument.name}.`);
    }
  }
  if (args.count !== undefined) {
    const count = Number(args.count);
    if (!/^\d+$/.test(args.count) || count < RUN_COUNT.min || count > RUN_COUNT.max) {
      throw invalidParams(
        `Prompt argument count must be an integer from ${RUN_COUNT.min} to ${RUN_COUNT.max}.`,
      );
    }
  }
  return args;
}

export function registerPrompts(server: McpServer): void {
  // Stateless: the list never changes while a client holds it, so no listChanged.
  server.server.registerCapabilities({ prompts: {} });
  server.server.setRequestHandler('prompts/list', () => ({ prompts: LISTED }));
  server.server.setRequestHandler('prompts/get', GET_PROMPT, (params): GetPromptResult => {
    const prompt = BY_NAME.get(params.name);
    if (prompt === undefined) throw invalidParams(`Unknown prompt ${JSON.stringify(params.name)}.`);
    const args = promptArguments(prompt, params.arguments);
    return { description: prompt.description, messages: prompt.messages(args) };
  });
}
