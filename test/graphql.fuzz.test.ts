/**
 * Hostile GraphQL at scale: documents generated from the schema — nested selections,
 * fragments spread in chains and diamonds (the doubling document among them), inline
 * fragments, aliases, variables, @include/@skip, huge string and list literals, documents around the
 * token limit — sent to the running gateway over HTTP (with and without a key) and as websocket
 * `subscribe` payloads. Each must get an answer in the contract's shape (never a 5xx, never INTERNAL),
 * /healthz must keep answering throughout, and no request may take more than a generous bound of
 * server CPU (measured with `process.cpuUsage()` around each request: the gateway runs in this
 * process, so the figure also holds the client's own share and whatever ran meanwhile — an upper
 * bound). The measured maximum is printed; only the liveness bound
 * is asserted, which catches an exponential walk without depending on the machine's speed.
 * Fixed seeds, so a failure is reproducible.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import {
  buildSchema,
  getNamedType,
  GraphQLBoolean,
  type GraphQLInputType,
  GraphQLNonNull,
  type GraphQLNamedType,
  type GraphQLObjectType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from "graphql";
import WebSocket from "ws";
import { ERROR_TABLE } from "../src/errors";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { frameText } from "./support/ws-protocol";
import { runsInSuite } from "./support/suite";

const RUNS = { http: runsInSuite(600), websocket: runsInSuite(150) };
/** Server CPU one request may take before the suite fails: a liveness bound, far above what is measured. */
const CPU_BOUND_MS = 1_000;
/** How long one /healthz may take: a liveness bound. */
const HEALTHZ_BOUND_MS = 2_000;
/** How long a query sent over a websocket may go unanswered (a liveness bound). */
const QUERY_ANSWER_BOUND_MS = 5_000;
/** A subscription still silent after this has started: a valid one answers only with events. */
const SUBSCRIPTION_QUIET_MS = 150;
/** The largest websocket message the server takes (src/live/socket-limits.ts). */
const MAX_MESSAGE_BYTES = 64 * 1024;

const CODES: ReadonlySet<unknown> = new Set(Object.keys(ERROR_TABLE));
const schema = buildSchema(readFileSync(path.join(__dirname, "..", "schema.graphql"), "utf8"));

// ---- documents from the schema ----------------------------------------------------------------------

interface Knobs {
  seed: number;
  root: "query" | "mutation" | "subscription";
  depth: number;
  width: number;
  fragments: number;
  aliases: boolean;
  variables: boolean;
  directives: boolean;
  shape: "plain" | "doubling" | "manyTokens" | "hugeString" | "hugeList";
  doubling: number;
}

interface Generated {
  query: string;
  variables: Record<string, unknown>;
  operationName: string;
}

/** mulberry32: a small deterministic generator, so the knobs (which fast-check picks and shrinks) decide everything. */
function randomFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const STRINGS = [
  "FRA",
  "JFK",
  "fra",
  "020-12345675",
  "020-12345686",
  "",
  " ",
  "x".repeat(300),
  "😀",
  "a\\nb",
  "00000000-0000-4000-8000-000000000000",
];
const INTS = [0, 1, 2, 50, 200, 201, -1, 2_147_483_647];

