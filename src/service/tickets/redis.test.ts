import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '../../../test/service/helpers.js';
import { runTicketStoreSuite } from './conformance.js';
import { RedisTicketStore } from './redis.js';

const LOCK_MS = 10_000;

/** A connection as the service opens one (no offline queue: a Redis that is away fails fast). */
async function connect(): Promise<Redis> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  await redis.connect();
  return redis;
}

runTicketStoreSuite({
  name: 'Redis',
  newStore: async () => {
    // Every case under its own key prefix, removed afterwards.
    const prefix = `${uniqueName('ltc')}:`;
    const opened: Array<{ redis: Redis; store: RedisTicketStore }> = [];
    const open = async () => {
      const redis = await connect();
      const store = new RedisTicketStore(redis, prefix, { lockMs: LOCK_MS });
      await store.start();
      opened.push({ redis, store });
      return store;
    };
    const store = await open();
    const admin = opened[0]!.redis;
    const keys = () => admin.keys(`${prefix}*`);
    return {
      store,
      another: open,
      lockMs: LOCK_MS,
      // Time passing for Redis: every key with a time-to-live under the prefix loses `ms` of it.
      elapse: async (ms) => {
        for (const key of await keys()) {
          const left = await admin.pttl(key);
          if (left < 0) continue;
          if (left <= ms) await admin.del(key);
          else await admin.pexpire(key, left - ms);
        }
      },
      dispose: async () => {
        const left = await keys();
        if (left.length > 0) await admin.del(...left);
        for (const { redis, store } of opened) {
          await store.close();
          redis.disconnect();
        }
      },
    };
  },
  runs: 50,
});
