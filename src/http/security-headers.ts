import { Elysia } from 'elysia';
import { DOCS_PATH } from './openapi';
import { pathOf } from './url-path';

/** Every answer: no MIME sniffing (a JSON answer is never run as a script), no referrer beyond the origin, no framing. */
const ALWAYS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'DENY',
};

/**
 * Pages: their own origin's scripts, styles, images and API calls only, no inline script,
 * no plugins, no framing (`frame-ancestors` is the CSP form of X-Frame-Options).
 */
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The API reference page (`/docs`, Scalar from @elysiajs/swagger) loads its script from a CDN and
 * starts it with an inline script and inline styles; until it is served from this origin (the
 * console work bundles it), its CSP allows that CDN and inline code, and nothing else.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net",
  "style-src 'self' 'unsafe-inline' https:",
  "img-src 'self' data: https:",
  "font-src 'self' data: https:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The CSP of the page at `path`. */
function cspFor(path: string): string {
  return path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`) ? DOCS_CSP : PAGE_CSP;
}

/**
 * Security headers on every answer, errors included. The Content-Security-Policy matters for HTML
 * pages, the only answers a browser runs code from; it goes on every answer (set before the route
 * runs, so no answer can miss it), where it also keeps a JSON answer opened as a page inert.
 */
export function securityHeaders() {
  return new Elysia({ name: 'security-headers' }).onRequest(({ request, set }) => {
    Object.assign(set.headers, ALWAYS);
    set.headers['content-security-policy'] = cspFor(pathOf(request.url));
  });
}
