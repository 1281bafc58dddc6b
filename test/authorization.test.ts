/**
 * Authorisation is declared, never called by hand: every GraphQL root field and field resolver
 * declares `@Authorized(scope…)` or `@Public()`, a subscription field its `authorizedSubscribe`
 * (graphql-core/authorization.ts), every REST route
 * `config.scope` or `config.auth` (http/route-access.ts). These tests walk the gateway's schema and
 * routes and fail on one that declares nothing, and pin what each declares today.
 */
import "reflect-metadata";
import { createPubSub } from "@graphql-yoga/subscription";
import { execute, isObjectType, parse, subscribe } from "graphql";
import pino from "pino";
import { Arg, Authorized, buildSchema, Ctx, Int, Query, Resolver, Root, Subscription } from "type-graphql";
import type { Scope } from "../src/clients/credentials";
import type { Principal } from "../src/clients/principal";
import { AppError, validationError } from "../src/errors";
import { authChecker, authorizedSubscribe, declaredFieldAccess, Public } from "../src/graphql-core/authorization";
import type { GraphQLContext } from "../src/graphql-core/context";
import { buildGatewaySchema, RESOLVERS } from "../src/graphql/schema";
import { callerOf, declaredRoutes, enforceRouteAccess, registerPublic } from "../src/http/route-access";
import { createHttpServer } from "../src/http/server";
import { Disposers, startApp } from "./support/harness";

const SUBSCRIPTIONS = ["subscriptions"];
const ADMIN = ["admin"];
const READ = ["events:read", "subscriptions"];

/** What every field declares today; a field added without a declaration makes the schema unbuildable. */
const FIELD_ACCESS: Record<string, readonly string[] | "public"> = {
  "Query.health": "public",
  "Query.stationCodes": "public",
  "Query.station": "public",
  "Query.stations": "public",
  "Station.openAt": "public",
  "Query.subscription": SUBSCRIPTIONS,
  "Query.subscriptions": SUBSCRIPTIONS,
  "AwbSubscription.deliveryCounts": SUBSCRIPTIONS,
  "Mutation.createSubscription": SUBSCRIPTIONS,
  "Mutation.updateSubscription": SUBSCRIPTIONS,
  "Mutation.deleteSubscription": SUBSCRIPTIONS,
  "Mutation.enableSubscription": SUBSCRIPTIONS,
  "Query.deliveries": SUBSCRIPTIONS,
  "Mutation.redeliver": SUBSCRIPTIONS,
  "Mutation.redeliverDead": SUBSCRIPTIONS,
  "Mutation.recordStatusEvents": ["events:write"],
  "Query.milestones": READ,
  "Query.carrierStatuses": READ,
  "Subscription.awbStatusChanged": ["events:read"],
  "Subscription.statusEvents": ["events:read"],
  "Query.clients": ADMIN,
  "Query.oneRecordPartners": ADMIN,
  "Mutation.registerOneRecordPartner": ADMIN,
  "Mutation.removeOneRecordPartner": ADMIN,
  "Mutation.createClient": ADMIN,
  "Mutation.issueApiKey": ADMIN,
  "Mutation.revokeApiKey": ADMIN,
  "Mutation.rotateSigningSecret": ADMIN,
  "Mutation.setCallbackPrefixes": ADMIN,
  "Mutation.importStations": ADMIN,
  "Query.oneRecordDeliveries": ADMIN,
  "Mutation.redeliverOneRecordDelivery": ADMIN,
  "Mutation.redeliverDeadOneRecordDeliveries": ADMIN,
  "Mutation.enableOneRecordSubscription": ADMIN,
};

