import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import { requestIdOf, securityHeaders } from "./request-id";

/**
 * A 200 answer given before Fastify sees the request: its JSON text and the route pattern it stands
 * for (the access log names it, as Fastify's line names the route that matched).
 */
export interface FastAnswer {
  readonly route: string;
  readonly json: string;
}

/** The answer for the last path segment under a prefix, or undefined to leave the request to Fastify. */
export type FastReader = (segment: string) => FastAnswer | undefined;

/** What the lane logs per answer: the access line Fastify's requests get (request-log.ts). */
export type FastAccessLog = (
  request: IncomingMessage,
  line: { id: string; route: string; statusCode: number; elapsedMs: number },
) => void;

/** The content type of a JSON answer, the lane's and the routes' whose answers it gives. */
export const JSON_TYPE = "application/json; charset=utf-8";

/**
 * Answers the hottest reads (a GET of one immutable resource, found by the last segment of its path)
 * before Fastify routes the request, with what Fastify's route would answer: the same body, content
 * type, request id and security headers, and the same access line. Only a plain 200 is answered here:
 * a query string, a trailing slash, an unknown or malformed segment, any other method (HEAD included)
 * and every request once the server is closing go to Fastify, which answers them as it always did
 * (400/404 problem+json, 503 while closing). Readers take no key: only public routes register one.
 */
export class FastLane {
  private readonly readers = new Map<string, FastReader>();
  private closing = false;

  constructor(private readonly accessLog: FastAccessLog | undefined) {}

  /** Answers GET `${prefix}<segment>` (prefix ends with "/") with `read(segment)` when it gives one. */
  get(prefix: string, read: FastReader): void {
    if (!prefix.endsWith("/")) throw new Error(`A fast-lane prefix ends with "/": ${prefix}`);
    this.readers.set(prefix, read);
  }

  /** From now on every request goes to Fastify (which answers 503 while closing). */
  close(): void {
    this.closing = true;
  }

  /** Whether the request was answered here; when false, nothing was written and Fastify takes it. */
  answer(request: IncomingMessage, response: ServerResponse): boolean {
    if (this.closing || request.method !== "GET" || this.readers.size === 0) return false;
    const started = performance.now();
    const url = request.url!;
    const slash = url.lastIndexOf("/");
    const read = this.readers.get(url.slice(0, slash + 1));
    const found = read?.(url.slice(slash + 1));
    if (found === undefined) return false;
    const id = requestIdOf(request);
    response.writeHead(200, {
      ...securityHeaders(id),
      "content-type": JSON_TYPE,
      "content-length": Buffer.byteLength(found.json),
    });
    response.end(found.json);
    this.accessLog?.(request, { id, route: found.route, statusCode: 200, elapsedMs: performance.now() - started });
    return true;
  }
}

const lanes = new WeakMap<FastifyInstance, FastLane>();

/** Makes `lane` the one `fastLaneOf(app)` answers (http/server.ts, once per instance). */
export function setFastLane(app: FastifyInstance, lane: FastLane): void {
  lanes.set(app, lane);
}

/**
 * The server's fast lane: public reads answered before Fastify routes them. While tracing is on (so
 * that every request runs inside its span) or the log is at debug (so that every arrival is logged) it
 * is not consulted.
 */
export function fastLaneOf(app: FastifyInstance): FastLane {
  const lane = lanes.get(app);
  if (!lane) throw new Error("The Fastify instance was not made by createHttpServer");
  return lane;
}