function generate(knobs: Knobs): Generated {
  const random = randomFrom(knobs.seed);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const definitions: string[] = [];
  const variableDefinitions: string[] = [];
  const variables: Record<string, unknown> = {};
  const fragmentsOn = new Map<string, string[]>();
  let names = 0;
  const hugeString = () => "h".repeat(pick([20_000, 200_000]));

  const jsonValue = (type: GraphQLInputType): unknown => {
    if (isNonNullType(type)) return jsonValue(type.ofType);
    if (chance(0.05)) return null;
    if (isListType(type))
      return Array.from({ length: knobs.shape === "hugeList" ? pick([1_001, 5_000]) : Math.floor(random() * 4) }, () =>
        jsonValue(type.ofType),
      );
    if (isEnumType(type)) return chance(0.9) ? pick(type.getValues()).name : "NOPE";
    if (isInputObjectType(type))
      return Object.fromEntries(Object.values(type.getFields()).map((field) => [field.name, jsonValue(field.type)]));
    switch (type.name) {
      case "Int":
        return chance(0.9) ? pick(INTS) : pick([1e12, 1.5, "1"]);
      case "Float":
        return pick([0, 1.5, -3, 1e308]);
      case "Boolean":
        return chance(0.9) ? chance(0.5) : "true";
      case "DateTimeISO":
        return pick(["2026-01-01T00:00:00.000Z", "2026-13-01", 0]);
      case "JSON":
        return pick([{ stations: [] }, [1, 2], "x", { a: { b: [true] } }]);
      default:
        return knobs.shape === "hugeString" && chance(0.3) ? hugeString() : pick(STRINGS);
    }
  };

  const literal = (type: GraphQLInputType): string => {
    if (isNonNullType(type)) return literal(type.ofType);
    if (chance(0.03)) return "null";
    if (isListType(type)) {
      const length = knobs.shape === "hugeList" ? pick([300, 1_001, 5_000]) : Math.floor(random() * 4);
      return `[${Array.from({ length }, () => literal(type.ofType)).join(", ")}]`;
    }
    if (isEnumType(type)) return chance(0.9) ? pick(type.getValues()).name : "NOPE";
    if (isInputObjectType(type))
      return `{ ${Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type) || chance(0.5))
        .map((field) => `${field.name}: ${literal(field.type)}`)
        .join(", ")} }`;
    const value = jsonValue(type);
    if (typeof value === "object" && value !== null) return JSON.stringify(JSON.stringify(value));
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  };

  const argumentValue = (type: GraphQLInputType): string => {
    if (!knobs.variables || !chance(0.4)) return literal(type);
    const name = `v${names++}`;
    variableDefinitions.push(`$${name}: ${String(type)}`);
    variables[name] = jsonValue(type);
    return `$${name}`;
  };

  const directive = (): string => {
    if (!knobs.directives || !chance(0.25)) return "";
    const condition =
      knobs.variables && chance(0.5) ? argumentValue(new GraphQLNonNull(GraphQLBoolean)) : String(chance(0.5));
    return ` @${pick(["include", "skip"])}(if: ${condition})`;
  };

  const selectionOf = (type: GraphQLNamedType, depth: number, atRoot: boolean): string => {
    if (!isObjectType(type)) return "__typename";
    const fields = Object.values(type.getFields());
    const count = atRoot && knobs.root === "subscription" ? 1 : 1 + Math.floor(random() * knobs.width);
    const parts: string[] = [];
    for (let i = 0; i < count; i++) {
      const field = pick(fields);
      const args = field.args
        .filter((arg) => (isNonNullType(arg.type) && arg.defaultValue === undefined) || chance(0.4))
        .map((arg) => `${arg.name}: ${argumentValue(arg.type)}`);
      const alias = knobs.aliases && chance(0.3) ? `a${names++}: ` : "";
      const named = getNamedType(field.type);
      const inner = isCompositeType(named)
        ? ` { ${depth <= 0 ? "__typename" : selectionOf(named, depth - 1, false)} }`
        : "";
      parts.push(`${alias}${field.name}${args.length ? `(${args.join(", ")})` : ""}${directive()}${inner}`);
    }
    if (!atRoot && chance(0.15))
      parts.push(`... on ${type.name}${directive()} { ${selectionOf(type, depth - 1, false)} }`);
    if (!atRoot && depth > 0 && chance(0.2)) parts.push(...spreadsOf(type as GraphQLObjectType, depth - 1));
    return parts.join(" ");
  };

  /** One or two spreads of a fragment on `type`, often a new one (its body may spread older ones: chains, diamonds). */
  const spreadsOf = (type: GraphQLObjectType, depth: number): string[] => {
    const known = fragmentsOn.get(type.name) ?? [];
    let name: string;
    if (known.length === 0 || (chance(0.5) && definitions.length < 20)) {
      name = `${type.name}${names++}`;
      const reuse = known.length > 0 && chance(0.6) ? ` ...${pick(known)} ...${pick(known)}` : "";
      definitions.push(`fragment ${name} on ${type.name} { ${selectionOf(type, depth, false)}${reuse} }`);
      fragmentsOn.set(type.name, [...known, name]);
    } else name = pick(known);
    return Array.from({ length: 1 + Math.floor(random() * 2) }, () => `...${name}${directive()}`);
  };

  const rootType = {
    query: schema.getQueryType(),
    mutation: schema.getMutationType(),
    subscription: schema.getSubscriptionType(),
  }[knobs.root]!;
  let selection = selectionOf(rootType, knobs.depth, true);
  if (knobs.root === "query" && knobs.fragments > 0) {
    // A DAG of fragments on Query: each spreads later ones, some twice (diamonds).
    for (let i = knobs.fragments - 1; i >= 0; i--) {
      const later = Array.from({ length: knobs.fragments - 1 - i }, (_, j) => `Q${i + 1 + j}`).filter(() =>
        chance(0.4),
      );
      const twice = later.flatMap((name) => (chance(0.5) ? [name, name] : [name]));
      definitions.push(
        `fragment Q${i} on Query { ${selectionOf(rootType, Math.max(0, knobs.depth - 1), false)} ${twice.map((name) => `...${name}`).join(" ")} }`,
      );
    }
    selection += " ...Q0";
  }
  if (knobs.shape === "doubling") {
    // The doubling document: each fragment selects something and spreads the next twice.
    const n = knobs.doubling;
    for (let i = 1; i <= n; i++)
      definitions.push(
        `fragment D${i} on Query { ${chance(0.5) ? "__typename" : 'station(code: "FRA") { code }'} ${i < n ? `...D${i + 1} ...D${i + 1}` : ""} }`,
      );
    selection += knobs.root === "query" ? " ...D1" : "";
  }
  if (knobs.shape === "manyTokens") selection += ` ${"__typename ".repeat(pick([600, 1_990, 2_500, 10_000]))}`;
  const operationName = `Fuzz${knobs.seed >>> 0}`;
  const header = variableDefinitions.length ? `(${variableDefinitions.join(", ")})` : "";
  return {
    query: `${knobs.root} ${operationName}${header} { ${selection} } ${definitions.join(" ")}`,
    variables,
    operationName,
  };
}

