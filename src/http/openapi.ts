import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { registerPublic } from "./route-access";
import { addSchemas, type JsonSchema, problemSchema } from "./schema";

/**
 * The OpenAPI document at /openapi.json and a browsable page at /docs, built from the route schemas —
 * the same schemas ajv validates requests with and fast-json-stringify writes answers with. `schemas`
 * are shared ones (with `$id`) the routes refer to; Problem is always added, and routes add their own.
 * Swagger UI's assets ship inside its npm package, so the page needs no internet.
 * Must be registered before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance, schemas: readonly JsonSchema[] = []): Promise<void> {
  addSchemas(app, problemSchema, ...schemas);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Cargo milestone & station gateway",
        version: "1.0.0",
        description:
          "REST routes of the shipment-milestone and station service. Errors are application/problem+json (RFC 9457). GraphQL is at /graphql.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key" } } },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`),
    },
  });
  await registerPublic(app, swaggerUi, {
    routePrefix: "/docs",
    staticCSP: true,
    // Swagger UI sets inline styles (its layout) at run time; a style cannot run script, so inline
    // styles are allowed on /docs only, and styles from other hosts not at all (the page loads none).
    // upgrade-insecure-requests would send the page's own assets to https:, which a plain-http
    // gateway on a LAN address does not serve.
    transformStaticCSP: (header) =>
      header
        .replace(/style-src [^;]*/, "style-src 'self' 'unsafe-inline'")
        .replace(/;?\s*upgrade-insecure-requests/, ""),
  });
  app.get("/openapi.json", { schema: { hide: true }, config: { auth: "public" } }, () => app.swagger());
}
