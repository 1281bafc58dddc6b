import { randomUUID } from "node:crypto";
import type { SharedLimitStore } from "../http/shared-limits";

/** The open websockets one API key may hold: on this instance, or with Redis across all of them. */
export interface ConnectionCap {
  readonly max: number;
  /**
   * Takes a slot for one more socket of `keyId`: its `release` (call it when the socket closes; a
   * second call does nothing), or, at the cap, how many sockets the key holds.
   */
  acquire(keyId: string): Promise<{ release: () => void } | { refused: { open: number } }>;
  /** Stops renewing this instance's leases (they run out within the lease time). */
  close(): void;
}

/**
 * Takes a slot in Redis when the key holds fewer than ARGV[1] live ones: [1, count] or [0, count].
 * A slot is a sorted-set member whose score is when its lease runs out (Redis's clock, so instances'
 * clocks do not matter); lapsed ones are dropped first, so a dead instance's slots free themselves.
 */
const ACQUIRE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local open = redis.call('ZCARD', KEYS[1])
if open >= tonumber(ARGV[1]) then return {0, open} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, open + 1}
`;

/** Renews (or, after Redis lost them, puts back) this instance's slots ARGV[2…] of one key for ARGV[1] ms. */
const RENEW_SCRIPT = `
local time = redis.call('TIME')
local until_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], until_ms, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1
`;

interface SlotCommands {
  cgwAcquireSocketSlot(key: string, max: number, leaseMs: number, slot: string): Promise<[number, number]>;
  cgwRenewSocketSlots(key: string, leaseMs: number, ...slots: string[]): Promise<number>;
}

type Redis = SharedLimitStore["redis"];

/** The connection with the two scripts defined on it (ioredis runs them by their digest, sending the text only when Redis lacks it). */
function withSlotCommands(redis: Redis): Redis & SlotCommands {
  if (!("cgwAcquireSocketSlot" in redis)) {
    redis.defineCommand("cgwAcquireSocketSlot", { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    redis.defineCommand("cgwRenewSocketSlots", { numberOfKeys: 1, lua: RENEW_SCRIPT });
  }
  return redis as Redis & SlotCommands;
}

const slotsKey = (keyId: string) => `cgw:limits:websockets:${keyId}`;

/**
 * The per-key websocket cap. This instance always counts its own sockets and refuses past `max`
 * without asking anyone. With `shared`, a socket also needs a slot in Redis, where every instance's
 * sockets of the key count: each slot is leased for `leaseMs` and renewed every third of it while the
 * socket is open, and removed when it closes, so a slot outlives its socket only when the removal
 * failed or its instance died, and then by at most `leaseMs`. While Redis is unavailable the
 * instance's own count decides (counted as a fallback); the sockets admitted meanwhile get their
 * slots at the first renewal after Redis is back, which can put a key over its cap until some close.
 */
export function createConnectionCap({
  max,
  shared,
}: {
  max: number;
  shared?: { store: SharedLimitStore; leaseMs: number };
}): ConnectionCap {
  /** This instance's open slots by key. */
  const slots = new Map<string, Set<string>>();
  /** Slots Redis has not answered for yet: a renewal must not put them there ahead of their own check. */
  const pending = new Set<string>();
  const instance = randomUUID();
  let seq = 0;

  const commands = shared ? withSlotCommands(shared.store.redis) : undefined;

  const forget = (keyId: string, slot: string) => {
    const mine = slots.get(keyId);
    if (!mine?.delete(slot)) return false;
    if (mine.size === 0) slots.delete(keyId);
    return true;
  };

  let renewing = false;
  const renew = () => {
    if (!shared || !commands || renewing || !shared.store.shared()) return;
    renewing = true;
    void Promise.all(
      [...slots].flatMap(([keyId, mine]) => {
        const settled = [...mine].filter((slot) => !pending.has(slot));
        return settled.length === 0 ? [] : [commands.cgwRenewSocketSlots(slotsKey(keyId), shared.leaseMs, ...settled)];
      }),
    )
      .catch((error: unknown) => shared.store.failed(error))
      .finally(() => (renewing = false));
  };
  const renewer = shared ? setInterval(renew, Math.max(1, Math.floor(shared.leaseMs / 3))) : undefined;
  renewer?.unref();
  // Back from an outage: the sockets admitted meanwhile (and, after a Redis restart, all) count again at once.
  const stopListening = shared?.store.onShared(renew);

  return {
    max,
    async acquire(keyId) {
      const mine = slots.get(keyId) ?? new Set<string>();
      if (mine.size >= max) return { refused: { open: mine.size } };
      // Held here before Redis is asked: sockets connecting at once on this instance see each other.
      const slot = `${instance}:${++seq}`;
      mine.add(slot);
      slots.set(keyId, mine);
      const release = () => {
        if (!forget(keyId, slot) || !commands) return;
        // Unanswered (Redis down), the slot lapses with its lease.
        commands.zrem(slotsKey(keyId), slot).catch(() => {});
      };
      if (shared && commands) {
        if (!shared.store.shared()) shared.store.fellBack("websockets");
        else {
          pending.add(slot);
          try {
            const [taken, open] = await commands.cgwAcquireSocketSlot(slotsKey(keyId), max, shared.leaseMs, slot);
            if (taken !== 1) {
              forget(keyId, slot);
              return { refused: { open } };
            }
          } catch (error) {
            shared.store.fellBack("websockets", error); // admitted by this instance's count alone
          } finally {
            pending.delete(slot);
          }
        }
      }
      return { release };
    },
    close() {
      clearInterval(renewer);
      stopListening?.();
    },
  };
}