const knobs = (roots: ReadonlyArray<Knobs["root"]>): fc.Arbitrary<Knobs> =>
  fc.record({
    seed: fc.integer(),
    root: fc.constantFrom(...roots),
    depth: fc.integer({ min: 0, max: 6 }),
    width: fc.integer({ min: 1, max: 6 }),
    fragments: fc.integer({ min: 0, max: 12 }),
    aliases: fc.boolean(),
    variables: fc.boolean(),
    directives: fc.boolean(),
    shape: fc.constantFrom("plain", "plain", "plain", "doubling", "manyTokens", "hugeString", "hugeList"),
    doubling: fc.integer({ min: 2, max: 40 }),
  });

// ---- measuring ----------------------------------------------------------------------------------------

const measured = { http: [] as number[], websocket: [] as number[], worst: { ms: 0, what: "" } };

/** Runs `request`, returning its outcome and the process's CPU time (user + system) meanwhile, in ms. */
async function withCpu<T>(
  what: string,
  request: () => Promise<T>,
  into: number[],
): Promise<{ outcome: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const outcome = await request();
  const used = process.cpuUsage(before);
  const cpuMs = (used.user + used.system) / 1_000;
  into.push(cpuMs);
  if (cpuMs > measured.worst.ms) measured.worst = { ms: cpuMs, what: what.slice(0, 160) };
  return { outcome, cpuMs };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** Every error of a GraphQL answer as the contract has it: a message and a code of the table, never INTERNAL. */
function errorsInShape(errors: unknown): boolean {
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every(
      (error: { message?: unknown; extensions?: { code?: unknown } }) =>
        typeof error?.message === "string" &&
        CODES.has(error.extensions?.code) &&
        error.extensions?.code !== "INTERNAL",
    )
  );
}

