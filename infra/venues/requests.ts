// Checks shared by the simulated adapters: the request shapes a real venue would also refuse, and
// the comparison that tells a repeated request from a conflicting reuse of its id.
import { createHash } from 'node:crypto';
import { VenueRefusedError } from './errors.ts';
import type { MicroUsd } from './port.ts';

export function checkAmount(name: string, value: MicroUsd): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new VenueRefusedError('INVALID_REQUEST', `${name} must be a positive safe integer of micro-USD`, { [name]: value });
  }
}

export function checkId(name: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new VenueRefusedError('INVALID_REQUEST', `${name} must be a non-empty string`);
  }
}

/** Fields of `first` that `again` gives differently: the reasons of a VenueConflictError. */
export function differences<K extends string>(first: Record<K, unknown>, again: Record<K, unknown>, keys: readonly K[]): K[] {
  return keys.filter((key) => first[key] !== again[key]);
}

/** A transaction hash derived from the caller's id: the same transfer always shows the same hash. */
export function simulatedHash(kind: string, id: string): string {
  return `0x${createHash('sha256').update(`${kind}:${id}`).digest('hex')}`;
}
