/** True when `CI` is `true` or `1` (case-insensitive, surrounding blanks ignored). */
export function isCI(env?: NodeJS.ProcessEnv): boolean;