function resultInShape(result: unknown): boolean {
  if (typeof result !== "object" || result === null) return false;
  const { data, errors } = result as { data?: unknown; errors?: unknown };
  return errors === undefined ? data !== undefined : errorsInShape(errors);
}

describe("fuzzing GraphQL documents and websocket subscribe payloads", () => {
  const disposers = new Disposers();
  let url: string;
  const polls = { answered: 0, late: [] as string[] };
  let polling: Promise<void> | undefined;
  let stopPolling = false;

  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0", GRAPHQL_RESPONSE_CACHE: "false" }));
    // /healthz polled all along, whatever is being sent.
    polling = (async () => {
      while (!stopPolling) {
        try {
          const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_BOUND_MS) });
          if (response.status === 200) polls.answered++;
          else polls.late.push(`status ${response.status}`);
        } catch (error) {
          polls.late.push(`no answer within ${HEALTHZ_BOUND_MS} ms (${(error as Error).name})`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
  });
  afterAll(async () => {
    stopPolling = true;
    await polling;
    await disposers.disposeAll();
    const all = [...measured.http, ...measured.websocket];
    console.log(
      `graphql fuzz: ${measured.http.length} documents over HTTP, ${measured.websocket.length} websocket subscribe payloads; ` +
        `CPU per request (server and client, one process): p50 ${percentile(all, 50).toFixed(1)} ms, p99 ${percentile(all, 99).toFixed(1)} ms, ` +
        `max ${measured.worst.ms.toFixed(1)} ms (${JSON.stringify(measured.worst.what)}); /healthz answered ${polls.answered} polls, ${polls.late.length} late`,
    );
  });

  test(`HTTP: ${RUNS.http} generated documents, each answered in the contract's shape within the CPU bound`, async () => {
    expect.assertions(RUNS.http);
    await fc.assert(
      fc.asyncProperty(
        knobs(["query", "query", "query", "mutation", "subscription"]),
        fc.boolean(),
        fc.boolean(),
        async (chosen, keyed, batched) => {
          const generated = generate(chosen);
          const withKey = keyed && chosen.root !== "mutation"; // mutations only without a key: nothing changes
          const body = JSON.stringify(batched ? [generated, { query: "{ stationCodes }" }] : generated);
          const { outcome, cpuMs } = await withCpu(
            generated.query,
            async () => {
              const response = await fetch(`${url}/graphql`, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  ...(withKey ? { authorization: `Bearer ${ADMIN_KEY}` } : {}),
                },
                body,
                signal: AbortSignal.timeout(15_000),
              });
              return {
                status: response.status,
                type: response.headers.get("content-type") ?? "",
                text: await response.text(),
              };
            },
            measured.http,
          );
          let json: unknown;
          try {
            json = JSON.parse(outcome.text);
          } catch {
            json = undefined;
          }
          // Refused before GraphQL (a body over 1 MiB): the REST error shape.
          const problem = outcome.type.startsWith("application/problem+json");
          const inShape = problem
            ? CODES.has((json as { code?: unknown })?.code) && outcome.status < 500
            : Array.isArray(json)
              ? json.every(resultInShape)
              : resultInShape(json);
          expect({
            query: generated.query.slice(0, 200),
            below500: outcome.status < 500,
            inShape,
            cpuWithinBound: cpuMs <= CPU_BOUND_MS,
            // What was answered, shown only when it is wrong.
            ...(inShape && outcome.status < 500 ? {} : { answer: `${outcome.status} ${outcome.text.slice(0, 400)}` }),
          }).toEqual({
            query: generated.query.slice(0, 200),
            below500: true,
            inShape: true,
            cpuWithinBound: true,
          });
        },
      ),
      { numRuns: RUNS.http, seed: 20261123 },
    );
  }, 120_000);

  test(`websocket: ${RUNS.websocket} generated subscribe payloads, each answered in the contract's shape within the CPU bound`, async () => {
    expect.assertions(RUNS.websocket);
    let socket:
      | {
          ws: WebSocket;
          frames: Map<string, (frame: { type: string; payload?: unknown }) => void>;
          closed: Promise<number>;
        }
      | undefined;
    const open = async () => {
      const ws = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const frames = new Map<string, (frame: { type: string; payload?: unknown }) => void>();
      const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
      ws.on("error", () => {});
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${ADMIN_KEY}` } }));
      await new Promise<void>((resolve) => ws.once("message", () => resolve()));
      ws.on("message", (data) => {
        const frame = JSON.parse(frameText(data)) as { id?: string; type: string; payload?: unknown };
        if (frame.id !== undefined) frames.get(frame.id)?.(frame);
      });
      disposers.add(() => ws.terminate());
      return { ws, frames, closed };
    };
    let next = 0;
    await fc.assert(
      fc.asyncProperty(
        knobs(["subscription", "subscription", "query"]),
        fc.constantFrom("payload", "payload", "payload", "no variables object", "query not a string"),
        async (chosen, form) => {
          socket ??= await open();
          const { ws, frames, closed } = socket;
          const generated = generate(chosen);
          const id = `f${next++}`;
          const payload =
            form === "payload"
              ? generated
              : form === "no variables object"
                ? { ...generated, variables: [generated.variables] }
                : { query: { text: generated.query } };
          const message = JSON.stringify({ id, type: "subscribe", payload });
          const quietMs = chosen.root === "subscription" ? SUBSCRIPTION_QUIET_MS : QUERY_ANSWER_BOUND_MS;
          const { outcome, cpuMs } = await withCpu(
            generated.query,
            () =>
              new Promise<{ type: string; payload?: unknown } | { closed: number } | "quiet">((resolve) => {
                const timer = setTimeout(() => resolve("quiet"), quietMs);
                frames.set(id, (frame) => {
                  clearTimeout(timer);
                  resolve(frame);
                });
                void closed.then((code) => {
                  clearTimeout(timer);
                  resolve({ closed: code });
                });
                ws.send(message);
              }),
            measured.websocket,
          );
          frames.delete(id);
          let inShape: boolean;
          if (outcome === "quiet") {
            // A subscription that started: it answers only with events. A query must have answered.
            inShape = chosen.root === "subscription";
            ws.send(JSON.stringify({ id, type: "complete" }));
          } else if ("closed" in outcome) {
            // graphql-ws closes the socket for a payload that is not one (4400), and the server for a
            // message over its 64 KiB (1009, "message too big"); the next run opens another socket.
            inShape =
              (outcome.closed === 4400 && form !== "payload") ||
              (outcome.closed === 1009 && Buffer.byteLength(message) > MAX_MESSAGE_BYTES);
            socket = undefined;
          } else if (outcome.type === "next") inShape = resultInShape(outcome.payload);
          else if (outcome.type === "error") inShape = errorsInShape(outcome.payload);
          else inShape = outcome.type === "complete";
          expect({
            query: generated.query.slice(0, 200),
            form,
            inShape,
            cpuWithinBound: cpuMs <= CPU_BOUND_MS,
            ...(inShape ? {} : { answer: JSON.stringify(outcome).slice(0, 400) }),
          }).toEqual({
            query: generated.query.slice(0, 200),
            form,
            inShape: true,
            cpuWithinBound: true,
          });
        },
      ),
      { numRuns: RUNS.websocket, seed: 20261124 },
    );
  }, 120_000);

  test("/healthz answered every poll throughout", () => {
    expect(polls.late).toEqual([]);
    expect(polls.answered).toBeGreaterThanOrEqual(runsInSuite(10));
  });
});
