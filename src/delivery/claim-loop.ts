import type { Logger } from "pino";

/**
 * The worker's claim loop: runs `claimOnce` again at once while it answers that there may be more,
 * otherwise when woken or after `pollMs`. A failed claim is logged and tried again the same way.
 * States: "stopped" and "running"; `stop` resolves when the round under way has ended. A `start`
 * while a stopped loop's last round is still under way lets that loop go on: never two loops.
 */
export class ClaimLoop {
  private state: "stopped" | "running" = "stopped";
  private wakeUp: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();
  private looping = false;

  constructor(
    private readonly deps: {
      pollMs: number;
      /** One claim round; true when claiming again at once may find more. */
      claimOnce: () => Promise<boolean>;
      log: Logger;
    },
  ) {}

  get running(): boolean {
    return this.state === "running";
  }

  start(): void {
    if (this.state === "running") return;
    this.state = "running";
    if (!this.looping) this.done = this.loop();
  }

  /** Claims now instead of at the next poll (no effect while a round runs or when stopped). */
  wake(): void {
    this.wakeUp?.();
    this.wakeUp = undefined;
  }

  stop(): Promise<void> {
    this.state = "stopped";
    this.wake();
    return this.done;
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      // `run` ends once it sees the loop stopped; a start since then finds `looping` and relies on this.
      do await this.run();
      while (this.state === "running");
    } finally {
      this.looping = false;
    }
  }

  private async run(): Promise<void> {
    while (this.state === "running") {
      let more = false;
      try {
        more = await this.deps.claimOnce();
      } catch (error) {
        this.deps.log.warn({ err: error }, "claiming deliveries failed; will try again");
      }
      if (more || this.state !== "running") continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.deps.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}
