import t from 'tap';
import { DomainError } from '../../../domain/shared/errors.ts';
import { assertStorable, findUnstorableText, NUL_PROBLEM, SURROGATE_PROBLEM, textProblem } from '../../../domain/shared/storable-text.ts';

t.test('text UTF-8 can encode passes, surrogate pairs included', async (t) => {
  for (const text of ['', 'plain', 'Café', '😀', '👩🏽‍💻', '\uD83D\uDE00 and \uD835\uDC00', '\uFFFD', '\u0001'])
    t.equal(textProblem(text), undefined, JSON.stringify(text));
});

t.test('the NUL character and every unpaired surrogate are refused', async (t) => {
  t.equal(textProblem('a\u0000b'), NUL_PROBLEM);
  for (const text of ['\uD800', 'a\uDBFFb', '\uDC00', 'x\uDFFF', '\uDE00\uD83D', '😀\uD83D', '😀\uD800']) {
    t.equal(textProblem(text), SURROGATE_PROBLEM, JSON.stringify(text));
  }
});

t.test('the first unstorable string or key of a JSON value is found with its path', async (t) => {
  t.equal(findUnstorableText({ a: [1, 'ok', { b: null }], c: true }), undefined);
  t.same(findUnstorableText({ a: { b: ['ok', 'x\uD800'] } }), { path: ['a', 'b', 1], problem: SURROGATE_PROBLEM });
  t.same(findUnstorableText({ a: { 'k\u0000': 1 } }), { path: ['a', 'k\u0000'], problem: NUL_PROBLEM });
  t.same(findUnstorableText('\uDC00'), { path: [], problem: SURROGATE_PROBLEM });
});

t.test('assertStorable refuses MALFORMED_REQUEST naming the field', async (t) => {
  const refused = (() => {
    try {
      assertStorable({ signalExecutionDefaults: { stopLossMode: '\uD800' } });
    } catch (err) {
      return err;
    }
  })();
  t.ok(refused instanceof DomainError);
  t.match(refused, {
    reason: 'MALFORMED_REQUEST',
    details: { field: 'signalExecutionDefaults.stopLossMode' },
    message: /^signalExecutionDefaults\.stopLossMode: text must not contain an unpaired/,
  });
  t.doesNotThrow(() => assertStorable({ ok: ['😀'] }));
});
