import { Client } from "pg";
import { loadBundledData } from "../../src/composition/bundled-data";
import { processAlive } from "../../src/db/data-dir-lock";
import { ensureEmbeddedTemplate } from "../../src/db/embedded-template";
import { migratedPgliteDump, migratedPostgresTemplate, PGLITE_DUMP_ENV } from "./database-templates";
import { DATA_ROOT_ENV, makeRunDataRoot } from "./embedded-data-dirs";
import { POSTGRES_ADMIN_URL_ENV, POSTGRES_TEMPLATE_ENV, POSTGRES_UNAVAILABLE_ENV } from "./postgres";

/**
 * Decides once per run whether the PostgreSQL half of the database tests can run, and makes once what
 * the test databases start from: the build's migrated embedded template, which new embedded databases
 * are copies of (made here when the build has not made it for these migrations), a dump of it for the
 * in-memory databases a few tests ask for, and a template database on PostgreSQL. The answers reach
 * the test workers through the environment. With REQUIRE_POSTGRES=1 (CI) an absent server fails the run.
 */
export default async function globalSetup(): Promise<void> {
  await ensureEmbeddedTemplate(loadBundledData);
  process.env[PGLITE_DUMP_ENV] = await migratedPgliteDump();
  process.env[DATA_ROOT_ENV] = await makeRunDataRoot();
  const url = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    // Databases left behind by an earlier run that was killed: named gw_test_<pid>_…, dropped when
    // that process is gone (a run going on beside this one keeps its databases).
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'gw_test_%' OR datname LIKE 'gw_building_%'",
    );
    for (const { datname } of rows) {
      const pid = Number(/^gw_(?:test|building)_(\d+)/.exec(datname)?.[1]);
      if (Number.isInteger(pid) && processAlive(pid)) continue;
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    process.env[POSTGRES_ADMIN_URL_ENV] = url;
  } catch (error) {
    const reason = `PostgreSQL at ${url} is not reachable (${(error as Error).message})`;
    if (process.env.REQUIRE_POSTGRES === "1")
      throw new Error(`${reason}; REQUIRE_POSTGRES=1 makes that fatal`, { cause: error });
    process.env[POSTGRES_UNAVAILABLE_ENV] = reason;
    console.warn(
      `\n[tests] ${reason}: every PostgreSQL variant is SKIPPED; the same tests run on the embedded PGlite only.\n`,
    );
  } finally {
    await client.end().catch(() => {});
  }
  // Outside the try: a migration that fails is a failure of the run, not a missing server.
  if (process.env[POSTGRES_ADMIN_URL_ENV] === url)
    process.env[POSTGRES_TEMPLATE_ENV] = await migratedPostgresTemplate(url);
}
