import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { type DeclaredRoute, declaredRoutes, registerPublic, type RouteAccess } from "./route-access";
import { addSchemas, type JsonSchema, problemSchema } from "./schema";

/** The security scheme of an API key, as `Authorization: Bearer <key>` (http/auth.ts). */
const API_KEY = "bearer";

type Operation = { security?: unknown; responses?: Record<string, unknown>; [field: string]: unknown };
type Document = { paths?: Record<string, Record<string, Operation> | undefined>; [field: string]: unknown };

/**
 * The OpenAPI document at /openapi.json and a browsable page at /docs, built from the route schemas —
 * the same schemas ajv validates requests with and fast-json-stringify writes answers with. `schemas`
 * are shared ones (with `$id`) the routes refer to; Problem is always added, and routes add their own.
 * Each operation's `security` is what its route declares in `config` (route-access.ts), the same
 * declaration the key check runs from. Swagger UI's assets ship inside its npm package, so the page
 * needs no internet. Must be registered before the routes it describes.
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
        // package.json's "UNLICENSED": no licence is granted. SPDX has no identifier for that, only
        // LicenseRef- names of one's own.
        license: { name: "Proprietary (UNLICENSED)", identifier: "LicenseRef-Proprietary" },
      },
      // Relative: the gateway that serves this document, at whatever address it was reached.
      servers: [{ url: "/", description: "This gateway" }],
      components: {
        securitySchemes: {
          [API_KEY]: {
            type: "http",
            scheme: "bearer",
            description:
              "An API key, sent as `Authorization: Bearer <key>`. An operation that names scopes takes a key holding any one of them.",
          },
        },
      },
    },
    transformObject: (document) =>
      "openapiObject" in document
        ? withDeclaredAccess(document.openapiObject, declaredRoutes(app))
        : document.swaggerObject,
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

/** Every operation's: the server refuses headers over 16 KiB before any route runs (http/server.ts). */
const HEADERS_TOO_LARGE = {
  431: {
    description: "The request's headers exceed 16 KiB (HEADERS_TOO_LARGE)",
    content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
  },
};

/**
 * The document with each operation's `security` taken from its route's declared access, and the 431
 * every operation can be answered (the server refuses headers over 16 KiB before any route runs,
 * http/server.ts). A documented route whose access the document cannot state is a mistake: it throws.
 */
function withDeclaredAccess<D>(document: D, routes: readonly DeclaredRoute[]): D {
  const paths = (document as Document).paths ?? {};
  const accessOf = new Map(routes.map((route) => [`${route.method} ${route.url}`, route.access]));
  const documented = Object.entries(paths).map(([path, operations]): [string, Record<string, Operation>] => {
    const url = path.replace(/\{([^}]+)\}/g, ":$1");
    const withAccess = Object.entries(operations ?? {}).map(([method, operation]): [string, Operation] => {
      const route = `${method.toUpperCase()} ${url}`;
      return [
        method,
        {
          ...operation,
          security: securityOf(route, accessOf.get(route)),
          responses: { ...operation.responses, ...HEADERS_TOO_LARGE },
        },
      ];
    });
    return [path, Object.fromEntries(withAccess)];
  });
  return { ...document, paths: Object.fromEntries(documented) };
}

/** OpenAPI security requirements for a route's access: any one requirement admits the caller. */
function securityOf(route: string, access: RouteAccess | undefined): Array<Record<string, string[]>> {
  if (access === "public") return [];
  // Anyone may ask; each field decides whether it needs a key, and which scope (docs/API.md).
  if (access === "per-field") return [{}, { [API_KEY]: [] }];
  // OpenAPI 3.1 lets a non-OAuth scheme list the roles it needs: here, one scope of the route's.
  if (typeof access === "object") return access.map((scope) => ({ [API_KEY]: [scope] }));
  throw new Error(`${route} is in the OpenAPI document, but its access (${String(access)}) cannot be documented`);
}
