// The consent page's HTML: server-rendered, no script at all, one style element allowed by a
// per-response nonce, and a Content-Security-Policy that lets forms post only to this page and to
// the client's redirect_uri (Chromium checks form-action on the redirects that follow a post).
import { randomBytes } from 'node:crypto';

export interface Page {
  html: string;
  csp: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe inside HTML content and attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  main { max-width: 28rem; margin: 4rem auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input[type=email], input[type=text] { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #c4c8d0; border-radius: 6px; }
  button { margin-top: 1.2rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: 6px; border: 1px solid #2b59c3; background: #2b59c3; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #2b59c3; }
  .actions { display: flex; gap: .8rem; }
  ul.scopes { padding-left: 1.2rem; } ul.scopes li { margin: .4rem 0; } code { font-size: .9em; }
  .error { background: #fdecea; color: #8a1c12; padding: .6rem .8rem; border-radius: 6px; }
  .muted { color: #5b6272; font-size: .9rem; }
`;

/** reCAPTCHA v2's widget: its script and frames, as Google documents them for a CSP. */
const CAPTCHA_SCRIPT = 'https://www.google.com/recaptcha/api.js';
const CAPTCHA_SOURCES = {
  script: ['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/'],
  frame: ['https://www.google.com/recaptcha/', 'https://recaptcha.google.com/recaptcha/'],
};

export interface PageOptions {
  /** sources a form may post to besides this origin (the client's redirect_uri, the portal), as CSP source expressions */
  formTargets?: readonly string[];
  /** the captcha widget's site key: the page loads its script (the only script it ever has) */
  captchaSiteKey?: string;
}

export function renderPage(title: string, body: string, options: PageOptions = {}): Page {
  const nonce = randomBytes(16).toString('base64');
  const captcha = options.captchaSiteKey !== undefined;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style>${captcha ? `<script nonce="${nonce}" src="${CAPTCHA_SCRIPT}" async defer></script>` : ''}</head>
<body><main>${body}</main></body></html>`;
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    captcha ? `script-src 'nonce-${nonce}' ${CAPTCHA_SOURCES.script.join(' ')}` : "script-src 'none'",
    ...(captcha ? [`frame-src ${CAPTCHA_SOURCES.frame.join(' ')}`] : []),
    "img-src 'self'",
    `form-action 'self'${(options.formTargets ?? []).map((t) => ` ${t}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return { html, csp };
}

/** The captcha widget inside a form (its answer is posted as `g-recaptcha-response`). */
export const captchaWidget = (siteKey: string | undefined): string =>
  siteKey === undefined ? '' : `<div class="g-recaptcha" data-sitekey="${escapeHtml(siteKey)}"></div>`;

export const errorPage = (title: string, message: string): Page =>
  renderPage(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(message)}</p><p class="muted">Go back to the application and start again.</p>`,
  );

const UNSAFE_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:']);

/** A CSP source for a URL a form may end up at: its origin, or its scheme for a native app's redirect. */
export function formTargetOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.origin;
  return /^[a-z][a-z0-9+.-]*:$/i.test(parsed.protocol) && !UNSAFE_SCHEMES.has(parsed.protocol.toLowerCase()) ? parsed.protocol : null;
}