describe("GraphQL fields declare who may read them", () => {
  it("every root field and field resolver of the gateway declares a scope or public, as the table says", async () => {
    const declared = declaredFieldAccess(RESOLVERS);
    expect(Object.fromEntries(declared)).toEqual(FIELD_ACCESS);
    // Every root field of the built schema is one of them: the walk misses none.
    const schema = await buildGatewaySchema(createPubSub());
    const rootFields = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) =>
      Object.keys(type!.getFields()).map((field) => `${type!.name}.${field}`),
    );
    for (const field of rootFields) expect(declared.has(field) ? field : `${field} (not walked)`).toBe(field);
    // The field resolvers walked are fields of the schema's object types.
    for (const field of declared.keys()) {
      const [type, name] = field.split(".") as [string, string];
      const named = schema.getType(type);
      expect(isObjectType(named) && named.getFields()[name] !== undefined ? field : `${field} (not in schema)`).toBe(
        field,
      );
    }
  });

  it("a field that declares nothing, both, no scope or an unknown scope counts as undeclared", () => {
    const events = async function* () {
      yield "event";
    };
    @Resolver()
    class Undeclared {
      @Query(() => String)
      bare(): string {
        return "";
      }
      @Query(() => String)
      @Public()
      @Authorized("admin")
      both(): string {
        return "";
      }
      @Query(() => String)
      @Authorized()
      noScope(): string {
        return "";
      }
      @Query(() => String)
      @Authorized("subscription")
      misspelt(): string {
        return "";
      }
      @Query(() => String)
      @Public()
      open(): string {
        return "";
      }
      @Subscription(() => String, { subscribe: events })
      unchecked(): string {
        return "";
      }
      // Would check each event's rendering too, which has no caller.
      @Subscription(() => String, { subscribe: events })
      @Authorized("events:read")
      checkedPerEvent(): string {
        return "";
      }
      @Subscription(() => String, { subscribe: authorizedSubscribe(["events:read"], events) })
      checked(): string {
        return "";
      }
    }
    expect(Object.fromEntries(declaredFieldAccess([Undeclared]))).toEqual({
      "Query.bare": undefined,
      "Query.both": undefined,
      "Query.noScope": undefined,
      "Query.misspelt": undefined,
      "Query.open": "public",
      "Subscription.unchecked": undefined,
      "Subscription.checkedPerEvent": undefined,
      "Subscription.checked": ["events:read"],
    });
  });
});

describe("the auth checker", () => {
  @Resolver()
  class Probe {
    @Query(() => String)
    @Authorized("admin", "events:read")
    guarded(@Ctx() ctx: GraphQLContext): Promise<string> {
      return ctx.auth().then((p) => p!.clientId);
    }
    @Query(() => String)
    @Public()
    open(): string {
      return "open";
    }
    @Subscription(() => String, {
      subscribe: authorizedSubscribe(["events:read"], async function* () {
        yield "event";
      }),
    })
    watched(@Root() event: string): string {
      return event;
    }
    @Subscription(() => String, {
      subscribe: authorizedSubscribe(["events:read"], ({ args }) => {
        if ((args as { n: number }).n < 0) throw validationError([{ field: "n", message: "must not be negative" }]);
        return (async function* () {
          yield "event";
        })();
      }),
    })
    counted(@Root() event: string, @Arg("n", () => Int) _n: number): string {
      return event;
    }
  }
  let schema: Awaited<ReturnType<typeof buildSchema>>;
  beforeAll(async () => {
    schema = await buildSchema({ resolvers: [Probe], pubSub: createPubSub(), validate: false, authChecker });
  });

  const principal = (...scopes: Scope[]): Principal => ({
    clientId: "client-1",
    keyId: "key-1",
    scopes: new Set(scopes),
    callbackPrefixes: [],
    maxSubscriptions: 10,
  });
  let authCalls = 0;
  const contextOf = (caller: Principal | null) =>
    ({ auth: () => (authCalls++, Promise.resolve(caller)) }) as unknown as GraphQLContext;
  const run = (query: string, caller: Principal | null) =>
    execute({ schema, document: parse(query), contextValue: contextOf(caller) });
  const errorOf = (result: { errors?: readonly { originalError?: unknown }[] }) => {
    const error = result.errors?.[0]?.originalError;
    return error instanceof AppError ? { code: error.code, message: error.message } : error;
  };

  it("refuses a caller without a key as UNAUTHENTICATED, as requireScope words it", async () => {
    expect(errorOf(await run("{ guarded }", null))).toEqual({
      code: "UNAUTHENTICATED",
      message: "Send a valid API key as Authorization: Bearer <key>",
    });
  });

  it("refuses a key without any of the field's scopes as INSUFFICIENT_SCOPE naming them", async () => {
    expect(errorOf(await run("{ guarded }", principal("subscriptions")))).toEqual({
      code: "INSUFFICIENT_SCOPE",
      message: 'This API key lacks the "admin" or "events:read" scope',
    });
  });

  it("lets a key with one of the scopes through, and a public field without a key", async () => {
    expect(await run("{ guarded }", principal("events:read"))).toEqual({ data: { guarded: "client-1" } });
    authCalls = 0;
    expect(await run("{ open }", null)).toEqual({ data: { open: "open" } });
    expect(authCalls).toBe(0);
  });

  it("checks a subscription before it subscribes (graphql-ws calls subscribe the same way)", async () => {
    const refused = await subscribe({
      schema,
      document: parse("subscription { watched }"),
      contextValue: contextOf(null),
    });
    expect(errorOf(refused as { errors?: readonly { originalError?: unknown }[] })).toMatchObject({
      code: "UNAUTHENTICATED",
    });
    const admitted = await subscribe({
      schema,
      document: parse("subscription { watched }"),
      contextValue: contextOf(principal("events:read")),
    });
    expect(Symbol.asyncIterator in admitted).toBe(true);
  });

  it("checks a subscription's arguments before its caller: VALIDATION_FAILED without a key lookup", async () => {
    authCalls = 0;
    const refused = await subscribe({
      schema,
      document: parse("subscription { counted(n: -1) }"),
      contextValue: contextOf(null),
    });
    expect(errorOf(refused as { errors?: readonly { originalError?: unknown }[] })).toMatchObject({
      code: "VALIDATION_FAILED",
    });
    expect(authCalls).toBe(0);
    const unauthenticated = await subscribe({
      schema,
      document: parse("subscription { counted(n: 1) }"),
      contextValue: contextOf(null),
    });
    expect(errorOf(unauthenticated as { errors?: readonly { originalError?: unknown }[] })).toMatchObject({
      code: "UNAUTHENTICATED",
    });
  });

  it("renders a subscription's event without a caller, synchronously (one rendering serves every subscriber)", () => {
    const rendered = execute({
      schema,
      document: parse("subscription { watched }"),
      rootValue: "event",
      contextValue: {},
    });
    expect(rendered).toEqual({ data: { watched: "event" } });
  });
});

