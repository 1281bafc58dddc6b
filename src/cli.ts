// Helpers for the entry points only (main.ts, worker.ts, scripts/): they print and call process.exit.
import { setFlagsFromString } from "node:v8";
import { type Config, ConfigError, loadConfig } from "./config";
import type { BootstrapOutcome } from "./clients/bootstrap-client";
import type { AppError } from "./errors";
import type { Logger } from "pino";
import { endLog } from "./log";

type CreatedBootstrap = Extract<BootstrapOutcome, { created: true }>;

/** The configuration, or exit code 2 with the message naming the bad variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

/** Prints an AppError's message and every field problem, one a line, to stderr. */
export function printProblems(error: AppError, prefix = `${error.code}: `): void {
  console.error(`${prefix}${error.message}`);
  for (const problem of error.errors ?? []) console.error(`  ${problem.field}: ${problem.message}`);
}

/**
 * Exits once the log's lines are written out, waiting for stdout at most until `deadline` (a time from
 * Date.now(), the stop's) less a margin to exit in: past it, the lines left are dropped.
 */
export async function exitAfterLog(log: Logger, code: number, deadline: number): Promise<never> {
  // At least a moment even past the deadline: a healthy stdout still gets the last line ("stopped").
  await endLog(log, Math.max(100, deadline - EXIT_MARGIN_MS - Date.now()));
  process.exit(code);
}

/** What a stop keeps of its deadline to exit in, after waiting for the log. */
const EXIT_MARGIN_MS = 500;

/**
 * Runs a command-line entry point and exits with its code (1 and the message on a failure).
 *
 * An admin command runs for about a second, a station import a few: V8's optimising compiler would
 * spend more CPU on the embedded database's WebAssembly than they run it for (about half of an admin
 * command's CPU, 13–20 % of a 4,000-station import), so the budget a function must use up before it
 * is optimised is raised out of reach and the baseline compiler's code runs (BENCHMARKS.md, "V8's
 * WebAssembly tier-up"). Set before the database is opened, which is when the module compiles; nothing
 * compiles WebAssembly while the modules load.
 */
export function runCli(main: () => Promise<number>): void {
  setFlagsFromString("--wasm-tiering-budget=2000000000");
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}

/** Where the gateway keeps its data, which decides when a lost key can be replaced. */
export type DatabaseKind = "embedded" | "in memory" | "postgresql";

export const databaseKindOf = (config: Pick<Config, "databaseUrl" | "dataDir">): DatabaseKind =>
  config.databaseUrl ? "postgresql" : config.dataDir.startsWith("memory://") ? "in memory" : "embedded";

/**
 * Shown once, by whichever entry point created the first client (the server's first start, or an
 * admin command on a new database): later runs find the client and never see the generated values.
 */
export function printFirstStart(
  bootstrap: CreatedBootstrap,
  where: { url: string } | { notListening: true } | { byAdminCommand: true },
  database: DatabaseKind,
): void {
  process.stdout.write(`${firstStartBlock(bootstrap, where, database).join("\n")}\n`);
}

/** The lines `printFirstStart` prints. */
export function firstStartBlock(
  bootstrap: CreatedBootstrap,
  where: { url: string } | { notListening: true } | { byAdminCommand: true },
  database: DatabaseKind,
): string[] {
  const line = "─".repeat(72);
  const after =
    "url" in where
      ? [
          ` Dashboard        ${where.url}/dashboard`,
          ` GraphQL IDE      ${where.url}/graphql`,
          ` REST API docs    ${where.url}/docs`,
        ]
      : "notListening" in where
        ? [" (The gateway did not start: see the next line.)"]
        : [" (Created by this admin command: `npm start` with the same DATA_DIR / DATABASE_URL serves it.)"];
  // A running gateway holds its embedded database (db/data-dir-lock.ts): the command waits for its
  // stop. PostgreSQL takes both at once.
  const replacement =
    database === "in memory"
      ? [
          " Shown this once: keep them. The database is in memory (DATA_DIR=memory://): it and this",
          " client are gone when the gateway stops, and the next start creates new ones. While it runs,",
          " the GraphQL mutation issueApiKey (with this key) gives another key; no command can.",
        ]
      : database === "embedded"
        ? [
            " Shown this once: keep them. A lost key is replaced with the gateway stopped (it holds",
            " its embedded database while it runs), by this command with the gateway's DATA_DIR:",
          ]
        : [
            " Shown this once: keep them. A lost key is replaced, while the gateway runs, by this",
            " command with the gateway's DATABASE_URL:",
          ];
  return [
    line,
    ` First start: created a client with every scope (its id: ${bootstrap.clientId}).`,
    ...(bootstrap.generated.apiKey ? [` API key          ${bootstrap.generated.apiKey}`] : []),
    ...(bootstrap.generated.signingSecret
      ? [` Signing secret   ${bootstrap.generated.signingSecret}   (verifies the callbacks you receive)`]
      : []),
    ...replacement,
    ...(database === "in memory"
      ? []
      : [
          `   npm run admin -- key:issue --client ${bootstrap.clientId} --scopes subscriptions,events:read,events:write,objects:write,admin`,
        ]),
    ...after,
    line,
  ];
}
