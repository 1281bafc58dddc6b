import { rm } from "node:fs/promises";
import { DATA_ROOT_ENV } from "./embedded-data-dirs";

/** How long Jest's process may stay up after the last test file, which stopped all it started. */
const EXIT_GRACE_MS = 10_000;

/** Removes the run's folder of embedded databases (each test file removed its own already). */
export default async function globalTeardown(): Promise<void> {
  const root = process.env[DATA_ROOT_ENV];
  if (root) await rm(root, { recursive: true, force: true });
  // A handle still open would hold the run forever (Jest only hints at it): name it and fail. Unref'd,
  // so a run with nothing open exits without waiting.
  setTimeout(() => {
    process.stderr.write(
      `Jest's process is still up ${EXIT_GRACE_MS / 1000} s after the last test, held by: ${process.getActiveResourcesInfo().join(", ")}\n`,
    );
    process.exit(1);
  }, EXIT_GRACE_MS).unref();
}
