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

/**
 * ES2024's String methods, in every Node this runs on (20 and later). The compiler's lib stays ES2022,
 * which keeps out the ES2024 APIs Node 20 lacks (`Promise.withResolvers`).
 */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** True when `value` holds an unpaired surrogate (JSON can carry one as `"\ud83d"`; UTF-8 cannot). */
export const hasLoneSurrogate = (value: string): boolean =>
  !(value as unknown as WellFormedString).isWellFormed();

/**
 * `value` with each unpaired surrogate replaced by U+FFFD, as a UTF-8 encoder writes it: a JSON body
 * can carry one (`"\ud83d"`), and a record that keeps it is not valid Unicode. The audit calls this for
 * every field of every record: the builtin returns a well-formed string as it is, 4x faster than a
 * `/\p{Cs}/gu` replace.
 */
export const wellFormed = (value: string): string => (value as unknown as WellFormedString).toWellFormed();
