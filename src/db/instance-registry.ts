import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { CliError } from "../errors";
import type { SqlExecutor } from "./database";
import { instanceHeartbeat } from "./sql/instance-heartbeat.sql";
import { registerInstance as registerInstanceSql } from "./sql/register-instance.sql";
import { removeInstance } from "./sql/remove-instance.sql";

/**
 * A setting every instance on the database must share, as stored in `gateway_instance.settings`:
 * its value, or for a secret a digest that tells equal keys apart from different ones and nothing else.
 */
export type SharedSettings = Readonly<Record<string, { readonly value: string } | { readonly digest: string }>>;

export interface InstanceTiming {
  /** How often a running instance tells the database it is alive. */
  readonly heartbeatMs: number;
  /** An instance not heard from for this long counts as gone (killed, its host lost). */
  readonly aliveForMs: number;
}

export const DEFAULT_INSTANCE_TIMING: InstanceTiming = { heartbeatMs: 10_000, aliveForMs: 30_000 };

export interface RegisteredInstance {
  readonly id: string;
  /**
   * Stops the heartbeat (waiting for one under way) and removes the instance's row. Never fails: a row
   * the database did not let it remove stops counting once not heard from for `aliveForMs`.
   */
  close(): Promise<void>;
}

interface RunningInstance {
  id: string;
  kind: string;
  host: string;
  pid: number;
  settings: SharedSettings;
  silent_s: number;
}

/**
 * Registers this process as a running instance, unless an instance alive on the same database
 * (heard from within `aliveForMs`) uses one of the same settings with another value: then it throws a
 * `CliError` naming every such setting, and nothing is registered. Rows of instances not heard from
 * within `aliveForMs` are deleted on the way; the comparison and the insert are one step under a lock
 * (db/sql/register-instance.sql.ts), so of two instances starting at once the second sees the first.
 *
 * While registered, a heartbeat every `heartbeatMs` keeps the row fresh. A row removed meanwhile (the
 * database was out of reach for longer than `aliveForMs`, and another start deleted it as stale) is
 * registered again the same way: compared first, since an instance with other settings may have
 * started in between. While one runs, this instance's row stays out and the heartbeat logs an error.
 */
export async function registerInstance(
  sql: SqlExecutor,
  options: { kind: "gateway" | "worker"; settings: SharedSettings; log: Logger; timing?: InstanceTiming },
): Promise<RegisteredInstance> {
  const { heartbeatMs, aliveForMs } = options.timing ?? DEFAULT_INSTANCE_TIMING;
  const { log } = options;
  const id = randomUUID();
  const register = async (): Promise<{ running: RunningInstance[]; registered: boolean }> => {
    const results = await registerInstanceSql.run(sql, {
      id,
      kind: options.kind,
      host: hostname(),
      pid: process.pid,
      settings: JSON.stringify(options.settings),
      aliveForMs,
    });
    return { running: results[2] as RunningInstance[], registered: (results[3] ?? []).length > 0 };
  };
  const started = await register();
  if (!started.registered)
    throw new CliError(`Refusing to start: ${refusal(options.settings, started.running, aliveForMs)}`);

  let state: "recorded" | "failing" | "refused" = "recorded";
  const heartbeat = async () => {
    if ((await instanceHeartbeat.rows(sql, { id })).length > 0) {
      if (state === "failing") log.info("instance heartbeat recorded again");
      state = "recorded";
      return;
    }
    const again = await register();
    if (again.registered) {
      log.info({ instance: id }, "instance registered again: its row had been removed as stale");
      state = "recorded";
    } else if (state !== "refused") {
      log.error(
        { instance: id },
        `This instance's row was removed as stale: ${refusal(options.settings, again.running, aliveForMs)}`,
      );
      state = "refused";
    }
  };
  let beat: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (beat) return; // one at a time: two re-registrations of one id would collide
    beat = heartbeat()
      .catch((error: unknown) => {
        if (state !== "failing") log.warn({ err: error }, "instance heartbeat failed: the database is out of reach");
        state = "failing";
      })
      .finally(() => (beat = undefined));
  }, heartbeatMs);
  timer.unref();
  log.info({ instance: id, running: started.running.length }, "instance registered");
  return {
    id,
    async close() {
      clearInterval(timer);
      await beat; // a heartbeat under way would otherwise write the row again after its removal
      await removeInstance.rows(sql, { id }).catch((error: unknown) => {
        log.warn(
          { err: error, instance: id },
          `removing this instance's row failed: it counts as running for ${aliveForMs / 1000} s more`,
        );
      });
    },
  };
}

/** One line: each setting that differs, with both values where they are not secret, and who holds the other. */
function refusal(mine: SharedSettings, running: RunningInstance[], aliveForMs: number): string {
  const differences = new Map<string, string>();
  const holders = new Set<RunningInstance>();
  for (const other of running) {
    for (const [name, theirs] of Object.entries(other.settings)) {
      const ours = mine[name];
      if (ours === undefined || JSON.stringify(ours) === JSON.stringify(theirs)) continue;
      holders.add(other);
      if (differences.has(name)) continue;
      differences.set(
        name,
        "value" in ours && "value" in theirs
          ? `${name} is "${ours.value}" here, "${theirs.value}" there`
          : `${name} differs (not shown)`,
      );
    }
  }
  const who = [...holders]
    .map((other) => `${other.kind} pid ${other.pid} on ${other.host}, heard from ${Math.round(other.silent_s)} s ago`)
    .join("; ");
  return (
    `settings differ from the running instance${holders.size === 1 ? "" : "s"} on this database (${who}): ` +
    `${[...differences.values()].join("; ")}. Every instance must share them (docs/DEPLOYMENT.md, "What every instance must share"): ` +
    `start this one with the same values, or stop every instance before changing one ` +
    `(an instance that was killed counts as running until ${aliveForMs / 1000} s after it was last heard from).`
  );
}
