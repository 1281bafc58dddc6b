// Helpers for the entry points only (main.ts, worker.ts, scripts/): they print and call process.exit.
import { type Config, ConfigError, loadConfig } from "./config";
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
