import { z } from 'zod';

export const roles = ['user', 'developer', 'admin'] as const;
export const roleSchema = z.enum(roles);
export type Role = z.infer<typeof roleSchema>;

/** Optional fields a new user gives with POST /api/auth/lookup. */
export const signupFieldsSchema = z.object({
  receiveMarketingOffers: z.boolean().optional(),
  agreedToTerms: z.boolean().optional(),
  promoCode: z.string().optional(),
  referralCode: z.string().optional(),
  referrerUsername: z.string().optional(),
  referrerUserId: z.string().optional(),
});
export type SignupFields = z.infer<typeof signupFieldsSchema>;

export const userRegistered = z.object({
  type: z.literal('UserRegistered'),
  data: z.object({
    userId: z.string(),
    email: z.string(),
    username: z.string(),
    role: roleSchema,
    tier: z.string(),
    virtualWalletMode: z.boolean(),
    languageCode: z.string(),
    registeredAt: z.string(),
    signup: signupFieldsSchema,
  }),
});

export const userProfileUpdated = z.object({
  type: z.literal('UserProfileUpdated'),
  data: z.object({
    userId: z.string(),
    avatarFilename: z.string().optional(),
    languageCode: z.string().optional(),
    virtualWalletMode: z.boolean().optional(),
    updatedAt: z.string(),
  }),
});

export const usernameChanged = z.object({
  type: z.literal('UsernameChanged'),
  data: z.object({ userId: z.string(), username: z.string(), previousUsername: z.string(), changedAt: z.string() }),
});

export const roleGranted = z.object({
  type: z.literal('RoleGranted'),
  data: z.object({
    userId: z.string(),
    role: roleSchema,
    previousRole: roleSchema,
    /** why: `admin_grant` (the CLI) or `agent_listed` */
    reason: z.string(),
    grantedAt: z.string(),
  }),
});

/** The rate-limit tiers (requests a minute: free 60, standard 300, premium 1000 by default). */
export const tiers = ['free', 'standard', 'premium'] as const;
export const tierSchema = z.enum(tiers);
export type Tier = z.infer<typeof tierSchema>;

/** An administrator (the event's actor) set the user's rate-limit tier. */
export const tierChanged = z.object({
  type: z.literal('TierChanged'),
  data: z.object({ userId: z.string(), tier: tierSchema, previousTier: z.string(), changedAt: z.string() }),
});

export const sessionStarted = z.object({
  type: z.literal('SessionStarted'),
  data: z.object({
    userId: z.string(),
    sessionId: z.string(),
    /** sha256 hex of the refresh token; the token itself is never stored */
    refreshTokenHash: z.string(),
    userAgent: z.string(),
    userAgentHash: z.string(),
    startedAt: z.string(),
    expiresAt: z.string(),
    /** the TOTP time step whose code completed this sign-in, when the user has MFA on (a later code must be newer) */
    mfaTimeStep: z.number().int().nonnegative().optional(),
  }),
});

/** A refresh token got a new access token. Its fields are the session's token and term after the refresh (unchanged since refreshes keep the token; a new token and term when recorded by the former rotation). */
export const sessionRefreshed = z.object({
  type: z.literal('SessionRefreshed'),
  data: z.object({
    userId: z.string(),
    sessionId: z.string(),
    refreshTokenHash: z.string(),
    refreshedAt: z.string(),
    expiresAt: z.string(),
  }),
});

/** `refresh_token_reused`: recorded by the former rotation's reuse detection only; no longer decided. */
export const sessionEndReasons = ['signed_out', 'refresh_token_reused', 'ended_by_admin'] as const;

export const sessionEnded = z.object({
  type: z.literal('SessionEnded'),
  data: z.object({
    userId: z.string(),
    sessionId: z.string(),
    reason: z.enum(sessionEndReasons),
    endedAt: z.string(),
  }),
});

/** The social identity providers a user can sign in with (one so far). */
export const socialProviders = ['GOOGLE'] as const;
export const socialProviderSchema = z.enum(socialProviders);
export type SocialProvider = z.infer<typeof socialProviderSchema>;

/** A provider account (its `sub`) signed this user in; a later link of another account replaces it. */
export const socialAccountLinked = z.object({
  type: z.literal('SocialAccountLinked'),
  data: z.object({
    userId: z.string(),
    provider: socialProviderSchema,
    /** the provider's stable subject identifier (`sub`) */
    subject: z.string(),
    /** the verified email the provider gave */
    email: z.string(),
    linkedAt: z.string(),
  }),
});

