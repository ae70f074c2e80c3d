// One ISO 8601 date-time check for every instant a caller names (a statement's `at` and `from`, an
// export's `from` and `to`, the ledger's `at`), on HTTP and on the command line alike.
import { z } from 'zod';

/** An ISO 8601 date-time with its offset (`Z` or `±hh:mm`), named in the refusal. */
export const isoDateTime = (name: string) => z.iso.datetime({ offset: true, message: `${name} must be an ISO 8601 date-time, e.g. 2025-02-01T10:00:00Z` });

/** Whether `value` is such a date-time (the command lines' check, the same as the routes'). */
export const isIsoDateTime = (value: string): boolean => isoDateTime('value').safeParse(value).success;
