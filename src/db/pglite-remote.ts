import { statSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import {
  DriverAdapterError,
  type IsolationLevel,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from "@prisma/driver-adapter-utils";
import {
  type BegunTransaction,
  type PGliteReply,
  type PGliteRequest,
  type PGliteThreadData,
  pgliteWasmFile,
  type SerializedError,
} from "./pglite-messages";
import type { SqlExecutor } from "./sql-executor";

/** Distributes Omit over a union: each request kind without its id. */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

/** The thread's compiled entry: beside this module in dist/, or dist/'s copy when this runs from src/ (tests). */
const THREAD_FILE = __filename.endsWith(".ts")
  ? path.resolve(__dirname, "../../dist/src/db/pglite-thread.js")
  : path.join(__dirname, "pglite-thread.js");

/**
 * PostgreSQL's WebAssembly as the first thread compiled it, and the file it was read from (path, size,
 * modification time): later threads start from it while that file is unchanged (pglite-thread.ts).
 */
let compiledPGlite: { readonly stamp: string; readonly module: WebAssembly.Module } | undefined;

function wasmStamp(): string {
  const file = pgliteWasmFile();
  const { size, mtimeMs } = statSync(file);
  return `${file}:${size}:${mtimeMs}`;
}

/** The embedded database's thread stopped without being asked to: nothing more can be read or written. */
export class EmbeddedDatabaseStopped extends Error {
  override name = "EmbeddedDatabaseStopped";
  /** PostgreSQL's admin_shutdown: what callers take for a database that is unavailable (db/availability.ts). */
  readonly code = "57P01";
}

/**
 * How long one request may wait for the thread's answer, once PostgreSQL is up, before the database is taken as stuck: the
 * thread is ended (every request fails) and `onStopped` told, so that a supervisor restarts the
 * process, as it would a stuck event loop. Longer than any statement the gateway runs, migrations
 * included.
 */
export const STUCK_AFTER_MS = 120_000;

/**
 * The embedded database on a thread of its own (pglite-thread.ts): HTTP, websockets and sends keep
 * the gateway's event loop while SQL runs beside it, on the other core. Raw SQL (`sql`) and Prisma's
 * adapter (`factory`) are requests to the thread, answered in PGlite's order; an interactive
 * transaction is a handle the thread keeps until commit or rollback. When the thread dies unasked,
 * every request waiting and every later one fails, and `onStopped` is told (by default the error is
 * thrown, uncaught: the process ends non-zero, having lost nothing PGlite had committed).
 */
export function startPGliteThread(
  data: PGliteThreadData,
  onStopped: (error: Error) => void = (error) =>
    setImmediate(() => {
      throw error;
    }),
  { stuckAfterMs = STUCK_AFTER_MS }: { stuckAfterMs?: number } = {},
): { factory: SqlMigrationAwareDriverAdapterFactory; sql: SqlExecutor; thread: Worker; close(): Promise<void> } {
  const stamp = wasmStamp();
  const wasmModule = compiledPGlite?.stamp === stamp ? compiledPGlite.module : undefined;
  const thread = new Worker(THREAD_FILE, { workerData: { ...data, wasmModule } });
  const waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void; since: number }
  >();
  let nextId = 1;
  let stopped: Error | undefined;
  let closing = false;

  const stop = (error: Error) => {
    if (stopped) return;
    stopped = error;
    clearInterval(watch);
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
    if (!closing) onStopped(error);
  };
  // The oldest request waiting is the map's first (insertion order).
  const watch = setInterval(
    () => {
      const oldest = waiting.values().next().value;
      if (!up || oldest === undefined || performance.now() - oldest.since <= stuckAfterMs) return;
      stop(
        new EmbeddedDatabaseStopped(
          `A request to the embedded database waited over ${stuckAfterMs / 1_000} s: it is taken as stuck`,
        ),
      );
      void thread.terminate();
    },
    Math.min(1_000, stuckAfterMs / 2),
  ).unref();
  let up = false;
  thread.on("message", (reply: PGliteReply) => {
    if ("ready" in reply) {
      // Waiting for PostgreSQL to start is not being stuck: the clocks start now.
      up = true;
      if (wasmModule === undefined) compiledPGlite = { stamp, module: reply.wasmModule };
      foreignValues = !(reply.sample instanceof Date);
      for (const request of waiting.values()) request.since = performance.now();
      return;
    }
    const request = waiting.get(reply.id);
    if (request === undefined) return;
    waiting.delete(reply.id);
    if (reply.ok) request.resolve(reply.value);
    else request.reject(rebuild(reply.error));
  });
  thread.on("error", (error) => stop(new EmbeddedDatabaseStopped(`The embedded database failed: ${error.message}`)));
  thread.on("exit", (code) =>
    stop(new EmbeddedDatabaseStopped(`The embedded database's thread stopped (exit code ${code})`)),
  );

  const ask = <T>(request: WithoutId<PGliteRequest>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (stopped) return reject(stopped);
      const id = nextId++;
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject, since: performance.now() });
      try {
        thread.postMessage({ ...request, id });
      } catch (error) {
        waiting.delete(id); // a value that cannot cross the threads: this request fails alone
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });

  const queryable = (tx: number | undefined) => ({
    provider: "postgres" as const,
    adapterName: "pglite-prisma-adapter",
    queryRaw: (query: SqlQuery) => ask<SqlResultSet>({ op: "queryRaw", query, tx }),
    executeRaw: (query: SqlQuery) => ask<number>({ op: "executeRaw", query, tx }),
  });
  const adapter: SqlDriverAdapter = {
    ...queryable(undefined),
    executeScript: (script) => ask<void>({ op: "executeScript", script }),
    async startTransaction(isolationLevel?: IsolationLevel): Promise<Transaction> {
      const begun = await ask<BegunTransaction>({ op: "begin", isolationLevel });
      return {
        ...queryable(begun.id),
        options: begun.options,
        commit: () => ask<void>({ op: "commit", tx: begun.id }),
        rollback: () => ask<void>({ op: "rollback", tx: begun.id }),
      };
    },
    getConnectionInfo: () => ({ supportsRelationJoins: true }),
    dispose: () => Promise.resolve(),
  };
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: "postgres",
    adapterName: "pglite-prisma-adapter",
    connect: () => Promise.resolve(adapter),
    connectToShadowDb: () => Promise.reject(new Error("The embedded database has no shadow database")),
  };
  return {
    factory,
    sql: {
      query: async <T>(text: string, params: readonly unknown[]) =>
        ownRealm(await ask<T[]>({ op: "query", text, params })),
      script: async (text: string) => (await ask<unknown[][]>({ op: "script", text })).map(ownRealm),
    },
    thread,
    async close() {
      if (stopped) return;
      closing = true;
      try {
        await ask({ op: "close" });
      } finally {
        await thread.terminate();
      }
    },
  };
}

