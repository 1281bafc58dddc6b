import type { WebSocket } from "ws";

/** Every socket is pinged this often; one that has not answered the previous ping is dropped. */
export const KEEP_ALIVE_MS = 12_000;

/** One timer pinging every watched socket, however many there are. */
export interface KeepAlive {
  /** Pings `socket` from the next tick until it closes. */
  watch(socket: WebSocket): void;
  /** Sockets watched: open, or terminated and not yet closed. */
  readonly size: number;
  stop(): void;
}

export function startKeepAlive(intervalMs = KEEP_ALIVE_MS): KeepAlive {
  /** Per socket: whether it answered since the last ping. */
  const answered = new Map<WebSocket, boolean>();
  const timer = setInterval(() => {
    for (const [socket, alive] of answered) {
      if (!alive) {
        socket.terminate();
        continue;
      }
      answered.set(socket, false);
      socket.ping();
    }
  }, intervalMs);
  timer.unref();
  return {
    watch(socket) {
      answered.set(socket, true);
      socket.on("pong", () => {
        if (answered.has(socket)) answered.set(socket, true);
      });
      socket.once("close", () => answered.delete(socket));
    },
    get size() {
      return answered.size;
    },
    stop: () => clearInterval(timer),
  };
}
