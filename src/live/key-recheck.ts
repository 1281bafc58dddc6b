import type { Logger } from "pino";
import { groupBy } from "../domain/group-by";

/** What a key's connection may do: a verdict at connect, and again on every re-check. */
export type KeyVerdict = { ok: true; keyId: string } | { ok: false; code: number; reason: string };

export interface KeyRecheck {
  /** Looks up each distinct connected key once; while a round runs, another call joins it instead of starting one. */
  round(): Promise<void>;
  stop(): void;
}

/**
 * Revoked keys close their sockets: every `intervalMs` a round looks up the key of every connected
 * socket; a tick is skipped while the previous round still runs, so a revocation reaches its sockets
 * within about two periods plus the lookup. Only a definite refusal closes sockets; a failed lookup
 * (database down) keeps them.
 */
export function startKeyRecheck<Socket>(options: {
  intervalMs: number;
  /** Every socket that holds a key, with its key. */
  connected: () => Iterable<readonly [Socket, string]>;
  /** MUST NOT charge the key's rate limit. */
  recheck: (keyId: string) => Promise<"valid" | KeyVerdict>;
  close: (socket: Socket, code: number, reason: string) => void;
  log: Pick<Logger, "debug">;
}): KeyRecheck {
  const { intervalMs, connected, recheck, close, log } = options;
  let running: Promise<void> | undefined;

  async function recheckKey(keyId: string, sockets: ReadonlyArray<readonly [Socket, string]>): Promise<void> {
    try {
      const verdict = await recheck(keyId);
      if (verdict !== "valid" && !verdict.ok)
        for (const [socket] of sockets) close(socket, verdict.code, verdict.reason);
    } catch (error) {
      log.debug({ err: error }, "re-checking a websocket key failed; its sockets stay open");
    }
  }

  function round(): Promise<void> {
    running ??= Promise.all(
      [...groupBy(connected(), ([, keyId]) => keyId)].map(([keyId, sockets]) => recheckKey(keyId, sockets)),
    ).then(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => void round(), intervalMs);
  timer.unref();
  return { round, stop: () => clearInterval(timer) };
}
