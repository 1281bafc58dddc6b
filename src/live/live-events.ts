import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { createPubSub } from "@graphql-yoga/subscription";
import { setMaxListeners } from "node:events";
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

/**
 * The topic table of the live pubsub. Milestones are published as the batch one ingestion stored:
 * one message per call, not per event (each subscriber's queue holds at most 1,024 messages).
 */
export type LiveTopics = {
  milestones: [LiveMilestone[]];
};

export interface LiveEvents {
  readonly kind: "in-process" | "redis";
  /** Matching events one subscription may have waiting to be sent before it is cut off as a slow consumer. */
  readonly maxQueuedEvents: number;
  /**
   * Listens for milestone batches; returns the function that stops listening. The listener runs
   * synchronously on publish, so a subscriber controls its own buffering (and can detect that it lags).
   */
  listen(listener: (events: LiveMilestone[]) => void): () => void;
  /** Publishes stored milestones; never throws (live fan-out must not fail an ingestion). */
  publish(events: LiveMilestone[]): void;
  close(): Promise<void>;
}

/**
 * The fan-out of live events: inside this process by default; with REDIS_URL, through Redis pub/sub
 * so an event published on one instance reaches subscribers on every instance. Redis keeps nothing:
 * what must not be lost goes through the database first (catch-up reads the history).
 */
export function createLiveEvents({ redisUrl, log, maxQueuedEvents }: { redisUrl: string | undefined; log: Logger; maxQueuedEvents: number }): LiveEvents {
  const over = (target: EventTarget, kind: LiveEvents["kind"], close: () => Promise<void>): LiveEvents => {
    const pubSub = createPubSub<LiveTopics>({ eventTarget: target as never });
    return {
      kind,
      maxQueuedEvents,
      publish(events) {
        try {
          pubSub.publish("milestones", events);
        } catch (error) {
          log.warn({ err: error, events: events.length }, "publishing live milestones failed; subscribers can catch up from the history");
        }
      },
      listen(listener) {
        const handler = (event: Event) => listener((event as CustomEvent<LiveMilestone[]>).detail);
        target.addEventListener("milestones", handler);
        return () => target.removeEventListener("milestones", handler);
      },
      close,
    };
  };
  if (!redisUrl) {
    const target = new EventTarget();
    // One listener per live subscription: thousands are expected, not a leak.
    setMaxListeners(0, target);
    return over(target, "in-process", async () => {});
  }
  const options = { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true };
  const publishClient = new Redis(redisUrl, options);
  const subscribeClient = new Redis(redisUrl, options);
  for (const client of [publishClient, subscribeClient]) client.on("error", (error: Error) => log.warn({ err: error }, "redis connection error"));
  const eventTarget = createRedisEventTarget<CustomEvent>({ publishClient, subscribeClient });
  if (eventTarget instanceof EventTarget) setMaxListeners(0, eventTarget);
  return over(eventTarget as unknown as EventTarget, "redis", async () => {
    publishClient.disconnect();
    subscribeClient.disconnect();
  });
}
