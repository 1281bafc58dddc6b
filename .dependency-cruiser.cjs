// Dependencies point down the layers below (docs/ARCHITECTURE.md "Layers"): a module imports from
// its own layer and those under it, never from one above. `npm run lint:deps` checks it; `npm test`
// runs it beside the tests. `npm run docs:layers` draws the layers and the imports between them into
// docs/ARCHITECTURE.md.

/** The websocket adapter's files in live/; the rest of live/ is the live-events feature. */
const WEBSOCKET =
  "graphql-websocket|graphql-ws-server|document-cache|keep-alive|key-recheck|operation-admission|socket-limits|websocket-keys|connection-cap";
/** What REST routes build on in http/; the rest of http/ is the server's. */
const ROUTE_KIT = "route-access|schema|problem|validation|fast-lane|request-id";
/** Feature folders: their routes, resolvers and GraphQL types are transports, the rest features. */
const FEATURE_FOLDERS =
  "clients|delivery|health|ingestion|live|milestones|onerecord|outbound|retention|stations|subscriptions|web";
const FEATURE_TRANSPORTS = `^src/(${FEATURE_FOLDERS})/[^/]+\\.(routes|resolver|schemas|types)\\.ts$`;
/** The same in a feature's parts that have folders of their own, one level down (onerecord/objects/). */
const PART_TRANSPORTS = `^src/(${FEATURE_FOLDERS})/[a-z-]+/[^/]+\\.(routes|resolver|schemas|types)\\.ts$`;

/**
 * The layers, top down. Every module of src/ is in exactly one (`npm run docs:layers` fails on one
 * that is in none).
 */
const LAYERS = [
  {
    name: "entry points",
    holds: "the processes, their printing and watchdog",
    path: ["^src/(main|worker|cli|process-watchdog|process-watchdog-thread)\\.ts$"],
  },
  {
    name: "composition",
    holds: "builds the services, mounts the transports",
    path: ["^src/app\\.ts$", "^src/composition/"],
  },
  {
    name: "server assembly",
    holds: "the GraphQL schema and Apollo, Fastify with authentication and limits, the websocket adapter",
    path: ["^src/graphql/", `^src/http/(?!(${ROUTE_KIT}|json-body)\\.ts$)`, `^src/live/(${WEBSOCKET})\\.ts$`],
  },
  {
    name: "feature transports",
    holds: "each feature's *.routes.ts, *.resolver.ts, *.schemas.ts, *.types.ts",
    path: [FEATURE_TRANSPORTS, PART_TRANSPORTS],
  },
  {
    name: "transport kit",
    holds: "the GraphQL context, authorisation, limits and executor; the routes' access, schemas, problems",
    path: ["^src/graphql-core/", `^src/http/(${ROUTE_KIT})\\.ts$`],
  },
  {
    name: "features",
    holds: "services, stores, workers and helpers",
    path: [`^src/(${FEATURE_FOLDERS})/`, "^src/services\\.ts$"],
    pathNot: [FEATURE_TRANSPORTS, PART_TRANSPORTS, `^src/live/(${WEBSOCKET})\\.ts$`],
  },
  {
    name: "foundation",
    holds: "pure rules, the database, tracing, errors, configuration, logging, safe JSON, closing Redis",
    path: [
      "^src/(domain|db|tracing)/",
      "^src/(errors|config|log|paths|redis|event-loop-turns)\\.ts$",
      "^src/http/json-body\\.ts$",
    ],
  },
];

/** One rule per layer: nothing in it imports from a layer above. */
const LAYER_RULES = LAYERS.slice(1).map((layer, i) => ({
  name: `${layer.name.replace(/ /g, "-")}-import-no-layer-above`,
  comment: `Nothing in the ${layer.name} layer imports from a layer above it: ${LAYERS.slice(0, i + 1)
    .map((l) => l.name)
    .join(", ")} (docs/ARCHITECTURE.md "Layers").`,
  severity: "error",
  from: { path: layer.path, ...(layer.pathNot ? { pathNot: layer.pathNot } : {}) },
  to: { path: LAYERS.slice(0, i + 1).flatMap((l) => l.path) },
}));

