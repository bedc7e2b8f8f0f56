import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One Markdown reference topic served by `dagu_read` (`reference`, `references`) and `dagu://reference/{topic}`. */
export interface ReferenceTopic {
  /** Topic name: the `name` field of target `reference` and the `{topic}` URI segment. */
  readonly name: string;
  /** Human title; the topic's Markdown starts with `# {title}`. */
  readonly title: string;
  /** One-line summary for resource listings. */
  readonly description: string;
  /** The Markdown text. */
  readonly text: string;
}

type TopicMeta = Omit<ReferenceTopic, 'text'>;

/** The contract's six topics, in the order the reference collection lists them. */
const TOPIC_META: ReadonlyArray<TopicMeta> = [
  {
    name: 'authoring',
    title: 'Dagu DAG authoring',
    description:
      'Writing Dagu 2.x DAG YAML (steps, schedules, handlers, queues) and checking it with dag_spec.',
  },
  {
    name: 'tools',
    title: 'Dagu MCP tools',
    description:
      'The tools of this read-only gateway (dagu_read only) and where dagu_change and dagu_execute live.',
  },
  {
    name: 'read-tool',
    title: 'dagu_read',
    description: 'Every dagu_read target, URI shape, query parameter, pagination rule and error code.',
  },
  {
    name: 'change-tool',
    title: 'dagu_change',
    description:
      'Not offered here: how to create, edit and validate DAGs through Dagu, and verify them here.',
  },
  {
    name: 'execute-tool',
    title: 'dagu_execute',
    description: 'Not offered here: how to start, stop and retry runs through Dagu, and observe them here.',
  },
  {
    name: 'notifications',
    title: 'Dagu MCP notifications',
    description:
      "No push notifications here: how to poll run status efficiently, and Dagu's own notifications.",
  },
];

/**
 * Where the Markdown files are looked up, relative to this module:
 *
 * 1. `./topics/` next to this module. From source that is `src/reference/topics/`. From a
 *    compiled build (`tsc -p tsconfig.build.json`, `src` → `dist`) this module is
 *    `dist/reference/topics.js`, so the build must copy `src/reference/topics/*.md` to
 *    `dist/reference/topics/` (tsc does not copy non-TypeScript files).
 * 2. `../../src/reference/topics/` as a fallback, for a `dist/` that runs inside a checkout whose
 *    build did not copy the files.
 */
const TOPIC_DIRS: ReadonlyArray<URL> = [
  new URL('./topics/', import.meta.url),
  new URL('../../src/reference/topics/', import.meta.url),
];

function loadTopicText(name: string): string {
  for (const dir of TOPIC_DIRS) {
    const file = new URL(`${name}.md`, dir);
    if (existsSync(file)) return readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  }
  const tried = TOPIC_DIRS.map((dir) => fileURLToPath(new URL(`${name}.md`, dir))).join(', ');
  throw new Error(`Reference topic "${name}" not found (looked for ${tried}).`);
}

/** The six reference topics, read once at module load. */
export const REFERENCE_TOPICS: ReadonlyArray<ReferenceTopic> = Object.freeze(
  TOPIC_META.map((meta) => Object.freeze({ ...meta, text: loadTopicText(meta.name) })),
);

const TOPICS_BY_NAME: ReadonlyMap<string, ReferenceTopic> = new Map(
  REFERENCE_TOPICS.map((topic) => [topic.name, topic]),
);

/** The topic with exactly this (case-sensitive) name, or `undefined`. */
export function findReferenceTopic(name: string): ReferenceTopic | undefined {
  return TOPICS_BY_NAME.get(name);
}
