import pino, { type DestinationStream, type Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { Config } from "./config";
import { activeTraceIds } from "./tracing/spans";

/**
 * How many bytes of log lines may wait in memory for stdout. Past it (stdout blocked: a supervisor
 * not reading, a full disk behind a pipe), new lines are dropped and counted rather than held
 * without bound; /metrics shows the count (gateway_log_lines_dropped_total).
 */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** The `service` field of every line. */
export const SERVICE = "cargo-gateway";

let droppedLines = 0;

/**
 * Structured JSON logs; secrets in headers never reach them. Lines are written to stdout
 * asynchronously (the request that logs does not wait for the write), several per write under load;
 * the entry points end the stream before they exit (cli.ts, exitAfterLog), and pino writes out
 * synchronously whatever is still buffered when a process exits otherwise.
 * `traceIds` (tracing on): a line written while a sampled span is active carries its `traceId` and
 * `spanId`; without it no line looks for a span.
 */
export function createLogger(
  level: Config["logLevel"],
  destination: DestinationStream = stdout(),
  { traceIds = false }: { traceIds?: boolean } = {},
): Logger {
  return pino(
    {
      level,
      ...(traceIds ? { mixin: activeTraceIds } : {}),
      base: { service: SERVICE },
      timestamp: isoTime,
      redact: {
        paths: ["req.headers.authorization", "*.authorization", "*.apiKey", "*.signingSecret"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

/** stdout through an asynchronous, bounded buffer (pino flushes it on exit). */
export function stdout(maxBufferBytes = LOG_BUFFER_BYTES): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, maxLength: maxBufferBytes });
  stream.on("drop", (data: string) => {
    droppedLines += countLines(data);
  });
  return stream;
}

/** Lines dropped because the buffer was full, since the process started. */
export function logLinesDropped(): number {
  return droppedLines;
}

export function registerLogMetrics(registry: Registry): void {
  new Counter({
    name: "gateway_log_lines_dropped_total",
    help: "Log lines dropped because stdout did not take them and the log buffer was full",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(droppedLines);
    },
  });
}

/**
 * Where `log`'s lines go, for a caller that writes a whole line of its own (the access line, whose
 * fields are few and known, is cheaper written by hand than through pino's general serialiser).
 */
export function destinationOf(log: Logger): DestinationStream {
  return (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
}

/**
 * Resolves once every line logged so far has been written to stdout, or after `withinMs`: then what is
 * left is dropped (the stream destroyed), so that a stdout nobody reads cannot hold the exit either.
 * The entry points call it before exiting (cli.ts, exitAfterLog): pino's own exit flush is synchronous
 * and skips a chunk whose asynchronous write is waiting to retry after EAGAIN (a pipe full because its
 * reader is slow), so those lines would be lost; ending the stream waits for that write.
 */
export function endLog(log: Logger, withinMs: number): Promise<void> {
  const destination = destinationOf(log) as DestinationStream &
    Partial<NodeJS.EventEmitter> & { end?: () => void; destroy?: () => void; destroyed?: boolean };
  // An own `end`: pino replaced the stream's methods with no-ops after EPIPE (stdout's reader is gone).
  if (
    typeof destination.end !== "function" ||
    typeof destination.once !== "function" ||
    destination.destroyed ||
    Object.hasOwn(destination, "end")
  )
    return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      destination.destroy?.();
      resolve();
    }, withinMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    for (const event of ["finish", "close", "error"]) destination.once!(event, done);
    try {
      destination.end!();
    } catch {
      done(); // already ended: nothing left to wait for
    }
  });
}

// Under load many lines share a millisecond; formatting the date once per millisecond is enough.
let lastMs = 0;
let lastTime = "";
/** `,"time":"<ISO 8601>"`, as pino writes the timestamp into a line. */
export function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

function countLines(data: string): number {
  let lines = 0;
  for (let at = data.indexOf("\n"); at >= 0; at = data.indexOf("\n", at + 1)) lines++;
  return lines;
}
