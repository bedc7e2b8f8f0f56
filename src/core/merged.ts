/**
 * `{ ...base, ...more }` for the per-call path. On Node 20 (V8 11.3) an object literal that starts with
 * a spread and has any member after it, `{ ...base, key }`, gets a map of its own on every evaluation:
 * each one is allocated, and every inline cache that reads such objects turns megamorphic and misses
 * (bench/RESULTS.md, fifteenth round). Object.assign onto a fresh literal shares one map per shape.
 * For objects of the gateway's own making: Object.assign sets properties, so a `__proto__` key from
 * a caller's JSON would set the prototype where a spread defines a key.
 */
export function merged<Base extends object, More extends object>(base: Base, more: More): Base & More {
  return Object.assign({}, base, more);
}
