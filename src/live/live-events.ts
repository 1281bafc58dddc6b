import { setMaxListeners } from "node:events";
import Redis from "ioredis";
import type { Logger } from "pino";
import type { MilestoneView } from "../milestones/milestone.view";

/** A milestone as live subscribers receive it: the same view REST shows (plain JSON, so it crosses Redis unchanged). */
export type LiveMilestone = MilestoneView;

export interface LiveEvents {
  /** "up"/"down" with REDIS_URL (down: fanning out within this instance only), else "not used". */
  redisStatus(): "up" | "down" | "not used";
  /**
   * Listens for milestone batches; returns the function that stops listening. The listener runs
   * synchronously on publish, so a subscriber controls its own buffering (and can detect that it lags).
   */
  listen(listener: (events: LiveMilestone[]) => void): () => void;
  /**
   * Called when Redis is reachable again after an outage: what was published meanwhile did not come
   * (subscribers resync from the database). Returns the function that stops listening.
   */
  onReconnect(listener: () => void): () => void;
  /** Publishes stored milestones; never throws (live fan-out must not fail an ingestion). */
  publish(events: LiveMilestone[]): void;
  close(): Promise<void>;
}

/**
 * The fan-out of live events: inside this process by default; with REDIS_URL, through Redis pub/sub
 * so an event published on one instance reaches subscribers on every instance. Redis keeps nothing:
 * what must not be lost goes through the database first (catch-up reads the history).
 *
 * When Redis is unreachable the fan-out degrades to this process (its subscribers still get this
 * instance's events) and resumes across instances when Redis is back. Publishing never queues
 * while Redis is down: a message queued then and sent after recovery would reach local subscribers
 * twice, once directly and once as Redis's echo.
 */
export function createLiveEvents({ redisUrl, log }: { redisUrl: string | undefined; log: Logger }): LiveEvents {
  const local = new EventTarget();
  // One listener per live subscription: thousands are expected, not a leak.
  setMaxListeners(0, local);
  const dispatch = (events: LiveMilestone[]) =>
    void local.dispatchEvent(new CustomEvent("milestones", { detail: events }));
  const reconnectListeners = new Set<() => void>();
  const base = {
    listen(listener: (events: LiveMilestone[]) => void) {
      // EventTarget reports a throwing listener as an uncaught exception, which would end the
      // process: one subscriber's failure is logged here instead.
      const handler = (event: Event) => {
        try {
          listener((event as CustomEvent<LiveMilestone[]>).detail);
        } catch (error) {
          log.warn({ err: error }, "a live listener failed");
        }
      };
      local.addEventListener("milestones", handler);
      return () => local.removeEventListener("milestones", handler);
    },
    onReconnect(listener: () => void) {
      reconnectListeners.add(listener);
      return () => void reconnectListeners.delete(listener);
    },
  };
  if (!redisUrl) return { ...base, redisStatus: () => "not used", publish: dispatch, close: async () => {} };

  const publisher = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
  let degraded = false;
  const noteHealth = (healthy: boolean) => {
    if (healthy === !degraded) return;
    degraded = !healthy;
    if (degraded) log.warn("redis unavailable: live events fan out within this instance only until it is back");
    else {
      log.info("redis reachable again: live events fan out across instances");
      for (const listener of reconnectListeners) listener();
    }
  };
  for (const client of [publisher, subscriber]) {
    client.on("error", (error: Error) => log.debug({ err: error }, "redis connection error"));
    client.on("close", () => noteHealth(false));
    client.on("ready", () => noteHealth(publisher.status === "ready" && subscriber.status === "ready"));
  }
  void subscriber
    .subscribe(REDIS_CHANNEL)
    .catch((error: unknown) => log.warn({ err: error }, "redis subscribe failed; retried on reconnect"));
  subscriber.on("message", (_channel: string, message: string) => {
    try {
      dispatch(JSON.parse(message) as LiveMilestone[]);
    } catch (error) {
      log.warn({ err: error }, "dropped a malformed live message from redis");
    }
  });
  return {
    ...base,
    redisStatus: () => (publisher.status === "ready" && subscriber.status === "ready" ? "up" : "down"),
    publish(events) {
      // Our own subscriber hears what we publish; only when it does not (it is disconnected) are
      // local subscribers served directly.
      const echoed = subscriber.status === "ready";
      if (!echoed) dispatch(events);
      if (publisher.status !== "ready") {
        noteHealth(false);
        return;
      }
      publisher.publish(REDIS_CHANNEL, JSON.stringify(events)).catch((error: unknown) => {
        log.warn(
          { err: error, events: events.length },
          "publishing live milestones to redis failed; served within this instance",
        );
        if (echoed) dispatch(events);
      });
    },
    async close() {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

const REDIS_CHANNEL = "cgw:milestones";
