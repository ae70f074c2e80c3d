import { z } from 'zod';
import { visibleName } from '../shared/text.ts';

// What a username, language and avatar may look like; the routes validate with these too.
export const usernameSchema = z.string().regex(/^[A-Za-z0-9_]{3,30}$/, 'must be 3 to 30 letters, digits or underscores');
export const languageCodeSchema = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language code such as en or pt-BR');
export const avatarFilenameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, 'must be a file name without a path');

const MAX_INTERESTS = 20;
const interestCount = `interests must hold 1 to ${MAX_INTERESTS} items`;

/** The first spelling of each interest, ignoring case (`Solana` and `SOLANA` are one). */
function distinctIgnoringCase(items: string[]): string[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What the user's interests may be: 1–20 items of 1–40 characters (trimmed), kept distinct ignoring case. */
export const interestsSchema = z
  .array(visibleName('interest', { min: 1, max: 40 }), { message: 'interests must be an array of strings' })
  .min(1, interestCount)
  .max(MAX_INTERESTS, interestCount)
  .transform(distinctIgnoringCase);

/** The case-insensitive key of a username: its reservation stream and its uniqueness. */
export const usernameKey = (username: string) => username.toLowerCase();
export const usernameStream = (username: string) => `username-${usernameKey(username)}`;
export const userStream = (userId: string) => `user-${userId}`;

const USER_STREAM_PREFIX = userStream('');

/** The user a stream of a user's own events belongs to, or null for any other stream. */
export const userIdOfStream = (streamName: string): string | null =>
  streamName.startsWith(USER_STREAM_PREFIX) ? streamName.slice(USER_STREAM_PREFIX.length) : null;

/** Emails are compared trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
