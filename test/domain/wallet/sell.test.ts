import type { FastifyRequest } from 'fastify';
import { keyedMoveId } from '../../../api/plugins/idempotency.ts';
// What a manual sell means (domain/wallet/sell.ts): the spend stablecoin, named or left out, is a
// withdrawal to a chain address from the real context only; the transfer id is the move's or the key's.
import t from 'tap';
import { DomainError } from '../../../domain/shared/errors.ts';
import { ensureWithdrawable, manualTransferId, sellMeaning, withdrawalDestination } from '../../../domain/wallet/sell.ts';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

t.test('selling the spend stablecoin, named or left out, is a withdrawal; another mint sells lots', async (t) => {
  t.same(sellMeaning(undefined, USDC), { kind: 'withdraw', mint: USDC });
  t.same(sellMeaning(USDC, USDC), { kind: 'withdraw', mint: USDC });
  t.same(sellMeaning('SOL', USDC), { kind: 'sell', mint: 'SOL' });
});

t.test('a withdrawal needs a chain address and the real context', async (t) => {
  t.equal(withdrawalDestination(ADDRESS), ADDRESS);
  t.throws(() => withdrawalDestination(undefined), { reason: 'VALIDATION_FAILED', message: /destination/ });
  t.throws(() => withdrawalDestination('0xnot-base58'), DomainError);
  t.doesNotThrow(() => ensureWithdrawable('real'));
  t.throws(() => ensureWithdrawable('virtual'), { reason: 'VALIDATION_FAILED', message: /virtual money stays paper/ });
});

t.test("the transfer id is the move's, or stable per user and Idempotency-Key", async (t) => {
  t.equal(manualTransferId('m-1'), 'manual-m-1');
  const keyed = (userId: string, idempotencyKey: string | null) => keyedMoveId({ identity: { userId }, idempotencyKey } as unknown as FastifyRequest);
  const a = manualTransferId(keyed('u1', 'k')!);
  t.match(a, /^manual-[0-9a-f]{32}$/);
  t.equal(manualTransferId(keyed('u1', 'k')!), a, 'a repeat finds the same transfer');
  t.not(manualTransferId(keyed('u2', 'k')!), a, "another user's key is another transfer");
  t.equal(keyed('u1', null), undefined, 'without a key, no stable id: the move takes a fresh one');
});
