// The one executor of the transfer steps that are one aggregate's decision (their descriptions are
// the legs', domain/transfer/legs/): decide the step's command on the aggregate instance it names,
// or only read its state (and decide the command it calls for, if any), then read the transfer's
// outcome from that state. A refusal of a
// refusable command (a source saying no) is the debit refused. Idempotent by the transfer id: the
// aggregate records a transfer once, and a repeat reads what it recorded.
import { DomainError } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import type { AggregateStep } from '../../domain/transfer/legs/index.ts';
import type { TransferOutcome, TransferStep } from '../../domain/transfer/steps.ts';
import type { Tools } from '../tools.ts';

export async function runAggregateStep(spec: AggregateStep, data: TransferStep['data'], tools: Tools): Promise<TransferOutcome> {
  const step = spec as AggregateStep<never>;
  const id = step.id(data as never);
  let command: ReturnType<NonNullable<typeof step.command>> | null = null;
  if (step.command) command = step.command(data as never, { virtualStartMicro: usdToMicro(tools.deps.config.VIRTUAL_START_USD) });
  else {
    const { state } = await tools.load(step.aggregate, id);
    command = step.commandOn?.(state, data as never) ?? null;
    if (!command) return step.outcomeFor(state, data as never);
  }
  try {
    const { state } = await tools.execute(step.aggregate, id, command);
    return step.outcomeFor(state, data as never);
  } catch (err) {
    if (step.refusable && err instanceof DomainError) return { type: 'DebitRefused', error: err };
    throw err;
  }
}
