import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import type { IncomingMessage } from "node:http";
import type { Bindings, ChildLoggerOptions, Logger } from "pino";
import { destinationOf, isoTime, SERVICE } from "../log";
import { serverTraceIds } from "../tracing/http-server";
import { tracingOn } from "../tracing/spans";

/**
 * One access line per request, written when the answer has been sent: request id, method, URL, the
 * route that matched, the client's address, status and time taken, and with tracing on the ids of
 * the request's span when its trace is sampled. (Fastify's default is two lines, one on arrival and
 * one on completion.) At debug, a line on arrival as well ("request received"), for following
 * requests that never complete.
 */
export class AccessLog extends LogController {
  private readonly arrivals: boolean;
  private readonly writeLine: AccessLineWriter | undefined;

  constructor(log: Logger) {
    super();
    this.arrivals = log.isLevelEnabled("debug");
    this.writeLine = accessLineWriter(log);
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.arrivals)
      request.log.debug({ req: { method: request.method, url: request.originalUrl } }, "request received");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url;
    const ip = request.ip as string | undefined; // undefined once the socket's peer is gone
    if (error) {
      // Through request.log: redacted like every line that carries an error.
      request.log.error(
        {
          req: { method: request.method, url: request.originalUrl, route, remoteAddress: ip },
          res: { statusCode: reply.statusCode },
          responseTime: reply.elapsedTime,
          err: error,
        },
        "request errored",
      );
      return;
    }
    // The URL is the one the client sent (the allow-list may rewrite request.url before this runs).
    this.writeLine?.(request.raw, {
      id: String(request.id),
      method: request.method,
      url: request.originalUrl,
      route,
      ip,
      statusCode: reply.statusCode,
      elapsedMs: reply.elapsedTime,
    });
  }
}

/** What one access line says about a request that completed. */
export interface AccessLine {
  id: string;
  method: string;
  url: string;
  route: string | undefined;
  ip: string | undefined;
  statusCode: number;
  elapsedMs: number;
}

export type AccessLineWriter = (raw: IncomingMessage, line: AccessLine) => void;

/**
 * Writes access lines onto the log's destination; undefined when `info` is off (decided at start).
 * The line pino would write for these fields, written by hand: this runs once per request, and pino's
 * general serialiser (nested objects through safe-stable-stringify) was most of its cost.
 */
export function accessLineWriter(log: Logger): AccessLineWriter | undefined {
  if (!log.isLevelEnabled("info")) return undefined;
  const destination = destinationOf(log);
  return (raw, { id, method, url, route, ip, statusCode, elapsedMs }) => {
    const ids = tracingOn() ? serverTraceIds(raw) : undefined; // hex: nothing to escape
    destination.write(
      `{"level":30${isoTime()},"service":"${SERVICE}","reqId":${JSON.stringify(id)}${ids === undefined ? "" : `,"traceId":"${ids.traceId}","spanId":"${ids.spanId}"`},"req":{"method":${JSON.stringify(method)},"url":${JSON.stringify(url)}${route === undefined ? "" : `,"route":${JSON.stringify(route)}`}${ip === undefined ? "" : `,"remoteAddress":${JSON.stringify(ip)}`}},"res":{"statusCode":${statusCode}},"responseTime":${elapsedMs},"msg":"request completed"}\n`,
    );
  };
}

/**
 * `request.log`, made only when a request logs something of its own: most requests log nothing but
 * their access line, and a pino child per request (its bindings serialised through redaction) was
 * a measurable part of a cached read.
 */
export function lazyRequestLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // A route with a log level of its own gets its child at once: its level is the child's.
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyChild(parent, bindings, options);
}

class LazyChild {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly own: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.own, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }
  fatal(...args: unknown[]): void {
    Reflect.apply(this.real.fatal, this.real, args);
  }
  error(...args: unknown[]): void {
    Reflect.apply(this.real.error, this.real, args);
  }
  warn(...args: unknown[]): void {
    Reflect.apply(this.real.warn, this.real, args);
  }
  info(...args: unknown[]): void {
    Reflect.apply(this.real.info, this.real, args);
  }
  debug(...args: unknown[]): void {
    Reflect.apply(this.real.debug, this.real, args);
  }
  trace(...args: unknown[]): void {
    Reflect.apply(this.real.trace, this.real, args);
  }
  silent(): void {}
  flush(): void {
    (this.made ?? this.parent).flush();
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  bindings(): Bindings {
    return this.made ? this.made.bindings() : { ...this.parent.bindings(), ...this.own };
  }
}
