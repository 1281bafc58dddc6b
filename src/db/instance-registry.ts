import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { CliError } from "../errors";
import type { SqlExecutor } from "./database";
import { sqlInteger, sqlString, sqlUuid } from "./sql-literal";

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

/** Any fixed number: the one lock that makes "compare, then register" one step across instances. */
const REGISTRY_LOCK = 7_240_024;

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
 * within `aliveForMs` are deleted on the way.
 *
 * The comparison and the insert run under one transaction-level advisory lock, so of two instances
 * starting at once the second sees the first. While registered, a heartbeat every `heartbeatMs`
 * keeps the row fresh, and writes it again if it was deleted as stale meanwhile (the database was out
 * of reach for longer than `aliveForMs`); that write compares nothing.
 */
export async function registerInstance(
  sql: SqlExecutor,
  options: { kind: "gateway" | "worker"; settings: SharedSettings; log: Logger; timing?: InstanceTiming },
): Promise<RegisteredInstance> {
  const { heartbeatMs, aliveForMs } = options.timing ?? DEFAULT_INSTANCE_TIMING;
  const id = randomUUID();
  const host = hostname();
  const settingsJson = JSON.stringify(options.settings);
  const row = `${sqlUuid(id)}, ${sqlString(options.kind)}, ${sqlString(host)}, ${sqlInteger(process.pid)}, ${sqlString(settingsJson)}::jsonb`;
  const results = await sql.script(
    [
      `SELECT pg_advisory_xact_lock(${REGISTRY_LOCK})`,
      `DELETE FROM gateway_instance WHERE heartbeat_at < now() - make_interval(secs => ${sqlInteger(aliveForMs)} / 1000.0)`,
      `SELECT id::text, kind, host, pid, settings, extract(epoch FROM now() - heartbeat_at)::float8 AS silent_s FROM gateway_instance ORDER BY started_at`,
      // Inserted only when no running instance holds one of the same settings with another value.
      `INSERT INTO gateway_instance (id, kind, host, pid, settings)
         SELECT ${row}
         WHERE NOT EXISTS (
           SELECT 1 FROM gateway_instance other, jsonb_each(other.settings) theirs, jsonb_each(${sqlString(settingsJson)}::jsonb) mine
           WHERE theirs.key = mine.key AND theirs.value <> mine.value)
         RETURNING id`,
    ].join(";\n"),
  );
  const running = results[2] as RunningInstance[];
  if ((results[3] ?? []).length === 0) throw new CliError(refusal(options.settings, running, aliveForMs));

  let beat: Promise<unknown> = Promise.resolve();
  let failing = false;
  const timer = setInterval(() => {
    beat = sql
      .query(
        `INSERT INTO gateway_instance (id, kind, host, pid, settings) VALUES ($1::uuid, $2, $3, $4, $5::jsonb)
           ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
        [id, options.kind, host, process.pid, settingsJson],
      )
      .then(
        () => {
          if (failing) options.log.info("instance heartbeat recorded again");
          failing = false;
        },
        (error: unknown) => {
          if (!failing) options.log.warn({ err: error }, "instance heartbeat failed: the database is out of reach");
          failing = true;
        },
      );
  }, heartbeatMs);
  timer.unref();
  options.log.info({ instance: id, running: running.length }, "instance registered");
  return {
    id,
    async close() {
      clearInterval(timer);
      await beat; // a heartbeat under way would otherwise write the row again after its removal
      await sql.query("DELETE FROM gateway_instance WHERE id = $1::uuid", [id]).catch((error: unknown) => {
        options.log.warn(
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
    `Refusing to start: settings differ from the running instance${holders.size === 1 ? "" : "s"} on this database (${who}): ` +
    `${[...differences.values()].join("; ")}. Every instance must share them (docs/DEPLOYMENT.md, "What every instance must share"): ` +
    `start this one with the same values, or stop every instance before changing one ` +
    `(an instance that was killed counts as running until ${aliveForMs / 1000} s after it was last heard from).`
  );
}