describe("REST routes declare who may call them", () => {
  const key = (scopes: Scope[]) => principal(...scopes);
  function principal(...scopes: Scope[]): Principal {
    return { clientId: "client-1", keyId: "key-1", scopes: new Set(scopes), callbackPrefixes: [], maxSubscriptions: 1 };
  }

  it("refuses to get ready with a route that declares nothing, or both a scope and auth", async () => {
    const app = createHttpServer(pino({ level: "silent" }));
    enforceRouteAccess(app, async () => null);
    app.get("/declared", { config: { auth: "public" } }, async () => ({}));
    app.get("/bare", async () => ({}));
    app.post("/both", { config: { auth: "public", scope: "admin" } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(
      "Routes without config.scope or config.auth: GET /bare, HEAD /bare, POST /both",
    );
    await app.close();
  });

  it("authenticates a scoped route's caller once, before its schema, and hands it to the handler", async () => {
    const app = createHttpServer(pino({ level: "silent" }));
    const callers: Array<Principal | null> = [null, key(["events:read"]), key(["admin"]), key(["admin"])];
    let authentications = 0;
    enforceRouteAccess(app, async () => callers[authentications++] ?? null);
    app.post(
      "/admin",
      {
        config: { scope: ["admin", "events:write"] },
        schema: { body: { type: "object", required: ["name"], properties: { name: { type: "string" } } } },
      },
      async (request) => ({ client: callerOf(request).clientId }),
    );
    app.get("/admin", { config: { scope: "admin" } }, async (request) => ({ client: callerOf(request).clientId }));
    await app.ready();
    const post = (payload: unknown) =>
      app.inject({
        method: "POST",
        url: "/admin",
        payload: payload as object,
        headers: { "content-type": "application/json" },
      });
    expect((await post({})).json()).toMatchObject({ status: 401, code: "UNAUTHENTICATED" });
    expect((await post({})).json()).toMatchObject({
      status: 403,
      code: "INSUFFICIENT_SCOPE",
      detail: 'This API key lacks the "admin" or "events:write" scope',
    });
    expect((await post({ name: "x" })).json()).toEqual({ client: "client-1" });
    // HEAD, made by Fastify from the GET route, checks once too.
    expect((await app.inject({ method: "HEAD", url: "/admin" })).statusCode).toBe(200);
    expect(authentications).toBe(4);
    await app.close();
  });

  it("declares every route of a plugin registered as public", async () => {
    const app = createHttpServer(pino({ level: "silent" }));
    enforceRouteAccess(app, async () => null);
    await registerPublic(
      app,
      (scope, _options, done) => {
        scope.get("/docs/page", async () => ({}));
        done();
      },
      {},
    );
    await app.ready();
    expect(declaredRoutes(app)).toEqual([
      { method: "GET", url: "/docs/page", access: "public" },
      { method: "HEAD", url: "/docs/page", access: "public" },
    ]);
    await app.close();
  });

  describe("the gateway's routes", () => {
    const disposers = new Disposers();
    let routes: ReturnType<typeof declaredRoutes>;
    beforeAll(async () => {
      const { app } = await startApp("pglite", disposers);
      routes = declaredRoutes(app.http);
    });
    afterAll(() => disposers.disposeAll());

    const base = "/carrier/handling/shipment";
    const SCOPED: Record<string, readonly string[]> = {
      [`POST ${base}/events`]: ["events:write"],
      [`GET ${base}/events`]: READ,
      [`HEAD ${base}/events`]: READ,
      [`GET ${base}/carrier-statuses`]: READ,
      [`HEAD ${base}/carrier-statuses`]: READ,
      [`GET ${base}/subscribe/:id/deliveries`]: SUBSCRIPTIONS,
      [`HEAD ${base}/subscribe/:id/deliveries`]: SUBSCRIPTIONS,
      [`POST ${base}/subscribe/:id/redeliver`]: SUBSCRIPTIONS,
      [`POST ${base}/deliveries/:deliveryId/redeliver`]: SUBSCRIPTIONS,
      [`POST ${base}/subscribe`]: SUBSCRIPTIONS,
      [`GET ${base}/subscribe`]: SUBSCRIPTIONS,
      [`HEAD ${base}/subscribe`]: SUBSCRIPTIONS,
      [`GET ${base}/subscribe/:id`]: SUBSCRIPTIONS,
      [`HEAD ${base}/subscribe/:id`]: SUBSCRIPTIONS,
      [`PUT ${base}/subscribe/:id`]: SUBSCRIPTIONS,
      [`DELETE ${base}/subscribe/:id`]: SUBSCRIPTIONS,
      [`POST ${base}/subscribe/:id/enable`]: SUBSCRIPTIONS,
    };

    it("every route declares a scope, public, per-field or onerecord", () => {
      expect(routes.length).toBeGreaterThan(Object.keys(SCOPED).length);
      expect(routes.filter((route) => route.access === undefined)).toEqual([]);
    });

    it("the key-holding routes ask for today's scopes; GraphQL's fields decide for /graphql; the rest is public", () => {
      const byRoute = new Map(routes.map((r) => [`${r.method} ${r.url}`, r.access]));
      expect(Object.fromEntries([...byRoute].filter(([, access]) => typeof access === "object"))).toEqual(SCOPED);
      expect([...byRoute].filter(([, access]) => access === "per-field").map(([route]) => route)).toEqual([
        "GET /graphql",
        "HEAD /graphql",
        "POST /graphql",
        "OPTIONS /graphql",
      ]);
      // The ONE Record plugin authenticates its callers itself and decides per object: every route under
      // its base path, and only those, says so.
      const oneRecord = [...byRoute].filter(([, access]) => access === "onerecord").map(([route]) => route);
      const underBasePath = (route: string) => /^\/onerecord(\/|$)/.test(route.split(" ")[1]!);
      expect(oneRecord.filter((route) => !underBasePath(route))).toEqual([]);
      expect([...byRoute.keys()].filter(underBasePath)).toEqual(oneRecord);
      expect(oneRecord).toEqual(
        expect.arrayContaining([
          "GET /onerecord",
          "POST /onerecord/logistics-objects",
          "GET /onerecord/logistics-objects/:id",
          "HEAD /onerecord/logistics-objects/:id",
          "PATCH /onerecord/logistics-objects/:id",
          "GET /onerecord/logistics-objects/:id/audit-trail",
          "GET /onerecord/action-requests/:id",
          "PATCH /onerecord/action-requests/:id",
          "DELETE /onerecord/action-requests/:id",
        ]),
      );
      for (const route of [
        "GET /healthz",
        "GET /readyz",
        "GET /metrics",
        "GET /carrier/stations/stationcodes",
        "POST /carrier/stations/station",
        "GET /carrier/stations/station/:IATACode",
        "GET /carrier/stations/products/:IATACode",
        "GET /openapi.json",
        "GET /docs",
        "GET /dashboard",
        "GET /assets/:name",
      ])
        expect([route, byRoute.get(route)]).toEqual([route, "public"]);
    });
  });
});
