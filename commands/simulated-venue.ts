// Deposits out of thin air and prices set by hand exist only on the simulated venue.
import { refuse } from '../domain/shared/errors.ts';
import type { Config } from '../infra/config.ts';

/** Refuses VENUE_NOT_SIMULATED unless the deployment trades on the simulated venue. */
export function requireSimulatedVenue(config: Pick<Config, 'VENUE'>, what: string): void {
  if (config.VENUE !== 'simulated') {
    throw refuse('VENUE_NOT_SIMULATED', `${what} exists only on the simulated venue; this deployment uses VENUE=${config.VENUE}`);
  }
}
