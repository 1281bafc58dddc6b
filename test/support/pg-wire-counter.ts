import net from "node:net";

/**
 * A TCP proxy in front of a PostgreSQL server that reads what clients send and counts it: the
 * statements executed (a simple query's text, or an extended-protocol statement each time it is bound)
 * and the round trips (a simple query or a Sync, each of which the client waits on). Point an app's
 * DATABASE_URL at `url` to count what its requests cost on the wire; nothing is changed on the way.
 */
export async function startPgWireCounter(target: string): Promise<{
  url: string;
  /** Statements executed since the last `reset`, in order. */
  statements: () => string[];
  roundTrips: () => number;
  reset: () => void;
  close: () => Promise<void>;
}> {
  const upstream = new URL(target);
  let statements: string[] = [];
  let roundTrips = 0;
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        server.destroy();
      });
    }
    server.pipe(client);
    const prepared = new Map<string, string>(); // statement name → text, per connection
    let buffered = Buffer.alloc(0);
    let startup = true;
    client.on("data", (chunk: Buffer) => {
      server.write(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (startup) {
          // Startup-phase messages have no type byte: Int32 length, Int32 code.
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(length);
          startup = code === 80877103 || code === 80877104; // SSL or GSS request: the startup follows
          continue;
        }
        if (buffered.length < 5) return;
        const type = String.fromCharCode(buffered[0]!);
        const length = buffered.readInt32BE(1);
        if (buffered.length < 1 + length) return;
        const body = buffered.subarray(5, 1 + length);
        buffered = buffered.subarray(1 + length);
        const strings = (from: number, count: number) => {
          const found: string[] = [];
          for (let at = from; found.length < count;) {
            const end = body.indexOf(0, at);
            found.push(body.toString("utf8", at, end));
            at = end + 1;
          }
          return found;
        };
        if (type === "Q") {
          statements.push(strings(0, 1)[0]!);
          roundTrips++;
        } else if (type === "P") {
          const [name, text] = strings(0, 2);
          prepared.set(name!, text!);
        } else if (type === "B") {
          const [, name] = strings(0, 2);
          statements.push(prepared.get(name!) ?? `(unknown prepared statement ${name})`);
        } else if (type === "S") {
          roundTrips++;
        }
      }
    });
    client.on("end", () => server.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    url: url.toString(),
    statements: () => [...statements],
    roundTrips: () => roundTrips,
    reset: () => {
      statements = [];
      roundTrips = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