export const mfaEnabled = z.object({
  type: z.literal('MfaEnabled'),
  data: z.object({
    userId: z.string(),
    method: z.literal('TOTP'),
    /** the TOTP secret sealed with AES-256-GCM (infra/secrets.ts, purpose `mfa-totp-secret`); never in the clear */
    sealedSecret: z.string(),
    /** the time step of the confirming code */
    timeStep: z.number().int().nonnegative(),
    enabledAt: z.string(),
  }),
});

export const mfaDisabled = z.object({
  type: z.literal('MfaDisabled'),
  data: z.object({
    userId: z.string(),
    /** the time step of the code that allowed it */
    timeStep: z.number().int().nonnegative(),
    disabledAt: z.string(),
  }),
});

/**
 * A set of one-time recovery codes, replacing any earlier set (MFA turned on, or the user asked for
 * new codes with a current TOTP code). Only keyed digests are kept (HMAC-SHA256 of the code bound to
 * the user, HKDF purpose `mfa-recovery-code`: infra/recovery-codes.ts), never the codes.
 */
export const mfaRecoveryCodesIssued = z.object({
  type: z.literal('MfaRecoveryCodesIssued'),
  data: z.object({
    userId: z.string(),
    codeDigests: z.array(z.string()),
    /** the time step of the TOTP code that allowed it (the confirming code when MFA was turned on) */
    timeStep: z.number().int().nonnegative(),
    issuedAt: z.string(),
  }),
});

/** A recovery code (at `index` of the current set) completed the sign-in of `sessionId`: it is spent. */
export const mfaRecoveryCodeUsed = z.object({
  type: z.literal('MfaRecoveryCodeUsed'),
  data: z.object({ userId: z.string(), index: z.number().int().nonnegative(), sessionId: z.string(), usedAt: z.string() }),
});

/** An administrator (`by`, also the event's actor) turned the user's MFA off: the user lost the authenticator. */
export const mfaReset = z.object({
  type: z.literal('MfaReset'),
  data: z.object({ userId: z.string(), by: z.string(), resetAt: z.string() }),
});

/** The user picked a followable agent as guide; a later pick replaces it. */
export const guideAgentChosen = z.object({
  type: z.literal('GuideAgentChosen'),
  data: z.object({ userId: z.string(), guideAgentId: z.string(), chosenAt: z.string() }),
});

/** The user's interests, replaced as a whole: trimmed, 1–40 characters each, distinct ignoring case. */
export const interestsReplaced = z.object({
  type: z.literal('InterestsReplaced'),
  data: z.object({ userId: z.string(), interests: z.array(z.string()), replacedAt: z.string() }),
});

/** Pinned agents keep the order they were pinned in. */
export const agentPinned = z.object({
  type: z.literal('AgentPinned'),
  data: z.object({ userId: z.string(), agentId: z.string(), pinnedAt: z.string() }),
});

export const agentUnpinned = z.object({
  type: z.literal('AgentUnpinned'),
  data: z.object({ userId: z.string(), agentId: z.string(), unpinnedAt: z.string() }),
});

export const userEvent = z.discriminatedUnion('type', [
  userRegistered,
  userProfileUpdated,
  usernameChanged,
  roleGranted,
  tierChanged,
  sessionStarted,
  sessionRefreshed,
  sessionEnded,
  socialAccountLinked,
  mfaEnabled,
  mfaDisabled,
  mfaRecoveryCodesIssued,
  mfaRecoveryCodeUsed,
  mfaReset,
  guideAgentChosen,
  interestsReplaced,
  agentPinned,
  agentUnpinned,
]);
export type UserEvent = z.infer<typeof userEvent>;
export type UserEventType = UserEvent['type'];
export const userEventTypes: readonly UserEventType[] = userEvent.options.map((o) => o.shape.type.value);

/** Events of a `username-{lowercased}` reservation stream. */
export const usernameReserved = z.object({
  type: z.literal('UsernameReserved'),
  data: z.object({ username: z.string(), userId: z.string(), reservedAt: z.string() }),
});
export const usernameReleased = z.object({
  type: z.literal('UsernameReleased'),
  data: z.object({ username: z.string(), userId: z.string(), releasedAt: z.string() }),
});
export const usernameEvent = z.discriminatedUnion('type', [usernameReserved, usernameReleased]);
export type UsernameEvent = z.infer<typeof usernameEvent>;
