// OAuth tests' tools: a real headless Chromium (Debian's, driven by playwright-core) for the consent
// page, a real OAuth client (openid-client) for everything a client does, a free port so the
// test app can be given its public address (the issuer) before it starts, and an https host on
// 127.0.0.1 serving client ID metadata documents (its certificate made by openssl for the test).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { codeOf, resetLookupThrottle } from './auth.ts';
import { chromiumPath } from './prerequisites.ts';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
}

/** An OAuth test's parts: the app at a public address known before it starts (the issuer), Chromium, and the client's callback. */
export interface OAuthTestBed {
  app: TestApp;
  /** the issuer, PUBLIC_BASE_URL */
  base: string;
  browser: Browser;
  callback: ClientCallback;
}

/**
 * Starts the app on a free port with that address as its issuer, Chromium and the client's callback
 * server; all closed when `t` ends. When a part fails to start (Chromium missing, say), the parts
 * already started are closed before the error is thrown: left open, they would keep the test
 * process alive until tap's time-out.
 */
export async function startOAuthTestBed(t: Test, options: TestAppOptions = {}): Promise<OAuthTestBed> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await startTestApp({ ...options, config: { ...options.config, PORT: String(port), PUBLIC_BASE_URL: base } });
  let browser: Browser | undefined;
  let callback: ClientCallback;
  try {
    browser = await launchChromium();
    callback = await startClientCallback();
  } catch (err) {
    await browser?.close();
    await app.close();
    throw err;
  }
  t.teardown(async () => {
    await browser.close();
    await callback.close();
    await app.close();
  });
  return { app, base, browser, callback };
}

/** The client's side of the redirect: a real HTTP server whose callback paths record what arrives. */
export interface ClientCallback {
  /** the redirect_uri every test client registers first */
  url: string;
  /** a second redirect_uri registered by the same clients */
  other: string;
  received: URL[];
  close(): Promise<void>;
}

export async function startClientCallback(): Promise<ClientCallback> {
  const received: URL[] = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname === '/callback' || url.pathname === '/other-callback') received.push(url);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('client callback');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/callback`,
    other: `${base}/other-callback`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser profile of its own (its own cookies). */
export async function browserProfile(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  return { context, page: await context.newPage() };
}

/** Registers a public client (RFC 7591) after discovering the server (RFC 8414), as a connector would. */
export function registerClient(app: Pick<TestApp, 'url'>, callback: ClientCallback, metadata: Partial<client.ClientMetadata> = {}) {
  return client.dynamicClientRegistration(
    new URL(app.url),
    { client_name: 'Test connector', redirect_uris: [callback.url, callback.other], token_endpoint_auth_method: 'none', ...metadata },
    client.None(),
    { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
  );
}

export interface AuthorizationAttempt {
  url: URL;
  state: string;
  verifier: string;
}

/** An authorization request with a fresh PKCE pair and state. */
export async function authorizationRequest(config: client.Configuration, params: Record<string, string> = {}): Promise<AuthorizationAttempt> {
  const [redirectUri] = config.clientMetadata().redirect_uris as string[];
  const verifier = client.randomPKCECodeVerifier();
  const state = params.state ?? client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri!,
    scope: 'profile:read',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
    state,
  });
  return { url, state, verifier };
}

/** Signs in on the consent page with the emailed code (the page must show the email step); the email's one-code-per-30-s throttle is reset first, as signIn does. */
export async function signInOnConsentPage(app: Pick<TestApp, 'waitForMail' | 'deps'>, page: Page, email: string): Promise<void> {
  await resetLookupThrottle(app, email);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page
    .getByLabel('Code')
    .waitFor({ timeout: 10_000 })
    .catch(async (err) => {
      throw new Error(`no code step: the page shows ${await page.textContent('body')}`, { cause: err });
    });
  const mail = await app.waitForMail(email);
  await page.getByLabel('Code').fill(codeOf(mail));
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Waits until the browser reached the client's callback, and returns that URL. */
export async function callbackReached(callback: ClientCallback, page: Page): Promise<URL> {
  await page.waitForURL((url) => url.href.startsWith(callback.url) || url.href.startsWith(callback.other), { timeout: 10_000 }).catch(() => undefined);
  const url = callback.received.shift();
  if (!url) throw new Error(`the browser did not reach the client's callback; it shows ${page.url()}`);
  return url;
}

/** An https host on 127.0.0.1: what each path answers, and the requests that reached it. */
export interface ClientMetadataHost {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** its self-signed certificate, for the fetch that trusts it */
  ca: string;
  /** `METHOD path accept` of every request that reached it */
  requests: string[];
  /** what a path answers: a JSON document, or a handler; other paths answer 404 */
  serve(path: string, answer: object | ((req: IncomingMessage, res: ServerResponse) => void)): void;
  close(): Promise<void>;
}

let certificate: { key: string; cert: string } | undefined;

/**
 * A certificate for 127.0.0.1 and localhost valid a day, made by openssl (the README's walk-through needs it too);
 * one per test process, so a host started again on the same port is trusted by the same authority.
 */
function loopbackCertificate(): { key: string; cert: string } {
  certificate ??= newLoopbackCertificate();
  return certificate;
}

function newLoopbackCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cimd-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `port`: 0 for any free one; a given port, to start a receiver again where a test's agent already points. */
export async function startClientMetadataHost(port = 0): Promise<ClientMetadataHost> {
  const { key, cert } = loopbackCertificate();
  const answers = new Map<string, object | ((req: IncomingMessage, res: ServerResponse) => void)>();
  const requests: string[] = [];
  const server = createHttpsServer({ key, cert }, (req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.accept}`);
    const answer = answers.get(req.url ?? '');
    if (typeof answer === 'function') return answer(req, res);
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: cert,
    requests,
    serve: (path, answer) => void answers.set(path, answer),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
