// Jest's Node environment (jest.config.js testEnvironment), with one addition for the worker processes
// the tests run in. This module runs in the worker itself, not in a test's sandbox.
"use strict";
const { TestEnvironment } = require("jest-environment-node");

// A worker whose tests stopped all they started has an empty event loop once Jest is done with it, its
// results already sent. Node's own exit from there, even `process.exit()` with its exit listeners done
// within a millisecond, can take longer than Jest waits (500 ms by default) before it kills the worker and warns
// that it "failed to exit gracefully": Node then shuts down its thread pool and V8's threads, and a
// shard leaves a heap of gigabytes. So the worker ends itself at once, as Jest would a moment later.
// Stdout and stderr are pipes, written synchronously: nothing is left unwritten. A worker still
// holding a handle never gets here, and Jest still warns. Jest's own process (in-band runs also set
// JEST_WORKER_ID) has no IPC channel and ends as Node ends it.
if (typeof process.send === "function" && process.env.JEST_WORKER_ID !== undefined)
  process.once("beforeExit", () => process.kill(process.pid, "SIGKILL"));

module.exports = TestEnvironment;
