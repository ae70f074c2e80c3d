// A BullMQ worker or queue emits 'error' when its Redis connection fails; with no listener Node
// throws the event and the process dies. Each part the workers role runs reports it in the log and
// goes on: the event is emitted on every part of a real running app (as ioredis would on a failure),
// and the app still answers and still delivers a job afterwards.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

t.test("every BullMQ worker and queue logs its 'error' event, and the workers go on", async (t) => {
  const app = await startTestApp({ captureLogs: true });
  t.teardown(() => app.close());
  const parts = app.runtime.workers!.parts;
  t.ok(parts.length >= 7, `the mail, recovery, reconciliation and signal workers and their queues (${parts.length})`);
  // Node's EventEmitter.emit, as ioredis's failure reaches it (BullMQ's typed emit is a union of two signatures).
  for (const part of parts) EventEmitter.prototype.emit.call(part, 'error', new Error(`redis went away under ${part.name}`));
  for (const part of parts) {
    t.ok(
      app.logs.some((line) => line.includes('"msg":"queue error"') && line.includes(`redis went away under ${part.name}`)),
      `${part.name}: the error is logged`,
    );
  }
  // The mail worker still delivers: a sign-in mails its code through the outbox.
  const user = await signIn(app, 'queue-errors@example.test');
  t.equal((await api(app, 'GET', '/api/v1/users/me', { token: user.accessToken })).status, 200, 'the app goes on');
});
