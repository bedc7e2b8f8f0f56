/**
 * A URL as it may be shown in logs and on /readyz: user name and password removed (Dagu's URL, the
 * Redis URL of the shared rate limit), no trailing slash.
 */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/+$/, '');
  } catch {
    return '(invalid URL)';
  }
}
