/**
 * The dashboard's Content Security Policy. The dashboard is plain files from
 * its own origin: no inline scripts or styles, no `style="..."` attributes
 * (dynamic sizes and colours are set through the CSSOM, `element.style.x`,
 * which a policy does not govern), no event-handler attributes, no eval. The
 * only `data:` URL is the empty favicon of index.html.
 *
 * The web plugin (src/web/index.ts) sends this policy and
 * `x-content-type-options: nosniff` with every response it serves; the browser
 * tests load every page with it in force and fail on any violation.
 */

export interface CspOptions {
  /**
   * Base URL of the JSON API as the browser calls it (WebOptions.apiBase).
   * When it names another origin, that origin is added to `connect-src`.
   * @default '' (same origin)
   */
  apiBase?: string;
}

/** Directive name → sources, in the order they are sent. */
export const DASHBOARD_CSP_DIRECTIVES: Readonly<Record<string, readonly string[]>> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** The origin of an absolute http(s) API base, or undefined for a same-origin path. */
function apiOrigin(apiBase: string): string | undefined {
  if (!/^https?:\/\//i.test(apiBase)) return undefined;
  try {
    return new URL(apiBase).origin;
  } catch {
    return undefined;
  }
}

/** The policy as a `content-security-policy` header value. */
export function dashboardCsp(options: CspOptions = {}): string {
  const origin = apiOrigin(options.apiBase ?? '');
  return Object.entries(DASHBOARD_CSP_DIRECTIVES)
    .map(([name, sources]) => [name, ...(name === 'connect-src' && origin ? [...sources, origin] : sources)].join(' '))
    .join('; ');
}

/** The policy for a dashboard that calls its API on the same origin. */
export const DASHBOARD_CSP = dashboardCsp();

/** Headers the web plugin sets on every response it serves. */
export function dashboardSecurityHeaders(options: CspOptions = {}): Record<string, string> {
  return {
    'content-security-policy': dashboardCsp(options),
    'x-content-type-options': 'nosniff',
  };
}
