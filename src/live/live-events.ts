import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { createPubSub } from "@graphql-yoga/subscription";
import Redis from "ioredis";
import type { Logger } from "pino";

/** A milestone as live subscribers receive it: plain JSON, so it crosses Redis unchanged. */
export interface LiveMilestone {
  eventId: string;
  /** Decimal string of the event's sequence number (bigint). */
  sequence: string;
  awb: string;
  state: string;
  timestamp: string;
  toaTimestamp: string | null;
  receivedAt: string;
  station: string | null;
  flight: string | null;
}

/** The topic table of the live pubsub. */
export type LiveTopics = {
  milestone: [LiveMilestone];
  "key-revoked": [{ keyId: string }];
};

export interface LiveEvents {
  readonly pubSub: ReturnType<typeof createPubSub<LiveTopics>>;
  readonly kind: "in-process" | "redis";
  close(): Promise<void>;
}

/**
 * The fan-out of live events: inside this process by default; with REDIS_URL, through Redis pub/sub
 * so an event published on one instance reaches subscribers on every instance. Redis keeps nothing:
 * what must not be lost goes through the database first (catch-up reads the history).
 */
export function createLiveEvents({ redisUrl, log }: { redisUrl: string | undefined; log: Logger }): LiveEvents {
  if (!redisUrl) return { pubSub: createPubSub<LiveTopics>(), kind: "in-process", close: async () => {} };
  const options = { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true };
  const publishClient = new Redis(redisUrl, options);
  const subscribeClient = new Redis(redisUrl, options);
  for (const client of [publishClient, subscribeClient]) client.on("error", (error: Error) => log.warn({ err: error }, "redis connection error"));
  const eventTarget = createRedisEventTarget<CustomEvent>({ publishClient, subscribeClient });
  return {
    pubSub: createPubSub<LiveTopics>({ eventTarget: eventTarget as never }),
    kind: "redis",
    async close() {
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
}
