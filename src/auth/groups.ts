import { Ajv } from 'ajv';
import { type Identity, ROLES, type Role } from './identity.ts';
import {
  ConfigFileError,
  type FileKind,
  parseDocument,
  schemaProblems,
  type WatchedFileOptions,
  watchConfigFile,
} from './watched-file.ts';

/**
 * What a group of the identity provider may read (AUTH_GROUPS_FILE): standard providers put groups in
 * a token (`groups`, `roles`), not Dagu's `dags`/`workspaces` claims, so the file maps them.
 *
 *   groups:
 *     data-eng: { role: operator, dags: ["etl-*"], workspaces: ["ops"] }
 *     auditors: {}            # every DAG and workspace, as viewer
 */
export interface GroupGrant {
  role?: Role;
  dags?: readonly string[];
  workspaces?: readonly string[];
}

export type GroupPolicy = ReadonlyMap<string, GroupGrant>;

const GLOBS = {
  type: 'array',
  minItems: 1,
  maxItems: 256,
  items: { type: 'string', minLength: 1, maxLength: 256 },
};
const validate = new Ajv({ allErrors: true }).compile<{ groups: Record<string, GroupGrant> }>({
  type: 'object',
  required: ['groups'],
  additionalProperties: false,
  properties: {
    groups: {
      type: 'object',
      propertyNames: { minLength: 1, maxLength: 256 },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { role: { enum: ROLES }, dags: GLOBS, workspaces: GLOBS },
      },
    },
  },
});

export function parseGroups(text: string, file: string): GroupPolicy {
  const data = parseDocument(text, file, 'groups file');
  if (!validate(data)) {
    throw new ConfigFileError(file, schemaProblems(validate.errors), 'groups file');
  }
  return new Map(Object.entries(data.groups).map(([name, grant]) => [name, Object.freeze({ ...grant })]));
}

const GROUPS_FILE: FileKind<GroupPolicy> = {
  what: 'groups file',
  contents: 'group grants',
  parse: (text, file) => ({ value: parseGroups(text, file), warnings: [] }),
  summary: (policy) => ({ groups: policy.size }),
};

/** The union of a list of allowlists; undefined (everything) when any of them is. */
function union(lists: Array<readonly string[] | undefined>): readonly string[] | undefined {
  if (lists.some((list) => list === undefined)) return undefined;
  return Object.freeze([...new Set(lists.flatMap((list) => list ?? []))]);
}

/**
 * The identity as its groups allow: the union of the matched groups' allowlists and the highest of
 * their roles (at least the token's own). A token naming no group of the file reads nothing.
 */
export function applyGroups(identity: Identity, policy: GroupPolicy): Identity {
  const grants = (identity.groups ?? []).flatMap((group) => {
    const grant = policy.get(group);
    return grant === undefined ? [] : [grant];
  });
  const role = grants.reduce<Role>(
    (highest, grant) =>
      grant.role !== undefined && ROLES.indexOf(grant.role) > ROLES.indexOf(highest) ? grant.role : highest,
    identity.role,
  );
  const dags = grants.length === 0 ? [] : union(grants.map((grant) => grant.dags));
  const workspaces = grants.length === 0 ? [] : union(grants.map((grant) => grant.workspaces));
  const { dags: _dags, workspaces: _workspaces, ...rest } = identity;
  return Object.freeze({
    ...rest,
    role,
    ...(dags === undefined ? {} : { dags }),
    ...(workspaces === undefined ? {} : { workspaces }),
  });
}

/** The groups file, kept current like the key file (SIGHUP, file changes; a broken edit keeps the old). */
export const watchGroups = (file: string, options: WatchedFileOptions) =>
  watchConfigFile(file, GROUPS_FILE, options);
