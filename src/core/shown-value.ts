import { cutToCodePoints } from './code-points.ts';

/** Longest caller value quoted in an error message; longer ones are cut (inputs may be kilobytes long). */
const MAX_SHOWN_VALUE = 64;

/** A caller-supplied value as quoted in error messages: JSON-quoted, cut after 64 characters. */
export function shownValue(value: string): string {
  const cut = cutToCodePoints(value, MAX_SHOWN_VALUE);
  return JSON.stringify(cut.length < value.length ? `${cut}…` : value);
}
