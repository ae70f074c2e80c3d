// The current wallet context has one home (domain/wallet/context.ts): the user's choice, virtual
// until they register; a request's own context (or its walletMode alias) comes first.
import t from 'tap';
import { currentWalletContextOf, requestedWalletContext } from '../../../domain/wallet/context.ts';

t.test("the current context is the user's choice, virtual for a user not registered yet", async (t) => {
  t.equal(currentWalletContextOf({ status: 'registered', virtualWalletMode: false }), 'real');
  t.equal(currentWalletContextOf({ status: 'registered', virtualWalletMode: true }), 'virtual');
  t.equal(currentWalletContextOf({ status: 'unregistered' }), 'virtual');
  t.equal(currentWalletContextOf(null), 'virtual', 'no user row');
});

t.test('a request names its context by walletContext, else by the walletMode alias, else none', async (t) => {
  t.equal(requestedWalletContext({ walletContext: 'virtual', walletMode: 'REAL' }), 'virtual', 'walletContext first');
  t.equal(requestedWalletContext({ walletMode: 'REAL' }), 'real');
  t.equal(requestedWalletContext({ walletMode: 'VIRTUAL' }), 'virtual');
  t.equal(requestedWalletContext({}), undefined);
});
