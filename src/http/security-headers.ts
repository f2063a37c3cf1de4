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
 * The API reference page (`/docs`): Scalar, served from this origin with the console's files
 * (src/console), adds its styles at run time, so inline styles are allowed there; scripts,
 * fonts, images and calls stay on this origin.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** What every answer carries but the reference page's (its policy differs). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { ...ALWAYS, 'content-security-policy': PAGE_CSP };

/** The API reference page and its files. */
function isDocs(path: string): boolean {
  return path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);
}

/**
 * Security headers on every answer, errors included. The Content-Security-Policy matters for HTML
 * pages, the only answers a browser runs code from; it goes on every answer (set before the route
 * runs, so no answer can miss it), where it also keeps a JSON answer opened as a page inert.
 */
export function securityHeaders() {
  // Default headers of the app: Elysia puts them in each answer's headers as it starts them, far
  // cheaper than setting them per request; only the reference page changes its policy.
  return new Elysia({ name: 'security-headers' })
    .headers(SECURITY_HEADERS)
    .onRequest(({ request, set }) => {
      if (isDocs(pathOf(request.url))) set.headers['content-security-policy'] = DOCS_CSP;
    });
}