/** The transports: what only app.ts (and other transports) may import. */
const TRANSPORTS = [
  "^src/http/",
  "^src/web/",
  "^src/graphql/",
  "^src/graphql-core/",
  "^src/live/",
  "\\.routes\\.ts$",
  "\\.resolver\\.ts$",
];
/** The service layer: a feature's operations and its storage, and the bag of them the transports get. */
const SERVICES = ["\\.service\\.ts$", "\\.store\\.ts$", "^src/services\\.ts$"];
/** Packages that do I/O or belong to a transport or to the database driver. */
const IO_PACKAGES =
  "(^|/)node_modules/(undici|pg|pg-[^/]+|@prisma|prisma|@electric-sql|pglite-prisma-adapter|fastify|@fastify|ws|graphql-ws|ioredis|amqplib|@apollo|@as-integrations)/";
/** Node built-ins that do I/O. */
const IO_BUILTINS =
  "^(node:)?(net|http|https|http2|tls|dgram|dns|dns/promises|child_process|cluster|worker_threads|fs|fs/promises)$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...LAYER_RULES,
    {
      name: "domain-imports-only-domain",
      comment:
        "domain/ is pure rules: it imports nothing from src outside domain/ (not a feature, not errors.ts, not db/).",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/domain/" },
    },
    {
      name: "domain-does-no-io",
      comment: "domain/ does no I/O: no network, file system, database, HTTP or websocket package.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: [IO_PACKAGES, IO_BUILTINS] },
    },
    {
      name: "services-do-not-import-transports",
      comment:
        "A service or store knows nothing of Fastify, Apollo, ws or the live fan-out: it never imports routes, resolvers or a transport (depend on an interface declared in the service instead).",
      severity: "error",
      from: { path: SERVICES },
      to: { path: TRANSPORTS },
    },
    {
      name: "services-do-not-do-http-or-use-generated-prisma",
      comment:
        "A service takes its HTTP client as an injected function and uses the project's own types (db/database.ts), not undici, fastify, ws or generated/ (stores may use Prisma's generated types).",
      severity: "error",
      from: { path: "\\.service\\.ts$" },
      to: {
        path: ["(^|/)node_modules/(undici|fastify|@fastify|ws|graphql-ws|@apollo|@prisma|pg)/", "^generated/"],
      },
    },
    {
      name: "services-do-not-reach-http-clients",
      comment:
        "Not even through a helper: a service that needs an HTTP call declares a function type and gets the implementation injected.",
      severity: "error",
      from: { path: "\\.service\\.ts$" },
      to: { path: "(^|/)node_modules/undici/", reachable: true },
    },
    {
      name: "services-do-not-take-rules-from-other-services",
      comment: "A rule two services share belongs in domain/; a service may import another one's types only.",
      severity: "error",
      from: { path: "^src/([^/]+)/[^/]+\\.service\\.ts$" },
      to: { path: "\\.service\\.ts$", pathNot: "^src/$1/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "services-do-not-import-migrations",
      comment:
        "Migrations and the schema engine are for db/, app start and scripts/; a service gets what it needs from db/database.ts or src/paths.ts.",
      severity: "error",
      from: { path: SERVICES },
      to: { path: "^src/db/(migrations|schema-engine)\\.ts$" },
    },
    {
      name: "only-entry-points-import-cli",
      comment: "cli.ts prints and calls process.exit: only the entry points (main.ts, worker.ts) import it.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(main|worker|cli)\\.ts$" },
      to: { path: "^src/cli\\.ts$" },
    },
    {
      name: "only-the-root-imports-composition",
      comment:
        "composition/ builds services and mounts transports: only app.ts and the entry points use it, nothing it builds reaches back.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(app|main|worker)\\.ts$|^src/composition/" },
      to: { path: "^src/composition/" },
    },
    {
      name: "src-does-not-import-scripts-or-tests",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(scripts|test)/" },
    },
    {
      name: "config-imports-only-builtins-and-domain",
      comment: "config.ts is the one parser of configuration: node built-ins and domain/ rules only.",
      severity: "error",
      from: { path: "^src/config\\.ts$" },
      to: { pathNot: "^src/domain/", dependencyTypesNot: ["core"] },
    },
    {
      name: "no-circular",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that does not resolve would hide a dependency from these rules.",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Prisma's generated client is a dependency to check, not code to check.
    doNotFollow: { path: ["node_modules", "^generated/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".cjs", ".mjs", ".json", ".d.ts"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
// The layers, for scripts/layers-graph.js; not enumerable, so dependency-cruiser's validation of
// this configuration does not see it.
Object.defineProperty(module.exports, "layers", { value: LAYERS, enumerable: false });
