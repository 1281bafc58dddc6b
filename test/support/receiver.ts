import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedPost {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/**
 * A real callback receiver on 127.0.0.1. OPTIONS answers depend on the path:
 *   /ok…        204, Allow: GET, POST, OPTIONS        /no-post…  200, Allow: GET, HEAD
 *   /no-allow…  204 without Allow                     /error…    500
 *   /redirect…  301 to /ok                            /hang…     never answers
 * POSTs are recorded and answered with `postStatus` (default 204; a function decides per POST, given it as
 * recorded); POSTs to /ok/hang… are never answered; POSTs to /ok/missing… are answered 404 (a wrong path
 * on a healthy origin).
 */
export async function startReceiver(port = 0): Promise<{
  url: string;
  posts: ReceivedPost[];
  optionsCount: () => number;
  /** Requests held open unanswered (/hang OPTIONS, /ok/hang POSTs): a hanging POST is not recorded in `posts`. */
  hangingCount: () => number;
  setPostStatus: (status: number | ((post: ReceivedPost) => number), headers?: Record<string, string>) => void;
  onPost: (listener: (post: ReceivedPost) => void) => void;
  close: () => Promise<void>;
}> {
  const posts: ReceivedPost[] = [];
  const listeners: Array<(post: ReceivedPost) => void> = [];
  let optionsCount = 0;
  let postStatus: number | ((post: ReceivedPost) => number) = 204;
  let postHeaders: Record<string, string> = {};
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    if (req.method === "OPTIONS") {
      optionsCount++;
      if (path.startsWith("/hang")) return void hanging.push(res);
      if (path.startsWith("/no-post")) return void res.writeHead(200, { allow: "GET, HEAD" }).end();
      if (path.startsWith("/no-allow")) return void res.writeHead(204).end();
      if (path.startsWith("/error")) return void res.writeHead(500).end("broken");
      if (path.startsWith("/redirect")) return void res.writeHead(301, { location: "/ok" }).end();
      return void res.writeHead(204, { allow: "GET, post, OPTIONS" }).end();
    }
    if (path.startsWith("/ok/hang")) return void hanging.push(res);
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const post = { path, headers: req.headers, body, receivedAt: Date.now() };
      posts.push(post);
      const status = typeof postStatus === "function" ? postStatus(post) : postStatus;
      res.writeHead(path.startsWith("/ok/missing") ? 404 : status, postHeaders).end();
      for (const listener of listeners) listener(post);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    posts,
    optionsCount: () => optionsCount,
    hangingCount: () => hanging.length,
    setPostStatus: (status, headers = {}) => {
      postStatus = status;
      postHeaders = headers;
    },
    onPost: (listener) => listeners.push(listener),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
