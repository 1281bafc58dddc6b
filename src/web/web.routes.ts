import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { AppError } from "../errors";
import { sendProblem } from "../http/problem";
import { DASHBOARD_HTML, IDE_HTML, PAGE_SECURITY_HEADERS } from "./pages";
import type { WebAssets } from "./web-assets";

/** GET /dashboard and the bundles under /assets; the IDE's page is answered by `sendIdePage`. */
export function registerWebRoutes(app: FastifyInstance, options: { assets: WebAssets; log: Logger }): void {
  const { assets, log } = options;
  if (assets.size === 0) log.warn("the browser pages are not built (dist/web is empty): run npm run build");

  const page = { schema: { hide: true }, config: { auth: "public" as const } };
  app.get("/dashboard", page, (_request, reply) => sendPage(reply, DASHBOARD_HTML, assets));
  app.get<{ Params: { name: string } }>("/assets/:name", page, async (request, reply) => {
    const asset = await assets.get(request.params.name);
    if (!asset) return sendProblem(reply, new AppError("NOT_FOUND", `No asset ${request.params.name}`));
    reply
      .headers(PAGE_SECURITY_HEADERS)
      .header("etag", asset.etag)
      .header("cache-control", "no-cache")
      .header("vary", "accept-encoding");
    if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
    reply.type(asset.contentType);
    if (asset.gzipped && acceptsGzip(request)) return reply.header("content-encoding", "gzip").send(asset.gzipped);
    return reply.send(asset.body);
  });
}

/** Browsers navigating to /graphql get the IDE; API clients (Accept: application/json) get GraphQL. */
export function wantsHtml(request: FastifyRequest): boolean {
  return request.method === "GET" && (request.headers.accept ?? "").includes("text/html");
}

export function sendIdePage(reply: FastifyReply, assets: WebAssets): FastifyReply {
  return sendPage(reply, IDE_HTML, assets);
}

function sendPage(reply: FastifyReply, html: string, assets: WebAssets): FastifyReply {
  if (assets.size === 0)
    return sendProblem(
      reply,
      new AppError("SERVICE_UNAVAILABLE", "The browser pages are not built on this server; run npm run build"),
    );
  return reply
    .headers(PAGE_SECURITY_HEADERS)
    .header("cache-control", "no-cache")
    .type("text/html; charset=utf-8")
    .send(html);
}

function acceptsGzip(request: FastifyRequest): boolean {
  return /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));
}
