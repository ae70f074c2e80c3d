// The precompiled serializer of hot routes (api/plugins/serializer.ts): the same bytes as zod's
// encoding for the user document (unknown fields left out, nulls, text needing escapes), and under
// test an answer whose bytes would differ from zod's is refused rather than sent.
import t from 'tap';
import { z } from 'zod';
import { envelopeOf } from '../../../api/envelope.ts';
import { precompiled, responseSerializer } from '../../../api/plugins/serializer.ts';
import { userDocument } from '../../../projections/users/queries.ts';

const compile = (schema: z.ZodType, checked: boolean) =>
  responseSerializer(checked)({ schema, method: 'GET', url: '/test', httpStatus: '200' } as never) as (data: unknown) => string;

const doc = {
  id: 'u1',
  email: 'quote"back\\slash\u2028line@example.com',
  username: 'ünïcode',
  role: 'user',
  tier: 'free',
  virtualWalletMode: true,
  languageCode: 'en',
  avatarFilename: null,
  receiveMarketingOffers: null,
  agreedToTerms: true,
  mfaEnabled: false,
  mfaRecoveryCodesLeft: 0,
  guideAgentId: null,
  interests: ['defi', 'memes'],
  pinnedAgentIds: [],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

t.test('a precompiled user document: the bytes zod writes, unknown fields left out', async (t) => {
  const schema = precompiled(envelopeOf(userDocument));
  const answer = { success: true, data: { ...doc, passwordHash: 'never sent' } };
  const zodBytes = compile(envelopeOf(userDocument), false)(answer);
  t.equal(compile(schema, false)(answer), zodBytes);
  t.equal(compile(schema, true)(answer), zodBytes);
  t.notMatch(zodBytes, /never sent/);
  t.same(JSON.parse(zodBytes), { success: true, data: doc });
});

t.test('checked (tests): an answer the precompiled serializer would write otherwise than zod is refused', async (t) => {
  const schema = precompiled(envelopeOf(userDocument));
  const wrong = { success: true, data: { ...doc, mfaRecoveryCodesLeft: '3' } };
  t.throws(() => compile(schema, true)(wrong));
  t.throws(() => compile(envelopeOf(userDocument), false)(wrong), 'zod itself refuses it');
});

t.test('a schema not marked is encoded by zod', async (t) => {
  const schema = z.object({ n: z.number() });
  t.throws(() => compile(schema, false)({ n: 'x' }));
});
