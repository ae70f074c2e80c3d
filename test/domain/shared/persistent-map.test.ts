import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { PersistentMap } from '../../../domain/shared/persistent-map.ts';

t.test('a set answers a new map and leaves the old one as it was', async (t) => {
  const empty = PersistentMap.empty<number>();
  const one = empty.set('a', 1);
  const two = one.set('b', 2);
  const replaced = two.set('a', 10);
  t.same([empty.size, one.size, two.size, replaced.size], [0, 1, 2, 2]);
  t.equal(one.get('b'), undefined, 'the older map does not see the newer key');
  t.equal(two.get('a'), 1, 'nor the newer value');
  t.equal(replaced.get('a'), 10);
  t.ok(replaced.has('b'));
  t.notOk(replaced.has('c'));
  t.same(
    new Map(replaced.entries()),
    new Map([
      ['a', 10],
      ['b', 2],
    ]),
  );
  t.same(
    [...replaced.values()].sort((a, b) => a - b),
    [2, 10],
  );
});

t.test('keys whose hashes share many leading bits, and keys that look like object members, are kept apart', async (t) => {
  // A map deep enough that branches split several levels down.
  let map = PersistentMap.empty<string>();
  const keys = Array.from({ length: 5000 }, (_, i) => `tr-${i}`).concat(['', 'constructor', '__proto__', 'toString', 'hasOwnProperty']);
  for (const key of keys) map = map.set(key, `v:${key}`);
  t.equal(map.size, keys.length);
  for (const key of keys) assert.equal(map.get(key), `v:${key}`);
  t.equal(map.get('tr-5000'), undefined);
  t.equal(new Set([...map.entries()].map(([k]) => k)).size, keys.length, 'every entry once');
});

t.test('keys with the same 32-bit hash share a leaf and keep their own values', async (t) => {
  // Known FNV-1a collisions.
  const map = PersistentMap.empty<number>().set('costarring', 1).set('liquid', 2).set('declinate', 3).set('macallums', 4);
  const updated = map.set('liquid', 20);
  t.same([map.get('costarring'), map.get('liquid'), map.get('declinate'), map.get('macallums')], [1, 2, 3, 4]);
  t.same([updated.get('costarring'), updated.get('liquid'), updated.size], [1, 20, 4]);
  t.equal(map.get('altarage'), undefined);
});

t.test('it behaves as a Map copied before each change, every version of it (random operations)', async (t) => {
  const key = fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom('a', 'b', 'constructor', '__proto__'));
  fc.assert(
    fc.property(fc.array(fc.tuple(key, fc.integer()), { maxLength: 200 }), (ops) => {
      const versions: Array<[PersistentMap<number>, Map<string, number>]> = [[PersistentMap.empty(), new Map()]];
      for (const [k, v] of ops) {
        const [map, model] = versions.at(-1)!;
        versions.push([map.set(k, v), new Map(model).set(k, v)]);
      }
      for (const [map, model] of versions) {
        assert.equal(map.size, model.size);
        assert.deepEqual(new Map(map.entries()), model);
        for (const [k] of ops) assert.equal(map.get(k), model.get(k));
      }
    }),
    { numRuns: 200 },
  );
  t.pass('200 random histories, every version checked');
});
