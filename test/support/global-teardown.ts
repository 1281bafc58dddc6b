import { rm } from "node:fs/promises";
import { DATA_ROOT_ENV } from "./embedded-data-dirs";

/** Removes the run's folder of embedded databases (each test file removed its own already). */
export default async function globalTeardown(): Promise<void> {
  const root = process.env[DATA_ROOT_ENV];
  if (root) await rm(root, { recursive: true, force: true });
}
