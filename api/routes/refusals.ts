// What each command a route dispatches can refuse, by the error catalogue's reasons
// (domain/shared/errors.ts): a route names its commands (`config.dispatches`) and the OpenAPI
// document lists their refusals on its operation (api/plugins/openapi.ts), beside the refusals
// every route, every protected route and every route with input can give. A command's entry is
// the refusals of its handler (commands/) and of the deciders it runs (domain/).
import type { CommandType } from '../../commands/command-map.ts';
import type { ErrorReason } from '../../domain/shared/errors.ts';

/** A move of money between a wallet and a pool (a transfer): the wallet's and the pool's guards. */
const walletToPool = ['WALLET_FROZEN', 'INSUFFICIENT_FUNDS', 'TRADE_IN_PROGRESS', 'ALLOCATION_PENDING', 'UNPROCESSABLE', 'VENUE_FAILED'] as const;
const mfaCheck = ['INVALID_MFA_CODE', 'MFA_CODE_REUSED', 'MFA_NOT_ENABLED', 'MFA_SECRET_UNREADABLE', 'ACCOUNT_LOCKED'] as const;
const manualTrade = ['USER_NOT_FOUND', 'WALLET_FROZEN', 'INSUFFICIENT_FUNDS', 'TRADE_IN_PROGRESS', 'NO_MARK_PRICE', 'SWAP_FAILED', 'INVALID_LEVELS'] as const;

export const commandRefusals = {
  Lookup: ['USERNAME_TAKEN', 'LOOKUP_THROTTLED', 'ACCOUNT_LOCKED', 'ADDRESS_LOCKED'],
  VerifyCode: ['INVALID_CODE', 'ACCOUNT_LOCKED', 'ADDRESS_LOCKED', 'USERNAME_TAKEN'],
  StartSocialLogin: ['SOCIAL_LOGIN_DISABLED', 'IDENTITY_PROVIDER_UNAVAILABLE'],
  VerifySocialLogin: ['SOCIAL_LOGIN_DISABLED', 'INVALID_STATE', 'SOCIAL_LOGIN_FAILED', 'SOCIAL_EMAIL_UNVERIFIED', 'IDENTITY_PROVIDER_UNAVAILABLE'],
  CompleteMfaSignIn: ['INVALID_MFA_TOKEN', 'INVALID_RECOVERY_CODE', ...mfaCheck],
  RefreshSession: ['INVALID_REFRESH_TOKEN'],
  SignOut: [],
  EnrolMfa: ['MFA_ALREADY_ENABLED', 'RECENT_SIGN_IN_REQUIRED', 'USER_NOT_FOUND'],
  ConfirmMfa: ['MFA_ENROLMENT_NOT_FOUND', 'MFA_ALREADY_ENABLED', 'INVALID_MFA_CODE', 'ACCOUNT_LOCKED'],
  DisableMfa: [...mfaCheck],
  ReplaceRecoveryCodes: [...mfaCheck],
  ResetMfa: ['USER_NOT_FOUND', 'MFA_NOT_ENABLED'],
  EndAllSessions: ['USER_NOT_FOUND'],
  UpdateProfile: ['USER_NOT_FOUND', 'USERNAME_TAKEN'],
  ChooseGuideAgent: ['USER_NOT_FOUND', 'AGENT_NOT_FOUND'],
  ReplaceInterests: ['USER_NOT_FOUND'],
  PinAgent: ['USER_NOT_FOUND', 'AGENT_NOT_FOUND', 'TOO_MANY_PINS'],
  UnpinAgent: ['USER_NOT_FOUND'],
  SetTier: ['USER_NOT_FOUND'],
  ListAgent: [],
  ReviewAgent: ['AGENT_NOT_FOUND', 'REVIEW_MOVE_NOT_ALLOWED'],
  UpdateAgent: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER'],
  SetWebhookDelivery: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'NO_WEBHOOK_URL'],
  DeleteAgent: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'AGENT_HAS_OPEN_TRADES', 'NO_MARK_PRICE'],
  FollowAgent: ['AGENT_NOT_FOUND', 'AGENT_NOT_FOLLOWABLE', 'BETA_FULL', 'BELOW_MIN_ALLOCATION', 'SUBSCRIPTION_NOT_FOUND', ...walletToPool],
  AddAllocation: ['SUBSCRIPTION_NOT_FOUND', ...walletToPool],
  WithdrawAllocation: ['SUBSCRIPTION_NOT_FOUND', 'EXCEEDS_WITHDRAWABLE', 'ALLOCATION_FUNDS_IN_USE', ...walletToPool],
  StopFollowing: ['SUBSCRIPTION_NOT_FOUND', 'ALLOCATION_FUNDS_IN_USE', ...walletToPool],
  ManualBuy: [...manualTrade],
  ManualSell: [...manualTrade, 'SELL_EXCEEDS_MANUAL_POSITION', 'LEVELS_NEED_ONE_LOT'],
  ManualWithdraw: ['USER_NOT_FOUND', 'WALLET_FROZEN', 'INSUFFICIENT_FUNDS', 'TRADE_IN_PROGRESS', 'VENUE_FAILED'],
  DepositWallet: ['USER_NOT_FOUND', 'VENUE_NOT_SIMULATED'],
  ClaimFees: ['AGENT_NOT_FOUND', 'NOT_AGENT_OWNER', 'EXCEEDS_CLAIMABLE'],
  FreezeWallet: ['USER_NOT_FOUND'],
  UnfreezeWallet: ['USER_NOT_FOUND'],
  SetMarketPrices: ['VENUE_NOT_SIMULATED'],
  ReceiveSignal: ['AGENT_NOT_FOUND', 'INVALID_SIGNATURE', 'INVALID_LEVELS'],
  ReplaySignal: ['AGENT_NOT_FOUND', 'SIGNAL_NOT_FOUND', 'SIGNAL_NOT_REPLAYABLE'],
  CloseUserTrade: ['TRADE_NOT_FOUND', 'TRADE_CLOSED', 'NO_MARK_PRICE'],
  CreateApiKey: ['KEY_TYPE_NOT_ALLOWED', 'API_KEY_LIMIT_REACHED'],
  RevokeApiKey: ['API_KEY_NOT_FOUND'],
} as const satisfies { [T in CommandType]?: readonly ErrorReason[] };

/** A command a route may name in `config.dispatches`: one whose refusals are listed above. */
export type RouteCommand = keyof typeof commandRefusals;

/** What every command can answer: contention on its streams (retry), beside its own refusals. */
export const EVERY_COMMAND: readonly ErrorReason[] = ['BUSY'];
