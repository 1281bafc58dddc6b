import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import type { Bindings, ChildLoggerOptions, Logger } from "pino";
import { accessLoggerOf, destinationOf, isoTime, SERVICE } from "../log";

/**
 * One access line per request, written when the answer has been sent: request id, method, URL, the
 * route that matched, the client's address, status and time taken. (Fastify's default is two lines,
 * one on arrival and one on completion.) At debug, a line on arrival as well ("request received"),
 * for following requests that never complete.
 */
export class AccessLog extends LogController {
  private readonly access: Logger;
  private readonly arrivals: boolean;
  /** Writes a finished line to the log's destination; undefined when `info` is off. */
  private readonly writeLine: ((line: string) => void) | undefined;

  constructor(log: Logger) {
    super();
    this.access = accessLoggerOf(log);
    this.arrivals = log.isLevelEnabled("debug");
    const destination = destinationOf(log);
    this.writeLine = log.isLevelEnabled("info") ? (line) => destination.write(line) : undefined;
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.arrivals) request.log.debug({ req: { method: request.method, url: request.url } }, "request received");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      const req = {
        method: request.method,
        url: request.url,
        route: request.routeOptions.url,
        remoteAddress: request.ip,
      };
      const fields = { reqId: request.id, req, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
      this.access.error({ ...fields, err: error }, "request errored");
      return;
    }
    // The line pino would write for these fields, written by hand: this runs once per request, and
    // pino's general serialiser (nested objects through safe-stable-stringify) was most of its cost.
    const route = request.routeOptions.url;
    this.writeLine?.(
      `{"level":30${isoTime()},"service":"${SERVICE}","reqId":${JSON.stringify(request.id)},"req":{"method":"${request.method}","url":${JSON.stringify(request.url)}${route === undefined ? "" : `,"route":${JSON.stringify(route)}`},"remoteAddress":${JSON.stringify(request.ip)}},"res":{"statusCode":${reply.statusCode}},"responseTime":${reply.elapsedTime},"msg":"request completed"}\n`,
    );
  }
}

/**
 * `request.log`, made only when a request logs something of its own: most requests log nothing but
 * their access line, and a pino child per request (its bindings serialised through redaction) was
 * a measurable part of a cached read.
 */
export function lazyRequestLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
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
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  bindings(): Bindings {
    return this.made ? this.made.bindings() : { ...this.parent.bindings(), ...this.own };
  }
}
