import { DomainError } from '../../domain/shared/errors.ts';

/** The DomainError a decision throws; any other outcome fails the test. */
export function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
}
