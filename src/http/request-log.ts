import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import type { Bindings, ChildLoggerOptions, Logger } from "pino";
import { accessLoggerOf } from "../log";

/**
 * One access line per request, written when the answer has been sent: request id, method, URL, the
 * route that matched, the client's address, status and time taken. (Fastify's default is two lines,
 * one on arrival and one on completion.) At debug, a line on arrival as well ("request received"),
 * for following requests that never complete.
 */
export class AccessLog extends LogController {
  private readonly access: Logger;
  private readonly arrivals: boolean;

  constructor(log: Logger) {
    super();
    this.access = accessLoggerOf(log);
    this.arrivals = log.isLevelEnabled("debug");
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.arrivals) request.log.debug({ req: { method: request.method, url: request.url } }, "request received");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      reqId: request.id,
      req: {
        method: request.method,
        url: request.url,
        route: request.routeOptions.url,
        remoteAddress: request.ip,
      },
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    if (error) this.access.error({ ...line, err: error }, "request errored");
    else this.access.info(line, "request completed");
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
