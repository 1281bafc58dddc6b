import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyPluginOptions,
  FastifyRequest,
  RouteOptions,
} from "fastify";
import { isScope, type Scope } from "../clients/credentials";
import { type Principal, requireScope } from "../clients/principal";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A key holding one of these scopes may call the route. Checked in preValidation: after the body
     * is parsed (a malformed body or an unsupported media type is answered 400/415 first, as before
     * this check was declarative), before the route's schema validates it: a caller without a valid
     * key or scope hears 401/403 (or 429) for any well-formed request. The handler gets the caller
     * from `callerOf`.
     */
    scope?: Scope | readonly [Scope, ...Scope[]];
    /**
     * No key needed ("public"); GraphQL's route, whose fields each declare their own ("per-field"); or
     * the ONE Record API's, whose plugin authenticates API keys and access tokens itself and decides
     * per object ("onerecord", src/onerecord/onerecord.routes.ts).
     */
    auth?: "public" | "per-field" | "onerecord";
  }
}

/** Who may call a route: a key with one of the scopes, anyone, as each GraphQL field says, or ONE Record's rules. */
export type RouteAccess = readonly [Scope, ...Scope[]] | "public" | "per-field" | "onerecord";

export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
  /** Undefined when the route declares neither `scope` nor `auth`, or both. */
  readonly access: RouteAccess | undefined;
}

const routesOf = new WeakMap<FastifyInstance, RouteOptions[]>();
const callers = new WeakMap<FastifyRequest, Principal>();

/**
 * Every route of `app` must declare its access in its options' `config`; one registered without is
 * refused when the app gets ready. Must be called before any route is registered.
 */
export function enforceRouteAccess(
  app: FastifyInstance,
  authenticate: (request: FastifyRequest) => Promise<Principal | null>,
): void {
  const routes: RouteOptions[] = [];
  routesOf.set(app, routes);
  app.addHook("onRoute", (route) => {
    routes.push(route);
    const access = accessOf(route);
    if (typeof access !== "object") return;
    const authorize = async (request: FastifyRequest) => {
      callers.set(request, requireScope(await authenticate(request), ...access));
    };
    const given = route.preValidation;
    route.preValidation = [authorize, ...(given === undefined ? [] : Array.isArray(given) ? given : [given])];
  });
  app.addHook("onReady", async () => {
    const undeclared = declaredRoutes(app).filter((route) => route.access === undefined);
    if (undeclared.length > 0)
      throw new Error(
        `Routes without config.scope or config.auth: ${undeclared.map((r) => `${r.method} ${r.url}`).join(", ")}`,
      );
  });
}

/** The routes registered on `app` since `enforceRouteAccess`, with what each declares. */
export function declaredRoutes(app: FastifyInstance): DeclaredRoute[] {
  return (routesOf.get(app) ?? []).flatMap((route) =>
    (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({
      method: String(method),
      url: route.url,
      access: accessOf(route),
    })),
  );
}

/** Registers a plugin whose routes take no key (the API docs' pages), declaring each `auth: "public"`. */
export async function registerPublic<Options extends FastifyPluginOptions>(
  app: FastifyInstance,
  plugin: FastifyPluginCallback<Options>,
  options: Options,
): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook("onRoute", (route) => {
      route.config = { ...route.config, auth: "public" };
    });
    await scope.register(plugin, options);
  });
}

/** The caller the route's scope check admitted. */
export function callerOf(request: FastifyRequest): Principal {
  const principal = callers.get(request);
  if (!principal) throw new Error(`${request.method} ${request.url}: the route declares no scope`);
  return principal;
}

function accessOf(route: RouteOptions): RouteAccess | undefined {
  const { scope, auth } = route.config ?? {};
  if (scope !== undefined && auth !== undefined) return undefined;
  if (auth === "public" || auth === "per-field" || auth === "onerecord") return auth;
  const scopes = typeof scope === "string" ? [scope] : scope;
  return scopes && scopes.length > 0 && scopes.every(isScope) ? (scopes as RouteAccess) : undefined;
}
