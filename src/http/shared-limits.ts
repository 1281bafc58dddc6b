import Redis from "ioredis";
import type { Logger } from "pino";
import { disconnectRedis } from "../redis";

/** The limits that can be shared, as named in the fallback counter's `limit` label. */
export const LIMIT_NAMES = ["requests", "auth_failures", "anonymous", "websockets"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/**
 * Where the limits shared across instances are counted (the per-key request rate, the per-address
 * failed-authentication budget, the per-key websocket cap), and whether they can be right now.
 */
export interface SharedLimitStore {
  /** The connection limits are counted on: its commands fail at once while it is down and within the timeout otherwise, never queue. */
  readonly redis: Redis;
  /** True while limits are counted in Redis; false while each instance decides alone (Redis down, slow or not yet reached). */
  shared(): boolean;
  /**
   * A limit was decided by this instance alone, with Redis unavailable or failing (`error`). Counted;
   * an error also ends sharing until Redis answers again, so later decisions do not wait for it.
   */
  fellBack(limit: LimitName, error?: unknown): void;
  /** A command that decides nothing (a renewal) failed: sharing ends until Redis answers again, nothing is counted. */
  failed(error: unknown): void;
  /** Decisions each limit made alone since the start. */
  fallbacks(): Readonly<Record<LimitName, number>>;
  /** Calls `listener` each time limits are shared again after they were not; returns the function that stops it. */
  onShared(listener: () => void): () => void;
  close(): Promise<void>;
}

/** While limits are not shared, Redis is pinged this often (when connected) to find out that it answers again. */
const PROBE_MS = 1_000;

/**
 * Opens the Redis connection for limits shared across instances. It never queues a command: while
 * Redis is down a limit is decided at once by the instance's own limiter, and a command that gets no
 * answer within `timeoutMs` fails, so a request never waits longer than that for Redis. One failure
 * switches every limit to this instance's own until a ping succeeds again (a line is logged at each
 * switch), so a slow Redis costs at most one timeout per request in flight when it stalls.
 */
export function openSharedLimitStore({
  redisUrl,
  timeoutMs,
  log,
}: {
  redisUrl: string;
  timeoutMs: number;
  log: Logger;
}): SharedLimitStore {
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1_000),
  });
  let state: "starting" | "shared" | "local" = "starting";
  let closed = false;
  const counts: Record<LimitName, number> = { requests: 0, auth_failures: 0, anonymous: 0, websockets: 0 };
  const sharedListeners = new Set<() => void>();

  const toLocal = (error?: unknown) => {
    if (state === "local" || closed) return;
    state = "local";
    log.warn(
      error === undefined ? {} : { err: error },
      "redis unavailable for limits: rate limits, failed-authentication budgets and websocket caps apply per instance until it is back",
    );
  };
  const toShared = () => {
    if (state === "shared" || closed) return;
    const recovered = state === "local";
    state = "shared";
    log.info(
      recovered
        ? "redis reachable again: limits are shared across instances"
        : "limits are shared across instances through redis",
    );
    for (const listener of sharedListeners) {
      try {
        listener();
      } catch (error) {
        log.warn({ err: error }, "a listener for shared limits failed");
      }
    }
  };
  let probing = false;
  const probe = () => {
    if (probing || closed || state === "shared" || redis.status !== "ready") return;
    probing = true;
    redis
      .ping()
      .then(toShared, toLocal)
      .finally(() => (probing = false));
  };
  redis.on("ready", probe);
  redis.on("close", () => toLocal());
  redis.on("error", (error: Error) => {
    log.debug({ err: error }, "redis connection for limits: error");
    if (redis.status !== "ready") toLocal(error);
  });
  const prober = setInterval(probe, PROBE_MS);
  prober.unref();

  return {
    redis,
    shared: () => state === "shared",
    fellBack(limit, error) {
      counts[limit]++;
      if (error !== undefined) toLocal(error);
    },
    failed: toLocal,
    fallbacks: () => ({ ...counts }),
    onShared(listener) {
      sharedListeners.add(listener);
      return () => void sharedListeners.delete(listener);
    },
    async close() {
      closed = true;
      clearInterval(prober);
      await disconnectRedis(redis);
    },
  };
}
