import type { Logger } from "pino";

/**
 * What a start has opened, closed in the reverse order: on stop, and when a later start step fails.
 * Each close runs once however often `dispose` is called; one that throws is logged and the rest still
 * run, and `dispose` then rejects with the first failure. What is deferred after `dispose` began is
 * closed at once, and a `dispose` still running waits for it.
 */
export class DisposerStack {
  private readonly entries: Array<{ name: string; close: () => unknown }> = [];
  private readonly late: Array<Promise<Error | undefined>> = [];
  private disposing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** Registers how to close what was just opened. After `dispose` began, it is closed at once instead. */
  defer(name: string, close: () => unknown): void {
    if (this.disposing) {
      this.late.push(this.closeOne({ name, close }));
      return;
    }
    this.entries.push({ name, close });
  }

  /** The names still open, most recent last (what a failed start would close). */
  open(): string[] {
    return this.entries.map((entry) => entry.name);
  }

  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      let firstFailure: Error | undefined;
      for (let entry = this.entries.pop(); entry; entry = this.entries.pop()) {
        const failure = await this.closeOne(entry); // every entry closes, failed or not
        firstFailure ??= failure;
      }
      // What was opened while closing (a start step finishing under a stop) is closed too.
      for (const failure of await Promise.all(this.late)) firstFailure ??= failure;
      if (firstFailure) throw firstFailure;
    })();
    return this.disposing;
  }

  private async closeOne(entry: { name: string; close: () => unknown }): Promise<Error | undefined> {
    try {
      await entry.close();
      return undefined;
    } catch (error) {
      this.log.error({ err: error, resource: entry.name }, "closing a resource failed");
      return error instanceof Error ? error : new Error(`closing ${entry.name} failed: ${String(error)}`);
    }
  }
}
