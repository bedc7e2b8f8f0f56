/** Longest caller value quoted in an error message; longer ones are cut (inputs may be kilobytes long). */
const MAX_SHOWN_VALUE = 64;

/** A caller-supplied value as quoted in error messages: JSON-quoted, cut after 64 characters. */
export const shownValue = (value: string): string =>
  JSON.stringify(value.length > MAX_SHOWN_VALUE ? `${value.slice(0, MAX_SHOWN_VALUE)}…` : value);
