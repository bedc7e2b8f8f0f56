/**
 * Caller-supplied text by code point. Logs, the audit and error messages cut it to a number of
 * characters counted in code points, so a cut never ends between the two halves of a surrogate pair
 * (an emoji cut in half is an unpaired surrogate: `"\ud83d"` in JSON, invalid in UTF-8).
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

// In Unicode mode a well-formed pair is one code point and never matches: only lone surrogates do.
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/** True when `value` holds an unpaired surrogate (JSON can carry one as `"\ud83d"`; UTF-8 cannot). */
export const hasLoneSurrogate = (value: string): boolean => LONE_SURROGATE.test(value);

/**
 * `value` with each unpaired surrogate replaced by U+FFFD, as a UTF-8 encoder writes it: a JSON body
 * can carry one (`"\ud83d"`), and a record that keeps it is not valid Unicode.
 */
export const wellFormed = (value: string): string => value.replace(LONE_SURROGATES, '\uFFFD');
