// The parse of an event kept for the read models (domain/shared/parse-once.ts): parsed once per data
// object, schema and type, and, in the tests (test/support/test-process.ts), frozen all the way down,
// so a read model that changes what the others read fails its test.
import t from 'tap';
import { z } from 'zod';
import { parseEvent } from '../../../domain/shared/parse-once.ts';

const schema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('Moved'), data: z.object({ to: z.object({ x: z.number() }), path: z.array(z.number()) }) }),
  z.object({ type: z.literal('Named'), data: z.object({ name: z.string() }) }),
]);

t.test('one parse per data object, schema and type', async (t) => {
  const data = { to: { x: 1 }, path: [1, 2] };
  const first = parseEvent(schema, 'Moved', data);
  t.equal(parseEvent(schema, 'Moved', data), first, 'the same object again');
  t.not(parseEvent(schema, 'Moved', { to: { x: 1 }, path: [1, 2] }), first, 'another data object: parsed again');
  t.throws(() => parseEvent(schema, 'Named', data), 'another type: parsed again (and refused here)');
});

t.test('in the tests, the kept parse is frozen all the way down: a change throws', async (t) => {
  const event = parseEvent(schema, 'Moved', { to: { x: 1 }, path: [1, 2] });
  if (event.type !== 'Moved') throw new Error('parsed as another type');
  t.throws(() => {
    event.data.to.x = 2;
  }, TypeError);
  t.throws(() => event.data.path.push(3), TypeError);
  t.throws(() => {
    (event as { type: string }).type = 'Named';
  }, TypeError);
  t.same(event, { type: 'Moved', data: { to: { x: 1 }, path: [1, 2] } }, 'unchanged');
});
