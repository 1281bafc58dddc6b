export { processCpuMs } from "../../scripts/bench/process-cpu";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, shared with the loop-hold probe
export const { threadCpuMs } = require("./thread-cpu.cjs") as { threadCpuMs: () => number };
