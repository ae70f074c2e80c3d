import { timingSafeEqual } from 'node:crypto';

/**
 * Equality of two hex digests in constant time, so a caller cannot learn a stored hash byte by
 * byte from response times. Pure (no I/O, clock or randomness), hence allowed in the domain.
 */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}
