// Jest's Node environment (jest.config.js testEnvironment), with one addition for the worker processes
// the tests run in. This module runs in the worker itself, not in a test's sandbox.
"use strict";
const { TestEnvironment } = require("jest-environment-node");

// A worker whose tests stopped all they started has an empty event loop once Jest is done with it, and
// would then tear its heap down piece by piece: gigabytes, after the embedded databases' WebAssembly,
// longer than the half second Jest waits before it kills the worker and warns that it "failed to exit
// gracefully" (jest.config.js could only wait longer). Exiting there skips that teardown; a worker
// still holding a handle never gets here, and Jest still warns. Jest's own process (in-band runs also
// set JEST_WORKER_ID) has no IPC channel and ends as Node ends it.
if (typeof process.send === "function" && process.env.JEST_WORKER_ID !== undefined)
  process.once("beforeExit", () => process.exit());

module.exports = TestEnvironment;
