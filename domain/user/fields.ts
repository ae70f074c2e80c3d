import { z } from 'zod';

// What a username, language and avatar may look like; the routes validate with these too.
export const usernameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_]{3,30}$/, 'must be 3 to 30 letters, digits or underscores');
export const languageCodeSchema = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language code such as en or pt-BR');
export const avatarFilenameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, 'must be a file name without a path');

/** The case-insensitive key of a username: its reservation stream and its uniqueness. */
export const usernameKey = (username: string) => username.toLowerCase();
export const usernameStream = (username: string) => `username-${usernameKey(username)}`;
export const userStream = (userId: string) => `user-${userId}`;

/** Emails are compared trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
