import path from "node:path";
import type { IsolationLevel, SqlQuery, TransactionOptions } from "@prisma/driver-adapter-utils";

/** PostgreSQL compiled to WebAssembly, as PGlite ships it. */
export const pgliteWasmFile = (): string =>
  path.join(path.dirname(require.resolve("@electric-sql/pglite")), "pglite.wasm");

/** What the embedded database's thread starts with (pglite-thread.ts). */
export interface PGliteThreadData {
  readonly dataDir: string;
  readonly dump: Blob | undefined;
  /** Start parameters after PGlite's defaults. */
  readonly startParams: string[];
  /** PostgreSQL's WebAssembly, compiled by an earlier thread of this process (pglite-remote.ts). */
  readonly wasmModule?: WebAssembly.Module;
}

/** A request to the embedded database's thread: raw SQL (SqlExecutor), or Prisma's adapter's calls. */
export type PGliteRequest = { readonly id: number } & (
  | { readonly op: "query"; readonly text: string; readonly params: readonly unknown[] }
  | { readonly op: "script"; readonly text: string }
  | { readonly op: "queryRaw" | "executeRaw"; readonly query: SqlQuery; readonly tx: number | undefined }
  | { readonly op: "executeScript"; readonly script: string }
  | { readonly op: "begin"; readonly isolationLevel: IsolationLevel | undefined }
  | { readonly op: "commit" | "rollback"; readonly tx: number }
  | { readonly op: "close" }
);

/** The thread's answer to request `id`, or its word that PostgreSQL is up. */
export type PGliteReply =
  | { readonly ready: true; readonly sample: Date; readonly wasmModule: WebAssembly.Module }
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError };

/** What "begin" answers. */
export interface BegunTransaction {
  readonly id: number;
  readonly options: TransactionOptions;
}

/** An error crossing the threads. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** Its own fields with primitive values (PostgreSQL's code, detail, …). */
  readonly fields: Record<string, unknown>;
  /** A DriverAdapterError's cause, which Prisma maps to its own errors. */
  readonly adapterCause?: unknown;
}
