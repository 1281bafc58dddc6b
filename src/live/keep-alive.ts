import type { WebSocket } from "ws";

/** One timer pinging every watched socket, however many there are. */
export interface KeepAlive {
  /** Pings `socket` from the next tick until it closes. */
  watch(socket: WebSocket): void;
  /** Sockets watched: open, or terminated and not yet closed. */
  readonly size: number;
  stop(): void;
}

/** Every socket is pinged each `intervalMs` (LIVE_KEEP_ALIVE_MS); one that has not answered the previous ping is dropped. */
export function startKeepAlive(intervalMs: number): KeepAlive {
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
  // One pair of listeners for every socket (`this` is the socket): a socket holds no closures of its own.
  function onPong(this: WebSocket): void {
    if (answered.has(this)) answered.set(this, true);
  }
  function onClose(this: WebSocket): void {
    answered.delete(this);
  }
  return {
    watch(socket) {
      answered.set(socket, true);
      socket.on("pong", onPong);
      socket.on("close", onClose);
    },
    get size() {
      return answered.size;
    },
    stop: () => clearInterval(timer),
  };
}
