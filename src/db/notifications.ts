import pg from "pg";
import type { Logger } from "pino";
import { listen } from "./sql/listen.sql";

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export interface NotificationListener {
  /** True while the LISTEN connection is up. */
  connected(): boolean;
  close(): Promise<void>;
}

/**
 * LISTENs on a PostgreSQL channel over a connection of its own (a pooled connection cannot hold a
 * LISTEN) and calls `onNotify` for each notification. The connection is re-opened with capped,
 * doubling waits when it drops, and `onNotify` is called once on every reconnect: notifications sent
 * while it was down are gone, so the listener must look for work itself then.
 */
export function listenForNotifications({
  url,
  channel,
  onNotify,
  log,
}: {
  url: string;
  channel: string;
  onNotify: () => void;
  log: Logger;
}): NotificationListener {
  let client: pg.Client | undefined;
  let closed = false;
  let up = false;
  let wait = RECONNECT_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const reconnectLater = () => {
    up = false;
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, wait);
    wait = Math.min(RECONNECT_MAX_MS, wait * 2);
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    client = next;
    next.on("error", (error) => log.debug({ err: error }, "notification connection error"));
    next.on("end", () => {
      if (client === next) reconnectLater();
    });
    next.on("notification", () => onNotify());
    try {
      await next.connect();
      await next.query(listen(channel).text);
      if (closed) return void (await next.end().catch(() => {}));
      up = true;
      wait = RECONNECT_MIN_MS;
      onNotify();
    } catch (error) {
      log.debug({ err: error }, "could not LISTEN; retrying");
      await next.end().catch(() => {});
      if (client === next) reconnectLater();
    }
  }
  void connect();

  return {
    connected: () => up,
    async close() {
      closed = true;
      up = false;
      if (timer) clearTimeout(timer);
      const last = client;
      client = undefined;
      await last?.end().catch(() => {});
    },
  };
}
