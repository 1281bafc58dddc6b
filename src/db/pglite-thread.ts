import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import type { SqlDriverAdapter, Transaction } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import {
  type PGliteReply,
  type PGliteRequest,
  type PGliteThreadData,
  pgliteWasmFile,
  type SerializedError,
} from "./pglite-messages";

/**
 * The embedded database's own thread (pglite-remote.ts starts it): PGlite and Prisma's PGlite adapter
 * run here, so statements execute beside the gateway's event loop instead of on it. Requests arrive
 * as messages and each is answered once, in the order PGlite runs them (its own queue).
 */
const { dataDir, dump, startParams, wasmModule: given } = workerData as PGliteThreadData;
/**
 * PostgreSQL's WebAssembly: the one an earlier thread of this process compiled, or compiled here and
 * handed back with "ready". V8 shares a module's machine code among the threads given it, so only the
 * first thread pays for optimising its 9 MB (about 2 s of CPU on background threads).
 */
const wasmModule = given ?? new WebAssembly.Module(readFileSync(pgliteWasmFile()));
const pglite = new PGlite(dataDir, {
  ...(dump ? { loadDataDir: dump } : {}),
  pgliteWasmModule: wasmModule,
  startParams: [...PGlite.defaultStartParams, ...startParams],
});
// Said once PostgreSQL is up (before any answer): from then on, a request that waits long is a stuck
// database. The Date shows the receiver which realm messages' values arrive in.
void pglite.waitReady.then(() =>
  parentPort!.postMessage({ ready: true, sample: new Date(0), wasmModule } satisfies PGliteReply),
);
let adapter: Promise<SqlDriverAdapter> | undefined;
const transactions = new Map<number, Transaction>();
let nextTransaction = 1;

const port = parentPort!;
port.on("message", (request: PGliteRequest) => {
  void answer(request).then(
    (value) => port.postMessage({ id: request.id, ok: true, value } satisfies PGliteReply),
    (error: unknown) => port.postMessage({ id: request.id, ok: false, error: serialize(error) } satisfies PGliteReply),
  );
});

async function answer(request: PGliteRequest): Promise<unknown> {
  switch (request.op) {
    case "query":
      return (await pglite.query(request.text, request.params as unknown[])).rows;
    case "script":
      return (await pglite.exec(request.text)).map((result) => result.rows);
    case "queryRaw":
      return (await queryable(request.tx)).queryRaw(request.query);
    case "executeRaw":
      return (await queryable(request.tx)).executeRaw(request.query);
    case "executeScript":
      // The adapter's executeScript does not wait for PGlite: run the script here and wait.
      await pglite.exec(request.script);
      return undefined;
    case "begin": {
      const transaction = await (await adapterOf()).startTransaction(request.isolationLevel);
      const id = nextTransaction++;
      transactions.set(id, transaction);
      return { id, options: transaction.options };
    }
    case "commit":
    case "rollback": {
      const transaction = transactions.get(request.tx);
      if (transaction === undefined) throw new Error(`No open transaction ${request.tx}`);
      transactions.delete(request.tx);
      return request.op === "commit" ? transaction.commit() : transaction.rollback();
    }
    case "close":
      await pglite.close();
      return undefined;
  }
}

function adapterOf(): Promise<SqlDriverAdapter> {
  return (adapter ??= new PrismaPGlite(pglite).connect());
}

async function queryable(tx: number | undefined): Promise<SqlDriverAdapter | Transaction> {
  if (tx === undefined) return adapterOf();
  const transaction = transactions.get(tx);
  if (transaction === undefined) throw new Error(`No open transaction ${tx}`);
  return transaction;
}

/** An error as the main thread rebuilds it: Prisma's adapter errors keep their cause, PostgreSQL's their fields. */
function serialize(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error))
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) fields[key] = value;
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    fields,
    ...(error.name === "DriverAdapterError" ? { adapterCause: structuredClone(error.cause) } : {}),
  };
}
