import t from 'tap';
import { closeEach } from '../../infra/close-each.ts';

t.test('every part is closed in order even when earlier ones fail; the failures are named together', async (t) => {
  const closed: string[] = [];
  const part = (name: string, fail?: string) =>
    [
      name,
      () => {
        closed.push(name);
        if (fail) throw new Error(fail);
      },
    ] as const;
  await t.resolves(closeEach([part('a'), part('b')]), 'nothing failed: nothing thrown');
  closed.length = 0;
  await t.rejects(closeEach([part('a'), part('b', 'boom'), part('c')]), { message: 'closing b failed: boom' });
  t.same(closed, ['a', 'b', 'c'], 'c is closed after b failed');
  const both = await closeEach([part('a', 'one'), part('b', 'two')]).catch((e: unknown) => e);
  t.ok(both instanceof AggregateError);
  t.equal((both as AggregateError).message, 'closing a failed: one; closing b failed: two');
  t.equal(((both as AggregateError).errors[0] as Error).cause instanceof Error, true, 'the original is kept as the cause');
});
