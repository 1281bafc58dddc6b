import "reflect-metadata";
import type { Logger } from "pino";
import pino from "pino";
import { type App, type AppOptions, createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { pgliteDump } from "./database-templates";
import { newEmbeddedDataDir } from "./embedded-data-dirs";
import { leaseEmbeddedDatabase } from "./embedded-pool";
import { createPostgresDatabase, postgresAvailable, POSTGRES_UNAVAILABLE_ENV } from "./postgres";
import { IN_GATE } from "./suite";

export type Backend = "pglite" | "postgres";

/** Both backends, for `describe.each`; PostgreSQL's is skipped (and says why) when no server answers. */
export const BACKENDS: Backend[] = ["pglite", "postgres"];
/**
 * The backends a behaviour test runs on (routes, operations, live events, ONE Record over HTTP): the
 * embedded default alone in the gate, both in the full suite (test/support/suite.ts). What the two
 * databases do differently is in the statements, and the statement and race tests run on both
 * (`BACKENDS`) in either suite.
 */
export const BEHAVIOUR_BACKENDS: Backend[] = IN_GATE ? ["pglite"] : BACKENDS;

export function describeBackend(backend: Backend): jest.Describe {
  if (backend === "postgres" && !postgresAvailable()) {
    // Named so the skip and its reason show in the test report.
    return ((name: string, fn: () => void) =>
      describe.skip(`${name} — SKIPPED: ${process.env[POSTGRES_UNAVAILABLE_ENV]}`, fn)) as unknown as jest.Describe;
  }
  return describe;
}

type Disposer = () => Promise<void> | void;

/** Collects what a test file starts so that `afterAll` stops all of it, last started first. */
export class Disposers {
  private readonly stack: Disposer[] = [];
  add(dispose: Disposer): void {
    this.stack.push(dispose);
  }
  /** Runs every disposer even when one fails (a skipped one would leave a process or socket open), then reports the first failure. */
  async disposeAll(): Promise<void> {
    let failure: Error | undefined;
    while (this.stack.length > 0) {
      try {
        await this.stack.pop()!();
      } catch (error) {
        failure ??= error instanceof Error ? error : new Error(String(error));
      }
    }
    if (failure !== undefined) throw failure;
  }
}

export const silentLogger: Logger = pino({ level: "silent" });

/** The bootstrap client's key in every app under test (it has every scope). */
export const ADMIN_KEY = "cgw_test-bootstrap-admin-key-0001";

/** Environment for an app under test on the given backend; returns it with a cleanup for the database. */
export async function testEnvironment(
  backend: Backend,
  env: Record<string, string> = {},
): Promise<{ env: Record<string, string>; cleanup: Disposer }> {
  const base = {
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    BOOTSTRAP_API_KEY: ADMIN_KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    // Tests send GraphQL without a key from 127.0.0.1 far faster than a client would; the tests of
    // that budget (graphql-hostile.http) set it.
    GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "0",
    ...env,
  };
  if (backend === "pglite") {
    if (env.DATA_DIR) return { env: base, cleanup: () => {} };
    const { dir, remove } = await newEmbeddedDataDir();
    return { env: { DATA_DIR: dir, ...base }, cleanup: remove };
  }
  if (env.DATABASE_URL) return { env: base, cleanup: () => {} }; // sharing another app's database
  const database = await createPostgresDatabase();
  return { env: { DATABASE_URL: database.url, ...base }, cleanup: database.drop };
}

/**
 * What `createApp` needs beyond the configuration: an in-memory embedded database starts from the
 * migrated dump the global setup made (test/support/database-templates.ts).
 */
export function testAppOptions(env: Record<string, string | undefined>): AppOptions {
  const inMemory = !env.DATABASE_URL && env.DATA_DIR?.startsWith("memory://");
  return inMemory ? { embeddedDatabaseDump: pgliteDump() } : {};
}

/**
 * Starts the whole gateway in this process on a free port. On the embedded database without a
 * DATA_DIR of the test's own, on one of the pool's (embedded-pool.ts): the template's contents, its
 * folder the app's DATA_DIR.
 */
export async function startApp(
  backend: Backend,
  disposers: Disposers,
  env: Record<string, string> = {},
  { log = silentLogger, appOptions = {} }: { log?: Logger; appOptions?: AppOptions } = {},
): Promise<{ app: App; url: string; env: Record<string, string> }> {
  let options: AppOptions = appOptions;
  let stopped = false;
  if (backend === "pglite" && env.DATA_DIR === undefined) {
    const lease = await leaseEmbeddedDatabase();
    // A gateway that failed to stop may still be writing: its database is not handed out again.
    disposers.add(() => lease.release({ keep: stopped }));
    env = { ...env, DATA_DIR: lease.dir };
    options = { ...options, database: lease.database };
  }
  const environment = await testEnvironment(backend, env);
  disposers.add(environment.cleanup);
  options = { ...testAppOptions(environment.env), ...options };
  const app = await createApp(loadConfig(environment.env), log, options);
  disposers.add(async () => {
    await app.stop();
    stopped = true;
  });
  const url = await app.listen();
  return { app, url, env: environment.env };
}
