// The subscriptions area's handlers, one per command of subscriptions/commands.ts.
import type { Handlers } from '../tools.ts';
import type { SubscriptionCommands } from './commands.ts';
import { followAgent } from './follow.ts';
import { addAllocation, recordPoolFact, stopFollowing, withdrawAllocation } from './ledger.ts';
import { releaseOrphanSeat } from './release-orphan-seat.ts';

export const subscriptionsHandlers: Handlers<SubscriptionCommands> = {
  FollowAgent: followAgent,
  ReleaseOrphanSeat: releaseOrphanSeat,
  AddAllocation: addAllocation,
  WithdrawAllocation: withdrawAllocation,
  StopFollowing: stopFollowing,
  RecordPoolFact: recordPoolFact,
};
