/**
 * Caller-supplied text as logs, the audit and error messages keep it: cut to a number of characters
 * counted in code points, so a cut never ends between the two halves of a surrogate pair (an emoji
 * cut in half is an unpaired surrogate: `"\ud83d"` in JSON, invalid in UTF-8).
 */

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The first `max` code points of `value` (all of it when shorter). */
export function cutToCodePoints(value: string, max: number): string {
  // A string has at least as many UTF-16 units as code points: no longer than `max` units, nothing to cut.
  if (value.length <= max) return value;
  let end = 0;
  for (let points = 0; points < max && end < value.length; points++) {
    const pair = isHighSurrogate(value.charCodeAt(end)) && isLowSurrogate(value.charCodeAt(end + 1));
    end += pair ? 2 : 1;
  }
  return value.slice(0, end);
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `value` with each unpaired surrogate replaced by U+FFFD, as a UTF-8 encoder writes it: a JSON body
 * can carry one (`"\ud83d"`), and a record that keeps it is not valid Unicode.
 */
export const wellFormed = (value: string): string => value.replace(LONE_SURROGATE, '\uFFFD');
