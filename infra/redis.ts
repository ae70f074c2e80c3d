import { Redis } from 'ioredis';

export function createRedis(url: string, keyPrefix?: string): Redis {
  // BullMQ needs maxRetriesPerRequest null on the connections it is given.
  return new Redis(url, { keyPrefix, maxRetriesPerRequest: null, lazyConnect: false });
}
