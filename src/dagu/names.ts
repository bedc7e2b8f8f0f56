/**
 * Dagu's own rules for the names a path can carry, the same in Dagu 1.30 and 2.x (read in their
 * sources: `ValidateDAGName`, `ValidateDAGRunID`, the step validator). A value that breaks its rule
 * names nothing Dagu can hold, so it is never sent: Dagu 2.x would answer 400, Dagu 1.30 500 or a stub.
 *
 * - DAG name: 1 to 40 characters, each a letter, digit, `_`, `.` or `-`; not `.` or `..`.
 * - DAG-run id (also a sub run's id): 1 to 64 characters, each a letter, digit, `_` or `-`.
 * - Step name: 1 to 255 bytes of UTF-8 (Dagu 2.x's limit; 1.30 stops at 40), any characters but the
 *   ones no path segment can carry (checked by the client for every value: `/`, `\`, control characters).
 *
 * Letters are ASCII only. Lengths are Dagu's, which counts bytes; for names and ids, ASCII, bytes and
 * characters are the same.
 */

export const DAG_NAME_MAX_LENGTH = 40;
export const DAG_RUN_ID_MAX_LENGTH = 64;
export const STEP_NAME_MAX_BYTES = 255;

const DAG_NAME = /^[A-Za-z0-9_.-]+$/;
const DAG_RUN_ID = /^[A-Za-z0-9_-]+$/;

export function isDagName(value: string): boolean {
  return value.length <= DAG_NAME_MAX_LENGTH && value !== '.' && value !== '..' && DAG_NAME.test(value);
}

export function isDagRunId(value: string): boolean {
  return value.length <= DAG_RUN_ID_MAX_LENGTH && DAG_RUN_ID.test(value);
}

export function isStepName(value: string): boolean {
  return value !== '' && Buffer.byteLength(value, 'utf8') <= STEP_NAME_MAX_BYTES;
}

/** The rule of each route parameter that carries a name; parameters not listed have none of their own. */
export const NAME_RULES: Readonly<Record<string, (value: string) => boolean>> = {
  name: isDagName,
  fileName: isDagName,
  dagRunId: isDagRunId,
  subRunId: isDagRunId,
  subDAGRunId: isDagRunId,
  stepName: isStepName,
  bodyStepName: isStepName,
};

/** False when `value` breaks the name rule of route parameter `param` (true for a parameter without one). */
export function canName(param: string, value: string): boolean {
  const rule = NAME_RULES[param];
  return rule === undefined || rule(value);
}
