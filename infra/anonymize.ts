// The id a developer sees for a follower: a keyed hash of agent and user, stable for that agent, not
// linkable across agents, never the user id (docs/domain-rules.md, Developer dashboard). The subscribers
// dashboard, the signal inbox and the webhook's answer all show this one id.
import { createHmac } from 'node:crypto';
import { deriveKey } from './secrets.ts';

/** Purpose of the key that anonymizes follower ids (infra/secrets.ts deriveKey). */
export const ANONYMIZED_SUBSCRIBER_ID = 'anonymized-subscriber-id';

const ID_LENGTH = 22;

// HKDF once per master secret (one in a process; tests may use several).
const keys = new Map<string, Buffer>();
function keyOf(masterSecret: string): Buffer {
  let key = keys.get(masterSecret);
  if (!key) {
    key = deriveKey(masterSecret, ANONYMIZED_SUBSCRIBER_ID);
    keys.set(masterSecret, key);
  }
  return key;
}

/** base64url of HMAC-SHA256(key derived from `masterSecret` (config.JWT_SECRET), `agentId:userId`), 22 characters. */
export function anonymizedSubscriberId(masterSecret: string, agentId: string, userId: string): string {
  return createHmac('sha256', keyOf(masterSecret)).update(`${agentId}:${userId}`).digest('base64url').slice(0, ID_LENGTH);
}
