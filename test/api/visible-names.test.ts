import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

// Names one user shows to others (an agent's name, tags, channel names) read as what they are.

/** An assertion label in ASCII: some of these characters would break the TAP output itself. */
const label = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

t.test('user-visible names', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const dev = await signIn(app, 'names-dev@example.test');
  const list = (body: Record<string, unknown>) =>
    api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: { name: 'Plain', venue: 'SPOT_VENUE', ...body } });

  await t.test('a name with no visible character is a 400', async (t) => {
    for (const name of ['\u200b', '\u200b\u200b', '\u3164', '\u2800', '\u0301', '\ufeff' /* trimmed away, like spaces */]) {
      const res = await list({ name });
      t.equal(res.status, 400, label(name));
      t.equal(res.body.error.code, 'BAD_REQUEST');
      t.match(
        res.body.error.message,
        /^name: name must (not contain invisible or control characters|contain a visible character|be 1 to 80 characters)/,
        res.body.error.message,
      );
    }
  });

  await t.test('a name with a direction override or another invisible character is a 400', async (t) => {
    for (const name of ['\u202eevil', 'Safe\u2066Bot\u2069', 'Admin\u200f', 'Zero\u200bWidth', 'Hangul\u3164Filler', 'Line\u2028Break', 'Tab\tName']) {
      const res = await list({ name });
      t.equal(res.status, 400, label(name));
      t.match(res.body.error.message, /^name: name must not contain/, res.body.error.message);
    }
    const bidi = await list({ name: '\u202eevil' });
    t.match(bidi.body.error.message, /change the text direction/);
  });

  await t.test('tags and connected channel names follow the same rule', async (t) => {
    const tag = await list({ tags: ['ok', '\u202egat'] });
    t.equal(tag.status, 400);
    t.match(tag.body.error.message, /^tags\.1: tag must not contain characters that change the text direction/);
    const channel = await list({ connectedChannels: [{ channelId: 'c1', channelName: '\u200b' }] });
    t.equal(channel.status, 400);
    t.match(channel.body.error.message, /^connectedChannels\.0\.channelName: channelName must/);
    const username = await list({ connectedChannels: [{ channelId: 'c1', channelUsername: 'alpha\u202e' }] });
    t.equal(username.status, 400);
    t.match(username.body.error.message, /^connectedChannels\.0\.channelUsername: channelUsername must not contain/);
  });

  await t.test('compatibility forms are stored NFKC-normalised', async (t) => {
    const res = await list({
      name: '\uff2d\uff4f\uff4d\uff45\uff4e\uff54\uff55\uff4d\u3000\ufb01nder',
      tags: ['\uff21\uff29'],
      connectedChannels: [{ channelId: 'c1', channelName: 'Ａｌｐｈａ', channelUsername: 'ａｌｐｈａ' }],
    });
    t.equal(res.status, 201, JSON.stringify(res.body));
    t.equal(res.body.data.name, 'Momentum finder', 'fullwidth letters, the ideographic space and the fi ligature folded');
    t.same(res.body.data.tags, ['AI']);
    t.match(res.body.data.connectedChannels[0], { channelName: 'Alpha', channelUsername: 'alpha' });
    const events = await app.deps.store.readStream(`agent-${res.body.data.id}`);
    t.equal((events[0]!.data as { name: string }).name, 'Momentum finder', 'the event holds the normalised name');
  });

  await t.test('ordinary names with emoji, accents and joiners still work', async (t) => {
    const names = [
      'Café Señor Über',
      'Rocket 🚀 Trader',
      '👨‍👩‍👧 Family fund',
      '❤️ Love trades',
      '🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scottish desk',
      'می‌خواهم',
      'क्षत्रिय',
      'מסחר ערבית عربي',
      '東京トレーダー',
    ];
    for (const name of names) {
      const res = await list({ name, tags: [name.slice(0, 40)] });
      t.equal(res.status, 201, `${label(name)} ${res.status === 201 ? '' : JSON.stringify(res.body.error)}`.trim());
      t.equal(res.body.data.name, name.normalize('NFKC'), label(name));
    }
  });
});
