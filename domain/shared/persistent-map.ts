// An immutable map from strings: each `set` answers a new map and leaves the old one as it was,
// sharing everything but one path with it. States that track ids for ever (a wallet's transfers
// and deposits) use it, so folding n events costs O(n log n), not the O(n²) of copying a record
// per event. A hash trie: 16-way branches on 4 bits of the key's 32-bit FNV-1a hash per level (at
// most 8 levels), leaves holding the keys of one full hash (collisions share a leaf).

const BITS = 4;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

interface Leaf<V> {
  readonly hash: number;
  readonly entries: ReadonlyArray<readonly [string, V]>;
}
type Branch<V> = ReadonlyArray<Node<V> | undefined>;
type Node<V> = Leaf<V> | Branch<V>;

const isBranch = <V>(node: Node<V>): node is Branch<V> => Array.isArray(node);
const slot = (hash: number, shift: number): number => (hash >>> shift) & MASK;

function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

function insert<V>(node: Node<V> | undefined, shift: number, hash: number, key: string, value: V): Node<V> {
  if (node === undefined) return { hash, entries: [[key, value]] };
  if (isBranch(node)) {
    const copy = node.slice();
    copy[slot(hash, shift)] = insert(node[slot(hash, shift)], shift + BITS, hash, key, value);
    return copy;
  }
  if (node.hash === hash) {
    const at = node.entries.findIndex(([k]) => k === key);
    const entries = node.entries.slice();
    entries.splice(at === -1 ? entries.length : at, at === -1 ? 0 : 1, [key, value]);
    return { hash, entries };
  }
  // Two hashes meet here: a branch tells them apart (deeper, while their next 4 bits agree).
  const branch = new Array<Node<V> | undefined>(WIDTH).fill(undefined);
  branch[slot(node.hash, shift)] = node;
  return insert(branch, shift, hash, key, value);
}

function* walk<V>(node: Node<V> | undefined): Generator<readonly [string, V]> {
  if (node === undefined) return;
  if (!isBranch(node)) return yield* node.entries;
  for (const child of node) yield* walk(child);
}

export class PersistentMap<V> {
  private static readonly EMPTY = new PersistentMap<never>(undefined, 0);

  /** The empty map (one shared instance). */
  static empty<V>(): PersistentMap<V> {
    return PersistentMap.EMPTY;
  }

  private constructor(
    private readonly root: Node<V> | undefined,
    readonly size: number,
  ) {}

  get(key: string): V | undefined {
    const hash = hashOf(key);
    let node = this.root;
    for (let shift = 0; node !== undefined; shift += BITS) {
      if (isBranch(node)) {
        node = node[slot(hash, shift)];
        continue;
      }
      if (node.hash !== hash) return undefined;
      return node.entries.find(([k]) => k === key)?.[1];
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** A new map with `key` set to `value` (values may not be undefined); this one is unchanged. */
  set(key: string, value: V): PersistentMap<V> {
    const size = this.has(key) ? this.size : this.size + 1;
    return new PersistentMap(insert(this.root, 0, hashOf(key), key, value), size);
  }

  /** Every entry, in no particular order. */
  entries(): IterableIterator<readonly [string, V]> {
    return walk(this.root);
  }

  *values(): IterableIterator<V> {
    for (const [, value] of walk(this.root)) yield value;
  }
}
