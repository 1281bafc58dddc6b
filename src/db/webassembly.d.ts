// The WebAssembly global Node provides, as far as the gateway uses it (db/pglite-thread.ts): TypeScript
// declares it only in its DOM library, which a server does not load.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
}
