import { type Config, ConfigError, loadConfig } from "./config";
import { type Database, openDatabase } from "./db/database";
import { DataDirInUseError } from "./db/data-dir-lock";
import type { AppError } from "./errors";

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

/**
 * The database the configuration names: PostgreSQL with DATABASE_URL, else the embedded one. When
 * another process holds the embedded one, fails with one line saying what to do instead (`whatInstead`).
 */
export async function openConfiguredDatabase(config: Config, whatInstead = "stop it first"): Promise<Database> {
  try {
    return await openDatabase(config.databaseUrl ? { kind: "postgres", url: config.databaseUrl } : { kind: "pglite", dataDir: config.dataDir });
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new CliError(`${error.message} (a running gateway?): ${whatInstead}.`);
    throw error;
  }
}

/** A failure whose message is the whole story for a person at a terminal: printed alone, no stack. */
export class CliError extends Error {}

/** Prints an AppError's message and every field problem, one a line, to stderr. */
export function printProblems(error: AppError, prefix = `${error.code}: `): void {
  console.error(`${prefix}${error.message}`);
  for (const problem of error.errors ?? []) console.error(`  ${problem.field}: ${problem.message}`);
}

/** Runs a command-line entry point and exits with its code (1 and the message on a failure). */
export function runCli(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
