// The ids port: every random id, token and code the service makes comes from here (the CSPRNG),
// so commands stay deterministic under a test's own Ids.
import { randomBytes, randomInt, randomUUID } from 'node:crypto';

export interface Ids {
  /** a random UUID (event ids, agent ids, session ids, review ids) */
  uuid(): string;
  /** `bytes` random bytes, base64url (secrets, refresh tokens) */
  token(bytes: number): string;
  /** `length` decimal digits, uniform (login codes) */
  digits(length: number): string;
}

export const randomIds: Ids = {
  uuid: randomUUID,
  token: (bytes) => randomBytes(bytes).toString('base64url'),
  digits: (length) =>
    randomInt(0, 10 ** length)
      .toString()
      .padStart(length, '0'),
};
