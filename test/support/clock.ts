/**
 * Sets only `Date` to `now`: every other timer and clock stays real, so servers, sockets and fetch
 * run as usual while the wall clock says `now`. Undo with `jest.useRealTimers()`.
 */
export function setWallClock(now: Date | number): void {
  jest.useFakeTimers({ now, doNotFake: [...REAL_TIMERS] });
}

const REAL_TIMERS = [
  "hrtime",
  "nextTick",
  "performance",
  "queueMicrotask",
  "requestAnimationFrame",
  "cancelAnimationFrame",
  "requestIdleCallback",
  "cancelIdleCallback",
  "setImmediate",
  "clearImmediate",
  "setInterval",
  "clearInterval",
  "setTimeout",
  "clearTimeout",
] as const;
