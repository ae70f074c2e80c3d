import type { Projector } from './projector.ts';
import { usersProjector } from './users/projector.ts';
import { agentsProjector } from './agents/projector.ts';
import { reviewsProjector } from './reviews/projector.ts';
import { subscriptionsProjector } from './subscriptions/projector.ts';
import { transfersProjector } from './transfers/projector.ts';
import { walletsProjector } from './wallets/projector.ts';
import { marketPricesProjector } from './market/projector.ts';
import { tradesProjector } from './trades/projector.ts';
import { signalsProjector } from './signals/projector.ts';
import { agentFiguresProjector } from './agent-figures/projector.ts';
import { apiKeysProjector } from './apikeys/projector.ts';
import { webhooksProjector } from './webhooks/projector.ts';

// Every read model; the runner feeds each one, `npm run projections:rebuild` rebuilds them.
export const allProjectors: Projector[] = [
  usersProjector,
  agentsProjector,
  reviewsProjector,
  subscriptionsProjector,
  transfersProjector,
  walletsProjector,
  marketPricesProjector,
  tradesProjector,
  signalsProjector,
  agentFiguresProjector,
  apiKeysProjector,
  webhooksProjector,
];
