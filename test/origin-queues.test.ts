import type { ClaimedDelivery } from "../src/delivery/delivery.store";
import { OriginQueues, type Queued } from "../src/delivery/origin-queues";

let serial = 0;
const queued = (origin: string, startBy = 1_000): Queued => {
  serial++;
  const delivery: ClaimedDelivery = {
    id: `d${serial}`,
    leaseToken: `t${serial}`,
    kind: "WEBHOOK",
    clientId: "c",
    callback: `${origin}/cb`,
    origin,
    payload: "{}",
    attemptCount: 0,
    eventReceivedAt: new Date(),
  };
  return { delivery, startBy };
};
const A = "http://a:80";
const B = "http://b:80";

describe("the per-origin queues", () => {
  it("hands out each origin's deliveries in claim order and keeps only origins holding something", () => {
    const queues = new OriginQueues({ concurrency: 10, perOrigin: 10 });
    const [a1, b1, a2] = [queued(A), queued(B), queued(A)];
    for (const q of [a1, b1, a2]) queues.push(q);
    expect([...queues.waitingOrigins()]).toEqual([A, B]);
    expect([queues.queued, queues.held(A), queues.held(B)]).toEqual([3, 2, 1]);
    expect(queues.takeNext(A)).toBe(a1);
    expect(queues.takeNext(A)).toBe(a2);
    expect(queues.takeNext(A)).toBeUndefined();
    expect([...queues.waitingOrigins()]).toEqual([B]);
    expect(queues.queued).toBe(1);
  });

  it("counts a started send against its origin's and the worker's slots until it finishes", () => {
    const queues = new OriginQueues({ concurrency: 3, perOrigin: 2 });
    for (let i = 0; i < 3; i++) queues.push(queued(A));
    queues.push(queued(B));
    queues.takeNext(A);
    queues.started(A);
    queues.takeNext(A);
    queues.started(A);
    expect([queues.canStart(A), queues.canStart(B)]).toEqual([false, true]); // A's two slots busy
    expect([queues.inFlight, queues.inFlightTo(A), queues.held(A)]).toEqual([2, 2, 3]);
    queues.takeNext(B);
    queues.started(B);
    queues.push(queued(B));
    expect(queues.canStart(B)).toBe(false); // the worker's three slots busy
    queues.finished(A);
    expect([queues.canStart(A), queues.canStart(B), queues.inFlightTo(A)]).toEqual([true, true, 1]);
    expect(queues.canStart("http://none:80")).toBe(false); // nothing waiting
  });

  it("lists origins holding anything, those waiting first, and forgets an origin whose sends all finished", () => {
    const queues = new OriginQueues({ concurrency: 10, perOrigin: 10 });
    queues.push(queued(A));
    queues.takeNext(A);
    queues.started(A);
    queues.push(queued(B));
    queues.push(queued(A));
    expect(queues.heldOrigins()).toEqual([B, A]);
    queues.takeAll(A);
    queues.finished(A);
    expect(queues.heldOrigins()).toEqual([B]);
    expect(queues.inFlight).toBe(0);
  });

  it("takes everything waiting for one origin, or for all of them in order", () => {
    const queues = new OriginQueues({ concurrency: 10, perOrigin: 10 });
    const [a1, b1, a2, b2] = [queued(A), queued(B), queued(A), queued(B)];
    for (const q of [a1, b1, a2, b2]) queues.push(q);
    expect(queues.takeAll(B)).toEqual([b1, b2]);
    expect(queues.queued).toBe(2);
    queues.push(b1);
    expect(queues.takeAll()).toEqual([a1, a2, b1]);
    expect([queues.queued, [...queues.waitingOrigins()]]).toEqual([0, []]);
  });
});
