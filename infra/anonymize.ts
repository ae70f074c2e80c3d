// What an agent's developer sees of a follower: a keyed hash of agent and user, never the user id
// (user ids are an unkeyed digest of the email, so showing one would confirm a guessed address).
import { createHmac } from 'node:crypto';
import { ANONYMIZED_SUBSCRIBER, deriveKey } from './secrets.ts';

/**
 * HMAC-SHA256 of `agentId:userId` under a key derived from the master secret, base64url, 22
 * characters (132 bits): stable for one agent, different for each agent, so a developer with two
 * agents cannot link a follower across them, and nobody without the master secret can link it to a user.
 */
export function anonymizedSubscriberId(masterSecret: string, agentId: string, userId: string): string {
  return createHmac('sha256', deriveKey(masterSecret, ANONYMIZED_SUBSCRIBER))
    .update(`${agentId}:${userId}`, 'utf8')
    .digest('base64url')
    .slice(0, 22);
}
