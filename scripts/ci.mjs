// Whether this run is CI. One answer for the test runner, the scripts and the tests (through
// test/support/ci.ts): `CI` set to `true` or `1`, in any case. `.ci/run` exports CI=true. Under CI a
// missing tool or contract fails the run instead of skipping the tests that need it.

/** True when `CI` is `true` or `1` (case-insensitive, surrounding blanks ignored). */
export function isCI(env = process.env) {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value === 'true' || value === '1';
}
