// The nested parts of a developer agent record (spec: "Developer agent record"). Shared by the
// events that carry them and by the API schemas that accept them, so they are written once.
import { z } from 'zod';
import { visibleName } from '../shared/text.ts';

export const venues = ['SPOT_VENUE', 'PERP_VENUE'] as const;
export const venueSchema = z.enum(venues);
export type Venue = z.infer<typeof venueSchema>;

export const betaStatuses = ['pending-review', 'beta', 'live', 'rejected'] as const;
export const betaStatusSchema = z.enum(betaStatuses);
export type BetaStatus = z.infer<typeof betaStatusSchema>;

export const reviewDecisions = ['approve', 'reject', 'promote'] as const;
export const reviewDecisionSchema = z.enum(reviewDecisions);
export type ReviewDecision = z.infer<typeof reviewDecisionSchema>;

export const channelSchema = z.object({
  channelId: z.string().max(200).optional(),
  channelUsername: z.string().max(200).optional(),
  channelName: z.string().max(200).optional(),
  channelIconUrl: z.url({ message: 'channelIconUrl must be a valid URL' }).optional(),
  memberCount: z.number().int().min(0).optional(),
  inviteUrl: z.url({ message: 'inviteUrl must be a valid URL' }).optional(),
  verifiedAt: z.iso.datetime({ message: 'verifiedAt must be an ISO date-time' }).optional(),
  linkedChatInput: z.string().max(500).optional(),
  lastVerificationError: z.string().max(1000).optional(),
  lastVerificationErrorCode: z.string().max(100).optional(),
});
export type Channel = z.infer<typeof channelSchema>;

/**
 * A channel as a developer sends it: its names are shown to the agent's readers, so they follow
 * the rule of visible names. Stored events and records keep `channelSchema`, which stays lenient
 * so that facts recorded before the rule still read.
 */
export const channelInputSchema = channelSchema.extend({
  channelUsername: visibleName('channelUsername', { min: 1, max: 200 }).optional(),
  channelName: visibleName('channelName', { min: 1, max: 200 }).optional(),
});

const keywords = z.array(z.string().min(1).max(100)).max(100).optional();

export const signalDetectionRuleSchema = z.object({
  buyKeywords: keywords,
  sellKeywords: keywords,
  longKeywords: keywords,
  shortKeywords: keywords,
  tpKeywords: keywords,
  slKeywords: keywords,
  leverageKeywords: keywords,
  tokenPatterns: keywords,
  cancelKeywords: keywords,
  breakevenKeywords: keywords,
  partialCloseKeywords: keywords,
  breakoutAboveKeywords: keywords,
  breakoutBelowKeywords: keywords,
  entryZoneKeywords: keywords,
  strategyPrefix: z.string().max(100).optional(),
});
export type SignalDetectionRule = z.infer<typeof signalDetectionRuleSchema>;

const percent = z.number().min(0).max(100);
const mode = z.string().min(1).max(50).optional();

export const signalExecutionDefaultsSchema = z.object({
  leverageMax: z.number().min(1).max(100).optional(),
  tradeSizeValue: z.number().min(0).optional(),
  stopLossMode: mode,
  stopLossValue: z.number().min(0).optional(),
  stopLossAboveEntry: z.boolean().optional(),
  takeProfitMode: mode,
  takeProfitValue: z.number().min(0).optional(),
  takeProfitTiers: z
    .array(z.object({ closePercent: percent, whenPositionPercent: z.number().min(0) }))
    .max(20)
    .optional(),
  signalOverridesDefaults: z.boolean().optional(),
  maxPositionMode: mode,
  maxPositionPct: percent.optional(),
  maxOpenPositions: z.number().int().min(0).optional(),
  maxDailyLossMode: mode,
  maxDailyLossPct: percent.optional(),
  cooldownSeconds: z.number().int().min(0).optional(),
  maxTradesPerDay: z.number().int().min(0).optional(),
  trailingStop: z.boolean().optional(),
  slippageMode: mode,
  slippageTolerance: percent.optional(),
  tokenWhitelist: z.array(z.string().min(1).max(100)).max(500).optional(),
  tokenBlacklist: z.array(z.string().min(1).max(100)).max(500).optional(),
});
export type SignalExecutionDefaults = z.infer<typeof signalExecutionDefaultsSchema>;

/** One administrator decision on an agent (spec: "Review item"). */
export const reviewRecordSchema = z.object({
  id: z.string(),
  status: reviewDecisionSchema,
  reviewedAt: z.string(),
  notes: z.string(),
  /** absent when the administrator gave no score: no score is not a score of 0 */
  safetyScore: z.number().int().min(0).max(100).optional(),
});
export type ReviewRecord = z.infer<typeof reviewRecordSchema>;
