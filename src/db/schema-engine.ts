import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import type { SchemaEngine } from "@prisma/schema-engine-wasm" with { "resolution-mode": "import" };

/**
 * Prisma's schema engine compiled to WebAssembly. It creates and applies migrations through a driver
 * adapter, so nothing is downloaded from Prisma's host and no native binary is needed.
 *
 * The package is a bundler build: its glue module is loaded by file path and the wasm instantiated by
 * hand (the package's exports do not describe a Node entry point).
 */
type WasmExports = Record<string, unknown>;
// Node has WebAssembly; @types/node does not declare it without the DOM library.
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: Record<string, unknown>): Promise<{ instance: { exports: WasmExports } }>;
};

type Glue = Record<string, unknown> & {
  __wbg_set_wasm(exports: WasmExports): void;
  SchemaEngine: typeof SchemaEngine;
};

let gluePromise: Promise<Glue> | undefined;

async function loadGlue(): Promise<Glue> {
  const dir = path.dirname(require.resolve("@prisma/schema-engine-wasm"));
  // require(esm) is available from Node 20.19; under Jest the module is transformed to CommonJS.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path known only at run time
  const glue = require(path.join(dir, "schema_engine_bg.js")) as Glue;
  const bytes = await readFile(path.join(dir, "schema_engine_bg.wasm"));
  const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": withUnrefTimers(glue) });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

/**
 * The engine arms timers (its async runtime's sleeps) that outlive `free()` and would keep the
 * process from exiting on its own; they are unref'd so that they never hold the event loop open.
 */
function withUnrefTimers(glue: Glue): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...glue };
  for (const name of Object.keys(glue).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
    imports[name] = (callback: () => void, ms: number) => setTimeout(callback, ms >>> 0).unref();
  }
  return imports;
}

export interface OpenSchemaEngine {
  readonly engine: SchemaEngine;
  /** Frees the engine and closes the connections it opened (the engine itself never does). */
  close: () => Promise<void>;
}

export async function openSchemaEngine(
  schema: { fileName: string; text: string },
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  log: (message: string) => void = () => {},
): Promise<OpenSchemaEngine> {
  gluePromise ??= loadGlue();
  const glue = await gluePromise;
  const opened: SqlDriverAdapter[] = [];
  const track = async (connect: Promise<SqlDriverAdapter>) => {
    const adapter = await connect;
    opened.push(adapter);
    return adapter;
  };
  const tracking: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapterFactory.provider,
    adapterName: adapterFactory.adapterName,
    connect: () => track(adapterFactory.connect()),
    connectToShadowDb: () => track(adapterFactory.connectToShadowDb()),
  };
  const engine = await glue.SchemaEngine.new(
    { datamodels: [[schema.fileName, schema.text]] },
    (message: string) => log(message),
    bindMigrationAwareSqlAdapterFactory(tracking),
  );
  return {
    engine,
    async close() {
      engine.free();
      await Promise.all(opened.splice(0).map((adapter) => adapter.dispose()));
    },
  };
}
