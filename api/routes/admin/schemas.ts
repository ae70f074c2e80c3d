// The admin routes' query schemas that are not another folder's.
import { exportRangeQuery, fromBeforeTo } from '../subscriptions/schemas.ts';

/** The admin exports' format and time range, as the caller's ledger export takes them. */
export const adminExportQuery = fromBeforeTo(exportRangeQuery);
