// The consent page's HTML and its Content-Security-Policy (api/oauth/page.ts): text is escaped, no
// script runs unless the captcha widget is configured (then only its own, by nonce and source),
// styles by nonce only, and forms may end only here or at the client's redirect_uri.
import t from 'tap';
import { captchaWidget, escapeHtml, formTargetOf, renderPage } from '../../api/oauth/page.ts';

const directives = (csp: string) => new Map(csp.split('; ').map((d) => [d.split(' ')[0]!, d.split(' ').slice(1)] as const));

t.test('text is escaped for content and attributes', async (t) => {
  t.equal(escapeHtml(`<script>"x" & 'y'</script>`), '&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;');
  const page = renderPage('<b>title</b>', '<p>body</p>');
  t.match(page.html, '<title>&lt;b&gt;title&lt;/b&gt;</title>');
});

t.test('without a captcha: no script at all, a nonce for the one style element, a fresh nonce per page', async (t) => {
  const page = renderPage('Sign in', '<p>x</p>', { formTargets: ['http://client.example', 'com.example.app:'] });
  const csp = directives(page.csp);
  t.same(csp.get('default-src'), ["'none'"]);
  t.same(csp.get('script-src'), ["'none'"]);
  t.same(csp.get('frame-ancestors'), ["'none'"]);
  t.same(csp.get('base-uri'), ["'none'"]);
  t.same(csp.get('form-action'), ["'self'", 'http://client.example', 'com.example.app:']);
  const nonce = /'nonce-([^']+)'/.exec(csp.get('style-src')!.join(' '))![1]!;
  t.match(page.html, `<style nonce="${nonce}">`);
  t.notMatch(page.html, '<script');
  t.not(directives(renderPage('Sign in', '').csp).get('style-src')![0], `'nonce-${nonce}'`);
});

t.test("with a captcha site key: the widget's script by nonce and Google's sources, its frames", async (t) => {
  const page = renderPage('Sign in', captchaWidget('site-key_1'), { captchaSiteKey: 'site-key_1' });
  const csp = directives(page.csp);
  const nonce = /'nonce-([^']+)'/.exec(csp.get('script-src')!.join(' '))![1]!;
  t.same(csp.get('script-src'), [`'nonce-${nonce}'`, 'https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/']);
  t.same(csp.get('frame-src'), ['https://www.google.com/recaptcha/', 'https://recaptcha.google.com/recaptcha/']);
  t.match(page.html, `<script nonce="${nonce}" src="https://www.google.com/recaptcha/api.js" async defer></script>`);
  t.match(page.html, '<div class="g-recaptcha" data-sitekey="site-key_1"></div>');
  t.equal(captchaWidget(undefined), '');
});

t.test("a redirect_uri's form target: its origin, or a native app's scheme; nothing for junk", async (t) => {
  t.equal(formTargetOf('https://client.example:8443/cb?x=1'), 'https://client.example:8443');
  t.equal(formTargetOf('com.example.app:/oauth/cb'), 'com.example.app:');
  t.equal(formTargetOf('not a url'), null);
  t.equal(formTargetOf("javascript:alert('x')"), null, 'never a script or data scheme');
  t.equal(formTargetOf('data:text/html,x'), null);
});
