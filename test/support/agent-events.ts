// An agent's listing and approval as its stream records them, for tests that start from a listed
// agent without going through the routes (the deciders' tests, the in-memory worlds).
import type { AgentEvent, AgentListed } from '../../domain/agent/index.ts';

/** A spot agent's listing data (without its time): no minimums, 10 % success fee; `overrides` win. */
export function agentListing(overrides: Partial<AgentListed> = {}): Omit<AgentListed, 'listedAt'> {
  return {
    agentId: 'a1',
    developerId: 'dev1',
    name: 'Momentum',
    tags: [],
    monthlyPriceMicroUsd: 0,
    successFeePercent: 10,
    connectedChannels: [],
    membershipGated: false,
    venue: 'SPOT_VENUE',
    minAllocationMicroUsd: 0,
    minTradeMicroUsd: 0,
    minPerTradePercent: 0,
    recommendedPerTradePercent: 10,
    maxConcurrentPositions: 10,
    maxEntriesPerTrade: 3,
    signingSecretCiphertext: 'v1.x.y.z',
    ...overrides,
  };
}

/** A beta agent's stream: listed, then approved, both at `at` (ISO). */
export const betaAgentEvents = (at: string, overrides: Partial<AgentListed> = {}): AgentEvent[] => [
  { type: 'AgentListed', data: { ...agentListing(overrides), listedAt: at } },
  { type: 'AgentApproved', data: { review: { id: 'r1', status: 'approve', reviewedAt: at, notes: '' }, betaStartDate: at } },
];
