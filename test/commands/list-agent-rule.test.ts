// Listing an agent vets its signal detection rule when it is saved: a rule that cannot
// be read as meant, or whose token pattern could backtrack without end, is a 400 naming the field.
import t from 'tap';
import { listAgentInput } from '../../commands/agents/commands.ts';

t.test('listing an agent refuses a rule that would not read as its developer means', async (t) => {
  const result = listAgentInput.safeParse({ name: 'Momentum', signalDetectionRule: { tokenPatterns: ['(\\w+)\\w*'] } });
  t.strictSame(
    result.error?.issues.map((i) => [i.path.join('.'), i.message]),
    [
      [
        'signalDetectionRule.tokenPatterns.0',
        'a token pattern must not put repeated parts that can match the same characters one after the other (catastrophic backtracking)',
      ],
    ],
  );
  t.equal(listAgentInput.safeParse({ name: 'Momentum', signalDetectionRule: { tokenPatterns: ['\\$([A-Z]{2,10})'] } }).success, true);
});