/** The error the thread sent, as the caller would have seen it in-process. */
function rebuild(sent: SerializedError): Error {
  const error =
    sent.adapterCause !== undefined
      ? new DriverAdapterError(sent.adapterCause as ConstructorParameters<typeof DriverAdapterError>[0])
      : Object.assign(new Error(sent.message), sent.fields, { name: sent.name });
  if (sent.stack !== undefined) error.stack = sent.stack;
  return error;
}

/**
 * Whether messages' Dates and byte arrays are not this code's own (`instanceof` fails): the case where
 * this code runs in another realm than the one messages arrive in (a Jest test's vm context), never in
 * the gateway's process. Set from the thread's first message, which comes before any answer.
 */
let foreignValues = false;

/** The rows with their Dates and byte arrays made in this code's realm, when messages arrive in another. */
function ownRealm<T>(rows: T[]): T[] {
  if (!foreignValues) return rows;
  for (const row of rows) if (typeof row === "object" && row !== null) reviveRow(row as Record<string, unknown>);
  return rows;
}

function reviveRow(row: Record<string, unknown>): void {
  for (const key in row) row[key] = revive(row[key]);
}

function revive(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(revive);
  const tag = Object.prototype.toString.call(value);
  if (tag === "[object Date]") return new Date((value as Date).getTime());
  if (tag === "[object Uint8Array]") return new Uint8Array(value as Uint8Array);
  return value;
}
