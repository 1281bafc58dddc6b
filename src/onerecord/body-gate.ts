/**
 * Lets ONE Record requests that carry a body in a few at a time. Reading, checking and storing a body
 * is the costliest work a request does, and on the embedded database all of it runs on the event loop
 * (its queries never yield): twenty bodies arriving together would otherwise be worked through back
 * to back before the loop answered anything else (a /healthz, a read). The next request is let in on
 * a later turn of the loop, so whatever arrived meanwhile is answered between two.
 */
export interface BodyGate {
  /**
   * A place in line. `turn` resolves true when the request may go on, false if it left the line
   * first; `leave` gives the place back, or leaves the line: once, however often it is called.
   */
  join(): { turn: Promise<boolean>; leave: () => void };
}

/** Requests with a body worked on at once. */
export const BODY_REQUESTS_AT_ONCE = 2;

export function createBodyGate(places = BODY_REQUESTS_AT_ONCE): BodyGate {
  let inside = 0;
  const line: Array<() => void> = [];
  const letNextIn = () => {
    const next = line.shift();
    if (next === undefined) inside--;
    // MUST be on a later turn of the loop: let in at once, the next request would run before any
    // I/O that arrived while this one ran.
    else setImmediate(next);
  };
  return {
    join() {
      let left = false;
      let inPlace = false;
      let resolveTurn!: (entered: boolean) => void;
      const turn = new Promise<boolean>((resolve) => (resolveTurn = resolve));
      // Its place came: taken, or passed on if it left the line meanwhile.
      const enter = () => {
        if (left) return letNextIn();
        inPlace = true;
        resolveTurn(true);
      };
      if (inside < places) {
        inside++;
        enter();
      } else line.push(enter);
      const leave = () => {
        if (left) return;
        left = true;
        const waiting = line.indexOf(enter);
        if (waiting >= 0) line.splice(waiting, 1);
        if (inPlace) letNextIn();
        else resolveTurn(false);
      };
      return { turn, leave };
    },
  };
}
