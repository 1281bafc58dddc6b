import { type ChainedError, causesOf } from "../domain/error-chain";
import { AppError } from "../errors";

/**
 * Whether an error means "the database cannot be reached right now" (stopped, restarting, network
 * gone, out of connections) rather than a fault in the request or the code. Such failures answer
 * 503 SERVICE_UNAVAILABLE with Retry-After, so clients retry instead of reporting a bug. Every write
 * is one transaction answered only after its commit, so as a rule nothing was written; only a
 * connection lost during the COMMIT itself can leave it committed (a retry with the same eventId is
 * then stored once).
 */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
const ADAPTER_UNAVAILABLE = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01-03 (shutdown, crash, starting), 53300 (too many connections). */
function isUnavailableSqlState(code: unknown): boolean {
  return (
    typeof code === "string" &&
    (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300")
  );
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (const e of causesOf(error, 6)) {
    const candidate = e as ChainedError & {
      meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } };
    };
    if (
      typeof candidate.code === "string" &&
      (PRISMA_UNAVAILABLE.has(candidate.code) ||
        NETWORK_CODES.has(candidate.code) ||
        isUnavailableSqlState(candidate.code))
    )
      return true;
    const adapterCause = candidate.meta?.driverAdapterError?.cause;
    if (
      adapterCause &&
      ((typeof adapterCause.kind === "string" && ADAPTER_UNAVAILABLE.has(adapterCause.kind)) ||
        isUnavailableSqlState(adapterCause.code))
    )
      return true;
    if (
      typeof candidate.message === "string" &&
      /Connection terminated|is not queryable|timeout exceeded when trying to connect|Can't reach database server/i.test(
        candidate.message,
      )
    )
      return true;
  }
  return false;
}

/** Seconds a client is told to wait when the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export function databaseUnavailable(): AppError {
  return new AppError("SERVICE_UNAVAILABLE", "The database is unavailable; nothing was changed, try again shortly", {
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
  });
}

/** The SQLSTATE an error carries (from pg, or inside Prisma's driver-adapter error), if any. */
export function sqlStateOf(error: unknown): string | undefined {
  for (const e of causesOf(error, 6)) {
    const candidate = e as ChainedError & {
      meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown } } };
    };
    const adapterCause = candidate.meta?.driverAdapterError?.cause;
    // Prisma's own codes (P2010…) have the same shape as a SQLSTATE; they are not one.
    for (const code of [adapterCause?.originalCode, adapterCause?.code, candidate.code])
      if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^P\d{4}$/.test(code)) return code;
  }
  return undefined;
}
